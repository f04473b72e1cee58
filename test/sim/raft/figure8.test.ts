// The leader-churn scenario (figure8.ts) holds on the Raft core as it is: the mutation suite
// (scripts/mutate.ts) runs up to its first 300 seeds against planted bugs, so those must pass.
import { expect, test } from "bun:test";
import { runFigure8Seed } from "./figure8.ts";

const SEEDS = 400;

test(`raft leader-churn (figure 8) seeds 1..${SEEDS}`, () => {
  const failures: string[] = [];
  const totals: Record<string, number> = {};
  for (let seed = 1; seed <= SEEDS; seed++) {
    const out = runFigure8Seed(seed);
    if (out.failure !== undefined) failures.push(`seed ${seed}: ${out.failure}`);
    for (const [k, v] of Object.entries(out.counts)) totals[k] = (totals[k] ?? 0) + v;
  }
  expect(failures).toEqual([]);
  expect(totals.elections).toBeGreaterThan(SEEDS * 10);
  expect(totals.commits).toBeGreaterThan(0);
}, 120_000);

test("a leader-churn seed replays exactly", () => {
  expect(runFigure8Seed(9)).toEqual(runFigure8Seed(9));
});
