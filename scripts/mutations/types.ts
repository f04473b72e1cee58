// The shape of a planted bug for the mutation suite (scripts/mutate.ts).

/** The simulators a mutation is run against (scripts/mutations/run-campaign.ts). */
export type CampaignName =
  | "raft"
  | "raft-figure8"
  | "swim"
  | "swim-loss"
  | "replication"
  | "storage-crash";

export interface Mutation {
  /** Unique, kebab-case; `npm run mutate -- --only id,id` selects by it. */
  id: string;
  /** Path from the repository root of the file the edit applies to (a scratch copy of it). */
  file: string;
  /** Exact text that must occur exactly once in `file` (else the suite fails: the code moved). */
  find: string;
  replace: string;
  /** The bug in words: what an engineer would have got wrong. */
  why: string;
  /**
   * The campaign that should catch it; several are tried in order until one does. Omitted (or
   * empty) for a bug only the unit and integration tests can see: then `tests` is required.
   */
  campaign?: CampaignName | readonly CampaignName[];
  /**
   * Test files (from the repository root) run with `bun test` after the campaigns, when they did
   * not catch the bug: a scripted scenario for what random schedules almost never reach, or the
   * only catcher of a test-suite mutation (the "tests" suite). Their folders are copied into the
   * scratch copy (a test-suite mutation copies all of test/).
   */
  tests?: readonly string[];
  /**
   * Wall-clock budget of its `bun test` run in seconds (default: the runner's). For a bug that
   * makes a unit test hang (an awaited promise that never settles outlived bun's per-test
   * timeout here): a hang counts as caught, and costs only this.
   */
  testBudgetSeconds?: number;
  /** Seeds to try (default: the campaign's budget in run-campaign.ts). */
  seeds?: number;
  /**
   * "survives": known to be invisible to the simulator; listed in every report with `reason`
   * and left out of the caught ratio. If it is ever caught, the report says so (update the list).
   */
  expect?: "survives";
  /** Why the simulator cannot see it (required with expect: "survives"). */
  reason?: string;
}
