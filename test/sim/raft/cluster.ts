// Deterministic simulation of a Raft cluster over the shared sim kit: N nodes with skewed
// clocks, a lossy/duplicating/reordering network with partitions, crashes that lose unsynced
// writes, membership changes, leadership transfers, snapshots and read-index reads. The shell
// here obeys the Ready contract exactly (persist+sync, then send, then apply), with a random
// fsync latency during which a crash loses the batch.
import { bootstrapState, emptyState } from "../../../src/cluster/raft/bootstrap.ts";
import { RaftNode } from "../../../src/cluster/raft/node.ts";
import type {
  Message,
  PersistedState,
  RaftBugs,
  RaftOptions,
  Ready,
  Snapshot,
} from "../../../src/cluster/raft/types.ts";
import { EventQueue, Rng, SimClock, SimDisk, SimNetwork } from "../../../src/cluster/sim/index.ts";
import type { Scheduled } from "../../../src/cluster/sim/index.ts";
import { Checker, fingerprint, hashStep } from "./checker.ts";

export type Ev =
  | { k: "wake"; node: number }
  | { k: "synced"; node: number; gen: number }
  | { k: "restart"; node: number }
  | { k: "act"; what: string };

export interface SimNode {
  id: number;
  raft: RaftNode | undefined;
  disk: SimDisk<PersistedState>;
  gen: number;
  smIndex: number;
  smHash: number;
  syncing: Ready | undefined;
  wakeAt: number;
  retired: boolean;
  rng: Rng;
}

export const RAFT_SIM_OPTIONS: Omit<RaftOptions, "id"> = {
  electionMs: 1000,
  heartbeatMs: 100,
  preVote: true,
  checkQuorum: true,
  maxBatchEntries: 32,
  maxInflight: 4,
  snapshotThreshold: 40,
  catchUpMargin: 8,
};

function cloneState(s: PersistedState): PersistedState {
  return { hardState: { ...s.hardState }, snapshot: s.snapshot, entries: [...s.entries] };
}

function smData(index: number, hash: number): string {
  return `${index}:${hash}`;
}

function parseSm(data: string): [number, number] {
  const [a, b] = data.split(":");
  return [Number(a), Number(b)];
}

export class RaftCluster {
  readonly rng: Rng;
  readonly clock = new SimClock();
  readonly net: SimNetwork<Message>;
  readonly queue = new EventQueue<Ev>();
  readonly nodes = new Map<number, SimNode>();
  readonly check = new Checker();
  readonly counts: Record<string, number> = {
    elections: 0,
    crashes: 0,
    restarts: 0,
    partitions: 0,
    snapshotInstalls: 0,
    snapshotsTaken: 0,
    membershipChanges: 0,
    transfers: 0,
    reads: 0,
    proposals: 0,
    commits: 0,
  };
  readonly opts: Omit<RaftOptions, "id">;
  bugs: RaftBugs = {};
  /** Node ids that get `bugs`. */
  buggy = new Set<number>();
  trace: ((line: string) => void) | undefined;
  onConfCommitted: ((op: string, node: number) => void) | undefined;
  /** Called with each newly committed index (first node to commit it). */
  onCommit: ((index: number) => void) | undefined;
  #confCounted = 0;
  #commitCounted = 0;
  #reads = new Map<string, number>();
  #readSeq = 0;

  constructor(seed: number, opts: Partial<RaftOptions> = {}) {
    this.rng = new Rng(seed);
    this.net = new SimNetwork<Message>(this.rng.fork());
    this.opts = { ...RAFT_SIM_OPTIONS, ...opts };
  }

  /** Starts node id from the bootstrap state (voters) or empty (a joiner). */
  addNode(id: number, voters: number[] | undefined): SimNode {
    const init = voters === undefined
      ? emptyState()
      : bootstrapState({ voters, learners: [] }, smData(1, 0));
    const n: SimNode = {
      id,
      raft: undefined,
      disk: new SimDisk(init, cloneState),
      gen: 0,
      smIndex: 0,
      smHash: 0,
      syncing: undefined,
      wakeAt: Infinity,
      retired: false,
      rng: this.rng.fork(),
    };
    this.nodes.set(id, n);
    this.#boot(n);
    return n;
  }

  #boot(n: SimNode): void {
    const st = n.disk.live;
    const snap = st.snapshot;
    [n.smIndex, n.smHash] = snap === undefined ? [0, 0] : parseSm(snap.data);
    n.raft = new RaftNode(
      { ...this.opts, id: n.id },
      cloneState(st),
      n.rng,
      this.clock.localNow(n.id),
      {
        bugs: this.buggy.has(n.id) ? this.bugs : {},
        appliedIndex: n.smIndex,
      },
    );
    if (snap !== undefined) this.check.stateAt(n.id, n.smIndex, n.smHash);
    this.net.setDown(n.id, false);
    n.wakeAt = Infinity;
    this.#pump(n);
  }

  crash(id: number): void {
    const n = this.nodes.get(id)!;
    if (n.raft === undefined) return;
    this.counts.crashes++;
    this.trace?.(`${this.clock.now} crash ${id} (unsynced writes: ${n.disk.unsynced})`);
    n.raft = undefined;
    n.syncing = undefined;
    n.gen++;
    n.disk.crash(n.rng);
    this.net.setDown(id, true);
  }

  restart(id: number): void {
    const n = this.nodes.get(id)!;
    if (n.raft !== undefined || n.retired) return;
    this.counts.restarts++;
    this.trace?.(`${this.clock.now} restart ${id}`);
    this.#boot(n);
  }

  retire(id: number): void {
    this.crash(id);
    this.counts.crashes--;
    this.nodes.get(id)!.retired = true;
  }

  running(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.raft !== undefined);
  }

  leaders(): RaftNode[] {
    const out: RaftNode[] = [];
    for (const n of this.nodes.values()) if (n.raft?.role === "leader") out.push(n.raft);
    return out;
  }

  /** The leader with the highest term, if any. */
  leader(): RaftNode | undefined {
    let best: RaftNode | undefined;
    for (const l of this.leaders()) if (best === undefined || l.term > best.term) best = l;
    return best;
  }

  propose(data: string): boolean {
    const l = this.leader();
    if (l === undefined) return false;
    const r = l.propose(data);
    if (r.ok) this.counts.proposals++;
    this.#pump(this.nodes.get(l.id)!);
    return r.ok;
  }

  /** Runs fn against node id's Raft and then flushes its effects. */
  withNode<T>(id: number, fn: (r: RaftNode) => T): T | undefined {
    const n = this.nodes.get(id);
    if (n?.raft === undefined) return undefined;
    const out = fn(n.raft);
    this.#pump(n);
    return out;
  }

  read(id: number): void {
    const ctx = `r${++this.#readSeq}`;
    this.#reads.set(ctx, this.check.commitMax);
    this.withNode(id, (r) => r.readIndex(ctx));
  }

  /** Processes events up to global time `until`. */
  runUntil(until: number, onAct?: (what: string) => void): void {
    for (let guard = 0; guard < 50_000_000; guard++) {
      const tn = this.net.nextDeliveryAt();
      const tq = this.queue.peekTime();
      const t = Math.min(tn, tq);
      if (t > until) break;
      this.clock.advanceTo(t);
      if (tn <= tq) {
        const d = this.net.popDue(t);
        if (d === undefined) continue;
        const n = this.nodes.get(d.to);
        if (n?.raft === undefined) continue;
        n.raft.tick(this.clock.localNow(n.id));
        n.raft.step(d.msg);
        this.#pump(n);
        continue;
      }
      const ev = this.queue.pop()!.event;
      switch (ev.k) {
        case "wake": {
          const n = this.nodes.get(ev.node)!;
          if (t >= n.wakeAt) n.wakeAt = Infinity;
          if (n.raft === undefined) break;
          n.raft.tick(this.clock.localNow(n.id));
          this.#pump(n);
          break;
        }
        case "synced": {
          const n = this.nodes.get(ev.node)!;
          if (n.gen !== ev.gen || n.syncing === undefined) break;
          n.disk.sync();
          this.#finish(n, n.syncing);
          break;
        }
        case "restart":
          this.restart(ev.node);
          break;
        case "act":
          onAct?.(ev.what);
          break;
      }
    }
    this.clock.advanceTo(until);
  }

  schedule(at: number, ev: Ev): Scheduled<Ev> {
    return this.queue.push(at, ev);
  }

  /** Hands out a node's Ready and persists it (or finishes it at once when nothing to sync). */
  #pump(n: SimNode): void {
    const r = n.raft;
    if (r === undefined) return;
    while (n.syncing === undefined && r.hasReady()) {
      const rd = r.ready();
      for (const ev of rd.events) {
        if (ev.type !== "role") continue;
        this.trace?.(`${this.clock.now} node ${n.id} -> ${ev.role} term ${ev.term}`);
        if (ev.role === "leader") {
          this.counts.elections++;
          this.check.becameLeader(r, ev.term);
        }
      }
      if (rd.entries.length > 0) this.check.appended(r, rd.entries);
      const leaders = this.leaders();
      this.check.committed(rd.committed, leaders, r.role === "leader" ? r.term : 0);
      for (const e of rd.committed) {
        if (e.kind === "conf" && e.index > this.#confCounted) {
          this.#confCounted = e.index;
          this.counts.membershipChanges++;
          this.trace?.(`${this.clock.now} committed ${e.change.op} ${e.change.node}`);
          this.onConfCommitted?.(e.change.op, e.change.node);
        }
        if (e.index > this.#commitCounted) {
          this.#commitCounted = e.index;
          this.counts.commits++;
          this.onCommit?.(e.index);
        }
      }
      const persist = rd.entries.length > 0 || rd.hardState !== undefined ||
        rd.snapshot !== undefined;
      if (!persist) {
        this.#finish(n, rd);
        continue;
      }
      const { hardState: hs, entries, snapshot } = rd;
      n.disk.write((s) => {
        if (snapshot !== undefined) {
          s.snapshot = snapshot;
          s.entries = [];
        }
        if (entries.length > 0) {
          const base = s.snapshot?.meta.index ?? 0;
          s.entries.length = Math.max(0, Math.min(s.entries.length, entries[0].index - base - 1));
          for (const e of entries) s.entries.push(e);
        }
        if (hs !== undefined) s.hardState = { ...hs };
      });
      n.syncing = rd;
      const delay = rd.mustSync ? n.rng.int(0, 4) : 0;
      this.queue.push(this.clock.now + delay, { k: "synced", node: n.id, gen: n.gen });
    }
    this.#rearm(n);
  }

  /** After persisting: send, apply, snapshot, advance. */
  #finish(n: SimNode, rd: Ready): void {
    const r = n.raft!;
    n.syncing = undefined;
    const now = this.clock.now;
    for (const m of rd.messages) this.net.send(n.id, m.to, m, now);
    if (rd.snapshot !== undefined) {
      this.counts.snapshotInstalls++;
      [n.smIndex, n.smHash] = parseSm(rd.snapshot.data);
      this.check.stateAt(n.id, n.smIndex, n.smHash);
    }
    for (const e of rd.committed) {
      if (e.index <= n.smIndex) continue;
      if (e.index !== n.smIndex + 1) {
        throw new Error(`node ${n.id} applies ${e.index} after ${n.smIndex}`);
      }
      n.smHash = hashStep(n.smHash, fingerprint(e), e.index);
      n.smIndex = e.index;
      this.check.applied(n.id, e, n.smHash);
    }
    for (const rs of rd.readStates) {
      const before = this.#reads.get(rs.ctx);
      if (before === undefined) continue;
      this.#reads.delete(rs.ctx);
      this.check.readServed(n.id, before, rs.index);
      this.counts.reads++;
    }
    if (rd.snapshotDue !== undefined && rd.snapshotDue.index === n.smIndex) {
      const s: Snapshot = { meta: { ...rd.snapshotDue }, data: smData(n.smIndex, n.smHash) };
      n.disk.write((st) => {
        if (s.meta.index <= (st.snapshot?.meta.index ?? 0)) return;
        st.entries = st.entries.filter((e) => e.index > s.meta.index);
        st.snapshot = s;
      });
      n.disk.sync();
      r.compact(s);
      this.counts.snapshotsTaken++;
    } else if (rd.snapshotDue !== undefined) {
      r.snapshotDeclined();
    }
    r.advance(rd);
    this.#pump(n);
  }

  #rearm(n: SimNode): void {
    const r = n.raft;
    if (r === undefined) return;
    const at = this.clock.globalAt(n.id, r.nextDeadline());
    if (at < n.wakeAt) {
      n.wakeAt = at;
      this.queue.push(at, { k: "wake", node: n.id });
    }
  }
}
