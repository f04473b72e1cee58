import { describe, expect, test } from "bun:test";
import { IgnoresRefutations } from "./buggy.ts";
import { CONVERGE_BOUND_MS, DETECT_BOUND_MS, runChaosSeed, runLossSeed } from "./scenario.ts";

const SEEDS = 500;

describe("SWIM deterministic simulation", () => {
  test(`${SEEDS} chaos seeds: crashed members declared dead, live members converge`, () => {
    const totals: Record<string, number> = {};
    const worst = { detectMs: 0, convergeMs: 0 };
    const failures: string[] = [];
    const t0 = performance.now();
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runChaosSeed(seed);
      expect(r.simulatedMs).toBeGreaterThanOrEqual(60_000);
      if (r.failure) {
        failures.push(
          `seed ${seed}: ${r.failure}\n  replay: bun scripts/sim.ts --core swim --seeds 1 --from ${seed} --verbose`,
        );
      }
      for (const [k, v] of Object.entries(r.counts)) totals[k] = (totals[k] ?? 0) + v;
      worst.detectMs = Math.max(worst.detectMs, r.measures!.detectMs);
      worst.convergeMs = Math.max(worst.convergeMs, r.measures!.convergeMs);
    }
    const secs = (performance.now() - t0) / 1000;
    console.log(
      `swim sim: ${SEEDS} seeds in ${secs.toFixed(1)} s (${(SEEDS / secs).toFixed(0)} seeds/s), ` +
        `worst detect ${worst.detectMs} ms (bound ${DETECT_BOUND_MS}), worst converge ` +
        `${worst.convergeMs} ms (bound ${CONVERGE_BOUND_MS}), totals ${JSON.stringify(totals)}`,
    );
    expect(failures).toEqual([]);
    for (const k of ["crashes", "suspicions", "refutations", "deaths", "joins", "leaves"]) {
      expect(totals[k]).toBeGreaterThan(0);
    }
    expect(totals["address-changes"]).toBeGreaterThan(0);
  }, 120_000);

  test("the checkers catch a node that ignores refutations", () => {
    let caught = 0;
    for (let seed = 1; seed <= 40 && caught === 0; seed++) {
      const r = runChaosSeed(seed, { factory: (o) => new IgnoresRefutations(o) });
      if (r.failure) caught++;
    }
    expect(caught).toBeGreaterThan(0);
  }, 60_000);

  test("false positives under 10% and 30% loss stay under the stated bounds", () => {
    // Bounds, as false "dead" transitions seen by observers per member-hour.
    const bounds = { 0.1: 1, 0.3: 10 } as const;
    for (const loss of [0.1, 0.3] as const) {
      let deaths = 0;
      let hours = 0;
      for (let seed = 1; seed <= 3; seed++) {
        const r = runLossSeed(seed, 10, loss, 600_000);
        deaths += r.falseDeaths;
        hours += r.memberHours;
      }
      const rate = deaths / hours;
      console.log(`swim loss ${loss * 100}%: ${deaths} false deaths in ${hours} member-hours`);
      expect(rate).toBeLessThanOrEqual(bounds[loss]);
    }
  }, 120_000);
});
