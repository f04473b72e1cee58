// Divergence and truncation (src/replication/follower.ts, KIPs 101/279/320) over real
// LeaderEpochCache instances, plus followerActions.
import { describe, expect, test } from "bun:test";
import { Rng } from "../../src/cluster/sim/rng.ts";
import {
  AHEAD_MIN_BYTES,
  fetchAhead,
  findDivergence,
  followerActions,
  type ReplicaFetchResult,
  truncationOffset,
} from "../../src/replication/follower.ts";
import { LeaderEpochCache } from "../../src/storage/epoch-cache.ts";
import { writeI64 } from "../../src/protocol/record-batch.ts";
import { batch, concat } from "../storage/helpers.ts";

/** A log as the epoch of each offset; its cache as the real log builds it (assign per batch). */
class Log {
  epochs = new LeaderEpochCache();
  constructor(public recs: number[] = [], takeover?: number) {
    recs.forEach((e, i) => this.epochs.assign(e, i));
    if (takeover !== undefined) this.epochs.assign(takeover, recs.length);
  }
  get end(): number {
    return this.recs.length;
  }
  endOffsetFor = (e: number) => this.epochs.endOffsetFor(e, this.end);
  truncate(to: number): void {
    this.recs.length = Math.min(this.recs.length, to);
    this.epochs.truncateFromEnd(to);
  }
}

describe("findDivergence (leader side)", () => {
  // Leader: epoch 1 at 0..4, epoch 3 at 5..7, epoch 4 at 8..11.
  const leader = new Log([1, 1, 1, 1, 1, 3, 3, 3, 4, 4, 4, 4]);
  const div = (lastEpoch: number, fetchOffset: number, logStart = 0) =>
    findDivergence(leader.endOffsetFor, lastEpoch, fetchOffset, logStart);

  test("an empty follower cannot diverge", () => {
    expect(div(-1, 0)).toBeUndefined();
  });

  test("same epoch, follower at or behind the leader's end: no divergence", () => {
    expect(div(4, 12)).toBeUndefined();
    expect(div(4, 9)).toBeUndefined();
  });

  test("same epoch, shorter at the leader: diverging at the leader's end", () => {
    expect(div(4, 14)).toEqual({ epoch: 4, endOffset: 12 });
  });

  test("follower ahead in an older epoch: diverging where that epoch ends at the leader", () => {
    expect(div(3, 10)).toEqual({ epoch: 3, endOffset: 8 });
    expect(div(3, 8)).toBeUndefined(); // exactly at its end: fine, it fetches epoch 4 next
    expect(div(1, 7)).toEqual({ epoch: 1, endOffset: 5 });
  });

  test("follower epoch unknown at the leader: the leader's largest epoch below it, even if not longer", () => {
    expect(div(2, 7)).toEqual({ epoch: 1, endOffset: 5 });
    // The follower is behind the end of epoch 1 here, yet its last batch is of an epoch the
    // leader never had: it diverged.
    expect(div(2, 4)).toEqual({ epoch: 1, endOffset: 5 });
  });

  test("follower epoch below the leader's first epoch: restart from the log start", () => {
    const trimmed = new Log([]);
    trimmed.epochs.assign(3, 5);
    expect(findDivergence(trimmed.endOffsetFor, 1, 4, 5)).toEqual({ epoch: 1, endOffset: 5 });
  });
});

describe("truncationOffset (follower side)", () => {
  test("holding the leader's epoch: the smaller end of it", () => {
    const f = new Log([1, 1, 1, 2, 2, 2, 2]);
    expect(truncationOffset(f.endOffsetFor, f.end, { epoch: 2, endOffset: 5 }, 0)).toBe(5);
    expect(truncationOffset(f.endOffsetFor, f.end, { epoch: 1, endOffset: 9 }, 0)).toBe(3);
  });

  test("not holding the leader's epoch: the end of its own largest epoch below it", () => {
    const f = new Log([1, 1, 3, 3]);
    // The leader answers epoch 2 ending at 6: the follower has no 2, its epoch 1 ends at 2.
    expect(truncationOffset(f.endOffsetFor, f.end, { epoch: 2, endOffset: 6 }, 0)).toBe(2);
  });

  test("nothing at or below that epoch: nothing in common, back to the log start", () => {
    // Leader [2,2,2] (then its epoch 5), follower [3,4,4]: the leader answers epoch 2 ending at
    // 3 for the follower's epoch 4. Keeping offsets 0..2 (all of later epochs the leader lacks)
    // would ask the same question forever with diverged records kept.
    const f = new Log([3, 4, 4]);
    expect(truncationOffset(f.endOffsetFor, f.end, { epoch: 2, endOffset: 3 }, 0)).toBe(0);
    const leader = new Log([2, 2, 2], 5);
    const d = findDivergence(leader.endOffsetFor, f.epochs.latestEpoch(), f.end, 0)!;
    expect(d).toEqual({ epoch: 2, endOffset: 3 });
    expect(followerActions(
      {
        topicId: "t",
        partition: 0,
        errorCode: 0,
        highWatermark: 0,
        logStartOffset: 0,
        logEndOffset: 3,
        diverging: d,
        bytes: 0,
      },
      { logEnd: f.end, logStart: 0, endOffsetFor: f.endOffsetFor },
    )).toEqual([{ kind: "truncate", offset: 0 }]);
    // A log trimmed at the front goes back to its own start, or to the leader's answer if lower.
    const g = new Log([9, 9, 9, 9, 9]);
    g.epochs.truncateFromStart(2);
    expect(truncationOffset(g.endOffsetFor, g.end, { epoch: 2, endOffset: 4 }, 2)).toBe(2);
    expect(truncationOffset(g.endOffsetFor, g.end, { epoch: 2, endOffset: 1 }, 2)).toBe(1);
  });

  test("never truncates below the agreed prefix, and fetch/truncate rounds converge to it", () => {
    const rng = new Rng(7);
    for (let round = 0; round < 500; round++) {
      // A shared prefix, then two branches in disjoint epochs; the leader holds the largest
      // epoch (its current one, assigned at takeover even if it wrote nothing in it).
      const prefix: number[] = [];
      let e = 0;
      for (let i = rng.int(0, 6); i > 0; i--) {
        if (rng.chance(0.4)) e++;
        prefix.push(e);
      }
      const branchEpochs = Array.from({ length: rng.int(1, 6) }, (_, i) => e + 1 + i);
      const lEpochs: number[] = [];
      const fEpochs: number[] = [];
      for (const be of branchEpochs) (rng.chance(0.5) ? lEpochs : fEpochs).push(be);
      const current = e + branchEpochs.length + 1;
      const lRecs = [...prefix];
      for (const be of lEpochs) for (let i = rng.int(0, 4); i > 0; i--) lRecs.push(be);
      const fRecs = [...prefix];
      for (const be of fEpochs) for (let i = rng.int(0, 4); i > 0; i--) fRecs.push(be);
      const leader = new Log(lRecs, current);
      const follower = new Log(fRecs);
      let agreed = 0;
      while (
        agreed < Math.min(lRecs.length, fRecs.length) && lRecs[agreed] === fRecs[agreed]
      ) agreed++;
      for (let step = 0; step < 20; step++) {
        const d = findDivergence(
          leader.endOffsetFor,
          follower.epochs.latestEpoch(),
          follower.end,
          0,
        );
        if (d === undefined) break;
        const to = truncationOffset(follower.endOffsetFor, follower.end, d, 0);
        expect(to).toBeGreaterThanOrEqual(agreed);
        expect(to).toBeLessThan(follower.end + 1);
        follower.truncate(to);
      }
      expect(follower.end).toBe(agreed);
      expect(follower.recs).toEqual(lRecs.slice(0, agreed));
    }
  });
});

describe("followerActions", () => {
  const local = (logEnd: number, logStart = 0) => ({
    logEnd,
    logStart,
    endOffsetFor: new Log(Array(logEnd).fill(1)).endOffsetFor,
  });
  const res = (o: Partial<ReplicaFetchResult>): ReplicaFetchResult => ({
    topicId: "t",
    partition: 0,
    errorCode: 0,
    highWatermark: 4,
    logStartOffset: 0,
    logEndOffset: 10,
    bytes: 0,
    ...o,
  });

  test("an error does nothing", () => {
    expect(followerActions(res({ errorCode: 74, bytes: 10 }), local(5))).toEqual([]);
  });

  test("a diverging epoch truncates only (no append, no watermark)", () => {
    expect(followerActions(res({ diverging: { epoch: 1, endOffset: 3 }, bytes: 10 }), local(5)))
      .toEqual([{ kind: "truncate", offset: 3 }]);
  });

  test("records append, then the watermark follows", () => {
    expect(followerActions(res({ bytes: 100 }), local(5))).toEqual([
      { kind: "append" },
      { kind: "highWatermark", offset: 4 },
    ]);
    expect(followerActions(res({}), local(5))).toEqual([{ kind: "highWatermark", offset: 4 }]);
  });

  test("the leader's log start moved past our end: reset", () => {
    expect(followerActions(res({ logStartOffset: 8, bytes: 10 }), local(5))).toEqual([
      { kind: "reset", offset: 8 },
    ]);
  });

  test("the leader's log start moved within our log: delete before it", () => {
    expect(followerActions(res({ logStartOffset: 3, bytes: 10 }), local(5, 1))).toEqual([
      { kind: "append" },
      { kind: "deleteBefore", offset: 3 },
      { kind: "highWatermark", offset: 4 },
    ]);
  });
});

describe("fetchAhead (a follower far behind asks for more before appending)", () => {
  /** Batches of 4 records of 16 KiB from `base` on, in `epoch`: as a leader's answer holds them. */
  function batches(base: number, n: number, epoch = 3): Uint8Array {
    const out: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      const b = batch({ count: 4, valueSize: 16 * 1024 });
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      writeI64(v, 0, base + 4 * i);
      v.setInt32(12, epoch);
      out.push(b);
    }
    return concat(...out);
  }
  const answer = (records: Uint8Array, logEndOffset: number): ReplicaFetchResult => ({
    topicId: "t",
    partition: 0,
    errorCode: 0,
    highWatermark: logEndOffset,
    logStartOffset: 0,
    logEndOffset,
    bytes: records.length,
  });
  const two = batches(100, 32); // 2 MiB: offsets 100..227

  test("a bulk answer with more after it: the next fetch starts after its last batch", () => {
    expect(two.length).toBeGreaterThanOrEqual(AHEAD_MIN_BYTES);
    expect(fetchAhead(100, answer(two, 10_000), two)).toEqual({
      fetchOffset: 228,
      lastFetchedEpoch: 3,
    });
  });

  test("nothing early when the answer reaches the leader's end, is small, or is not plain records", () => {
    // At the end: append, sync, then report (the early fetch would report the follower caught up).
    expect(fetchAhead(100, answer(two, 228), two)).toBeUndefined();
    const small = batches(100, 8);
    expect(fetchAhead(100, answer(small, 10_000), small)).toBeUndefined();
    expect(fetchAhead(100, { ...answer(two, 10_000), errorCode: 74 }, two)).toBeUndefined();
    expect(fetchAhead(100, { ...answer(two, 10_000), diverging: { epoch: 2, endOffset: 50 } }, two))
      .toBeUndefined();
    // The leader's log starts past the follower's end: the follower starts over there.
    expect(fetchAhead(100, { ...answer(two, 10_000), logStartOffset: 150 }, two)).toBeUndefined();
    expect(fetchAhead(100, { ...answer(two, 10_000), bytes: 5 }, two)).toBeUndefined();
  });

  test("any doubt about the batches: nothing early", () => {
    // Cut inside the last batch, a bad magic byte, a batch before where the fetch asked.
    expect(fetchAhead(100, answer(two, 10_000), two.subarray(0, two.length - 10)))
      .toBeUndefined();
    const bad = two.slice();
    bad[16 * (two.length / 32) + 16] = 1; // the 17th batch's magic
    expect(fetchAhead(100, answer(bad, 10_000), bad)).toBeUndefined();
    expect(fetchAhead(101, answer(two, 10_000), two)).toBeUndefined();
    // A gap between batches (a compacted log) is fine: the follower's end is the last batch's.
    const gap = concat(batches(100, 16), batches(300, 16, 4));
    expect(fetchAhead(100, answer(gap, 10_000), gap)).toEqual({
      fetchOffset: 364,
      lastFetchedEpoch: 4,
    });
  });
});
