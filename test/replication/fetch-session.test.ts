// Incremental replica fetch sessions (src/replication/fetch-session.ts): the follower names only
// what changed, the leader keeps the rest and answers only what is new, and any disagreement
// between the two (a lost request, a restarted leader) ends in a full fetch, never in a position
// the leader holds that the follower did not send.
import { expect, test } from "bun:test";
import {
  alignAnswer,
  FetchSessionCache,
  FetchSessionClient,
  mustAnswer,
  SESSION_IDLE_MS,
} from "../../src/replication/fetch-session.ts";
import type { ReplicaFetchPartition, ReplicaFetchResult } from "../../src/replication/follower.ts";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";

interface Part {
  p: number;
  end: number;
}

const pos = (x: Part): ReplicaFetchPartition => ({
  topicId: "tid",
  topic: "t",
  partition: x.p,
  currentLeaderEpoch: 1,
  fetchOffset: x.end,
  lastFetchedEpoch: 1,
  durableEnd: x.end,
  logStartOffset: 0,
});

test("follower: full first, then only changed partitions and the forgotten ones", () => {
  const c = new FetchSessionClient<Part>();
  const a = { p: 0, end: 5 };
  const b = { p: 1, end: 7 };
  const d = { p: 2, end: 0 };
  const full = c.build([a, b, d], [a, b, d].map(pos));
  expect(full.session).toEqual({ id: 0, epoch: 0 });
  expect(full.partitions.map((q) => q.partition)).toEqual([0, 1, 2]);
  expect(c.answered({ session: { id: 42 } })).toBe(true);

  const idle = c.build([a, b, d], [a, b, d].map(pos));
  expect(idle).toEqual({ session: { id: 42, epoch: 1 }, partitions: [], forgotten: [] });
  expect(c.answered({ session: { id: 42 } })).toBe(true);

  b.end = 9;
  const moved = c.build([a, b], [a, b].map(pos)); // b moved, d no longer fetched (a backoff, a new leader)
  expect(moved.session).toEqual({ id: 42, epoch: 2 });
  expect(moved.partitions).toEqual([pos(b)]);
  expect(moved.forgotten).toEqual([{ topicId: "tid", partition: 2 }]);
  expect(c.answered({ session: { id: 42 } })).toBe(true);

  const back = c.build([a, b, d], [a, b, d].map(pos)); // d again: named in full
  expect(back.partitions).toEqual([pos(d)]);
});

test("follower: a failed call or a refusal makes the next fetch full", () => {
  const c = new FetchSessionClient<Part>();
  const a = { p: 0, end: 5 };
  c.build([a], [a].map(pos));
  c.answered({ session: { id: 7 } });
  c.build([a], [a].map(pos));
  c.reset(); // the call failed: the leader may or may not have applied it
  expect(c.build([a], [a].map(pos))).toEqual({
    session: { id: 0, epoch: 0 },
    partitions: [pos(a)],
    forgotten: [],
  });
  c.answered({ session: { id: 8 } });
  c.build([a], [a].map(pos));
  expect(c.answered({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, results: [] } as never))
    .toBe(false);
  expect(c.build([a], [a].map(pos)).session).toEqual({ id: 0, epoch: 0 });
  // A leader without sessions answers none: every fetch stays full.
  c.answered({});
  expect(c.build([a], [a].map(pos)).partitions).toEqual([pos(a)]);
  // Another session id than ours: start over.
  c.answered({ session: { id: 9 } });
  c.build([a], [a].map(pos));
  expect(c.answered({ session: { id: 10 } })).toBe(false);
  expect(c.build([a], [a].map(pos)).session.id).toBe(0);
});

test("leader: a session keeps unnamed positions, applies changes and forgets", () => {
  const cache = new FetchSessionCache(100);
  const opened = cache.open(2, {
    session: { id: 0, epoch: 0 },
    partitions: [pos({ p: 0, end: 5 }), pos({ p: 1, end: 7 })],
    forgotten: [],
  }, 0);
  if ("errorCode" in opened) throw new Error("refused");
  expect(opened.session.id).toBe(100);
  expect(opened.named.size).toBe(2);
  const next = cache.open(2, {
    session: { id: 100, epoch: 1 },
    partitions: [pos({ p: 1, end: 9 })],
    forgotten: [],
  }, 1);
  if ("errorCode" in next) throw new Error("refused");
  expect([...next.session.parts.values()].map((x) => [x.q.partition, x.q.fetchOffset]))
    .toEqual([[0, 5], [1, 9]]);
  expect(next.named.size).toBe(1);
  const gone = cache.open(2, {
    session: { id: 100, epoch: 2 },
    partitions: [],
    forgotten: [{ topicId: "tid", partition: 0 }],
  }, 2);
  if ("errorCode" in gone) throw new Error("refused");
  expect([...gone.session.parts.values()].map((x) => x.q.partition)).toEqual([1]);
});

test("leader: a repeated or skipped epoch, an unknown id or another follower's id is refused", () => {
  const cache = new FetchSessionCache(5);
  const full = { session: { id: 0, epoch: 0 }, partitions: [pos({ p: 0, end: 1 })], forgotten: [] };
  cache.open(2, full, 0);
  const inc = (id: number, epoch: number) => ({
    session: { id, epoch },
    partitions: [],
    forgotten: [],
  });
  expect(cache.open(3, inc(5, 1), 0)).toEqual({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
  expect(cache.open(2, inc(6, 1), 0)).toEqual({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
  expect("session" in cache.open(2, inc(5, 1), 0)).toBe(true);
  expect(cache.open(2, inc(5, 1), 0)).toEqual({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH });
  // Refused once for its epoch, the session is gone: only a full fetch opens another.
  expect(cache.open(2, inc(5, 2), 0)).toEqual({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
  const again = cache.open(2, full, 0);
  expect("session" in again && again.session.id).toBe(6);
});

test("leader: unused sessions expire; one per follower", () => {
  const cache = new FetchSessionCache(1);
  const full = { session: { id: 0, epoch: 0 }, partitions: [], forgotten: [] };
  cache.open(2, full, 0);
  cache.open(2, full, 10); // the same follower again: replaces its session
  cache.open(3, full, 1000);
  expect(cache.size).toBe(2);
  cache.expire(SESSION_IDLE_MS + 500);
  expect(cache.size).toBe(1);
  cache.expire(SESSION_IDLE_MS + 1001);
  expect(cache.size).toBe(0);
});

test("answer: named, or with something new; what was told is remembered", () => {
  const p = { key: "k", q: pos({ p: 0, end: 5 }), hw: -2, logStart: -2, logEnd: -2 };
  const r: ReplicaFetchResult = {
    topicId: "tid",
    partition: 0,
    errorCode: 0,
    highWatermark: 5,
    logStartOffset: 0,
    logEndOffset: 5,
    bytes: 0,
  };
  expect(mustAnswer(p, r, false)).toBe(true); // never told
  expect(mustAnswer(p, r, false)).toBe(false); // nothing new
  expect(mustAnswer(p, r, true)).toBe(true); // named: always answered
  expect(mustAnswer(p, { ...r, highWatermark: 6 }, false)).toBe(true);
  expect(mustAnswer(p, { ...r, highWatermark: 6 }, false)).toBe(false);
  expect(mustAnswer(p, { ...r, highWatermark: 6, logEndOffset: 8 }, false)).toBe(true);
  expect(mustAnswer(p, { ...r, highWatermark: 6, logEndOffset: 8, logStartOffset: 2 }, false))
    .toBe(true);
  const same = { ...r, highWatermark: 6, logEndOffset: 8, logStartOffset: 2 };
  expect(mustAnswer(p, { ...same, errorCode: 6 }, false)).toBe(true);
  expect(mustAnswer(p, { ...same, bytes: 10 }, false)).toBe(true);
  expect(mustAnswer(p, { ...same, diverging: { epoch: 0, endOffset: 1 } }, false)).toBe(true);
});

test("follower: an answer lines up with the fetch's partitions, its records too", () => {
  const parts = [{ p: 0, end: 0 }, { p: 1, end: 0 }, { p: 2, end: 0 }];
  const key = (x: Part) => `tid\u0000${x.p}`;
  const res = (p: number, bytes: number): ReplicaFetchResult => ({
    topicId: "tid",
    partition: p,
    errorCode: 0,
    highWatermark: 0,
    logStartOffset: 0,
    logEndOffset: 0,
    bytes,
  });
  // In order: the tail as it came.
  const tail = new Uint8Array([1, 1, 2, 2, 2]);
  const a = alignAnswer(parts, key, [res(0, 2), res(2, 3)], tail)!;
  expect(a.results.map((r) => r?.partition)).toEqual([0, undefined, 2]);
  expect(a.tail).toBe(tail);
  // The leader's order differs from ours: records reordered with their results.
  const b = alignAnswer(
    parts,
    key,
    [res(2, 3), res(1, 0), res(0, 2)],
    new Uint8Array([2, 2, 2, 0, 0]),
  )!;
  expect(b.results.map((r) => r?.partition)).toEqual([0, 1, 2]);
  expect([...b.tail]).toEqual([0, 0, 2, 2, 2]);
  // Not asked for, or named twice: the whole answer is refused.
  expect(alignAnswer(parts, key, [res(5, 0)], new Uint8Array())).toBeUndefined();
  expect(alignAnswer(parts, key, [res(1, 0), res(1, 0)], new Uint8Array())).toBeUndefined();
  expect(alignAnswer(parts, key, [null as unknown as ReplicaFetchResult], new Uint8Array()))
    .toBeUndefined();
});
