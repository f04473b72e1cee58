// The leader side of one partition replica, as a pure core: follower positions, the ISR as the
// leader sees it (committed, plus at most one change it proposed and the controller has not yet
// committed), and the high watermark. Time comes in as arguments; decisions come out as return
// values the shell acts on (an ISR change to send to the controller). Nothing here does IO.
//
// Safety rules kept here (Kafka's KIP-497 "maximal ISR"):
// - the high watermark is the minimum *durable* end over the committed ISR plus any pending
//   addition; a pending removal still counts until the controller commits it, so a leader cut off
//   from the controller can never complete acks=all on its own;
// - the high watermark never goes back while this broker leads in this epoch;
// - one ISR change in flight at a time, carrying the partition epoch it was computed from.
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { isrDurableMin, maximalIsr } from "./hw.ts";
import { planted } from "./planted.ts";

export interface FollowerPosition {
  /** The follower's log end (its last fetch offset). -1 until it fetched in this epoch. */
  logEnd: number;
  /** What the follower has fsynced (it reports this in every fetch). */
  durableEnd: number;
  /** Last time the follower was caught up to the leader's log end (Kafka's lastCaughtUpTimeMs). */
  lastCaughtUpMs: number;
  lastFetchMs: number;
  /** The leader's log end when the follower fetched last (for the caught-up rule). */
  leaderEndAtLastFetch: number;
}

export interface IsrProposal {
  isr: number[];
  /** The partition epoch the proposal was computed from; the controller refuses a stale one. */
  partitionEpoch: number;
  leaderEpoch: number;
  reason: string;
}

export interface LeaderInit {
  self: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: readonly number[];
  isr: readonly number[];
  /** The leader's log end when it took over: followers must reach it to rejoin (same epoch). */
  epochStartOffset: number;
  /** The high watermark the broker had (checkpointed), never above the log end. */
  highWatermark: number;
  logEnd: number;
  durableEnd: number;
  nowMs: number;
  /** replica.lag.time.max.ms */
  lagTimeMaxMs: number;
  /**
   * A single-replica partition (RF 1) keeps today's behaviour: its watermark is its log end, as
   * nothing can be lost to a failover; RF > 1 counts only synced bytes.
   */
  countUnsynced?: boolean;
}

/** How long a proposal may stay unanswered before it is sent again. */
export const PROPOSAL_RETRY_MS = 2000;

/**
 * After the controller refused to add a follower (fenced, shutting down), how long before the
 * leader asks again. Each proposal counts the follower in the HW until it is answered, so
 * asking on every fetch held acks=all writes again and again while a broker restarted.
 */
export const JOIN_RETRY_MS = 500;

export class LeaderCore {
  readonly self: number;
  readonly leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  /** The ISR as committed in the metadata. */
  isr: number[];
  /** The change proposed to the controller and not yet committed (null: none). */
  pending: IsrProposal | null = null;
  pendingSinceMs = 0;
  readonly epochStartOffset: number;
  readonly lagTimeMaxMs: number;
  readonly countUnsynced: boolean;
  readonly followers = new Map<number, FollowerPosition>();
  /** Followers the controller refused to add: not proposed again before this time. */
  readonly #joinRetryAt = new Map<number, number>();
  #hw: number;
  #logEnd: number;
  #durableEnd: number;

  constructor(o: LeaderInit) {
    this.self = o.self;
    this.leaderEpoch = o.leaderEpoch;
    this.partitionEpoch = o.partitionEpoch;
    this.replicas = [...o.replicas];
    this.isr = [...o.isr];
    this.epochStartOffset = o.epochStartOffset;
    this.lagTimeMaxMs = o.lagTimeMaxMs;
    this.countUnsynced = o.countUnsynced ?? false;
    this.#logEnd = o.logEnd;
    this.#durableEnd = o.durableEnd;
    this.#hw = Math.max(0, Math.min(o.highWatermark, o.logEnd));
    for (const id of this.replicas) {
      if (id === this.self) continue;
      // A fresh grace period: nobody is thrown out of the ISR for time before this leadership.
      this.followers.set(id, {
        logEnd: -1,
        durableEnd: -1,
        lastCaughtUpMs: o.nowMs,
        lastFetchMs: -1,
        leaderEndAtLastFetch: -1,
      });
    }
    this.#check();
    this.#recompute();
  }

  get highWatermark(): number {
    return this.#hw;
  }

  get logEnd(): number {
    return this.#logEnd;
  }

  /** The ISR the high watermark is computed over: committed plus a pending addition. */
  maximalIsr(): number[] {
    return maximalIsr(this.isr, this.pending?.isr ?? null);
  }

  /** The leader's own log moved (append) or became durable. Returns true if the HW moved. */
  onLocal(logEnd: number, durableEnd: number): boolean {
    this.#logEnd = logEnd;
    this.#durableEnd = Math.min(durableEnd, logEnd);
    return this.#recompute();
  }

  /**
   * A follower fetched at `fetchOffset` (its log end) reporting `durableEnd` synced. Returns
   * whether the HW moved and, when the follower may rejoin the ISR, a proposal for that.
   * `mayJoin` false: the follower's broker is fenced or shutting down (as the leader knows it),
   * so it is not proposed for the ISR (KIP-841): the controller would refuse it, and the
   * proposal would hold the HW until then.
   */
  onFetch(
    id: number,
    fetchOffset: number,
    durableEnd: number,
    nowMs: number,
    mayJoin = true,
  ): { hwMoved: boolean; proposal?: IsrProposal } {
    const f = this.followers.get(id);
    if (f === undefined) return { hwMoved: false };
    const end = this.#logEnd;
    // Kafka's rule: caught up now if it asked for the log end; else caught up as of its previous
    // fetch if it has reached what the log end was then.
    if (fetchOffset >= end) f.lastCaughtUpMs = nowMs;
    else if (f.leaderEndAtLastFetch >= 0 && fetchOffset >= f.leaderEndAtLastFetch) {
      f.lastCaughtUpMs = Math.max(f.lastCaughtUpMs, f.lastFetchMs);
    }
    f.leaderEndAtLastFetch = end;
    f.lastFetchMs = nowMs;
    f.logEnd = fetchOffset;
    f.durableEnd = planted.size !== 0 && planted.has("position-from-log-end")
      ? fetchOffset
      : Math.min(durableEnd, fetchOffset);
    const hwMoved = this.#recompute();
    return { hwMoved, proposal: mayJoin ? this.#maybeExpand(id, nowMs) : undefined };
  }

  /** Clock tick: followers that lagged too long leave the ISR (by proposal). */
  tick(nowMs: number): IsrProposal | undefined {
    if (this.pending !== null) {
      if (nowMs - this.pendingSinceMs < PROPOSAL_RETRY_MS) return undefined;
      this.pendingSinceMs = nowMs;
      return this.pending; // resend: the controller or the network may have dropped it
    }
    const out: number[] = [];
    for (const id of this.isr) {
      if (id === this.self) continue;
      const f = this.followers.get(id);
      if (f !== undefined && nowMs - f.lastCaughtUpMs > this.lagTimeMaxMs) out.push(id);
    }
    if (out.length === 0) return undefined;
    return this.#propose(
      this.isr.filter((id) => !out.includes(id)),
      nowMs,
      `replica(s) ${out.join(",")} not caught up for ${this.lagTimeMaxMs} ms`,
    );
  }

  /**
   * The committed metadata for this partition changed within this leader epoch (an ISR change,
   * ours or the controller's, or a replica set change). Returns true if the HW moved.
   */
  onCommitted(
    partitionEpoch: number,
    isr: readonly number[],
    replicas: readonly number[],
  ): boolean {
    if (partitionEpoch < this.partitionEpoch) return false;
    this.partitionEpoch = partitionEpoch;
    this.isr = [...isr];
    this.replicas = [...replicas];
    for (const id of this.replicas) {
      if (id !== this.self && !this.followers.has(id)) {
        this.followers.set(id, {
          logEnd: -1,
          durableEnd: -1,
          lastCaughtUpMs: this.pendingSinceMs,
          lastFetchMs: -1,
          leaderEndAtLastFetch: -1,
        });
      }
    }
    for (const id of [...this.followers.keys()]) {
      if (!this.replicas.includes(id)) this.followers.delete(id);
    }
    // Any committed change settles what we proposed: it either is that change or made it stale.
    this.pending = null;
    this.#check();
    return this.#recompute();
  }

  /**
   * The controller refused the proposal (or the call failed): forget it, so the next tick may
   * propose again, unless it adds a replica and the refusal does not prove that no copy of it
   * was applied. A resend or a duplicate is refused as stale (INVALID_UPDATE_VERSION) once the
   * first copy committed, a call may time out after it committed, and a zombie leader's resend
   * is refused for its old epoch: dropping the addition then would take a replica the
   * controller holds in the ISR (and may elect) out of the HW. The addition keeps counting until
   * the metadata settles it (onCommitted), as Kafka keeps a pending ISR on these errors.
   * `errorCode` undefined means unknown (a failed call). `proposal`, when given, is the one
   * refused: an answer to an earlier one (a late reply to a previous leadership's call) changes
   * nothing.
   */
  onProposalRefused(errorCode?: number, proposal?: IsrProposal, nowMs?: number): void {
    const p = this.pending;
    if (p === null || (proposal !== undefined && proposal !== p)) return;
    const added = p.isr.filter((id) => !this.isr.includes(id));
    // Refusals that prove the controller applied no copy of it.
    const notApplied = errorCode === ErrorCode.INELIGIBLE_REPLICA ||
      errorCode === ErrorCode.INVALID_REQUEST ||
      (planted.size !== 0 && planted.has("refusal-forgets-addition"));
    if (added.length > 0 && !notApplied) return;
    for (const id of added) {
      this.#joinRetryAt.set(id, (nowMs ?? this.pendingSinceMs) + JOIN_RETRY_MS);
    }
    this.pending = null;
  }

  #maybeExpand(id: number, nowMs: number): IsrProposal | undefined {
    if (this.pending !== null || this.isr.includes(id)) return undefined;
    if (nowMs < (this.#joinRetryAt.get(id) ?? 0)) return undefined;
    const f = this.followers.get(id)!;
    // Rejoin only once synced up to the HW, and within this epoch (past its start offset), so
    // a follower that has not yet truncated to this leader's history cannot count.
    const synced = f.durableEnd >= this.#hw ||
      (planted.size !== 0 && planted.has("rejoin-below-hw"));
    if (!synced || f.logEnd < this.epochStartOffset) return undefined;
    return this.#propose([...this.isr, id], nowMs, `replica ${id} caught up`);
  }

  #propose(isr: number[], nowMs: number, reason: string): IsrProposal {
    this.pending = {
      isr,
      partitionEpoch: this.partitionEpoch,
      leaderEpoch: this.leaderEpoch,
      reason,
    };
    this.pendingSinceMs = nowMs;
    // A pending addition counts for the HW at once; a pending removal does not.
    this.#recompute();
    return this.pending;
  }

  #recompute(): boolean {
    const own = this.countUnsynced ? this.#logEnd : this.#durableEnd;
    const pos = (id: number) => (id === this.self ? own : this.followers.get(id)?.durableEnd);
    const min = planted.size !== 0 && planted.has("hw-majority-of-replicas")
      ? this.replicas.map((id) => pos(id) ?? -1).sort((a, b) => b - a)[this.replicas.length >> 1]
      : isrDurableMin(this.maximalIsr(), pos);
    const next = Math.min(min, this.#logEnd);
    if (next > this.#hw) {
      this.#hw = next;
      return true;
    }
    return false;
  }

  /** Invariants (TigerBeetle's habit: assert them in the code, not only in tests). */
  #check(): void {
    if (!this.isr.includes(this.self)) {
      throw new Error(`leader ${this.self} is not in its own ISR [${this.isr}]`);
    }
    for (const id of this.isr) {
      if (!this.replicas.includes(id)) {
        throw new Error(`ISR member ${id} is not a replica [${this.replicas}]`);
      }
    }
    if (this.#hw > this.#logEnd) {
      throw new Error(`high watermark ${this.#hw} above the log end ${this.#logEnd}`);
    }
  }
}
