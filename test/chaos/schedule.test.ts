// The chaos schedule: the same seed gives the same faults; the sides of a partition.
import { expect, test } from "bun:test";
import { FAULT_KINDS, LOSS_VARIANTS, schedule, sides } from "../../scripts/chaos/schedule.ts";

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

test("the four first kinds draw as before the new ones existed (old seeds replay)", () => {
  // Seed 11 of docs/chaos.md's results, run with --faults kill,pause,partition,restart.
  const s = schedule({
    ...base,
    seed: 11,
    steps: 2,
    faults: ["kill", "pause", "partition", "restart"],
  });
  expect(s.map((x) => [x.kind, x.variant, x.target, x.holdMs, x.gapMs])).toEqual([
    ["partition", "one-way-out", { role: "leader", partition: 1 }, 10657, 3152],
    ["partition", "split", { role: "leader", partition: 1 }, 10592, 2680],
  ]);
});

test("loss, disk-full and reassign: variants and levels in their ranges", () => {
  const s = schedule({ ...base, seed: 5, steps: 400, faults: ["loss", "disk-full", "reassign"] });
  expect(new Set(s.filter((x) => x.kind === "loss").map((x) => x.variant))).toEqual(
    new Set(LOSS_VARIANTS),
  );
  for (const x of s) {
    if (x.kind === "loss" && x.variant === "random") {
      expect(x.level).toBeGreaterThanOrEqual(5);
      expect(x.level).toBeLessThanOrEqual(40);
    } else if (x.kind === "loss" && x.variant === "throttle") {
      expect(x.level).toBeGreaterThanOrEqual(4);
      expect(x.level).toBeLessThanOrEqual(48);
    } else if (x.kind === "loss") {
      expect(x.level).toBeGreaterThanOrEqual(200);
      expect(x.level).toBeLessThanOrEqual(1500);
    } else if (x.kind === "reassign") {
      expect(x.variant).toBe("out-and-back");
      expect(x.level === 0 || (x.level! >= 64 && x.level! <= 512)).toBe(true);
    } else {
      expect(x.kind).toBe("disk-full");
      expect(x.level).toBeUndefined();
      expect(x.holdMs).toBeGreaterThanOrEqual(2000);
    }
  }
});
