// The storage crash campaign (scenario.ts) in the shape of the other simulation campaigns, but
// asynchronous (the log's I/O runs on promises): scripts/mutate.ts runs it directly. Not in
// src/cluster/sim/campaigns.ts, whose runSeed is synchronous.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { runStorageSeed } from "./scenario.ts";

export const campaign = {
  name: "storage-crash",
  requiredCounts: ["acked", "truncations", "powerLosses", "kills", "flips", "quarantines"],
  runSeed: (
    seed: number,
    o: { verbose: boolean; log: (l: string) => void },
  ): Promise<SeedOutcome> => runStorageSeed(seed, { log: o.verbose ? o.log : undefined }),
};
