// SWIM under message loss, as a campaign for the mutation suite (scripts/mutate.ts): one seed is
// a 10-node cluster running 10 minutes at 10 % uniform loss with no faults (scenario.ts
// runLossSeed); it fails when live members are declared dead more often than the stated bound,
// 1 per member-hour at 10 % loss (docs/cluster.md, Failure-detection bounds; measured: 0). The
// chaos campaign checks detection and convergence, which a detector that is too eager does not
// break: only false positives show it.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { runLossSeed } from "./scenario.ts";

export const LOSS_RATE = 0.1;
/** False deaths per member-hour allowed at LOSS_RATE. */
export const FALSE_DEATH_BOUND = 1;
const NODES = 10;
const DURATION_MS = 600_000;

export const campaign = {
  name: "swim-loss",
  requiredCounts: ["suspicions", "refutations"],
  runSeed(seed: number): SeedOutcome {
    const r = runLossSeed(seed, NODES, LOSS_RATE, DURATION_MS);
    const rate = r.falseDeaths / r.memberHours;
    return {
      failure: rate > FALSE_DEATH_BOUND
        ? `false positives: ${r.falseDeaths} deaths of live members in ${
          r.memberHours.toFixed(2)
        } member-hours at ${LOSS_RATE * 100} % loss (bound ${FALSE_DEATH_BOUND} per member-hour)`
        : undefined,
      counts: {
        falseDeaths: r.falseDeaths,
        suspicions: r.suspicions,
        refutations: r.refutations,
      },
      simulatedMs: DURATION_MS,
    };
  },
};
