// Deterministic model of the replication data path for one partition (RF 3, min.insync 2).
//
// Real cores, modelled shells. The decisions come from the real pure cores: LeaderCore
// (leader.ts), findDivergence / followerActions (follower.ts), onFenced / onUnfenced /
// preferredElections / checkIsrChange (elections.ts), SessionTracker (sessions.ts) and
// LeaderEpochCache (storage/epoch-cache.ts). The IO shells around them are mirrored here, line
// for line where it matters: Replica.update / #becomeLeader / #afterCommit (replica.ts),
// ReplicaManager.#serveOne / applyFetched and the Fetcher loop (replica-manager.ts), the
// controller's register / heartbeat / fence / unfence / alterPartition (controller-service.ts),
// and the PartitionChanged checks of src/meta/apply.ts.
//
// Simplifications (deliberate):
// - The controller is one node that never fails; its metadata is a totally ordered log whose
//   records are committed the moment they are appended (the real Raft core is not used here;
//   test/sim/raft covers it). Brokers learn records, in order, from heartbeat answers.
// - A partition log is an array of records (one record = one batch of one record's epoch); the
//   log start never moves (no retention). A truncation is durable at once (the real log refuses
//   appends until it is). An fsync completes after a random delay and covers what was written
//   when it started; a crash keeps the durable prefix plus a random part of the unsynced tail.
//   A broker's applied metadata and its checkpointed high watermark (written every second,
//   replication-offset-checkpoint) survive its crash.
// - Heartbeats are sequential calls as in SessionClient (one in flight, a late answer to a
//   timed-out call is dropped); they also carry the metadata records the broker has not applied.
// - Replica.proposalRefused() passes no error code today, so neither does this model.
// - Followers do not always wait for their fsync before the next fetch (Kafka followers never
//   do), so the durable end they report often lags their log end.
import type { NodeId } from "../../../src/cluster/sim/index.ts";
import { EventQueue, Rng, SimClock, SimNetwork } from "../../../src/cluster/sim/index.ts";
import {
  checkIsrChange,
  NO_LEADER,
  onFenced,
  onUnfenced,
  type PartitionChange,
  type PartitionView,
  preferredElections,
} from "../../../src/replication/elections.ts";
import {
  findDivergence,
  followerActions,
  type ReplicaFetchResult,
} from "../../../src/replication/follower.ts";
import { type IsrProposal, LeaderCore } from "../../../src/replication/leader.ts";
import { planted } from "../../../src/replication/planted.ts";
import { SessionTracker } from "../../../src/replication/sessions.ts";
import { LeaderEpochCache } from "../../../src/storage/epoch-cache.ts";

export const CONTROLLER = 0;
export const BROKERS = [1, 2, 3] as const;
export const PRODUCERS = [11, 12] as const;
export const CONSUMER = 13;
export const MIN_INSYNC = 2;
export const LAG_TIME_MAX_MS = 600;
export const SESSIONS = { sessionTimeoutMs: 1000, heartbeatMs: 100, hintGraceMs: 300 };
const TICK_MS = 25;
const FETCH_TIMEOUT_MS = 500;
const MAX_FETCH_RECORDS = 4;
const PREFERRED_EVERY_MS = 1000;
const CHECKPOINT_MS = 1000;
/** SessionClient's call timeout: max(1000, 4 * heartbeatMs). */
const HEARTBEAT_TIMEOUT_MS = 1000;

const E = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  NOT_LEADER_OR_FOLLOWER: 6,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  OUT_OF_ORDER_SEQUENCE: 45,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
} as const;

export class InvariantError extends Error {}

export interface Rec {
  epoch: number;
  pid: number;
  seq: number;
  /** Unique per produced record: `${pid}.${seq}.${n}`. */
  id: string;
}

interface PartState {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
}

type MetaRecord =
  | { t: "registered"; id: number }
  | { t: "fenced"; id: number; fenced: boolean }
  | { t: "part"; c: PartitionChange };

interface MetaState {
  brokers: Map<number, { fenced: boolean; epoch: number }>;
  part: PartState;
}

type Msg =
  | { t: "register"; inc: number }
  | { t: "registered"; inc: number }
  | { t: "hb"; inc: number; seq: number; applied: number }
  | { t: "hbResp"; inc: number; seq: number; fenced: boolean; from: number; records: MetaRecord[] }
  | { t: "alter"; inc: number; leaderEpoch: number; partitionEpoch: number; isr: number[] }
  | { t: "alterResp"; inc: number; errorCode: number }
  | {
    t: "fetch";
    inc: number;
    fid: number;
    currentLeaderEpoch: number;
    fetchOffset: number;
    lastFetchedEpoch: number;
    durableEnd: number;
  }
  | { t: "fetchResp"; inc: number; fid: number; res: ReplicaFetchResult; records: Rec[] }
  | { t: "produce"; rid: number; pid: number; seq: number; n: number }
  | { t: "produceResp"; rid: number; errorCode: number; base: number }
  | { t: "read"; rid: number; offset: number }
  | { t: "readResp"; rid: number; errorCode: number; offset: number; ids: string[] };

type Timer =
  | { k: "tick"; node: number }
  | { k: "sync"; node: number; inc: number; gen: number; target: number }
  | { k: "restart"; node: number }
  | { k: "resume"; node: number }
  | { k: "ctlTick" }
  | { k: "client"; node: number }
  | { k: "fn"; fn: () => void };

/** Apply one metadata record, refusing what src/meta/apply.ts refuses. */
function applyMeta(s: MetaState, r: MetaRecord, index: number): void {
  if (r.t === "registered") {
    s.brokers.set(r.id, { fenced: true, epoch: index });
    return;
  }
  if (r.t === "fenced") {
    const b = s.brokers.get(r.id);
    if (b === undefined) throw new Error(`broker ${r.id} is not registered`);
    b.fenced = r.fenced;
    return;
  }
  const c = r.c;
  const p = s.part;
  if (c.partitionEpoch !== p.partitionEpoch) {
    throw new Error(
      `INVALID_UPDATE_VERSION: partition epoch ${c.partitionEpoch} is stale (now ${p.partitionEpoch})`,
    );
  }
  const next = {
    leader: c.leader ?? p.leader,
    leaderEpoch: c.leaderEpoch ?? p.leaderEpoch,
    isr: c.isr ?? p.isr,
    replicas: c.replicas ?? p.replicas,
  };
  if (next.leaderEpoch < p.leaderEpoch) {
    throw new Error("INVALID_REQUEST: leader epoch went backwards");
  }
  if (next.leader !== p.leader && next.leaderEpoch === p.leaderEpoch) {
    throw new Error("INVALID_REQUEST: new leader needs a new epoch");
  }
  if (next.isr.some((i) => !next.replicas.includes(i))) {
    throw new Error("INVALID_REPLICA_ASSIGNMENT: ISR is not a subset of the replicas");
  }
  if (next.leader !== -1 && !next.isr.includes(next.leader)) {
    throw new Error(`INVALID_REPLICA_ASSIGNMENT: leader ${next.leader} is not in the ISR`);
  }
  if (next.leader !== -1) {
    const bad = next.isr.find((id) => s.brokers.get(id)?.fenced !== false);
    if (bad !== undefined) throw new Error(`INELIGIBLE_REPLICA: broker ${bad} is fenced`);
  }
  s.part = { ...next, isr: [...next.isr], partitionEpoch: p.partitionEpoch + 1 };
}

function cloneMeta(s: MetaState): MetaState {
  return {
    brokers: new Map([...s.brokers].map(([k, v]) => [k, { ...v }])),
    part: { ...s.part, replicas: [...s.part.replicas], isr: [...s.part.isr] },
  };
}

// ---- checker ---------------------------------------------------------------------------------

/**
 * Global knowledge the invariants are checked against, at every step:
 * (1) an acked record is at its offset in every later leader's log and in every final log;
 * (2) logs agree below the high watermark (each offset passed by any broker's HW holds one
 *     record, whichever broker passed it);
 * (3) a consumed record never disappears or changes, and no broker truncates below its HW;
 * (4) one appender per leader epoch, a broker's append epochs only grow, and no log gets an
 *     older epoch after a newer one;
 * (5) leader in ISR within the replicas, ISR never empty, no fenced broker leading or in the ISR
 *     of an online partition, no election from outside the ISR, no controller decision refused;
 * (6) no record (producer id, sequence) twice below the HW or in a final log.
 */
class Checker {
  /** offset -> record id, for every offset some broker's high watermark has passed. */
  committed: (string | undefined)[] = [];
  committedAt = new Map<string, number>();
  /** offset -> id of every record acknowledged at acks=all. */
  acked = new Map<number, string>();
  /** offset -> id of every record a consumer saw. */
  seen = new Map<number, string>();
  /** leader epoch -> the broker that appended client records in it. */
  appender = new Map<number, number>();

  fail(msg: string): never {
    throw new InvariantError(msg);
  }

  hwPassed(b: number, log: Rec[], from: number, to: number): void {
    for (let o = from; o < to; o++) {
      const id = log[o].id;
      const c = this.committed[o];
      if (c === undefined) {
        const prev = this.committedAt.get(id);
        if (prev !== undefined && prev !== o) {
          this.fail(`(6) record ${id} is below the high watermark twice, at ${prev} and ${o}`);
        }
        this.committed[o] = id;
        this.committedAt.set(id, o);
      } else if (c !== id) {
        this.fail(
          `(2) logs differ below the high watermark: offset ${o} is ${id} at broker ${b}, ${c} elsewhere`,
        );
      }
    }
  }

  ack(b: number, epoch: number, base: number, ids: string[], log: Rec[]): void {
    ids.forEach((id, i) => {
      const o = base + i;
      if (log[o]?.id !== id) {
        this.fail(`(1) broker ${b} acked ${id} at ${o} but holds ${log[o]?.id}`);
      }
      if (this.committed[o] !== id) {
        this.fail(
          `(1) broker ${b} (epoch ${epoch}) acked ${id} at ${o}, committed there: ${
            this.committed[o]
          }`,
        );
      }
      const prev = this.acked.get(o);
      if (prev !== undefined && prev !== id) {
        this.fail(`(1) offset ${o} acked as ${prev} and as ${id}`);
      }
      this.acked.set(o, id);
    });
  }

  holdsAcked(what: string, log: Rec[]): void {
    for (const [o, id] of this.acked) {
      if (log[o]?.id !== id) {
        this.fail(`(1) ${what} lacks acked record ${id} at ${o} (holds ${log[o]?.id})`);
      }
    }
  }

  holdsSeen(what: string, log: Rec[]): void {
    for (const [o, id] of this.seen) {
      if (log[o]?.id !== id) {
        this.fail(`(3) ${what} lacks consumed record ${id} at ${o} (holds ${log[o]?.id})`);
      }
    }
  }

  consumed(o: number, id: string): void {
    const prev = this.seen.get(o);
    if (prev !== undefined && prev !== id) {
      this.fail(`(3) a consumer saw ${prev} at ${o}, later ${id}`);
    }
    if (this.committed[o] !== id) {
      this.fail(`(3) a consumer saw ${id} at ${o} above every high watermark`);
    }
    this.seen.set(o, id);
  }

  leaderAppend(b: number, epoch: number): void {
    const who = this.appender.get(epoch);
    if (who !== undefined && who !== b) {
      this.fail(`(4) brokers ${who} and ${b} both appended in epoch ${epoch}`);
    }
    this.appender.set(epoch, b);
  }
}

// ---- broker ----------------------------------------------------------------------------------

interface AckWaiter {
  lastOffset: number;
  base: number;
  ids: string[];
  reply: (errorCode: number) => void;
}

class Broker {
  inc = 0;
  up = true;
  paused = false;
  backlog: (() => void)[] = [];
  // disk
  log: Rec[] = [];
  durableEnd = 0;
  epochs = new LeaderEpochCache();
  gen = 0;
  syncing = false;
  // metadata, as applied here (durable)
  meta: MetaState;
  applied: number;
  registered = true;
  canLead = true;
  lastRegisterMs = -1e9;
  lastHbMs = -1e9;
  hbSeq = 0;
  hbOut: { seq: number; at: number } | null = null;
  // Replica shell (replica.ts)
  leader = -1;
  leaderEpoch = -1;
  partitionEpoch = -1;
  replicas: number[] = [];
  isr: number[] = [];
  core: LeaderCore | null = null;
  followerHw = 0;
  acks: AckWaiter[] = [];
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

  constructor(readonly id: number, meta: MetaState, applied: number) {
    this.meta = cloneMeta(meta);
    this.applied = applied;
  }

  get logEnd(): number {
    return this.log.length;
  }

  highWatermark(): number {
    if (this.core === null) return Math.min(this.followerHw, this.logEnd);
    return this.core.highWatermark;
  }

  endOffsetFor = (e: number) => this.epochs.endOffsetFor(e, this.logEnd);
}

export interface ClusterCounts {
  [k: string]: number;
}

export class ReplicationCluster {
  readonly rng: Rng;
  readonly netRng: Rng;
  readonly clock = new SimClock();
  readonly net: SimNetwork<Msg>;
  readonly timers = new EventQueue<Timer>();
  readonly brokers = new Map<number, Broker>();
  readonly check = new Checker();
  // controller
  readonly metaLog: MetaRecord[] = [];
  meta: MetaState;
  readonly sessions = new SessionTracker(SESSIONS);
  lastPreferredMs = 0;
  // clients
  readonly producers = new Map<number, {
    seq: number;
    n: number;
    rid: number;
    target: number;
    sentAt: number;
    waiting: boolean;
    acked: number;
  }>();
  consumer = { pos: 0, rid: 0, target: -1, waiting: false, sentAt: 0 };
  producing = true;
  /** An fsync takes 1 ms up to this. */
  fsyncMaxMs = 25;
  counts: ClusterCounts = {
    crashes: 0,
    pauses: 0,
    partitions: 0,
    elections: 0,
    isrShrinks: 0,
    isrExpands: 0,
    truncations: 0,
    acked: 0,
    consumed: 0,
    duplicates: 0,
    divergences: 0,
    refusedAlters: 0,
    zombieAppends: 0,
    lostUnsynced: 0,
  };
  trace?: (line: string) => void;

  constructor(readonly seed: number) {
    this.rng = new Rng(seed);
    this.netRng = this.rng.fork();
    this.net = new SimNetwork<Msg>(this.netRng, { minDelayMs: 1, maxDelayMs: 8 });
    const replicas = this.rng.shuffle([...BROKERS]);
    this.meta = {
      brokers: new Map(BROKERS.map((id) => [id, { fenced: false, epoch: -1 }])),
      part: {
        leader: replicas[0],
        leaderEpoch: 0,
        partitionEpoch: 0,
        replicas,
        isr: [...replicas],
      },
    };
    for (const id of BROKERS) {
      const b = new Broker(id, this.meta, -1);
      this.brokers.set(id, b);
      this.timers.push(this.rng.int(0, TICK_MS), { k: "tick", node: id });
    }
    for (const id of BROKERS) this.reconcile(this.brokers.get(id)!);
    this.timers.push(10, { k: "ctlTick" });
    for (const p of PRODUCERS) {
      this.producers.set(p, {
        seq: 0,
        n: 1,
        rid: 0,
        target: -1,
        sentAt: 0,
        waiting: false,
        acked: 0,
      });
      this.timers.push(this.rng.int(0, 50), { k: "client", node: p });
    }
    this.timers.push(this.rng.int(0, 50), { k: "client", node: CONSUMER });
  }

  log(line: string): void {
    this.trace?.(`${this.clock.now} ${line}`);
  }

  get now(): number {
    return this.clock.now;
  }

  // ---- event loop ----------------------------------------------------------------------------

  runUntil(t: number): void {
    for (;;) {
      const next = Math.min(this.net.nextDeliveryAt(), this.timers.peekTime());
      if (next > t) break;
      this.clock.advanceTo(next);
      for (let d = this.net.popDue(next); d !== undefined; d = this.net.popDue(next)) {
        this.deliver(d.from, d.to, d.msg);
      }
      while (this.timers.peekTime() <= next) this.fire(this.timers.pop()!.event);
    }
    this.clock.advanceTo(t);
  }

  at(ms: number, fn: () => void): void {
    this.timers.push(Math.max(ms, this.now), { k: "fn", fn });
  }

  /** "from>to" -> extra delay (ms) of a slow link: its messages wait, and overtake each other. */
  readonly slow = new Map<string, number>();

  send(from: NodeId, to: NodeId, msg: Msg): void {
    const extra = this.slow.size === 0 ? undefined : this.slow.get(`${from}>${to}`);
    if (extra === undefined) return this.net.send(from, to, msg, this.now);
    this.at(this.now + this.rng.int(0, extra), () => this.net.send(from, to, msg, this.now));
  }

  /** Runs `fn` as broker `b` (deferred while paused; dropped while down). */
  #as(b: Broker, fn: () => void): void {
    if (!b.up) return;
    if (b.paused) {
      b.backlog.push(fn);
      return;
    }
    fn();
    this.#hwCheck(b);
  }

  #hwCheck(b: Broker): void {
    const hw = b.highWatermark();
    if (hw > b.logEnd) {
      this.check.fail(`broker ${b.id}: high watermark ${hw} above its log end ${b.logEnd}`);
    }
    if (hw > b.seenHw) this.check.hwPassed(b.id, b.log, b.seenHw, hw);
    b.seenHw = hw;
  }

  fire(t: Timer): void {
    switch (t.k) {
      case "fn":
        return t.fn();
      case "ctlTick":
        this.#ctlTick();
        this.timers.push(this.now + 50, { k: "ctlTick" });
        return;
      case "client":
        return this.#client(t.node);
      case "tick": {
        const b = this.brokers.get(t.node)!;
        this.timers.push(this.now + TICK_MS, t);
        if (!b.paused) this.#as(b, () => this.#tick(b)); // a paused process's timer fires late

        return;
      }
      case "sync": {
        const b = this.brokers.get(t.node)!;
        if (!b.up || b.inc !== t.inc) return;
        this.#as(b, () => this.#synced(b, t.gen, t.target));
        return;
      }
      case "restart":
        return this.restart(t.node);
      case "resume":
        return this.resume(t.node);
    }
  }

  deliver(from: number, to: number, msg: Msg): void {
    if (to === CONTROLLER) return this.#ctlReceive(from, msg);
    const b = this.brokers.get(to);
    if (b !== undefined) {
      this.#as(b, () => this.#brokerReceive(b, from, msg));
      return;
    }
    this.#clientReceive(to, from, msg);
  }

  // ---- faults --------------------------------------------------------------------------------

  crash(id: number, downMs: number): void {
    const b = this.brokers.get(id)!;
    if (!b.up) return;
    this.counts.crashes++;
    b.up = false;
    b.paused = false;
    b.backlog = [];
    this.net.setDown(id, true);
    // The disk keeps the durable prefix and maybe part of the unsynced tail.
    const keep = b.durableEnd +
      (this.rng.chance(0.5) ? this.rng.int(0, b.logEnd - b.durableEnd + 1) : 0);
    if (keep < b.logEnd) this.counts.lostUnsynced++;
    b.log.length = keep;
    b.durableEnd = keep;
    b.epochs.truncateFromEnd(keep); // recovery: epochs.truncateFromEnd(logEnd)
    b.gen++;
    b.syncing = false;
    this.log(`crash ${id}: log kept to ${keep}`);
    // The controller sees the connection close (a hint, not a verdict).
    if (this.net.canReach(id, CONTROLLER)) this.sessions.hint(id, this.now);
    this.timers.push(this.now + downMs, { k: "restart", node: id });
  }

  restart(id: number): void {
    const b = this.brokers.get(id)!;
    if (b.up) return;
    b.up = true;
    b.inc++;
    this.net.setDown(id, false);
    b.registered = false;
    b.canLead = false;
    b.lastRegisterMs = -1e9;
    b.hbOut = null;
    b.core = null;
    b.acks = [];
    b.leader = -1;
    b.leaderEpoch = -1;
    b.partitionEpoch = -1;
    b.followerHw = Math.min(b.hwCheckpoint, b.logEnd); // the Replica's initialHw
    b.seenHw = 0;
    b.fetchOut = null;
    b.waitSync = false;
    b.appendEpoch = -1;
    this.log(`restart ${id} (incarnation ${b.inc}, log end ${b.logEnd})`);
    this.reconcile(b);
    if (b.logEnd > b.durableEnd) this.#startSync(b);
  }

  pause(id: number, ms: number): void {
    const b = this.brokers.get(id)!;
    if (!b.up || b.paused) return;
    this.counts.pauses++;
    b.paused = true;
    this.log(`pause ${id} for ${ms} ms`);
    this.timers.push(this.now + ms, { k: "resume", node: id });
  }

  resume(id: number): void {
    const b = this.brokers.get(id)!;
    if (!b.up || !b.paused) return;
    b.paused = false;
    this.log(`resume ${id} (${b.backlog.length} events waited)`);
    const work = b.backlog;
    b.backlog = [];
    for (const fn of work) this.#as(b, fn);
  }

  // ---- broker: metadata and roles --------------------------------------------------------------

  /** partition-manager #assignment + Replica.update. */
  reconcile(b: Broker): void {
    const p = b.meta.part;
    const gated = p.leader === b.id && !b.canLead;
    const a = {
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: gated ? -1 : p.partitionEpoch,
      replicas: p.replicas,
      isr: p.isr,
      gated,
    };
    const stale = a.leaderEpoch < b.leaderEpoch ||
      (a.leaderEpoch === b.leaderEpoch && a.partitionEpoch <= b.partitionEpoch);
    if (stale) {
      // Nothing newer, but this broker was fenced meanwhile: it stops leading at once.
      if (a.gated && b.core !== null) this.#becomeFollower(b);
      return;
    }
    const newEpoch = a.leaderEpoch !== b.leaderEpoch;
    b.leader = a.leader;
    b.leaderEpoch = a.leaderEpoch;
    b.partitionEpoch = a.partitionEpoch;
    b.replicas = [...a.replicas];
    b.isr = [...a.isr];
    if (a.leader === b.id && !a.gated) {
      if (newEpoch || b.core === null) this.#becomeLeader(b);
      else {
        // HW moved or a shrink may let waiters finish (with AFTER_APPEND): release either way.
        b.core.onCommitted(a.partitionEpoch, a.isr, a.replicas);
        this.#releaseAcks(b);
      }
    } else if (b.core !== null || newEpoch) {
      this.#becomeFollower(b);
    }
  }

  #becomeLeader(b: Broker): void {
    const hw = b.highWatermark();
    // The shell's log.assignEpoch(leaderEpoch): the epoch starts here, before any append.
    if (!(planted.size !== 0 && planted.has("no-epoch-on-takeover"))) {
      b.epochs.assign(b.leaderEpoch, b.logEnd);
    }
    b.core = new LeaderCore({
      self: b.id,
      leaderEpoch: b.leaderEpoch,
      partitionEpoch: b.partitionEpoch,
      replicas: b.replicas,
      isr: b.isr,
      epochStartOffset: b.logEnd,
      highWatermark: hw,
      logEnd: b.logEnd,
      durableEnd: b.durableEnd,
      nowMs: this.now,
      lagTimeMaxMs: LAG_TIME_MAX_MS,
    });
    b.fetchOut = null;
    this.log(
      `broker ${b.id} leads epoch ${b.leaderEpoch} (log end ${b.logEnd}, hw ${hw}, isr [${b.isr}])`,
    );
    // Every acknowledged record must be in every later leader's log.
    this.check.holdsAcked(`new leader ${b.id} (epoch ${b.leaderEpoch})`, b.log);
    this.check.holdsSeen(`new leader ${b.id} (epoch ${b.leaderEpoch})`, b.log);
    this.#syncLocal(b);
  }

  #becomeFollower(b: Broker): void {
    if (b.core !== null) b.followerHw = b.core.highWatermark;
    b.core = null;
    const acks = b.acks;
    b.acks = [];
    for (const w of acks) w.reply(E.NOT_LEADER_OR_FOLLOWER);
    b.fetchOut = null;
    b.nextFetchAt = this.now;
  }

  #applyRecords(b: Broker, from: number, records: MetaRecord[]): void {
    if (from > b.applied + 1) return; // a gap: wait for an answer that starts where we are
    for (let i = b.applied + 1 - from; i < records.length; i++) {
      applyMeta(b.meta, records[i], from + i);
      b.applied = from + i;
    }
  }

  // ---- broker: periodic work -------------------------------------------------------------------

  #tick(b: Broker): void {
    const now = this.now;
    if (now - b.lastCheckpointMs >= CHECKPOINT_MS) {
      b.lastCheckpointMs = now;
      b.hwCheckpoint = b.highWatermark();
    }
    if (!b.registered) {
      if (now - b.lastRegisterMs >= 300) {
        b.lastRegisterMs = now;
        this.send(b.id, CONTROLLER, { t: "register", inc: b.inc });
      }
    } else if (
      now - b.lastHbMs >= SESSIONS.heartbeatMs &&
      (b.hbOut === null || now - b.hbOut.at >= HEARTBEAT_TIMEOUT_MS)
    ) {
      // SessionClient: one heartbeat call at a time; a late answer to a timed-out call is lost.
      b.hbOut = { seq: ++b.hbSeq, at: now };
      this.send(b.id, CONTROLLER, { t: "hb", inc: b.inc, seq: b.hbSeq, applied: b.applied });
    }
    if (b.core !== null) {
      const p = b.core.tick(now);
      if (p) this.#propose(b, p);
      return;
    }
    this.#maybeFetch(b);
  }

  #propose(b: Broker, p: IsrProposal): void {
    this.log(`broker ${b.id} proposes ISR [${p.isr}] (${p.reason})`);
    this.send(b.id, CONTROLLER, {
      t: "alter",
      inc: b.inc,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: p.partitionEpoch,
      isr: p.isr,
    });
  }

  #maybeFetch(b: Broker): void {
    if (b.core !== null || b.leader < 0 || b.leader === b.id || !b.replicas.includes(b.id)) return;
    if (b.waitSync && b.durableEnd < b.logEnd) return;
    b.waitSync = false;
    const now = this.now;
    if (b.fetchOut !== null && now - b.fetchOut.at < FETCH_TIMEOUT_MS) return;
    if (now < b.nextFetchAt) return;
    b.fetchOut = { fid: ++b.fid, at: now, epoch: b.leaderEpoch };
    this.send(b.id, b.leader, {
      t: "fetch",
      inc: b.inc,
      fid: b.fid,
      currentLeaderEpoch: b.leaderEpoch,
      fetchOffset: b.logEnd,
      lastFetchedEpoch: b.epochs.latestEpoch(),
      durableEnd: b.durableEnd,
    });
  }

  // ---- broker: disk ----------------------------------------------------------------------------

  #startSync(b: Broker): void {
    if (b.syncing) return;
    b.syncing = true;
    this.timers.push(this.now + this.rng.int(1, this.fsyncMaxMs), {
      k: "sync",
      node: b.id,
      inc: b.inc,
      gen: b.gen,
      target: b.logEnd,
    });
  }

  #synced(b: Broker, gen: number, target: number): void {
    b.syncing = false;
    if (gen === b.gen) b.durableEnd = Math.max(b.durableEnd, Math.min(target, b.logEnd));
    if (b.core !== null && b.core.onLocal(b.logEnd, b.durableEnd)) this.#releaseAcks(b);
    if (b.durableEnd < b.logEnd) this.#startSync(b);
    else if (b.waitSync) this.#maybeFetch(b);
  }

  #syncLocal(b: Broker): void {
    if (b.core === null) return;
    if (b.durableEnd >= b.logEnd) {
      if (b.core.onLocal(b.logEnd, b.durableEnd)) this.#releaseAcks(b);
      return;
    }
    this.#startSync(b);
  }

  /** PartitionLog.truncateTo. */
  #truncate(b: Broker, to: number): void {
    if (to >= b.logEnd) {
      // No records to cut, but an epoch recorded at the end with nothing written in it goes.
      b.epochs.truncateFromEnd(to);
      return;
    }
    const hw = b.highWatermark();
    if (to < hw) {
      this.check.fail(`(3) broker ${b.id} truncated to ${to}, below its high watermark ${hw}`);
    }
    this.counts.truncations++;
    this.log(`broker ${b.id} truncates ${b.logEnd} -> ${to}`);
    b.log.length = to;
    b.durableEnd = Math.min(b.durableEnd, to);
    b.epochs.truncateFromEnd(to);
    b.gen++;
    b.syncing = false;
    b.followerHw = Math.min(b.followerHw, to); // capFollowerHw
    b.seenHw = Math.min(b.seenHw, to);
  }

  #append(b: Broker, recs: Rec[]): boolean {
    for (const r of recs) {
      if (r.epoch < b.epochs.latestEpoch()) {
        // The real log refuses it (InvalidRecordError): it only happens if divergence was missed.
        this.check.fail(
          `(4) broker ${b.id}: appending epoch ${r.epoch} after epoch ${b.epochs.latestEpoch()} at ${b.logEnd}`,
        );
      }
      b.epochs.assign(r.epoch, b.logEnd);
      b.log.push(r);
    }
    return recs.length > 0;
  }

  // ---- broker: leader side -----------------------------------------------------------------

  #releaseAcks(b: Broker): void {
    if (b.acks.length === 0) return;
    const hw = b.highWatermark();
    let i = 0;
    while (i < b.acks.length && b.acks[i].lastOffset < hw) i++;
    if (i === 0) return;
    const done = b.acks.splice(0, i);
    for (const w of done) this.#afterCommit(b, w);
  }

  #afterCommit(b: Broker, w: AckWaiter): void {
    if (b.isr.length < MIN_INSYNC) return w.reply(E.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    // Invariant 1 is about what the client is told: an ack is checked when it is given.
    // A waiter may outlive the epoch it was appended in (the broker led again in a later epoch
    // without ever following, as Replica.update keeps its waiters): the record is committed in
    // the epoch that answers it.
    this.#hwCheck(b);
    this.check.ack(b.id, b.leaderEpoch, w.base, w.ids, b.log);
    for (const o of this.brokers.values()) {
      if (o !== b && o.up && o.core !== null && o.leaderEpoch > b.leaderEpoch) {
        this.check.holdsAcked(
          `leader ${o.id} (epoch ${o.leaderEpoch}, newer than ${b.leaderEpoch})`,
          o.log,
        );
      }
    }
    this.counts.acked += w.ids.length;
    w.reply(E.NONE);
  }

  #produce(b: Broker, from: number, m: Extract<Msg, { t: "produce" }>): void {
    const reply = (errorCode: number, base = -1) =>
      this.send(b.id, from, { t: "produceResp", rid: m.rid, errorCode, base });
    if (b.core === null) return reply(E.NOT_LEADER_OR_FOLLOWER);
    if (b.isr.length < MIN_INSYNC) return reply(E.NOT_ENOUGH_REPLICAS);
    // Producer state, as the log keeps it: the last sequence of each producer id.
    let last = -1;
    let dupBase = -1;
    for (let o = b.logEnd - 1; o >= 0; o--) {
      const r = b.log[o];
      if (r.pid !== m.pid) continue;
      if (last < 0) last = r.seq;
      if (r.seq === m.seq) dupBase = o;
      if (r.seq < m.seq) break;
    }
    let base: number;
    let ids: string[];
    if (m.seq <= last) {
      if (dupBase < 0) return reply(E.OUT_OF_ORDER_SEQUENCE);
      this.counts.duplicates++;
      base = dupBase;
      ids = [];
      for (let o = dupBase; o < b.logEnd && b.log[o].pid === m.pid && b.log[o].seq === m.seq; o++) {
        ids.push(b.log[o].id);
      }
    } else if (m.seq !== last + 1) {
      return reply(E.OUT_OF_ORDER_SEQUENCE);
    } else {
      this.check.leaderAppend(b.id, b.leaderEpoch);
      if (b.leaderEpoch < b.appendEpoch) {
        this.check.fail(
          `(4) broker ${b.id} appends in epoch ${b.leaderEpoch} after ${b.appendEpoch}`,
        );
      }
      b.appendEpoch = b.leaderEpoch;
      if (b.leaderEpoch !== this.meta.part.leaderEpoch) this.counts.zombieAppends++;
      base = b.logEnd;
      ids = [];
      const recs: Rec[] = [];
      for (let i = 0; i < m.n; i++) {
        const id = `${m.pid}.${m.seq}.${i}`;
        ids.push(id);
        recs.push({ epoch: b.leaderEpoch, pid: m.pid, seq: m.seq, id });
      }
      this.#append(b, recs);
      b.core.onLocal(b.logEnd, b.durableEnd);
      this.#syncLocal(b);
    }
    const w: AckWaiter = {
      lastOffset: base + ids.length - 1,
      base,
      ids,
      reply: (code) => reply(code, base),
    };
    if (b.highWatermark() > w.lastOffset) this.#afterCommit(b, w);
    else b.acks.push(w);
  }

  /** ReplicaManager.#serveOne. */
  #serveFetch(b: Broker, from: number, q: Extract<Msg, { t: "fetch" }>): void {
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
      this.send(b.id, from, { t: "fetchResp", inc: q.inc, fid: q.fid, res, records });
    if (b.core === null || !b.replicas.includes(from) || from === b.id) {
      return answer({ ...base, errorCode: E.NOT_LEADER_OR_FOLLOWER });
    }
    if (q.currentLeaderEpoch !== b.leaderEpoch) {
      const code = q.currentLeaderEpoch < b.leaderEpoch
        ? E.FENCED_LEADER_EPOCH
        : E.UNKNOWN_LEADER_EPOCH;
      return answer({ ...base, errorCode: code });
    }
    const filled = {
      ...base,
      highWatermark: b.highWatermark(),
      logStartOffset: 0,
      logEndOffset: b.logEnd,
    };
    const diverging = findDivergence(b.endOffsetFor, q.lastFetchedEpoch, q.fetchOffset, 0);
    if (diverging !== undefined) {
      this.counts.divergences++;
      return answer({ ...filled, diverging });
    }
    if (q.fetchOffset > b.logEnd) return answer({ ...filled, errorCode: E.OFFSET_OUT_OF_RANGE });
    const r = b.core.onFetch(from, q.fetchOffset, q.durableEnd, this.now);
    if (r.hwMoved) this.#releaseAcks(b);
    if (r.proposal) this.#propose(b, r.proposal);
    const records = b.log.slice(
      q.fetchOffset,
      Math.min(b.logEnd, q.fetchOffset + MAX_FETCH_RECORDS),
    );
    answer({ ...filled, highWatermark: b.highWatermark(), bytes: records.length }, records);
  }

  // ---- broker: messages ----------------------------------------------------------------------

  #brokerReceive(b: Broker, from: number, m: Msg): void {
    switch (m.t) {
      case "registered":
        if (m.inc !== b.inc || b.registered) return;
        b.registered = true;
        b.lastHbMs = -1e9;
        return;
      case "hbResp": {
        if (m.inc !== b.inc || b.hbOut?.seq !== m.seq) return;
        b.hbOut = null;
        b.lastHbMs = this.now;
        this.#applyRecords(b, m.from, m.records);
        b.canLead = !m.fenced;
        this.reconcile(b);
        return;
      }
      case "alterResp":
        if (m.inc !== b.inc) return;
        if (m.errorCode !== 0) {
          this.counts.refusedAlters++;
          // As Replica.proposalRefused() today: without the error code (an unknown outcome).
          b.core?.onProposalRefused();
        }
        return;
      case "fetch":
        return this.#serveFetch(b, from, m);
      case "fetchResp":
        return this.#fetched(b, from, m);
      case "produce":
        return this.#produce(b, from, m);
      case "read": {
        if (b.core === null) {
          this.send(b.id, from, {
            t: "readResp",
            rid: m.rid,
            errorCode: 6,
            offset: m.offset,
            ids: [],
          });
          return;
        }
        const hw = b.highWatermark();
        const ids = b.log.slice(m.offset, Math.min(hw, m.offset + 20)).map((r) => r.id);
        this.send(b.id, from, { t: "readResp", rid: m.rid, errorCode: 0, offset: m.offset, ids });
        return;
      }
      default:
        return;
    }
  }

  /** The Fetcher loop and ReplicaManager.applyFetched. */
  #fetched(b: Broker, from: number, m: Extract<Msg, { t: "fetchResp" }>): void {
    if (m.inc !== b.inc || b.fetchOut === null || b.fetchOut.fid !== m.fid) return;
    const sentEpoch = b.fetchOut.epoch;
    b.fetchOut = null;
    if (b.core !== null || b.leader !== from || b.leaderEpoch !== sentEpoch) return;
    const res = m.res;
    if (this.trace && (res.errorCode !== 0 || res.diverging)) {
      this.log(
        `broker ${b.id} fetch from ${from} at ${b.logEnd} (epoch ${b.leaderEpoch}, last ${b.epochs.latestEpoch()}): error ${res.errorCode} diverging ${
          JSON.stringify(res.diverging)
        }`,
      );
    }
    if (res.errorCode !== 0) {
      b.nextFetchAt = this.now + 100;
      return;
    }
    const actions = followerActions(res, {
      logEnd: b.logEnd,
      logStart: 0,
      endOffsetFor: b.endOffsetFor,
    });
    let appended = false;
    for (const a of actions) {
      switch (a.kind) {
        case "truncate":
          this.#truncate(b, a.offset);
          break;
        case "append":
          appended = this.#append(b, m.records);
          break;
        case "highWatermark": {
          const next = Math.min(a.offset, b.logEnd);
          if (next > b.followerHw) b.followerHw = next;
          break;
        }
        default:
          break;
      }
    }
    if (appended) {
      this.#startSync(b);
      // Half the time the follower fetches again at once, before its sync completes (Kafka
      // followers never wait); else after it, as this broker's Fetcher does.
      b.waitSync = this.rng.chance(0.5);
      b.nextFetchAt = this.now;
      this.#maybeFetch(b);
    } else if (actions.length > 0 && actions[0].kind === "truncate") {
      b.nextFetchAt = this.now;
      this.#maybeFetch(b);
    } else {
      b.nextFetchAt = this.now + this.rng.int(5, 30); // long poll: nothing new
    }
  }

  // ---- controller ----------------------------------------------------------------------------

  #view(): PartitionView {
    return { ...this.meta.part, topicId: "t", topic: "t", partition: 0, unclean: false };
  }

  #live = (id: number): boolean => this.meta.brokers.get(id)?.fenced === false;

  /** Commit one record: it applies to the controller's state or is refused (apply.ts). */
  #commit(r: MetaRecord, fromLeader = false): boolean {
    const next = cloneMeta(this.meta);
    try {
      applyMeta(next, r, this.metaLog.length);
    } catch (e) {
      if (fromLeader) return false; // a leader's ISR change, refused as apply.ts would
      this.check.fail(
        `(5) the controller's own decision was refused: ${(e as Error).message} (${
          r.t === "part" ? r.c.reason : r.t
        })`,
      );
    }
    const before = this.meta.part;
    this.meta = next;
    this.metaLog.push(r);
    if (r.t === "part") {
      const p = next.part;
      if (p.leader !== before.leader) {
        this.counts.elections++;
        if (p.leader !== NO_LEADER && !before.isr.includes(p.leader)) {
          this.check.fail(
            `(5) broker ${p.leader} elected from outside the ISR [${before.isr}] (${r.c.reason})`,
          );
        }
      } else if (p.isr.length < before.isr.length) this.counts.isrShrinks++;
      else if (p.isr.length > before.isr.length) this.counts.isrExpands++;
      this.log(
        `committed: leader ${p.leader} epoch ${p.leaderEpoch} isr [${p.isr}] pe ${p.partitionEpoch} (${r.c.reason})`,
      );
    } else this.log(`committed: ${JSON.stringify(r)}`);
    return true;
  }

  #checkMeta(): void {
    const p = this.meta.part;
    if (p.isr.length === 0) this.check.fail("(5) the ISR is empty");
    if (p.isr.some((id) => !p.replicas.includes(id))) {
      this.check.fail(`(5) ISR [${p.isr}] not within the replicas`);
    }
    if (p.leader !== NO_LEADER) {
      if (!p.isr.includes(p.leader)) {
        this.check.fail(`(5) leader ${p.leader} not in the ISR [${p.isr}]`);
      }
      const bad = p.isr.find((id) => !this.#live(id));
      if (bad !== undefined) {
        this.check.fail(`(5) fenced broker ${bad} in the ISR of an online partition`);
      }
    }
  }

  #applyChanges(cs: PartitionChange[]): void {
    for (const c of cs) this.#commit({ t: "part", c });
  }

  #fence(id: number, why: string): void {
    const b = this.meta.brokers.get(id);
    if (b === undefined) return;
    if (!b.fenced) {
      this.#commit({ t: "fenced", id, fenced: true });
      this.log(`controller fences ${id}: ${why}`);
    }
    this.#applyChanges(onFenced([this.#view()], id, this.#live));
  }

  #maybeUnfence(id: number): void {
    const b = this.meta.brokers.get(id);
    if (b === undefined || !b.fenced) return;
    if (!this.sessions.alive(id, this.now) || this.sessions.shuttingDown(id)) return;
    if (this.sessions.appliedIndex(id) < b.epoch) return;
    this.#commit({ t: "fenced", id, fenced: false });
    this.#applyChanges(onUnfenced([this.#view()], id, this.#live));
  }

  #ctlTick(): void {
    const now = this.now;
    for (const id of this.sessions.expire(now)) {
      if (this.meta.brokers.get(id)?.fenced === false) this.#fence(id, "session expired");
    }
    for (const [id, b] of this.meta.brokers) if (b.fenced) this.#maybeUnfence(id);
    if (now - this.lastPreferredMs >= PREFERRED_EVERY_MS) {
      this.lastPreferredMs = now;
      this.#applyChanges(preferredElections([this.#view()], this.#live));
    }
    this.#checkMeta();
  }

  #ctlReceive(from: number, m: Msg): void {
    switch (m.t) {
      case "register": {
        // beforeRegister: the previous incarnation's leaderships and ISR places end first.
        this.sessions.end(from);
        this.#fence(from, "registered again (restarted)");
        this.#commit({ t: "registered", id: from });
        this.send(CONTROLLER, from, { t: "registered", inc: m.inc });
        break;
      }
      case "hb": {
        this.sessions.heartbeat(from, this.now, m.applied);
        const fenced = this.meta.brokers.get(from)?.fenced ?? true;
        if (fenced) this.#maybeUnfence(from);
        const start = m.applied + 1;
        this.send(CONTROLLER, from, {
          t: "hbResp",
          inc: m.inc,
          seq: m.seq,
          fenced,
          from: start,
          records: this.metaLog.slice(start),
        });
        break;
      }
      case "alter": {
        const c = checkIsrChange(this.#view(), {
          from,
          leaderEpoch: m.leaderEpoch,
          partitionEpoch: m.partitionEpoch,
          isr: m.isr,
        }, this.#live);
        let errorCode: number;
        if ("errorCode" in c) errorCode = c.errorCode;
        else errorCode = this.#commit({ t: "part", c }, true) ? 0 : 108;
        this.send(CONTROLLER, from, { t: "alterResp", inc: m.inc, errorCode });
        break;
      }
      default:
        return;
    }
    this.#checkMeta();
  }

  // ---- clients -------------------------------------------------------------------------------

  /** What a client believes leads: usually the committed leader, sometimes a stale guess. */
  #guessLeader(prev: number): number {
    if (prev >= 0 && this.rng.chance(0.3)) return prev;
    if (this.rng.chance(0.05)) return this.rng.pick(BROKERS);
    return this.meta.part.leader;
  }

  #client(node: number): void {
    const now = this.now;
    this.timers.push(now + 20, { k: "client", node });
    if (node === CONSUMER) {
      const c = this.consumer;
      if (c.waiting && now - c.sentAt < 300) return;
      c.target = this.#guessLeader(c.target);
      if (c.target < 0) return;
      if (this.rng.chance(0.05)) c.pos = 0; // read everything again
      c.waiting = true;
      c.sentAt = now;
      this.send(CONSUMER, c.target, { t: "read", rid: ++c.rid, offset: c.pos });
      return;
    }
    const p = this.producers.get(node)!;
    if (p.waiting && now - p.sentAt < 400) return;
    if (!p.waiting && !this.producing) return;
    if (!p.waiting && this.rng.chance(0.5)) return; // think time
    p.target = this.#guessLeader(p.target);
    if (p.target < 0) return;
    p.waiting = true;
    p.sentAt = now;
    this.send(node, p.target, { t: "produce", rid: ++p.rid, pid: node, seq: p.seq, n: p.n });
  }

  #clientReceive(node: number, _from: number, m: Msg): void {
    if (m.t === "readResp") {
      const c = this.consumer;
      if (m.rid !== c.rid) return;
      c.waiting = false;
      if (m.errorCode !== 0) {
        c.target = -1;
        return;
      }
      m.ids.forEach((id, i) => this.check.consumed(m.offset + i, id));
      this.counts.consumed += m.ids.length;
      if (m.offset === c.pos) c.pos += m.ids.length;
      return;
    }
    if (m.t !== "produceResp") return;
    const p = this.producers.get(node);
    if (p === undefined || m.rid !== p.rid) return;
    p.waiting = false;
    if (m.errorCode !== 0) {
      p.target = -1;
      return;
    }
    p.acked++;
    p.seq++;
    p.n = 1 + this.rng.int(0, 3);
  }

  // ---- end of run ----------------------------------------------------------------------------

  /** Healed and settled: a leader, the whole ISR, every replica holding the leader's log. */
  settled(): string | undefined {
    const p = this.meta.part;
    if (p.leader === NO_LEADER) return "no leader";
    if (p.isr.length !== BROKERS.length) return `ISR [${p.isr}]`;
    const l = this.brokers.get(p.leader)!;
    if (!l.up || l.core === null || l.leaderEpoch !== p.leaderEpoch) {
      return `leader ${l.id} not acting`;
    }
    if (l.highWatermark() !== l.logEnd) {
      return `leader hw ${l.highWatermark()} < log end ${l.logEnd}`;
    }
    for (const b of this.brokers.values()) {
      if (b.logEnd !== l.logEnd) return `broker ${b.id} log end ${b.logEnd} vs leader ${l.logEnd}`;
    }
    for (const x of this.producers.values()) if (x.waiting) return "a produce request still waits";
    return undefined;
  }

  finalChecks(): void {
    for (const b of this.brokers.values()) {
      this.check.holdsAcked(`final log of broker ${b.id}`, b.log);
      this.check.holdsSeen(`final log of broker ${b.id}`, b.log);
      const ids = new Set<string>();
      for (const r of b.log) {
        if (ids.has(r.id)) this.check.fail(`(6) broker ${b.id} holds ${r.id} twice`);
        ids.add(r.id);
      }
    }
    const l = this.brokers.get(this.meta.part.leader)!;
    for (const b of this.brokers.values()) {
      for (let o = 0; o < l.logEnd; o++) {
        if (b.log[o].id !== l.log[o].id) this.check.fail(`(2) final logs differ at ${o}`);
      }
    }
  }
}
