// One partition replica on this broker: the only object that owns its log, its role (leader or
// follower), leader epoch, ISR and high watermark. Leader decisions are LeaderCore's (pure); this
// shell feeds it the log's positions and the clock, holds the acks=all waiters, and wakes readers
// when the high watermark moves. Nobody else reads the log end as "what consumers may see".
import type { PartitionLog } from "../storage/index.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { type IsrProposal, LeaderCore } from "./leader.ts";
import { planted } from "./planted.ts";
import type { ReassignmentState } from "../meta/records.ts";

export class ReplicaError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}

export const NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20;

export interface ReplicaAssignment {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  /** Leadership named in the metadata that this broker may not take up yet (still fenced). */
  gated?: boolean;
  /** A reassignment in flight: its adding replicas' copy may be throttled. */
  reassignment?: ReassignmentState | null;
}

interface AckWaiter {
  /** The batch's last offset: answered once the high watermark passes it. */
  lastOffset: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export interface ReplicaHooks {
  /** The high watermark moved (or the replica changed role): wake long-polls. */
  onHighWatermark(r: Replica): void;
  /** The leader wants an ISR change committed. */
  propose(r: Replica, p: IsrProposal): void;
  /** replica.lag.time.max.ms */
  lagTimeMaxMs: number;
  now(): number;
  log: (msg: string, fields: Record<string, unknown>) => void;
  debug: (msg: string, fields: Record<string, unknown>) => void;
  /** The ISR of a partition led here changed within one leader epoch (for the metrics). */
  onIsrChange?: (r: Replica, shrunk: boolean, expanded: boolean) => void;
}

export class Replica {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  minInsyncReplicas: number;
  /** The reassignment in flight, as last applied (null: none). */
  reassignment: ReassignmentState | null = null;
  /** Consumer long-polls (Fetch, HTTP tails): woken when the high watermark moves. */
  readonly waiters = new Set<{ offset: number; wake: () => void }>();
  #core: LeaderCore | null = null;
  /** As a follower: the leader's high watermark, capped by what this log holds. */
  #followerHw = 0;
  #acks: AckWaiter[] = [];
  #syncing = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    readonly log: PartitionLog,
    readonly nodeId: number,
    a: ReplicaAssignment,
    minInsyncReplicas: number,
    readonly hooks: ReplicaHooks,
    /** The checkpointed high watermark from before a restart (0 when unknown). */
    initialHw = 0,
  ) {
    this.leader = -1;
    this.leaderEpoch = -1;
    this.partitionEpoch = -1;
    this.replicas = a.replicas;
    this.isr = a.isr;
    this.minInsyncReplicas = minInsyncReplicas;
    this.#followerHw = Math.min(initialHw, log.logEndOffset());
    this.update(a, minInsyncReplicas);
  }

  get isLeader(): boolean {
    return this.#core !== null;
  }

  /** Single-copy partitions keep the single broker's behaviour: readers see what is written. */
  get #single(): boolean {
    return this.replicas.length === 1;
  }

  highWatermark(): number {
    if (this.#core === null) return Math.min(this.#followerHw, this.log.logEndOffset());
    if (this.#single) return this.log.logEndOffset();
    return this.#core.highWatermark;
  }

  /** For views: the leader's knowledge of each follower (empty on a follower). */
  followers(): { id: number; logEnd: number; durableEnd: number; lastCaughtUpMs: number }[] {
    if (this.#core === null) return [];
    return [...this.#core.followers].map(([id, f]) => ({ id, ...f }));
  }

  /** The committed metadata of this partition, applied in order of leader and partition epoch. */
  update(a: ReplicaAssignment, minInsyncReplicas: number): void {
    this.minInsyncReplicas = minInsyncReplicas;
    const stale = a.leaderEpoch < this.leaderEpoch ||
      (a.leaderEpoch === this.leaderEpoch && a.partitionEpoch <= this.partitionEpoch);
    if (stale) {
      // Nothing newer, but this broker was fenced meanwhile: it stops leading at once, and
      // forgets the partition epoch so the same assignment, ungated, makes it leader again.
      if (a.gated === true && this.#core !== null) {
        this.partitionEpoch = -1;
        this.#becomeFollower();
      }
      return;
    }
    const newEpoch = a.leaderEpoch !== this.leaderEpoch;
    const prevIsr = this.isr;
    const wasSingle = this.#single;
    this.leader = a.leader;
    this.leaderEpoch = a.leaderEpoch;
    this.partitionEpoch = a.partitionEpoch;
    this.replicas = [...a.replicas];
    this.isr = [...a.isr];
    this.reassignment = a.reassignment ?? null;
    if (a.leader === this.nodeId && a.gated !== true) {
      if (newEpoch || this.#core === null) this.#becomeLeader();
      else {
        const shrunk = prevIsr.some((id) => !a.isr.includes(id));
        const expanded = a.isr.some((id) => !prevIsr.includes(id));
        if (shrunk || expanded) this.hooks.onIsrChange?.(this, shrunk, expanded);
        // A single copy grows (a reassignment adds replicas): everything it served counts as
        // committed, whatever the core last heard (the watermark never goes back).
        const end = this.log.logEndOffset();
        if (wasSingle && !this.#single) this.#core.onLocal(end, end);
        if (this.#core.onCommitted(a.partitionEpoch, a.isr, a.replicas)) this.#hwMoved();
        else this.#releaseAcks(); // a shrink may let waiters finish (with AFTER_APPEND)
        if (wasSingle && !this.#single) this.#syncLocal();
      }
    } else if (this.#core !== null || newEpoch) {
      this.#becomeFollower();
    }
  }

  #becomeLeader(): void {
    const now = this.hooks.now();
    const hw = this.highWatermark();
    // The epoch starts here before anything is appended in it (followers ask about it).
    if (!(planted.size !== 0 && planted.has("no-epoch-on-takeover"))) {
      this.log.assignEpoch(this.leaderEpoch);
    }
    this.#core = new LeaderCore({
      self: this.nodeId,
      leaderEpoch: this.leaderEpoch,
      partitionEpoch: this.partitionEpoch,
      replicas: this.replicas,
      isr: this.isr,
      epochStartOffset: this.log.logEndOffset(),
      highWatermark: hw,
      logEnd: this.log.logEndOffset(),
      durableEnd: this.log.durableEndOffset(),
      nowMs: now,
      lagTimeMaxMs: this.hooks.lagTimeMaxMs,
    });
    this.hooks.debug("became leader", {
      topic: this.topic,
      partition: this.partition,
      leader_epoch: this.leaderEpoch,
      isr: this.isr,
      high_watermark: hw,
      log_end: this.log.logEndOffset(),
    });
    this.#syncLocal();
    this.hooks.onHighWatermark(this);
  }

  #becomeFollower(): void {
    const wasLeader = this.#core !== null;
    if (wasLeader) this.#followerHw = this.#core!.highWatermark;
    this.#core = null;
    this.#failAcks(
      new ReplicaError(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `broker ${this.nodeId} no longer leads ${this.topic}-${this.partition} (leader ${this.leader}, epoch ${this.leaderEpoch})`,
      ),
    );
    if (wasLeader || this.leader !== -1) {
      this.hooks.debug("became follower", {
        topic: this.topic,
        partition: this.partition,
        leader: this.leader,
        leader_epoch: this.leaderEpoch,
      });
    }
    this.hooks.onHighWatermark(this);
  }

  /** Leader: appended bytes; the watermark follows once they (and the ISR's copies) are synced. */
  afterAppend(): void {
    if (this.#core === null) return;
    if (this.#single) {
      // What a single copy serves and acknowledges is committed: the core's watermark follows,
      // so a replica a reassignment adds must copy all of it before it can join the ISR.
      this.#core.onLocal(this.log.logEndOffset(), this.log.logEndOffset());
      this.hooks.onHighWatermark(this);
      return;
    }
    this.#core.onLocal(this.log.logEndOffset(), this.log.durableEndOffset());
    this.#syncLocal();
  }

  /** Leader: sync what is written (shared rounds), then count it toward the watermark. */
  #syncLocal(): void {
    if (this.#syncing || this.#core === null || this.#single) return;
    const end = this.log.logEndOffset();
    if (this.log.durableEndOffset() >= end) {
      if (this.#core.onLocal(end, this.log.durableEndOffset())) this.#hwMoved();
      return;
    }
    this.#syncing = true;
    this.log.waitDurable(end).then(
      () => {
        this.#syncing = false;
        const c = this.#core;
        if (c === null) return;
        if (c.onLocal(this.log.logEndOffset(), this.log.durableEndOffset())) this.#hwMoved();
        if (this.log.durableEndOffset() < this.log.logEndOffset()) this.#syncLocal();
      },
      (e) => {
        this.#syncing = false;
        this.hooks.log("leader sync failed", { topic: this.topic, error: String(e) });
      },
    );
  }

  /**
   * Leader, acks=all: resolves once the high watermark covers `lastOffset`, with
   * NOT_ENOUGH_REPLICAS_AFTER_APPEND if by then the ISR shrank below min.insync.replicas, and
   * NOT_LEADER_OR_FOLLOWER at once if leadership is lost meanwhile.
   */
  waitCommitted(lastOffset: number): Promise<void> {
    if (this.#core === null) {
      return Promise.reject(
        new ReplicaError(
          ErrorCode.NOT_LEADER_OR_FOLLOWER,
          `broker ${this.nodeId} does not lead ${this.topic}-${this.partition}`,
        ),
      );
    }
    if (this.highWatermark() > lastOffset) return this.#afterCommit();
    return new Promise<void>((resolve, reject) => {
      this.#acks.push({ lastOffset, resolve, reject });
    });
  }

  #afterCommit(): Promise<void> {
    if (this.isr.length < this.minInsyncReplicas) {
      return Promise.reject(
        new ReplicaError(
          NOT_ENOUGH_REPLICAS_AFTER_APPEND,
          `${this.topic}-${this.partition}: the ISR shrank to ${this.isr.length}, below min.insync.replicas ${this.minInsyncReplicas}, before the write was replicated`,
        ),
      );
    }
    return Promise.resolve();
  }

  #hwMoved(): void {
    const hw = this.highWatermark();
    if (hw > this.log.logEndOffset()) {
      throw new Error(`high watermark ${hw} above the log end ${this.log.logEndOffset()}`);
    }
    this.#releaseAcks();
    this.hooks.onHighWatermark(this);
  }

  #releaseAcks(): void {
    if (this.#acks.length === 0) return;
    const hw = this.highWatermark();
    let i = 0;
    while (i < this.#acks.length && this.#acks[i].lastOffset < hw) i++;
    if (i === 0) return;
    const done = this.#acks.splice(0, i);
    for (const w of done) this.#afterCommit().then(w.resolve, w.reject);
  }

  #failAcks(e: Error): void {
    const all = this.#acks;
    this.#acks = [];
    for (const w of all) w.reject(e);
  }

  /** Leader: a follower fetched. Returns the divergence check's inputs to the caller. */
  onFollowerFetch(id: number, fetchOffset: number, durableEnd: number, mayJoin = true): void {
    const c = this.#core;
    if (c === null) return;
    const r = c.onFetch(id, fetchOffset, durableEnd, this.hooks.now(), mayJoin);
    if (r.hwMoved) this.#hwMoved();
    if (r.proposal) this.#proposal(r.proposal);
  }

  /** Clock tick: lagging followers leave the ISR (proposed); proposals are resent. */
  tick(): void {
    const c = this.#core;
    if (c === null) return;
    const p = c.tick(this.hooks.now());
    if (p) this.#proposal(p);
  }

  #proposal(p: IsrProposal): void {
    this.hooks.log("proposing ISR change", {
      topic: this.topic,
      partition: this.partition,
      isr: p.isr,
      reason: p.reason,
    });
    this.hooks.propose(this, p);
  }

  /** The controller refused our proposal: the next tick recomputes it. */
  proposalRefused(errorCode?: number, proposal?: IsrProposal): void {
    this.#core?.onProposalRefused(errorCode, proposal, this.hooks.now());
  }

  /** Follower: the leader's high watermark, from a fetch answer. */
  setFollowerHw(hw: number): void {
    if (this.#core !== null) return;
    const next = Math.min(hw, this.log.logEndOffset());
    if (next > this.#followerHw) {
      this.#followerHw = next;
    }
  }

  /** Follower truncation may lower what this log holds below a stale watermark. */
  capFollowerHw(): void {
    if (this.#core === null) this.#followerHw = Math.min(this.#followerHw, this.log.logEndOffset());
  }

  /** The replica is closing or its topic is deleted: nothing waits on it any more. */
  close(): void {
    this.#failAcks(
      new ReplicaError(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `${this.topic}-${this.partition} is closing`,
      ),
    );
    this.#core = null;
    for (const w of [...this.waiters]) w.wake();
  }
}
