// CI run of the replication simulation: SEEDS seeds, every invariant at every step, liveness
// after the heal, the metadata quorum and the controller running on the brokers. A failing seed
// replays with `npm run sim -- replication --seeds 1 --from SEED --verbose`.
import { expect, test } from "bun:test";
import { LIVENESS_BOUND_MS, type ReplicationRunOptions, runReplicationSeed } from "./scenario.ts";

const SEEDS = 1000;

test(`replication simulation: ${SEEDS} seeds`, () => {
  const failures: string[] = [];
  const totals: Record<string, number> = {};
  let worstSettle = 0;
  const t0 = performance.now();
  for (let seed = 1; seed <= SEEDS; seed++) {
    const out = runReplicationSeed(seed);
    if (out.failure !== undefined) {
      failures.push(
        `seed ${seed}: ${out.failure} (npm run sim -- replication --seeds 1 --from ${seed} --verbose)`,
      );
    }
    for (const [k, v] of Object.entries(out.counts)) totals[k] = (totals[k] ?? 0) + v;
    worstSettle = Math.max(worstSettle, out.measures?.settleMs ?? 0);
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `replication sim: ${SEEDS} seeds in ${secs.toFixed(1)} s, worst settle ${worstSettle} ms ` +
      `(bound ${LIVENESS_BOUND_MS}), totals ${JSON.stringify(totals)}`,
  );
  expect(failures).toEqual([]);
  for (
    const k of [
      "crashes",
      "pauses",
      "partitions",
      "elections",
      "isrShrinks",
      "isrExpands",
      "truncations",
      "divergences",
      "acked",
      "consumed",
      "duplicates",
      "zombieAppends",
      "lostUnsynced",
      "controllerElections",
      "controllerTakeovers",
      "controllerFaults",
      "controllerStrikes",
      "staleDecisions",
      "repairedElections",
      "snapshotInstalls",
    ]
  ) {
    expect(totals[k]).toBeGreaterThan(0);
  }
}, 120_000);

/**
 * A campaign with one option on: fewer seeds, each exercising that part several times under
 * the same chaos; `env` is what replays a failing seed with scripts/sim.ts.
 */
function optionCampaign(
  what: string,
  seeds: number,
  o: ReplicationRunOptions,
  env: string,
  required: string[],
): void {
  test(`replication simulation with ${what}: ${seeds} seeds`, () => {
    const failures: string[] = [];
    const totals: Record<string, number> = {};
    const t0 = performance.now();
    for (let seed = 1; seed <= seeds; seed++) {
      const out = runReplicationSeed(seed, o);
      if (out.failure !== undefined) {
        failures.push(
          `seed ${seed}: ${out.failure} (${env} npm run sim -- replication --seeds 1 --from ${seed} --verbose)`,
        );
      }
      for (const [k, v] of Object.entries(out.counts)) totals[k] = (totals[k] ?? 0) + v;
    }
    console.log(
      `replication sim with ${what}: ${seeds} seeds in ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s, totals ${JSON.stringify(totals)}`,
    );
    expect(failures).toEqual([]);
    for (const k of required) expect(totals[k]).toBeGreaterThan(0);
  }, 120_000);
}

// Reassignments: each seed moves and cancels several times.
optionCampaign("reassignments", 300, { reassign: true }, "REPLICATION_SIM_REASSIGN=1", [
  "reassignSubmits",
  "reassignCancels",
  "reassignCompleted",
  "reassignCancelled",
  "reassignRefused",
  "logsDeleted",
  "controllerTakeovers",
  "acked",
]);

// A consumer group's member committing offsets and reading them back (invariant 10).
optionCampaign("group offsets", 300, { offsets: true }, "REPLICATION_SIM_OFFSETS=1", [
  "offsetCommits",
  "offsetFetches",
  "controllerTakeovers",
  "acked",
]);

test("the same seed replays exactly", () => {
  const run = () => {
    const trace: string[] = [];
    const out = runReplicationSeed(77, { log: (l) => trace.push(l) });
    return { out, trace };
  };
  const a = run();
  expect(a.trace.length).toBeGreaterThan(100);
  expect(run()).toEqual(a);
  expect(runReplicationSeed(77)).toEqual(a.out);
});
