// Group commit: one fdatasync round serves every append written before it started.
// An append waiting for offset O is released by the first sync that STARTED after O was written.
// A requested sync starts at the end of the current microtask burst (no I/O or timer runs in
// between), so appenders resumed together by one settled round are all covered by the next one
// instead of the first of them starting a sync that the other seven just miss.
//
// Waiters share one promise per round rather than one each: every waiter of a round is released
// by the same sync, and a promise (with its resolving functions and handler) per acknowledged
// append was a good part of the garbage whose collections land in the latency tail.

import { LogError } from "./types.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";

interface Round {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** The highest offset a waiter of this round asked for. */
  maxOffset: number;
  /** Offsets below this are durable once the round's sync finishes (set when it starts). */
  covers: number;
  /** A truncation cut bytes some waiter of this round was waiting for. */
  cut: boolean;
}

export interface SyncTarget {
  /** Offset after the last byte written so far. */
  writtenOffset(): number;
  /** Sync every file holding bytes written so far (data files, directory entries). */
  syncAll(): Promise<void>;
}

const RESOLVED: Promise<void> = Promise.resolve();

export class GroupCommit {
  /** Offsets below this are durable. */
  durableOffset: number;
  /** The round whose sync is in flight. */
  private running: Round | null = null;
  /** The round the next sync will serve: waiters for bytes not covered by `running`. */
  private next: Round | null = null;
  private scheduled = false;
  /** Sync rounds started (for tests and benchmarks). */
  rounds = 0;
  private closedError: Error | null = null;
  /**
   * While a truncation is cutting bytes, no round vouches for offsets at or past the cut: a round
   * that starts (or settles) between the start of the cut and its end would otherwise raise the
   * durable mark over bytes about to go, and a checkpoint written then would claim them as synced.
   */
  private ceiling = Infinity;

  constructor(private readonly target: SyncTarget, initialDurable: number) {
    this.durableOffset = initialDurable;
  }

  /**
   * Resolves once offsets below `offset` are durable; `offset` must not exceed what is written.
   * The returned promise is pre-handled and may be shared with other waiters.
   */
  waitDurable(offset: number): Promise<void> {
    if (offset <= this.durableOffset) return RESOLVED;
    if (this.closedError) return handled(Promise.reject(this.closedError));
    const running = this.running;
    if (running !== null && offset <= running.covers && !running.cut) return running.promise;
    let next = this.next;
    if (next === null) next = this.next = newRound();
    if (offset > next.maxOffset) next.maxOffset = offset;
    this.kick();
    return next.promise;
  }

  /** A round is running or due. */
  get busy(): boolean {
    return this.running !== null || this.next !== null;
  }

  /** Sync whatever is written now (the interval flusher and close use this). */
  flush(): Promise<void> {
    return this.waitDurable(this.target.writtenOffset());
  }

  /**
   * Lower the durable mark after a truncation. Waiters for bytes at or above the cut were waiting
   * for bytes that no longer exist: their round fails rather than later vouching for other bytes
   * written at the same offsets, and a sync in flight no longer raises the mark past the cut.
   */
  truncated(offset: number): void {
    this.lowerTo(offset);
    this.ceiling = Infinity;
  }

  /**
   * A truncation to `offset` begins: as `truncated`, and until `truncated` is called with the
   * final end, the durable mark stays at or below `offset` whatever sync rounds settle meanwhile.
   */
  truncating(offset: number): void {
    this.lowerTo(offset);
    this.ceiling = Math.min(this.ceiling, offset);
  }

  private lowerTo(offset: number): void {
    this.durableOffset = Math.min(this.durableOffset, offset);
    for (const r of [this.running, this.next]) {
      if (r === null) continue;
      if (r.maxOffset > offset) r.cut = true;
      if (r.covers > offset) r.covers = offset;
    }
  }

  /** Fail pending and future waits (log closed or deleted). */
  fail(e: Error): void {
    this.closedError = e;
    const rs = [this.running, this.next];
    this.next = null;
    for (const r of rs) r?.reject(e);
  }

  /** Start a round at the end of the current microtask burst, unless one is running or due. */
  private kick(): void {
    if (this.running !== null || this.scheduled || this.next === null) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    const round = this.next;
    if (this.running !== null || round === null || this.closedError) return;
    this.next = null;
    this.running = round;
    // Bytes below `covers` were written (pwrite returned) before this sync is issued.
    round.covers = Math.min(this.target.writtenOffset(), this.ceiling);
    if (round.maxOffset > round.covers) round.cut = true;
    this.rounds++;
    this.target.syncAll().then(
      () => this.settle(round, null),
      (e) => this.settle(round, e ?? new Error("sync failed")),
    );
  }

  private settle(round: Round, err: unknown): void {
    if (this.running === round) this.running = null;
    const covers = Math.min(round.covers, this.ceiling);
    if (err === null && covers > this.durableOffset) this.durableOffset = covers;
    if (err !== null) round.reject(err);
    else if (round.cut) round.reject(new TruncatedError());
    else round.resolve();
    this.kick();
  }
}

/**
 * Bytes an append was waiting on were cut by a truncation before they became durable. Only a
 * follower truncates, so the producer is told what Kafka tells it when leadership moved.
 */
export class TruncatedError extends LogError {
  override name = "TruncatedError";
  constructor() {
    super(
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      "the log was truncated before these bytes were durable (NOT_LEADER_OR_FOLLOWER)",
    );
  }
}

function newRound(): Round {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject, maxOffset: 0, covers: 0, cut: false };
}

/** Mark a promise as handled so nobody awaiting it does not cause an unhandled rejection. */
export function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}
