// The replication campaign for scripts/sim.ts (registered in src/cluster/sim/campaigns.ts).
// REPLICATION_SIM_NO_REPAIR=1 runs the controller without the election repair ControllerService
// has since 2026-12-05 (see docs/replication-sim.md); REPLICATION_SIM_STRIKE_FENCES=1 also strikes the
// controller right after it proposes a BrokerFenced record; REPLICATION_SIM_OFFSETS=1 adds a group
// member committing offsets and reading them back.
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
    "controllerTakeovers",
  ],
  runSeed: (seed, o) =>
    runReplicationSeed(seed, {
      log: o.verbose ? o.log : undefined,
      strikeFences: process.env.REPLICATION_SIM_STRIKE_FENCES === "1",
      repairElections: process.env.REPLICATION_SIM_NO_REPAIR !== "1",
      reassign: process.env.REPLICATION_SIM_REASSIGN === "1",
      offsets: process.env.REPLICATION_SIM_OFFSETS === "1",
    }),
};
