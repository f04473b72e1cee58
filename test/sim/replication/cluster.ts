// Deterministic model of the replication data path for one partition (RF 3, min.insync 2), with
// the metadata quorum and the controller running on the brokers, as in production.
//
// Real cores, production replica shell, mirrored shells. Every decision comes from the code the broker runs: LeaderCore
// (leader.ts), findDivergence / followerActions (follower.ts), onFenced / onUnfenced /
// preferredElections / checkIsrChange (elections.ts), SessionTracker (sessions.ts),
// LeaderEpochCache, the Raft core (src/cluster/raft/node.ts) and the PartitionChanged rules of
// the metadata apply (src/meta/partition-rules.ts). The replica shell is production's Replica
// (replica.ts) over the simulated log; the other IO shells are mirrored: broker.ts (fetcher,
// produce, acks, session client), metadata.ts (RaftMetadataLog), controller.ts
// (ControllerService), group.ts (GroupService). This file is the event loop, the network and the faults;
// checker.ts holds the invariants, clients.ts the producers and the consumer.
//
// Brokers 1..3 are the Raft voters. Whichever leads the quorum runs the controller, over its own
// applied metadata; a crash, a pause or a partition of that broker hits the controller too, and
// the next leader takes over with fresh sessions. Every broker applies the committed records in
// log order from its own Raft node.
import { bootstrapState } from "../../../src/cluster/raft/bootstrap.ts";
import type { RaftNode } from "../../../src/cluster/raft/node.ts";
import type { NodeId } from "../../../src/cluster/sim/index.ts";
import { EventQueue, Rng, SimClock, SimNetwork } from "../../../src/cluster/sim/index.ts";
import type { MetadataRecord } from "../../../src/meta/records.ts";
import { NO_LEADER } from "../../../src/replication/elections.ts";
import { Broker } from "./broker.ts";
import { Checker, type Counts, MetaChecker } from "./checker.ts";
import { Clients } from "./clients.ts";
import {
  BROKERS,
  CTL_TICK_MS,
  metaImage,
  type MetaState,
  type Msg,
  TICK_MS,
  type Timer,
} from "./model.ts";

export { BROKERS, InvariantError } from "./model.ts";

/** What the brokers, their metadata nodes, controllers and the clients see of the cluster. */
export interface Env {
  readonly now: number;
  readonly rng: Rng;
  readonly timers: EventQueue<Timer>;
  readonly check: Checker;
  readonly metaCheck: MetaChecker;
  readonly counts: Counts;
  readonly brokers: Map<number, Broker>;
  readonly fsyncMaxMs: number;
  readonly tracing: boolean;
  send(from: NodeId, to: NodeId, msg: Msg): void;
  log(line: string): void;
  /** The most advanced applied metadata (what a client's metadata request would find). */
  latest(): MetaState;
  raftLeaders(): RaftNode[];
  /** Controllers redo elections a failed controller left undone (not in production: the doc). */
  readonly repairElections: boolean;
  /** The controller on broker `id` proposed a record (the scenario may strike right then). */
  proposed?: (id: number, r: MetadataRecord) => void;
}

const COUNTS = [
  "crashes",
  "pauses",
  "partitions",
  "elections",
  "isrShrinks",
  "isrExpands",
  "truncations",
  "acked",
  "consumed",
  "duplicates",
  "divergences",
  "refusedAlters",
  "zombieAppends",
  "zombieAcks",
  "lateZombieAcks",
  "leaseRefusals",
  "lostUnsynced",
  "controllerElections",
  "controllerTakeovers",
  "controllerFaults",
  "controllerStrikes",
  "staleDecisions",
  "uncommittedDecisions",
  "orphanedProposals",
  "repairedElections",
  "snapshotInstalls",
  "snapshotsTaken",
  "logsDeleted",
  "reassignSubmits",
  "reassignCancels",
  "reassignRefused",
  "reassignCompleted",
  "reassignCancelled",
  "offsetCommits",
  "offsetFetches",
];

export class ReplicationCluster implements Env {
  readonly rng: Rng;
  readonly netRng: Rng;
  readonly clock = new SimClock();
  readonly net: SimNetwork<Msg>;
  readonly timers = new EventQueue<Timer>();
  readonly brokers = new Map<number, Broker>();
  readonly counts: Counts = Object.fromEntries(COUNTS.map((k) => [k, 0]));
  readonly check = new Checker();
  readonly metaCheck: MetaChecker;
  readonly clients: Clients;
  /** An fsync takes 1 ms up to this. */
  fsyncMaxMs = 25;
  trace?: (line: string) => void;
  proposed?: (id: number, r: MetadataRecord) => void;
  /** "from>to" -> extra delay (ms) of a slow link: its messages wait, and overtake each other. */
  readonly slow = new Map<string, number>();
  /**
   * "from>to" -> until when the metadata log's data on that link (Raft appends and snapshots) is
   * held: a transfer stuck retransmitting after loss or a cut, while small messages (Raft
   * heartbeats, votes, the broker's calls to the controller) get through. The broker knows the
   * controller and keeps its session, but its metadata lags.
   */
  readonly raftStalls = new Map<string, number>();

  constructor(readonly seed: number, readonly repairElections = true, offsets = false) {
    this.rng = new Rng(seed);
    this.netRng = this.rng.fork();
    this.net = new SimNetwork<Msg>(this.netRng, { minDelayMs: 1, maxDelayMs: 8 });
    this.metaCheck = new MetaChecker(this.counts, (l) => this.log(l), () => this.now);
    const replicas = this.rng.shuffle([...BROKERS]);
    // The bootstrap snapshot (index 1): three registered brokers and the partition.
    const meta: MetaState = {
      brokers: new Map(BROKERS.map((id) => [id, { fenced: false, epoch: 1 }])),
      part: {
        leader: replicas[0],
        leaderEpoch: 0,
        partitionEpoch: 0,
        replicas,
        isr: [...replicas],
      },
    };
    const boot = bootstrapState({ voters: [...BROKERS], learners: [] }, metaImage(meta));
    for (const id of BROKERS) {
      this.brokers.set(id, new Broker(id, this, meta, 1, boot, this.rng.fork()));
      this.timers.push(this.rng.int(0, TICK_MS), { k: "tick", node: id });
    }
    for (const b of this.brokers.values()) {
      b.reconcile();
      b.metaNode.boot();
    }
    // The group member draws from a stream of its own, forked last: runs without it replay.
    this.clients = new Clients(this, offsets ? this.rng.fork() : undefined);
  }

  get now(): number {
    return this.clock.now;
  }

  get tracing(): boolean {
    return this.trace !== undefined;
  }

  log(line: string): void {
    this.trace?.(`${this.clock.now} ${line}`);
  }

  latest(): MetaState {
    let best: Broker | undefined;
    for (const b of this.brokers.values()) {
      if (best === undefined || b.applied > best.applied) best = b;
    }
    return best!.meta;
  }

  raftLeaders(): RaftNode[] {
    const out: RaftNode[] = [];
    for (const b of this.brokers.values()) {
      const r = b.metaNode.raft;
      if (r?.role === "leader") out.push(r);
    }
    return out;
  }

  /** The broker running the controller (the Raft leader of the highest term), or -1. */
  controller(): number {
    let best: RaftNode | undefined;
    for (const r of this.raftLeaders()) if (best === undefined || r.term > best.term) best = r;
    return best?.id ?? -1;
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

  send(from: NodeId, to: NodeId, msg: Msg): void {
    const key = `${from}>${to}`;
    const extra = this.slow.size === 0 ? undefined : this.slow.get(key);
    const data = msg.t === "raft" && (msg.m.type === "app" || msg.m.type === "snap");
    const stall = data && this.raftStalls.size !== 0 ? this.raftStalls.get(key) ?? 0 : 0;
    if (stall > this.now) {
      // Held until the connection recovers, then sent in order.
      this.at(stall, () => this.net.send(from, to, msg, this.now));
      return;
    }
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
    b.hwCheck();
  }

  fire(t: Timer): void {
    switch (t.k) {
      case "fn":
        return t.fn();
      case "client":
        return this.clients.tick(t.node);
      case "tick": {
        const b = this.brokers.get(t.node)!;
        this.timers.push(this.now + TICK_MS, t);
        if (b.paused) return; // a paused process's timer fires late
        // The controller's timer runs every CTL_TICK_MS, with every other broker tick.
        const ctl = ++b.ticks % (CTL_TICK_MS / TICK_MS) === 0;
        this.#as(b, () => {
          b.tick();
          if (ctl) b.ctl.tick();
        });
        return;
      }
      case "sync": {
        const b = this.brokers.get(t.node)!;
        if (!b.up || b.inc !== t.inc) return;
        this.#as(b, () => b.synced(t.gen, t.target));
        return;
      }
      case "raftWake": {
        const b = this.brokers.get(t.node)!;
        b.metaNode.fired(t.gen);
        this.#as(b, () => b.metaNode.wake(t.gen));
        return;
      }
      case "raftSynced": {
        const b = this.brokers.get(t.node)!;
        this.#as(b, () => b.metaNode.synced(t.gen));
        return;
      }
      case "restart":
        return this.restart(t.node);
      case "resume":
        return this.resume(t.node);
    }
  }

  deliver(from: number, to: number, msg: Msg): void {
    const b = this.brokers.get(to);
    if (b !== undefined) {
      this.#as(b, () => b.receive(from, msg));
      return;
    }
    this.clients.receive(to, msg);
  }

  // ---- faults --------------------------------------------------------------------------------

  crash(id: number, downMs: number): void {
    const b = this.brokers.get(id)!;
    if (!b.up) return;
    this.counts.crashes++;
    if (b.metaNode.isLeader) this.counts.controllerFaults++;
    b.crash();
    this.net.setDown(id, true);
    // The controller sees the connection close (a hint, not a verdict).
    for (const o of this.brokers.values()) {
      if (o.up && !o.paused && o.ctl.active && this.net.canReach(id, o.id)) o.ctl.hint(id);
    }
    this.timers.push(this.now + downMs, { k: "restart", node: id });
  }

  restart(id: number): void {
    const b = this.brokers.get(id)!;
    if (b.up) return;
    this.net.setDown(id, false);
    b.restart();
  }

  pause(id: number, ms: number): void {
    const b = this.brokers.get(id)!;
    if (!b.up || b.paused) return;
    this.counts.pauses++;
    if (b.metaNode.isLeader) this.counts.controllerFaults++;
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

  /** Controller time (ms) the current fenced-broker-in-an-online-ISR spell has lasted. */
  fencedInIsrMs = 0;
  worstFencedInIsrMs = 0;

  /**
   * Called every `dt` ms: while a controller is active and its own metadata keeps a fenced
   * broker leading or in the ISR of an online partition, the spell grows. The fence's election
   * follows the fence within a few round trips, unless it is lost (see the doc).
   */
  watchFenced(dt: number): void {
    const ctl = this.controller();
    if (ctl < 0 || this.brokers.get(ctl)!.paused) return;
    const m = this.brokers.get(ctl)!.meta;
    const p = m.part;
    const bad = p.leader !== NO_LEADER && p.isr.some((id) => m.brokers.get(id)?.fenced !== false);
    if (!bad) {
      this.fencedInIsrMs = 0;
      return;
    }
    this.fencedInIsrMs += dt;
    this.worstFencedInIsrMs = Math.max(this.worstFencedInIsrMs, this.fencedInIsrMs);
  }

  // ---- end of run ----------------------------------------------------------------------------

  /** Healed and settled: a leader, the whole ISR, every replica holding the leader's log. */
  settled(): string | undefined {
    const meta = this.latest();
    const p = meta.part;
    if (p.leader === NO_LEADER) return "no leader";
    if (p.reassignment) return `reassignment to [${p.reassignment.target}] in flight`;
    if (p.isr.length !== p.replicas.length) return `ISR [${p.isr}] of [${p.replicas}]`;
    const l = this.brokers.get(p.leader)!;
    if (!l.up || !l.isLeader || l.leaderEpoch !== p.leaderEpoch) {
      return `leader ${l.id} not acting`;
    }
    if (!l.leaseValid()) return `leader ${l.id} has no lease`;
    if (l.highWatermark() !== l.logEnd) {
      return `leader hw ${l.highWatermark()} < log end ${l.logEnd}`;
    }
    const applied = Math.max(...[...this.brokers.values()].map((b) => b.applied));
    for (const b of this.brokers.values()) {
      // A broker a reassignment moved away holds no log.
      const end = p.replicas.includes(b.id) ? l.logEnd : 0;
      if (b.logEnd !== end) return `broker ${b.id} log end ${b.logEnd} vs ${end}`;
      if (b.applied !== applied) return `broker ${b.id} applied ${b.applied} of ${applied}`;
    }
    if (this.clients.waiting) return "a produce request still waits";
    return undefined;
  }

  finalChecks(): void {
    const replicas = this.latest().part.replicas;
    for (const b of this.brokers.values()) {
      if (!replicas.includes(b.id)) {
        if (b.logEnd !== 0) this.check.fail(`broker ${b.id} is no replica but holds a log`);
        continue;
      }
      this.check.holdsAcked(`final log of broker ${b.id}`, b.log);
      this.check.holdsSeen(`final log of broker ${b.id}`, b.log);
      const ids = new Set<string>();
      for (const r of b.log) {
        if (ids.has(r.id)) this.check.fail(`(6) broker ${b.id} holds ${r.id} twice`);
        ids.add(r.id);
      }
    }
    const l = this.brokers.get(this.latest().part.leader)!;
    for (const b of this.brokers.values()) {
      if (!replicas.includes(b.id)) continue;
      for (let o = 0; o < l.logEnd; o++) {
        if (b.log[o].id !== l.log[o].id) this.check.fail(`(2) final logs differ at ${o}`);
      }
    }
  }
}
