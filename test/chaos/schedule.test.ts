// The chaos schedule: the same seed gives the same faults; the sides of a partition.
import { expect, test } from "bun:test";
import { FAULT_KINDS, schedule, sides } from "../../scripts/chaos/schedule.ts";

const base = { faults: FAULT_KINDS, brokers: 3, partitions: 3, sessionTimeoutMs: 3000, steps: 50 };

test("a seed decides the schedule; another seed gives another", () => {
  const a = schedule({ ...base, seed: 7 });
  expect(schedule({ ...base, seed: 7 })).toEqual(a);
  expect(schedule({ ...base, seed: 8 })).not.toEqual(a);
  expect(new Set(a.map((s) => s.kind))).toEqual(new Set(FAULT_KINDS));
  // Short holds keep the kinds, variants and roles of the seed.
  const q = schedule({ ...base, seed: 7, short: true });
  expect(q.map((s) => [s.kind, s.variant, s.target])).toEqual(
    a.map((s) => [s.kind, s.variant, s.target]),
  );
  expect(Math.max(...q.map((s) => s.holdMs))).toBeLessThanOrEqual(6000);
});

test("a long pause outlasts the session timeout, a short one does not", () => {
  for (const s of schedule({ ...base, seed: 3, steps: 300, faults: ["pause"] })) {
    if (s.variant === "long") expect(s.holdMs).toBeGreaterThan(3000);
    else expect(s.holdMs).toBeLessThan(3000);
  }
});

test("only the kinds asked for", () => {
  const s = schedule({ ...base, seed: 1, faults: ["partition", "kill"] });
  expect(new Set(s.map((x) => x.kind))).toEqual(new Set(["partition", "kill"]));
  expect(() => schedule({ ...base, seed: 1, faults: [] })).toThrow();
});

test("partition sides: a minority holding the target", () => {
  expect(sides("isolate", 1, [0, 1, 2], 0.3)).toEqual({ cut: [1], rest: [0, 2] });
  expect(sides("one-way-in", 2, [0, 1, 2], 0.3)).toEqual({ cut: [2], rest: [0, 1] });
  expect(sides("split", 0, [0, 1, 2], 0.9)).toEqual({ cut: [0], rest: [1, 2] });
  for (const draw of [0.1, 0.5, 0.9]) {
    const s = sides("split", 3, [0, 1, 2, 3, 4], draw);
    expect(s.cut).toHaveLength(2);
    expect(s.cut[0]).toBe(3);
    expect(s.rest).toHaveLength(3);
    expect(sides("split", 3, [0, 1, 2, 3, 4], draw)).toEqual(s);
  }
});
