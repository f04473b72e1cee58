// The replication campaign for scripts/sim.ts (registered in src/cluster/sim/campaigns.ts).
import type { Campaign } from "../../../src/cluster/sim/campaigns.ts";
import { runReplicationSeed } from "./scenario.ts";

export const campaign: Campaign = {
  name: "replication",
  requiredCounts: [
    "crashes",
    "pauses",
    "partitions",
    "elections",
    "isrShrinks",
    "isrExpands",
    "truncations",
    "acked",
  ],
  runSeed: (seed, o) => runReplicationSeed(seed, { log: o.verbose ? o.log : undefined }),
};
