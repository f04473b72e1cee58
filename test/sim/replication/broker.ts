// One broker: its partition log and the replication shells around the real cores. The replica
// shell itself is production's: a Replica (replica.ts: update and its gating, becoming leader or
// follower, log.assignEpoch, the leader's sync of its own writes, the high watermark, follower
// positions and ISR proposals through LeaderCore, the follower's watermark) runs over this
// broker's simulated log (SimLog below). Mirrored line for line where it matters: the acks=all
// waiters (Replica's #releaseAcks / #afterCommit settle Promises, which would resolve only after
// the whole synchronous run), ReplicaManager.#serveOne / applyFetched / propose and the Fetcher
// loop (replica-manager.ts), the produce path's lease check (partition-manager.ts), and
// registerBroker. The session with the controller (heartbeat schedule, fencing, the lease) is
// production's SessionCore (session-core.ts) over simulated time and messages, as SessionClient
// runs it over timers and PeerLink. Its metadata comes from its own Raft node (metadata.ts) and
// its controller (controller.ts) acts while that node leads.
//
// A partition log is an array of records (one record = one batch of one record's epoch); the
// log start never moves. A truncation is durable at once (the real log refuses appends until it
// is). An fsync completes after a random delay and covers what was written when it started; a
// crash keeps the durable prefix plus a random part of the unsynced tail. The applied metadata
// and the checkpointed high watermark survive a crash. Followers do not always wait for their
// fsync before the next fetch (Kafka followers never do).
import type { PersistedState } from "../../../src/cluster/raft/types.ts";
import type { Rng } from "../../../src/cluster/sim/index.ts";
import {
  findDivergence,
  followerActions,
  type ReplicaFetchResult,
} from "../../../src/replication/follower.ts";
import type { IsrProposal } from "../../../src/replication/leader.ts";
import { Replica } from "../../../src/replication/replica.ts";
import { SessionCore } from "../../../src/replication/session-core.ts";
import type { PartitionLog } from "../../../src/storage/index.ts";
import { LeaderEpochCache } from "../../../src/storage/epoch-cache.ts";
import type { Env } from "./cluster.ts";
import { Controller } from "./controller.ts";
import { GroupShell } from "./group.ts";
import { MetaNode } from "./metadata.ts";
import {
  CHECKPOINT_MS,
  cloneMeta,
  E,
  FETCH_TIMEOUT_MS,
  LAG_TIME_MAX_MS,
  MAX_FETCH_RECORDS,
  type MetaState,
  MIN_INSYNC,
  type Msg,
  type Rec,
  REGISTER_RETRY_MS,
  SESSIONS,
  TOPIC,
  TOPIC_ID,
} from "./model.ts";

/** SessionClient.call's default timeout (3000 ms in production), for AlterPartition. */
const ALTER_TIMEOUT_MS = 1000;
/** node.ts #forward: a register request times out after RPC_TIMEOUT_MS (3000 in production). */
const REGISTER_TIMEOUT_MS = 1000;
/** A zombie's ack this long after its replacement was committed counts as late. */
const ZOMBIE_GRACE_MS = 100;
/** node.ts MAX_HOPS. */
const MAX_HOPS = 2;

export interface AckWaiter {
  lastOffset: number;
  base: number;
  ids: string[];
  reply: (errorCode: number) => void;
}

export class Broker {
  inc = 0;
  up = true;
  paused = false;
  backlog: (() => void)[] = [];
  ticks = 0;
  // disk
  log: Rec[] = [];
  durableEnd = 0;
  epochs = new LeaderEpochCache();
  gen = 0;
  syncing = false;
  // metadata, as applied here (durable, like meta.db)
  meta: MetaState;
  applied: number;
  readonly metaNode: MetaNode;
  ctl: Controller;
  // SessionClient and registerBroker
  registered = true;
  registerIndex = -1;
  registerOut: { at: number } | null = null;
  lastRegisterMs = -1e9;
  /** Production's session core: fenced as the controller last answered, and the lease. */
  session = Broker.#bootedSession();
  hbSeq = 0;
  /** The heartbeat call in flight (its answer is taken only while it is the current one). */
  hbOut = 0;
  aid = 0;
  /** AlterPartition calls in flight: id -> sent at, and the proposal (for a refusal). */
  alters = new Map<number, { at: number; p: IsrProposal }>();
  /** Production's replica shell over this broker's log (null: no replica here). */
  replica: Replica | null = null;
  /** waitDurable callers: settled when the simulated fsync covers their offset. */
  durableWaiters: { end: number; ok: () => void; err: (e: unknown) => void }[] = [];
  acks: AckWaiter[] = [];
  /** The group coordinator on this broker (while it leads the partition). */
  readonly group = new GroupShell(this);
  /** Highest leader epoch this broker appended client records in (this incarnation). */
  appendEpoch = -1;
  // Fetcher
  fetchOut: { fid: number; at: number; epoch: number } | null = null;
  nextFetchAt = 0;
  fid = 0;
  /** The follower waits for its fsync before fetching again. */
  waitSync = false;
  /** What the checker last saw as this broker's high watermark. */
  seenHw = 0;
  /** The high watermark as last checkpointed (durable; replication-offset-checkpoint). */
  hwCheckpoint = 0;
  lastCheckpointMs = 0;

  constructor(
    readonly id: number,
    readonly env: Env,
    meta: MetaState,
    applied: number,
    raft: PersistedState,
    raftRng: Rng,
  ) {
    this.meta = cloneMeta(meta);
    this.applied = applied;
    this.metaNode = new MetaNode(this, env, raft, raftRng);
    this.ctl = new Controller(this, env);
  }

  get logEnd(): number {
    return this.log.length;
  }

  /** ReplicaManager.canLead, as SessionClient's onFenced sets it. */
  get canLead(): boolean {
    return !this.session.fenced;
  }

  /**
   * The simulation starts mid-life: every broker unfenced by a heartbeat sent at 0 (a restarted
   * one starts a fresh session, fenced, as a new SessionClient does).
   */
  static #bootedSession(): SessionCore {
    const s = new SessionCore(SESSIONS.heartbeatMs, SESSIONS.sessionTimeoutMs);
    s.onHeartbeatSent(0, 0, false);
    s.onAnswer(0, { fenced: false }, 0);
    return s;
  }

  get isLeader(): boolean {
    return this.replica?.isLeader ?? false;
  }
  get leader(): number {
    return this.replica?.leader ?? -1;
  }
  get leaderEpoch(): number {
    return this.replica?.leaderEpoch ?? -1;
  }
  get replicas(): number[] {
    return this.replica?.replicas ?? [];
  }
  get isr(): number[] {
    return this.replica?.isr ?? [];
  }

  highWatermark(): number {
    return this.replica?.highWatermark() ?? 0;
  }

  endOffsetFor = (e: number) => this.epochs.endOffsetFor(e, this.logEnd);

  /** SessionClient.leaseValid. */
  leaseValid(): boolean {
    return this.session.leaseValid(this.env.now);
  }

  #send(to: number, msg: Msg): void {
    this.env.send(this.id, to, msg);
  }

  #log(line: string): void {
    this.env.log(line);
  }

  // ---- process lifecycle ---------------------------------------------------------------------

  /** Power off: the disk keeps the durable prefix and maybe part of the unsynced tail. */
  crash(): void {
    this.up = false;
    this.paused = false;
    this.backlog = [];
    const keep = this.durableEnd +
      (this.env.rng.chance(0.5) ? this.env.rng.int(0, this.logEnd - this.durableEnd + 1) : 0);
    if (keep < this.logEnd) this.env.counts.lostUnsynced++;
    this.log.length = keep;
    this.durableEnd = keep;
    this.epochs.truncateFromEnd(keep); // recovery: epochs.truncateFromEnd(logEnd)
    this.gen++;
    this.syncing = false;
    this.durableWaiters = [];
    this.metaNode.crash();
    this.#log(`crash ${this.id}: log kept to ${keep}`);
  }

  restart(): void {
    this.up = true;
    this.inc++;
    this.registered = false;
    this.registerIndex = -1;
    this.registerOut = null;
    this.lastRegisterMs = -1e9;
    this.hbOut = 0;
    this.session = new SessionCore(SESSIONS.heartbeatMs, SESSIONS.sessionTimeoutMs);
    this.alters.clear();
    this.replica = null; // a new one, from the checkpointed high watermark
    this.acks = [];
    this.seenHw = 0;
    this.fetchOut = null;
    this.waitSync = false;
    this.appendEpoch = -1;
    this.ctl = new Controller(this, this.env);
    this.#log(`restart ${this.id} (incarnation ${this.inc}, log end ${this.logEnd})`);
    this.metaNode.boot();
    this.reconcile();
    if (this.logEnd > this.durableEnd) this.#startSync();
  }

  // ---- metadata and roles --------------------------------------------------------------------

  /** Committed metadata was applied here (the broker's onMetadataChanged). */
  metadataChanged(): void {
    if (!this.registered && this.registerIndex >= 0 && this.applied >= this.registerIndex) {
      this.#registered();
    }
    this.reconcile();
  }

  /** partition-manager #assignment, then production's Replica.update. */
  reconcile(): void {
    const p = this.meta.part;
    if (!p.replicas.includes(this.id)) {
      // partition-manager syncTopic: a replica a reassignment moved away loses its log, once
      // this broker may lead (it has caught up on metadata since it registered).
      if (this.canLead && (this.log.length > 0 || this.replica !== null)) this.#deleteLog();
      return;
    }
    const gated = p.leader === this.id && !this.canLead;
    const a = {
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: gated ? -1 : p.partitionEpoch,
      replicas: p.replicas,
      isr: p.isr,
      gated,
    };
    const r = this.replica;
    const wasLeader = r?.isLeader ?? false;
    const epoch = r?.leaderEpoch ?? -1;
    if (r === null) {
      // The checkpointed high watermark from before a restart (the Replica's initialHw).
      this.replica = new Replica(TOPIC, 0, TOPIC_ID, this.#simLog, this.id, a, MIN_INSYNC, {
        onHighWatermark: () => this.#releaseAcks(),
        propose: (_r, prop) => this.#propose(prop),
        lagTimeMaxMs: LAG_TIME_MAX_MS,
        now: () => this.env.now,
        log: () => {},
        debug: (msg) => {
          if (msg === "became leader") this.#becameLeader();
        },
      }, this.hwCheckpoint);
    } else r.update(a, MIN_INSYNC);
    const now = this.replica!;
    if (wasLeader && !now.isLeader) {
      // Replica.#becomeFollower fails its waiters: so are these.
      const acks = this.acks;
      this.acks = [];
      for (const w of acks) w.reply(E.NOT_LEADER_OR_FOLLOWER);
    }
    if (!now.isLeader && (wasLeader || now.leaderEpoch !== epoch)) {
      // The fetcher follows the new leader (ReplicaManager's changed hook).
      this.fetchOut = null;
      this.nextFetchAt = this.env.now;
    }
    // HW moved or a shrink may let waiters finish (with AFTER_APPEND): release either way.
    if (now.isLeader) this.#releaseAcks();
  }

  /** Replica.#becomeLeader ran (its "became leader" debug line): the model's checks. */
  #becameLeader(): void {
    this.fetchOut = null;
    this.group.load();
    this.#log(
      `broker ${this.id} leads epoch ${this.leaderEpoch} (log end ${this.logEnd}, hw ${this.highWatermark()}, isr [${this.isr}])`,
    );
    // Every acknowledged record must be in every later leader's log.
    const what = `new leader ${this.id} (epoch ${this.leaderEpoch})`;
    this.env.check.holdsAcked(what, this.log, this.leaderEpoch);
    this.env.check.holdsSeen(what, this.log, this.leaderEpoch);
  }

  /**
   * The slice of PartitionLog a Replica uses, over this broker's simulated log. waitDurable
   * returns a thenable the simulated fsync settles synchronously (a Promise would settle only
   * after the whole synchronous run); a truncation below a waiter fails it, as GroupCommit does.
   */
  readonly #simLog = {
    logEndOffset: () => this.logEnd,
    durableEndOffset: () => this.durableEnd,
    assignEpoch: (epoch: number) => this.epochs.assign(epoch, this.logEnd),
    waitDurable: (end: number) => ({
      then: (ok: () => void, err: (e: unknown) => void) => {
        if (end <= this.durableEnd) return ok();
        this.durableWaiters.push({ end, ok, err });
        this.#startSync();
      },
    }),
  } as unknown as PartitionLog;

  // ---- the session with the controller (SessionClient, registerBroker) -------------------------

  /** Where a call to the controller goes: this broker (local), the known leader, or nowhere. */
  #controller(): number {
    return this.metaNode.isLeader ? this.id : this.metaNode.leader;
  }

  #register(): void {
    const now = this.env.now;
    if (this.registerIndex >= 0) return; // registered in the log: wait until applied here
    if (this.registerOut !== null && now - this.registerOut.at < REGISTER_TIMEOUT_MS) return;
    if (now - this.lastRegisterMs < REGISTER_RETRY_MS) return;
    this.lastRegisterMs = now;
    this.registerOut = { at: now };
    const to = this.#controller();
    if (to === this.id) {
      const inc = this.inc;
      this.ctl.register(this.id, (index) => this.#registerAnswer(inc, index));
    } else if (to >= 0) {
      this.#send(to, { t: "register", inc: this.inc, origin: this.id, hops: 1 });
    } else this.registerOut = null; // no metadata leader known yet: try again later
  }

  #registerAnswer(inc: number, index: number): void {
    if (inc !== this.inc || !this.up || this.registered || this.registerOut === null) return;
    this.registerOut = null;
    if (index < 0) return;
    this.registerIndex = index;
    if (this.applied >= index) this.#registered();
  }

  #registered(): void {
    this.registered = true;
    this.#log(`broker ${this.id} registered (index ${this.registerIndex})`);
  }

  /** SessionClient.#beat: one heartbeat call at a time; a late answer to a timed-out call is lost. */
  #heartbeat(): void {
    const now = this.env.now;
    const core = this.session;
    if (core.inFlight !== null && now - core.inFlight >= core.callTimeoutMs) {
      this.hbOut = 0;
      core.onFailure(now);
    }
    if (!core.heartbeatDue(now)) return;
    const seq = this.hbOut = ++this.hbSeq;
    // Three voters: never a lone controller.
    const body = core.onHeartbeatSent(now, this.applied, false);
    const to = this.#controller();
    if (to === this.id) {
      const r = this.ctl.heartbeat(this.id, body.appliedIndex);
      this.#heartbeatAnswer(seq, r !== undefined, r?.fenced ?? true);
    } else if (to >= 0) {
      this.#send(to, { t: "hb", inc: this.inc, seq, applied: body.appliedIndex });
    } else this.#heartbeatAnswer(seq, false, true); // "no controller known"
  }

  #heartbeatAnswer(seq: number, ok: boolean, fenced: boolean): void {
    const sent = this.session.inFlight;
    if (this.hbOut !== seq || sent === null) return;
    this.hbOut = 0;
    if (!ok) return this.session.onFailure(this.env.now);
    if (this.session.onAnswer(sent, { fenced }, this.env.now)) this.reconcile(); // setCanLead
  }

  /** ReplicaManager.propose: an AlterPartition call to the controller. */
  #propose(p: IsrProposal): void {
    this.#log(`broker ${this.id} proposes ISR [${p.isr}] (${p.reason})`);
    const req = { leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, isr: p.isr };
    const aid = ++this.aid;
    this.alters.set(aid, { at: this.env.now, p });
    const to = this.#controller();
    if (to === this.id) {
      const inc = this.inc;
      this.ctl.alterPartition(this.id, req, (code) => this.#alterAnswer(inc, aid, code));
    } else if (to >= 0) this.#send(to, { t: "alter", inc: this.inc, aid, ...req });
    else this.#alterAnswer(this.inc, aid, -1); // "no controller known"
  }

  /** The call's answer (-1: the call failed): Replica.proposalRefused(code) on a refusal. */
  #alterAnswer(inc: number, aid: number, errorCode: number): void {
    const call = this.alters.get(aid);
    if (inc !== this.inc || !this.up || call === undefined) return;
    this.alters.delete(aid);
    if (errorCode === 0) return;
    this.env.counts.refusedAlters++;
    this.replica?.proposalRefused(errorCode < 0 ? undefined : errorCode, call.p);
  }

  // ---- periodic work -------------------------------------------------------------------------

  tick(): void {
    const now = this.env.now;
    if (now - this.lastCheckpointMs >= CHECKPOINT_MS) {
      this.lastCheckpointMs = now;
      this.hwCheckpoint = this.highWatermark();
    }
    for (const [aid, { at }] of this.alters) {
      if (now - at >= ALTER_TIMEOUT_MS) this.#alterAnswer(this.inc, aid, -1);
    }
    if (!this.registered) this.#register();
    else this.#heartbeat();
    if (this.isLeader) return this.replica!.tick();
    this.#maybeFetch();
  }

  #maybeFetch(): void {
    if (
      this.isLeader || this.leader < 0 || this.leader === this.id ||
      !this.replicas.includes(this.id)
    ) return;
    if (this.waitSync && this.durableEnd < this.logEnd) return;
    this.waitSync = false;
    const now = this.env.now;
    if (this.fetchOut !== null && now - this.fetchOut.at < FETCH_TIMEOUT_MS) return;
    if (now < this.nextFetchAt) return;
    this.fetchOut = { fid: ++this.fid, at: now, epoch: this.leaderEpoch };
    this.#send(this.leader, {
      t: "fetch",
      inc: this.inc,
      fid: this.fid,
      currentLeaderEpoch: this.leaderEpoch,
      fetchOffset: this.logEnd,
      lastFetchedEpoch: this.epochs.latestEpoch(),
      durableEnd: this.durableEnd,
    });
  }

  // ---- disk ----------------------------------------------------------------------------------

  #startSync(): void {
    if (this.syncing) return;
    this.syncing = true;
    this.env.timers.push(this.env.now + this.env.rng.int(1, this.env.fsyncMaxMs), {
      k: "sync",
      node: this.id,
      inc: this.inc,
      gen: this.gen,
      target: this.logEnd,
    });
  }

  synced(gen: number, target: number): void {
    this.syncing = false;
    if (gen === this.gen) {
      this.durableEnd = Math.max(this.durableEnd, Math.min(target, this.logEnd));
    }
    // The Replica's waitDurable callbacks (its leader counts its own synced bytes).
    const done = this.durableWaiters.filter((w) => w.end <= this.durableEnd);
    this.durableWaiters = this.durableWaiters.filter((w) => w.end > this.durableEnd);
    for (const w of done) w.ok();
    if (this.durableEnd < this.logEnd) this.#startSync();
    else if (this.waitSync) this.#maybeFetch();
  }

  /** #dropLog: the replica object closes (its waiters answered) and its log is deleted. */
  #deleteLog(): void {
    this.#log(`broker ${this.id} is no replica any more: log of ${this.logEnd} deleted`);
    // The replica closes: its waiters are answered.
    const acks = this.acks;
    this.acks = [];
    for (const w of acks) w.reply(E.NOT_LEADER_OR_FOLLOWER);
    for (const w of this.durableWaiters) w.err(new Error("log deleted"));
    this.durableWaiters = [];
    this.env.counts.logsDeleted++;
    this.log.length = 0;
    this.durableEnd = 0;
    this.epochs = new LeaderEpochCache();
    this.gen++;
    this.syncing = false;
    this.waitSync = false;
    this.seenHw = 0;
    this.hwCheckpoint = 0;
    this.fetchOut = null;
    // A new Replica if it is added again: it applies that assignment as new.
    this.replica = null;
  }

  /** PartitionLog.truncateTo. */
  #truncate(to: number): void {
    if (to >= this.logEnd) {
      // No records to cut, but an epoch recorded at the end with nothing written in it goes.
      this.epochs.truncateFromEnd(to);
      return;
    }
    const hw = this.highWatermark();
    if (to < hw) {
      this.env.check.fail(
        `(3) broker ${this.id} truncated to ${to}, below its high watermark ${hw}`,
      );
    }
    this.env.counts.truncations++;
    this.#log(`broker ${this.id} truncates ${this.logEnd} -> ${to}`);
    this.log.length = to;
    this.durableEnd = Math.min(this.durableEnd, to);
    this.epochs.truncateFromEnd(to);
    this.gen++;
    this.syncing = false;
    // GroupCommit.truncated: waiters for bytes past the cut fail.
    for (const w of this.durableWaiters.filter((x) => x.end > to)) w.err(new Error("truncated"));
    this.durableWaiters = this.durableWaiters.filter((x) => x.end <= to);
    this.replica?.capFollowerHw();
    this.seenHw = Math.min(this.seenHw, to);
  }

  #append(recs: Rec[]): boolean {
    for (const r of recs) {
      if (r.epoch < this.epochs.latestEpoch()) {
        // The real log refuses it (InvalidRecordError): it only happens if divergence was missed.
        this.env.check.fail(
          `(4) broker ${this.id}: appending epoch ${r.epoch} after epoch ${this.epochs.latestEpoch()} at ${this.logEnd}`,
        );
      }
      this.epochs.assign(r.epoch, this.logEnd);
      this.log.push(r);
    }
    return recs.length > 0;
  }

  // ---- leader side ---------------------------------------------------------------------------

  #releaseAcks(): void {
    if (this.acks.length === 0) return;
    const hw = this.highWatermark();
    let i = 0;
    while (i < this.acks.length && this.acks[i].lastOffset < hw) i++;
    if (i === 0) return;
    const done = this.acks.splice(0, i);
    for (const w of done) this.#afterCommit(w);
  }

  #afterCommit(w: AckWaiter): void {
    if (this.isr.length < MIN_INSYNC) return w.reply(E.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    // Invariant 1 is about what the client is told: an ack is checked when it is given.
    // A waiter may outlive the epoch it was appended in (the broker led again in a later epoch
    // without ever following, as Replica.update keeps its waiters): the record is committed in
    // the epoch that answers it.
    this.hwCheck();
    this.env.check.ack(this.id, this.leaderEpoch, w.base, w.ids, this.log);
    for (const o of this.env.brokers.values()) {
      if (o !== this && o.up && o.isLeader && o.leaderEpoch > this.leaderEpoch) {
        this.env.check.holdsAcked(
          `leader ${o.id} (epoch ${o.leaderEpoch}, newer than ${this.leaderEpoch})`,
          o.log,
        );
      }
    }
    if (this.leaderEpoch < this.env.latest().part.leaderEpoch) {
      // A newer epoch is committed: mostly the election's own round trip; "late" when the
      // replacement was committed over ZOMBIE_GRACE_MS ago (what the lease is meant to stop).
      this.env.counts.zombieAcks++;
      const since = this.env.metaCheck.epochSince.get(this.leaderEpoch + 1) ?? this.env.now;
      const late = this.env.now - since > ZOMBIE_GRACE_MS;
      if (late) this.env.counts.lateZombieAcks++;
      this.#log(
        `broker ${this.id} acks ${w.ids} as a zombie (epoch ${this.leaderEpoch}, replaced ${
          this.env.now - since
        } ms ago, lease from ${this.session.confirmedAt})`,
      );
    }
    this.env.counts.acked += w.ids.length;
    w.reply(E.NONE);
  }

  /** The checker follows this broker's high watermark (every offset it passes is committed). */
  hwCheck(): void {
    const hw = this.highWatermark();
    if (hw > this.logEnd) {
      this.env.check.fail(
        `broker ${this.id}: high watermark ${hw} above its log end ${this.logEnd}`,
      );
    }
    if (hw > this.seenHw) {
      this.env.check.hwPassed(this.id, this.leaderEpoch, this.log, this.seenHw, hw);
    }
    this.seenHw = hw;
  }

  #produce(from: number, m: Extract<Msg, { t: "produce" }>): void {
    const reply = (errorCode: number, base = -1) =>
      this.#send(from, { t: "produceResp", rid: m.rid, errorCode, base });
    if (!this.isLeader) return reply(E.NOT_LEADER_OR_FOLLOWER);
    if (!this.leaseValid()) {
      // Possibly a zombie (paused past its session): a newer leader may exist already.
      this.env.counts.leaseRefusals++;
      return reply(E.NOT_LEADER_OR_FOLLOWER);
    }
    if (this.isr.length < MIN_INSYNC) return reply(E.NOT_ENOUGH_REPLICAS);
    // Producer state, as the log keeps it: the last sequence of each producer id.
    let last = -1;
    let dupBase = -1;
    for (let o = this.logEnd - 1; o >= 0; o--) {
      const r = this.log[o];
      if (r.pid !== m.pid) continue;
      if (last < 0) last = r.seq;
      if (r.seq === m.seq) dupBase = o;
      if (r.seq < m.seq) break;
    }
    let base: number;
    let ids: string[];
    if (m.seq <= last) {
      if (dupBase < 0) return reply(E.OUT_OF_ORDER_SEQUENCE);
      this.env.counts.duplicates++;
      base = dupBase;
      ids = [];
      for (
        let o = dupBase;
        o < this.logEnd && this.log[o].pid === m.pid && this.log[o].seq === m.seq;
        o++
      ) {
        ids.push(this.log[o].id);
      }
    } else if (m.seq !== last + 1) {
      return reply(E.OUT_OF_ORDER_SEQUENCE);
    } else {
      ids = [];
      const recs: Rec[] = [];
      for (let i = 0; i < m.n; i++) {
        const id = `${m.pid}.${m.seq}.${i}`;
        ids.push(id);
        recs.push({ epoch: this.leaderEpoch, pid: m.pid, seq: m.seq, id });
      }
      base = this.leaderAppend(recs);
    }
    this.awaitHw({ lastOffset: base + ids.length - 1, base, ids, reply: (c) => reply(c, base) });
  }

  /** A leader's append (the lease and the ISR checked by the caller): returns its base offset. */
  leaderAppend(recs: Rec[]): number {
    this.env.check.leaderAppend(this.id, this.leaderEpoch);
    if (this.leaderEpoch < this.appendEpoch) {
      this.env.check.fail(
        `(4) broker ${this.id} appends in epoch ${this.leaderEpoch} after ${this.appendEpoch}`,
      );
    }
    this.appendEpoch = this.leaderEpoch;
    if (this.leaderEpoch < this.env.latest().part.leaderEpoch) this.env.counts.zombieAppends++;
    const base = this.logEnd;
    this.#append(recs);
    this.replica!.afterAppend();
    return base;
  }

  /** acks=all: answered once the high watermark passes the last record. */
  awaitHw(w: AckWaiter): void {
    if (this.highWatermark() > w.lastOffset) this.#afterCommit(w);
    else this.acks.push(w);
  }

  /** ReplicaManager.#serveOne. */
  #serveFetch(from: number, q: Extract<Msg, { t: "fetch" }>): void {
    const base: ReplicaFetchResult = {
      topicId: "t",
      partition: 0,
      errorCode: 0,
      highWatermark: -1,
      logStartOffset: -1,
      logEndOffset: -1,
      bytes: 0,
    };
    const answer = (res: ReplicaFetchResult, records: Rec[] = []) =>
      this.#send(from, { t: "fetchResp", inc: q.inc, fid: q.fid, res, records });
    if (!this.isLeader || !this.replicas.includes(from) || from === this.id) {
      return answer({ ...base, errorCode: E.NOT_LEADER_OR_FOLLOWER });
    }
    if (q.currentLeaderEpoch !== this.leaderEpoch) {
      const code = q.currentLeaderEpoch < this.leaderEpoch
        ? E.FENCED_LEADER_EPOCH
        : E.UNKNOWN_LEADER_EPOCH;
      return answer({ ...base, errorCode: code });
    }
    const filled = {
      ...base,
      highWatermark: this.highWatermark(),
      logStartOffset: 0,
      logEndOffset: this.logEnd,
    };
    const diverging = findDivergence(this.endOffsetFor, q.lastFetchedEpoch, q.fetchOffset, 0);
    if (diverging !== undefined) {
      this.env.counts.divergences++;
      return answer({ ...filled, diverging });
    }
    if (q.fetchOffset > this.logEnd) {
      return answer({ ...filled, errorCode: E.OFFSET_OUT_OF_RANGE });
    }
    this.replica!.onFollowerFetch(from, q.fetchOffset, q.durableEnd);
    const records = this.log.slice(
      q.fetchOffset,
      Math.min(this.logEnd, q.fetchOffset + MAX_FETCH_RECORDS),
    );
    answer({ ...filled, highWatermark: this.highWatermark(), bytes: records.length }, records);
  }

  // ---- messages ------------------------------------------------------------------------------

  receive(from: number, m: Msg): void {
    switch (m.t) {
      case "raft":
        return this.metaNode.receive(m.m);
      case "register":
        return this.#registerRequest(m);
      case "registerResp":
        return this.#registerAnswer(m.inc, m.index);
      case "hb": {
        const r = this.ctl.heartbeat(from, m.applied);
        const fenced = r?.fenced ?? true;
        this.#send(from, { t: "hbResp", inc: m.inc, seq: m.seq, ok: r !== undefined, fenced });
        return;
      }
      case "hbResp":
        if (m.inc !== this.inc) return;
        return this.#heartbeatAnswer(m.seq, m.ok, m.fenced);
      case "alter": {
        const { inc, aid } = m;
        const req = { leaderEpoch: m.leaderEpoch, partitionEpoch: m.partitionEpoch, isr: m.isr };
        this.ctl.alterPartition(from, req, (errorCode) => {
          if (this.up) this.#send(from, { t: "alterResp", inc, aid, errorCode });
        });
        return;
      }
      case "alterResp":
        return this.#alterAnswer(m.inc, m.aid, m.errorCode);
      case "fetch":
        return this.#serveFetch(from, m);
      case "fetchResp":
        return this.#fetched(from, m);
      case "produce":
        return this.#produce(from, m);
      case "commit":
        return this.group.commit(from, m);
      case "offsetFetch":
        return this.group.offsetFetch(from, m);
      case "read": {
        if (!this.isLeader) {
          const ids: string[] = [];
          this.#send(from, { t: "readResp", rid: m.rid, errorCode: 6, offset: m.offset, ids });
          return;
        }
        const hw = this.highWatermark();
        const ids = this.log.slice(m.offset, Math.min(hw, m.offset + 20)).map((r) => r.id);
        this.#send(from, { t: "readResp", rid: m.rid, errorCode: 0, offset: m.offset, ids });
        return;
      }
      default:
        return;
    }
  }

  /** node.ts #onRequest("register"): the leader handles it, anyone else forwards it. */
  #registerRequest(m: Extract<Msg, { t: "register" }>): void {
    const answer = (index: number) => {
      if (this.up) this.#send(m.origin, { t: "registerResp", inc: m.inc, index });
    };
    if (this.metaNode.isLeader) return this.ctl.register(m.origin, answer);
    const to = this.metaNode.leader;
    if (m.hops >= MAX_HOPS || to < 0 || to === this.id) return answer(-1);
    this.#send(to, { ...m, hops: m.hops + 1 });
  }

  /** The Fetcher loop and ReplicaManager.applyFetched. */
  #fetched(from: number, m: Extract<Msg, { t: "fetchResp" }>): void {
    if (m.inc !== this.inc || this.fetchOut === null || this.fetchOut.fid !== m.fid) return;
    const sentEpoch = this.fetchOut.epoch;
    this.fetchOut = null;
    if (this.isLeader || this.leader !== from || this.leaderEpoch !== sentEpoch) return;
    const res = m.res;
    if (this.env.tracing && (res.errorCode !== 0 || res.diverging)) {
      this.#log(
        `broker ${this.id} fetch from ${from} at ${this.logEnd} (epoch ${this.leaderEpoch}, last ${this.epochs.latestEpoch()}): error ${res.errorCode} diverging ${
          JSON.stringify(res.diverging)
        }`,
      );
    }
    if (res.errorCode !== 0) {
      this.nextFetchAt = this.env.now + 100;
      return;
    }
    const actions = followerActions(res, {
      logEnd: this.logEnd,
      logStart: 0,
      endOffsetFor: this.endOffsetFor,
    });
    let appended = false;
    for (const a of actions) {
      switch (a.kind) {
        case "truncate":
          this.#truncate(a.offset);
          break;
        case "append":
          appended = this.#append(m.records);
          break;
        case "highWatermark":
          this.replica!.setFollowerHw(a.offset);
          break;
        default:
          break;
      }
    }
    if (appended) {
      this.#startSync();
      // Half the time the follower fetches again at once, before its sync completes (Kafka
      // followers never wait); else after it, as this broker's Fetcher does.
      this.waitSync = this.env.rng.chance(0.5);
      this.nextFetchAt = this.env.now;
      this.#maybeFetch();
    } else if (actions.length > 0 && actions[0].kind === "truncate") {
      this.nextFetchAt = this.env.now;
      this.#maybeFetch();
    } else {
      this.nextFetchAt = this.env.now + this.env.rng.int(5, 30); // long poll: nothing new
    }
  }
}
