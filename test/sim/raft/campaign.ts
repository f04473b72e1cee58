// The Raft campaign for scripts/sim.ts (registered in src/cluster/sim/campaigns.ts).
import type { Campaign } from "../../../src/cluster/sim/campaigns.ts";
import { runRaftSeed } from "./scenario.ts";

export const campaign: Campaign = {
  name: "raft",
  requiredCounts: ["elections", "snapshotInstalls", "membershipChanges", "crashes", "partitions"],
  runSeed: (seed, o) => runRaftSeed(seed, { log: o.verbose ? o.log : undefined }),
};
