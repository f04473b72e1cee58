// The simulator must catch real mistakes: each planted bug (src/replication/planted.ts) flips
// one decision in a replication core (or, for the takeover epoch and the controller's records,
// in this model's shells), and the seeds run until the first invariant violation. The table
// printed here is the one in docs/replication-sim.md.
import { afterEach, expect, test } from "bun:test";
import { planted, type PlantedBug } from "../../../src/replication/planted.ts";
import { type ReplicationRunOptions, runReplicationSeed } from "./scenario.ts";

const REASSIGN: ReplicationRunOptions = { reassign: true };
const OFFSETS: ReplicationRunOptions = { offsets: true };

/** Seeds each bug must be caught within, the invariant expected to catch it, and run options. */
const CAUGHT: [PlantedBug, number, RegExp, ReplicationRunOptions?][] = [
  ["hw-majority-of-replicas", 200, /^\(1\)|^\(3\)/],
  ["truncate-to-hw", 200, /liveness|^\(2\)|^\(3\)/],
  ["shrink-counts-before-commit", 200, /^\(1\)|^\(3\)/],
  ["no-epoch-on-takeover", 300, /^\(3\)|^\(1\)|^\(2\)/],
  ["elect-outside-isr", 200, /^\(5\)|^\(1\)/],
  // Seed 304 since a new controller's first deadline outlasts its predecessor's leases (fewer
  // brokers fenced right after a controller change; 1.4 s here, was 750 ms): within 300 before.
  ["position-from-log-end", 600, /^\(1\)|^\(3\)/],
  ["rejoin-below-hw", 400, /^\(1\)|^\(3\)/],
  // A diverged follower never repaired also never rejoins the ISR (liveness).
  ["divergence-ignores-shorter-epoch", 200, /^\(2\)|^\(1\)|^\(3\)|liveness/],
  // Rare now: the lease stops a resumed zombie's new writes, and metadata reaches leaders by
  // Raft at once; it takes an AlterPartition call timing out while its record commits late.
  // Seed 4069 since the longer first deadline (within 2500 before).
  ["refusal-forgets-addition", 5000, /^\(1\)|^\(2\)|^\(3\)/],
  ["election-keeps-leader-epoch", 50, /^\(5\)/],
  // Needs a controller deciding from a view without its predecessor's last records (seed 3681
  // since a leader waits JOIN_RETRY_MS to propose a refused follower again and a fenced broker
  // is unfenced only once it has applied what was decided while it was fenced; 1336 before).
  ["decision-without-partition-epoch", 4000, /^\(5\)|^\(1\)|^\(2\)|^\(3\)/],
  // Reassignments (operators moving and cancelling during the chaos): a move switched to its
  // target before the adding replicas copied elects one that lacks records; a cancel that
  // restores the original ISR puts a lagging replica back in it.
  ["reassign-isr-is-target", 200, /^\(5\)|^\(1\)|^\(3\)/, REASSIGN],
  ["cancel-isr-is-original", 300, /^\(1\)|^\(3\)|^\(5\)/, REASSIGN],
  // Group offsets (a member committing and reading back): the rule chaos seed 32 caught, a
  // broker fenced while cut off unfenced before it applied the elections that replaced it; and
  // a coordinator answering OffsetFetch after its lease ran out.
  ["unfence-on-registration", 200, /^\(10\)/, OFFSETS],
  ["coordinator-without-lease", 300, /^\(10\)/, OFFSETS],
];

/** Not caught by this model within the budget (see the doc): reported, not asserted. */
const UNCAUGHT: [PlantedBug, number][] = [
  ["isr-change-ignores-partition-epoch", 200],
  ["alter-without-partition-epoch", 200],
];

function firstFailure(
  bug: PlantedBug,
  budget: number,
  o: ReplicationRunOptions = {},
): { seed: number; failure: string } | undefined {
  planted.clear();
  planted.add(bug);
  try {
    for (let seed = 1; seed <= budget; seed++) {
      const out = runReplicationSeed(seed, o);
      if (out.failure !== undefined) return { seed, failure: out.failure };
    }
    return undefined;
  } finally {
    planted.clear();
  }
}

const rows: string[] = [];
afterEach(() => planted.clear());

for (const [bug, budget, expected, o] of CAUGHT) {
  test(`planted bug "${bug}" is caught within ${budget} seeds`, () => {
    const r = firstFailure(bug, budget, o);
    rows.push(`| \`${bug}\` | ${r?.seed ?? `not in ${budget}`} | ${r?.failure ?? ""} |`);
    expect(r).toBeDefined();
    expect(r!.failure).toMatch(expected);
  }, 120_000);
}

for (const [bug, budget] of UNCAUGHT) {
  test(`planted bug "${bug}" (not caught by this model; reported)`, () => {
    const r = firstFailure(bug, budget);
    rows.push(`| \`${bug}\` | ${r?.seed ?? `not in ${budget}`} | ${r?.failure ?? ""} |`);
  }, 120_000);
}

test("no planted bug leaks: the set is empty and a clean seed passes", () => {
  expect(planted.size).toBe(0);
  expect(runReplicationSeed(1).failure).toBeUndefined();
  console.log(
    ["| planted bug | first failing seed | first violation |", "|---|---|---|", ...rows].join("\n"),
  );
});
