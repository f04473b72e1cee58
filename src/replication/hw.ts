// The high-watermark arithmetic, alone in a tiny pure file (as etcd keeps its quorum maths):
// the highest offset every member of the (maximal) ISR has made durable.
import { planted } from "./planted.ts";

/**
 * `durableEnds` maps a replica to the end of what it has fsynced (exclusive); a member of `isr`
 * with no known position holds the watermark where it is (returns -1 = "no information").
 */
export function isrDurableMin(
  isr: readonly number[],
  durableEnds: (id: number) => number | undefined,
): number {
  let min = Infinity;
  for (const id of isr) {
    const end = durableEnds(id);
    if (end === undefined || end < 0) return -1;
    if (end < min) min = end;
  }
  return min === Infinity ? -1 : min;
}

/** The maximal ISR (KIP-497): the committed ISR plus a pending addition, never minus a pending removal. */
export function maximalIsr(
  committed: readonly number[],
  pending: readonly number[] | null,
): number[] {
  if (pending === null) return [...committed];
  if (planted.size !== 0 && planted.has("shrink-counts-before-commit")) return [...pending];
  const out = [...committed];
  for (const id of pending) if (!out.includes(id)) out.push(id);
  return out;
}

/** Whether acks=all may be answered for a batch ending at `lastOffset` (inclusive). */
export function covers(highWatermark: number, lastOffset: number): boolean {
  return highWatermark > lastOffset;
}
