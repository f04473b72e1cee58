// Registry of simulation campaigns run by scripts/sim.ts. A core (raft, swim, ...) adds one
// line here pointing at a module that exports `campaign: Campaign`. Loaded lazily so nothing
// in the broker binary pulls test code in.

export interface SeedOutcome {
  /** Undefined when every invariant held; else a one-line description of the first failure. */
  failure?: string;
  /** Event counts of this seed (e.g. elections, crashes); summed over a campaign. */
  counts: Record<string, number>;
  /** Simulated time covered, ms. */
  simulatedMs: number;
  /** Measured figures of this seed (e.g. recovery time after heal); the runner reports max. */
  measures?: Record<string, number>;
}

export interface RunOptions {
  verbose: boolean;
  /** Sink for verbose trace lines. */
  log: (line: string) => void;
}

export interface Campaign {
  name: string;
  /** Counts that must be non-zero summed over a whole campaign, or the campaign fails. */
  requiredCounts: readonly string[];
  runSeed(seed: number, opts: RunOptions): SeedOutcome;
}

/** Campaign name -> loader. Keep one line per core. */
export const CAMPAIGNS: Record<string, () => Promise<Campaign>> = {
  raft: async () => (await import("../../../test/sim/raft/campaign.ts")).campaign,
  swim: async () => (await import("../../../test/sim/swim/campaign.ts")).campaign,
  replication: async () => (await import("../../../test/sim/replication/campaign.ts")).campaign,
};
