// SWIM campaign for scripts/sim.ts: the chaos scenario (5-20 nodes, see scenario.ts).
import type { Campaign } from "../../../src/cluster/sim/index.ts";
import { runChaosSeed } from "./scenario.ts";

export const campaign: Campaign = {
  name: "swim",
  requiredCounts: ["crashes", "suspicions", "refutations", "deaths", "joins", "leaves"],
  runSeed(seed, opts) {
    return runChaosSeed(seed, { log: opts.verbose ? opts.log : undefined });
  },
};
