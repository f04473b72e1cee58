// High-watermark arithmetic (src/replication/hw.ts): the minimum durable end over the maximal ISR.
import { describe, expect, test } from "bun:test";
import { covers, isrDurableMin, maximalIsr } from "../../src/replication/hw.ts";

const ends = (m: Record<number, number>) => (id: number) => m[id];

describe("isrDurableMin", () => {
  test("is the minimum durable end over the ISR members only", () => {
    // Replica 3 is far behind but outside the ISR: it does not hold the watermark back.
    expect(isrDurableMin([1, 2], ends({ 1: 10, 2: 7, 3: 0 }))).toBe(7);
    expect(isrDurableMin([1, 2, 3], ends({ 1: 10, 2: 7, 3: 0 }))).toBe(0);
    expect(isrDurableMin([2, 1], ends({ 1: 4, 2: 9 }))).toBe(4);
  });

  test("a single-member ISR is that member's durable end", () => {
    expect(isrDurableMin([5], ends({ 5: 42 }))).toBe(42);
  });

  test("a member with no known position means no information (-1), not 'skip it'", () => {
    expect(isrDurableMin([1, 2], ends({ 1: 10 }))).toBe(-1);
    expect(isrDurableMin([1, 2], ends({ 1: 10, 2: -1 }))).toBe(-1);
  });

  test("an empty ISR gives no information", () => {
    expect(isrDurableMin([], ends({ 1: 10 }))).toBe(-1);
  });
});

describe("maximalIsr (KIP-497)", () => {
  test("no pending change: the committed ISR", () => {
    expect(maximalIsr([1, 2, 3], null)).toEqual([1, 2, 3]);
  });

  test("a pending addition counts at once", () => {
    expect(maximalIsr([1, 2], [1, 2, 3]).sort()).toEqual([1, 2, 3]);
  });

  test("a pending removal does not count until committed", () => {
    expect(maximalIsr([1, 2, 3], [1, 2]).sort()).toEqual([1, 2, 3]);
  });

  test("the result is a copy", () => {
    const committed = [1, 2];
    const out = maximalIsr(committed, null);
    out.push(9);
    expect(committed).toEqual([1, 2]);
  });
});

describe("covers", () => {
  test("acks=all is answered only once the watermark is past the batch's last offset", () => {
    expect(covers(10, 9)).toBe(true);
    expect(covers(10, 10)).toBe(false);
    expect(covers(0, 0)).toBe(false);
  });
});
