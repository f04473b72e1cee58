// Incremental replica fetch sessions (the idea of Kafka's KIP-227, on the cluster port's own
// replicaFetch call), as pure cores: a follower names every partition it follows from a leader
// once (a full fetch, which opens a session), then only the partitions whose position changed
// and those it stopped following; the leader keeps the session's positions and answers only the
// partitions with something to say (records, an error, a divergence, a new watermark, log start
// or log end). An idle follower's round then costs a few bytes on the wire and no JSON per
// partition, where listing 3,333 partitions each way cost ~60 ms of CPU a round and, at 10,000
// partitions per broker on two loaded cores, starved the timers that keep ISRs and sessions.
//
// The leader still looks at every partition of the session each round (cheaply, from memory):
// a partition the follower did not mention is where the follower last said, and counts as
// caught up when that is the leader's log end, exactly as if it had been listed.
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import type { ReplicaFetchPartition, ReplicaFetchResult } from "./follower.ts";

/** A partition's identity in a session. */
export const partitionKey = (topicId: string, partition: number): string =>
  `${topicId}\u0000${partition}`;

/** What a fetch says about its session (absent: the sender does not use sessions). */
export interface SessionRef {
  /** 0: open a new session with this (full) fetch. */
  id: number;
  /** Which request of the session this is: 0 for the full one, then 1, 2, ... */
  epoch: number;
}

export interface ForgottenPartition {
  topicId: string;
  partition: number;
}

/** The session part of a replicaFetch request. */
export interface SessionRequest {
  session: SessionRef;
  /** Full: every partition; incremental: the ones new or changed since the last request. */
  partitions: ReplicaFetchPartition[];
  /** Incremental: the partitions no longer fetched in this session. */
  forgotten: ForgottenPartition[];
}

const same = (a: ReplicaFetchPartition, b: ReplicaFetchPartition): boolean =>
  a.fetchOffset === b.fetchOffset && a.durableEnd === b.durableEnd &&
  a.currentLeaderEpoch === b.currentLeaderEpoch && a.lastFetchedEpoch === b.lastFetchedEpoch &&
  a.logStartOffset === b.logStartOffset && a.topic === b.topic;

/**
 * Follower side, one per leader fetched from; `K` identifies a partition (the follower's replica
 * object: no key strings built per round). `build` turns this round's partitions into a request;
 * `answered` takes the reply's session id (or its refusal); a failed call `reset`s, so the next
 * request is full (the leader may or may not have applied the lost one).
 */
export class FetchSessionClient<K> {
  #id = 0;
  #epoch = 0;
  /** The positions the leader holds for this session once the request in flight is answered. */
  #sent = new Map<K, ReplicaFetchPartition>();

  get id(): number {
    return this.#id;
  }

  /** `positions[i]` is where `parts[i]` stands now. */
  build(parts: readonly K[], positions: readonly ReplicaFetchPartition[]): SessionRequest {
    const full = this.#id === 0;
    const next = new Map<K, ReplicaFetchPartition>();
    const changed: ReplicaFetchPartition[] = [];
    for (let i = 0; i < parts.length; i++) {
      const k = parts[i];
      const p = positions[i];
      next.set(k, p);
      const before = this.#sent.get(k);
      if (full || before === undefined || !same(before, p)) changed.push(p);
    }
    const forgotten: ForgottenPartition[] = [];
    if (!full) {
      for (const [k, p] of this.#sent) {
        if (!next.has(k)) forgotten.push({ topicId: p.topicId, partition: p.partition });
      }
    }
    this.#sent = next;
    return {
      session: { id: this.#id, epoch: full ? 0 : this.#epoch },
      partitions: changed,
      forgotten,
    };
  }

  /**
   * The leader's answer to the last request: its session id, or an error code. Returns false if
   * the session was refused (the caller fetches again at once, in full).
   */
  answered(body: { session?: unknown; errorCode?: unknown }): boolean {
    if (body.errorCode !== undefined && body.errorCode !== ErrorCode.NONE) {
      this.reset();
      return false;
    }
    const s = body.session as { id?: unknown } | undefined;
    const id = typeof s?.id === "number" && Number.isSafeInteger(s.id) && s.id > 0 ? s.id : 0;
    if (this.#id === 0) {
      // A leader without sessions answers none: every request stays full.
      this.#id = id;
      this.#epoch = 1;
    } else if (id !== this.#id) {
      this.reset();
      return false;
    } else this.#epoch++;
    return true;
  }

  reset(): void {
    this.#id = 0;
    this.#epoch = 0;
    this.#sent.clear();
  }
}

/** A partition of a session as the leader holds it, with what it last told the follower. */
export interface SessionPartition {
  readonly key: string;
  q: ReplicaFetchPartition;
  /** In the last answer (-2: never answered in this session). */
  hw: number;
  logStart: number;
  logEnd: number;
}

export interface LeaderSession {
  readonly follower: number;
  readonly id: number;
  /** The epoch the next request must carry. */
  epoch: number;
  readonly parts: Map<string, SessionPartition>;
  lastUsedMs: number;
}

/** How long a leader keeps a session no request used (its follower stopped or moved on). */
export const SESSION_IDLE_MS = 120_000;

/**
 * Leader side: one session per follower broker (a follower runs one fetcher per leader, so a new
 * full fetch from it replaces its session). Bounded by the number of peers.
 */
export class FetchSessionCache {
  readonly #byFollower = new Map<number, LeaderSession>();
  #nextId: number;

  constructor(firstId = 1 + Math.floor(Math.random() * 0x3fffffff)) {
    this.#nextId = firstId;
  }

  get size(): number {
    return this.#byFollower.size;
  }

  /**
   * Apply a request to `follower`'s session. Returns the session and the partitions this request
   * named (they are answered whatever their state), or the Kafka error refusing it.
   */
  open(
    follower: number,
    req: SessionRequest,
    nowMs: number,
  ): { session: LeaderSession; named: Set<string> } | { errorCode: number } {
    const named = new Set<string>();
    if (req.session.id === 0) {
      const s: LeaderSession = {
        follower,
        id: this.#nextId,
        epoch: 1,
        parts: new Map(),
        lastUsedMs: nowMs,
      };
      this.#nextId = this.#nextId >= 0x7fffffff ? 1 : this.#nextId + 1;
      for (const q of req.partitions) {
        const k = partitionKey(q.topicId, q.partition);
        s.parts.set(k, { key: k, q, hw: -2, logStart: -2, logEnd: -2 });
        named.add(k);
      }
      this.#byFollower.set(follower, s);
      return { session: s, named };
    }
    const s = this.#byFollower.get(follower);
    if (s === undefined || s.id !== req.session.id) {
      return { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
    }
    if (req.session.epoch !== s.epoch) {
      // A request lost or repeated: the two sides no longer agree on the positions.
      this.#byFollower.delete(follower);
      return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
    }
    s.epoch++;
    s.lastUsedMs = nowMs;
    for (const f of req.forgotten) s.parts.delete(partitionKey(f.topicId, f.partition));
    for (const q of req.partitions) {
      const k = partitionKey(q.topicId, q.partition);
      const had = s.parts.get(k);
      if (had !== undefined) had.q = q;
      else s.parts.set(k, { key: k, q, hw: -2, logStart: -2, logEnd: -2 });
      named.add(k);
    }
    return { session: s, named };
  }

  /** Drop sessions unused for SESSION_IDLE_MS. */
  expire(nowMs: number): void {
    for (const [id, s] of this.#byFollower) {
      if (nowMs - s.lastUsedMs > SESSION_IDLE_MS) this.#byFollower.delete(id);
    }
  }
}

/**
 * Whether a session partition's result goes into the answer: the follower named it in this
 * request, or there is something it does not know yet. Records what was told.
 */
export function mustAnswer(p: SessionPartition, r: ReplicaFetchResult, named: boolean): boolean {
  const news = named || r.errorCode !== 0 || r.bytes > 0 || r.diverging !== undefined ||
    r.highWatermark !== p.hw || r.logStartOffset !== p.logStart || r.logEndOffset !== p.logEnd;
  if (news) {
    p.hw = r.highWatermark;
    p.logStart = r.logStartOffset;
    p.logEnd = r.logEndOffset;
  }
  return news;
}

/**
 * Follower side: a session's answer names only some partitions, in the leader's order, each by
 * topic id and number, its records in the tail in that order. Returns the results lined up with
 * `parts` (undefined: nothing new for it) and the tail in that order too (copied only when the
 * leader's order differs), as a full answer would be; undefined if the answer names a partition
 * not asked for, or one twice.
 */
export function alignAnswer<K>(
  parts: readonly K[],
  key: (k: K) => string,
  results: readonly ReplicaFetchResult[],
  tail: Uint8Array,
): { results: (ReplicaFetchResult | undefined)[]; tail: Uint8Array } | undefined {
  const index = new Map<string, number>();
  for (let i = 0; i < parts.length; i++) index.set(key(parts[i]), i);
  const out: (ReplicaFetchResult | undefined)[] = new Array(parts.length).fill(undefined);
  const slices: { i: number; at: number; n: number }[] = [];
  let at = 0;
  let ordered = true;
  for (const x of results) {
    if (x === null || typeof x !== "object" || typeof x.topicId !== "string") return undefined;
    const i = index.get(partitionKey(x.topicId, x.partition));
    if (i === undefined || out[i] !== undefined) return undefined;
    out[i] = x;
    const n = Number.isSafeInteger(x.bytes) && x.bytes > 0 ? x.bytes : 0;
    if (n > 0) {
      if (slices.length > 0 && slices[slices.length - 1].i > i) ordered = false;
      slices.push({ i, at, n });
    }
    at += n;
  }
  if (ordered) return { results: out, tail };
  slices.sort((a, b) => a.i - b.i);
  const copy = new Uint8Array(at);
  let to = 0;
  for (const s of slices) {
    copy.set(tail.subarray(s.at, s.at + s.n), to);
    to += s.n;
  }
  return { results: out, tail: copy };
}
