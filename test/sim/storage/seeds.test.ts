// The storage crash campaign (scenario.ts) holds on the code as it is: the mutation suite
// (scripts/mutate.ts) runs up to its first 300 seeds against planted bugs, so those must pass.
import { expect, test } from "bun:test";
import { runStorageSeed } from "./scenario.ts";

const SEEDS = 400;

test(`storage crash campaign: ${SEEDS} seeds`, async () => {
  const failures: string[] = [];
  const totals: Record<string, number> = {};
  for (let seed = 1; seed <= SEEDS; seed++) {
    const out = await runStorageSeed(seed);
    if (out.failure !== undefined) failures.push(`seed ${seed}: ${out.failure}`);
    for (const [k, v] of Object.entries(out.counts)) totals[k] = (totals[k] ?? 0) + v;
  }
  expect(failures).toEqual([]);
  for (const k of ["acked", "truncations", "powerLosses", "kills", "cleanCloses", "flips"]) {
    expect(totals[k]).toBeGreaterThan(0);
  }
  // Flipped bytes are found: quarantined at open or refused by a read.
  expect(totals.quarantines).toBeGreaterThan(0);
}, 120_000);

test("a storage seed replays exactly", async () => {
  const a = await runStorageSeed(42);
  const b = await runStorageSeed(42);
  expect(a).toEqual(b);
});
