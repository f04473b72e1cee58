// Shared body of the seed-range test files (split so each file stays short).
import { expect, test } from "bun:test";
import { HEAL_BOUND_MS, runRaftSeed } from "./scenario.ts";

export function seedRange(from: number, count: number): void {
  test(`raft simulation seeds ${from}..${from + count - 1}`, () => {
    const failures: string[] = [];
    const totals: Record<string, number> = {};
    let maxRecovery = 0;
    for (let seed = from; seed < from + count; seed++) {
      const out = runRaftSeed(seed);
      expect(out.simulatedMs).toBeGreaterThanOrEqual(60_000);
      if (out.failure !== undefined) {
        failures.push(
          `seed ${seed}: ${out.failure} (npm run sim -- --core raft --seeds 1 --from ${seed} --verbose)`,
        );
      }
      for (const [k, v] of Object.entries(out.counts)) totals[k] = (totals[k] ?? 0) + v;
      maxRecovery = Math.max(maxRecovery, out.measures?.recoveryMs ?? 0);
      // Every seed has its own crash and partition, not just the range as a whole.
      expect(out.counts.crashes).toBeGreaterThan(0);
      expect(out.counts.partitions).toBeGreaterThan(0);
    }
    expect(failures).toEqual([]);
    expect(maxRecovery).toBeLessThanOrEqual(HEAL_BOUND_MS);
    for (const k of ["elections", "snapshotInstalls", "membershipChanges", "transfers", "reads"]) {
      expect(totals[k]).toBeGreaterThan(0);
    }
  }, 60_000);
}
