// A small synchronous cluster for unit tests: persists each Ready in MemoryStorage at once,
// queues messages, and delivers them in order unless a link is cut.
import { bootstrapState, emptyState } from "../../../src/cluster/raft/bootstrap.ts";
import { RaftNode } from "../../../src/cluster/raft/node.ts";
import { MemoryStorage } from "../../../src/cluster/raft/storage.ts";
import type {
  Entry,
  Message,
  RaftEvent,
  RaftOptions,
  ReadState,
} from "../../../src/cluster/raft/types.ts";
import { Rng } from "../../../src/cluster/sim/rng.ts";

export const OPTS: Partial<RaftOptions> = { electionMs: 1000, heartbeatMs: 100 };

export class Harness {
  nodes = new Map<number, RaftNode>();
  storage = new Map<number, MemoryStorage>();
  applied = new Map<number, Entry[]>();
  reads = new Map<number, ReadState[]>();
  events = new Map<number, RaftEvent[]>();
  sent: Message[] = [];
  inbox: Message[] = [];
  cut = new Set<string>();
  now = 0;
  rng = new Rng(7);
  opts: Partial<RaftOptions>;

  constructor(voters: number[], opts: Partial<RaftOptions> = {}) {
    this.opts = { ...OPTS, ...opts };
    for (const id of voters) this.start(id, new MemoryStorage(), voters);
  }

  start(id: number, st: MemoryStorage, voters?: number[]): RaftNode {
    if (voters !== undefined && st.hardState.term === 0) {
      const b = bootstrapState({ voters, learners: [] }, "");
      st.hardState = b.hardState;
      st.snapshot = b.snapshot;
    }
    const state = st.snapshot === undefined && st.hardState.term === 0 ? emptyState() : st.load();
    const n = new RaftNode({ ...this.opts, id }, state, this.rng.fork(), this.now);
    this.nodes.set(id, n);
    this.storage.set(id, st);
    if (!this.applied.has(id)) this.applied.set(id, []);
    return n;
  }

  /** Simulates a crash and restart from storage (all Readies were synced). */
  restart(id: number): RaftNode {
    return this.start(id, this.storage.get(id)!);
  }

  node(id: number): RaftNode {
    return this.nodes.get(id)!;
  }

  flush(): void {
    for (const [id, n] of this.nodes) {
      for (let i = 0; i < 1000 && n.hasReady(); i++) {
        const rd = n.ready();
        void this.storage.get(id)!.save(rd.hardState, rd.entries, rd.snapshot, rd.mustSync);
        for (const m of rd.messages) {
          this.sent.push(m);
          if (!this.cut.has(`${m.from}>${m.to}`)) this.inbox.push(m);
        }
        const log = this.applied.get(id)!;
        if (rd.snapshot !== undefined) log.length = 0;
        log.push(...rd.committed);
        this.reads.set(id, [...(this.reads.get(id) ?? []), ...rd.readStates]);
        this.events.set(id, [...(this.events.get(id) ?? []), ...rd.events]);
        if (rd.snapshotDue !== undefined) {
          const s = { meta: rd.snapshotDue, data: `snap@${rd.snapshotDue.index}` };
          void this.storage.get(id)!.saveSnapshot(s);
          n.compact(s);
        }
        n.advance(rd);
      }
    }
  }

  /** Delivers queued messages (and the ones they cause) until quiet. */
  deliver(): void {
    for (let round = 0; round < 10_000; round++) {
      this.flush();
      if (this.inbox.length === 0) return;
      const batch = this.inbox;
      this.inbox = [];
      for (const m of batch) {
        const n = this.nodes.get(m.to);
        if (n === undefined || this.cut.has(`${m.from}>${m.to}`)) continue;
        n.tick(this.now);
        n.step(m);
      }
    }
    throw new Error("message storm");
  }

  /** Advances time in 10 ms steps, ticking every node and delivering. */
  run(ms: number): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now += 10;
      for (const n of this.nodes.values()) n.tick(this.now);
      this.deliver();
    }
  }

  isolate(id: number): void {
    for (const o of this.nodes.keys()) {
      if (o === id) continue;
      this.cut.add(`${id}>${o}`);
      this.cut.add(`${o}>${id}`);
    }
  }

  heal(): void {
    this.cut.clear();
  }

  leaders(): RaftNode[] {
    return [...this.nodes.values()].filter((n) => n.role === "leader");
  }

  leader(): RaftNode {
    const ls = this.leaders().sort((a, b) => b.term - a.term);
    if (ls.length === 0) throw new Error("no leader");
    return ls[0];
  }

  /** Runs fn on a node and delivers its effects. */
  on<T>(id: number, fn: (n: RaftNode) => T): T {
    const out = fn(this.node(id));
    this.deliver();
    return out;
  }

  data(id: number): string[] {
    return this.applied.get(id)!.flatMap((e) => e.kind === "normal" ? [e.data] : []);
  }
}
