// One broker's share of the metadata quorum: the production Raft core (RaftNode) and, around it,
// the IO shell of src/cluster/raft/metadata-log.ts (RaftMetadataLog) carried out step by step
// over the sim kit, as test/sim/raft does: persist a Ready (an fsync with a random latency,
// during which a crash loses it; every save is synced, as raft.db's synchronous=FULL does), then send its messages, restore a snapshot, apply the
// committed records in order, settle the proposals waiting on them (the same Map of waiters by
// index, resolved when the entry applied carries their term, rejected when it carries another,
// refused when apply refused the record), take a snapshot when asked, advance. The state
// machine is this broker's applied metadata (model.ts), which, like meta.db, survives a crash.
import { RaftNode } from "../../../src/cluster/raft/node.ts";
import type {
  Entry,
  Message,
  PersistedState,
  Ready,
  Snapshot,
} from "../../../src/cluster/raft/types.ts";
import type { Rng } from "../../../src/cluster/sim/index.ts";
import { SimDisk } from "../../../src/cluster/sim/index.ts";
import type { MetadataRecord } from "../../../src/meta/records.ts";
import type { Broker } from "./broker.ts";
import {
  applyMeta,
  decodeEntry,
  encodeEntry,
  metaImage,
  parseImage,
  RAFT_OPTIONS,
} from "./model.ts";
import type { Env } from "./cluster.ts";

/** A record proposed through this node: how it ended, once it did. */
export interface Proposal {
  index: number;
  term: number;
  settled: boolean;
  ok: boolean;
  /** Why it failed: not_leader, lost, closed, or the MetaError code name apply refused with. */
  error: string;
  /** Called once settled, after the Ready that settled it (a promise continuation). */
  then?: (p: Proposal) => void;
}

function failed(error: string): Proposal {
  return { index: -1, term: -1, settled: true, ok: false, error };
}

function cloneState(s: PersistedState): PersistedState {
  return { hardState: { ...s.hardState }, snapshot: s.snapshot, entries: [...s.entries] };
}

const entryRecord = (e: Entry): MetadataRecord =>
  e.kind === "normal" ? decodeEntry(e.data) : { type: "NoOp" };

export class MetaNode {
  raft: RaftNode | undefined;
  readonly disk: SimDisk<PersistedState>;
  /** Bumped by a crash: the sync and wake-ups of the previous process are void. */
  gen = 0;
  syncing: Ready | undefined;
  wakeAt = Infinity;
  readonly #waiters = new Map<number, { term: number; p: Proposal }>();
  #settled: Proposal[] = [];
  #busy = false;
  #again = false;

  constructor(
    readonly b: Broker,
    readonly env: Env,
    init: PersistedState,
    readonly rng: Rng,
  ) {
    this.disk = new SimDisk(init, cloneState);
  }

  get isLeader(): boolean {
    return this.raft?.role === "leader";
  }

  /** The metadata leader this node knows of (the controller), or -1. */
  get leader(): number {
    return this.raft?.leader ?? -1;
  }

  get term(): number {
    return this.raft?.term ?? 0;
  }

  /** Starts the node from its disk; the state machine is already at b.applied. */
  boot(): void {
    // node.ts metadataLog(): tables behind the log's snapshot (a snapshot install persisted,
    // the crash came before the tables were restored) start from the snapshot.
    const snap = this.disk.live.snapshot;
    if (snap !== undefined && this.b.applied < snap.meta.index) {
      const before = this.b.meta.part;
      this.b.meta = parseImage(snap.data);
      this.b.applied = snap.meta.index;
      this.env.metaCheck.restored(this.b.id, this.b.applied, before, snap.data, this.b.meta);
      this.env.log(
        `broker ${this.b.id}: tables restored from the log's snapshot at ${this.b.applied}`,
      );
    }
    this.raft = new RaftNode(
      { ...RAFT_OPTIONS, id: this.b.id },
      cloneState(this.disk.live),
      this.rng,
      this.env.now,
      { appliedIndex: this.b.applied },
    );
    this.wakeAt = Infinity;
    this.pump();
  }

  crash(): void {
    this.raft = undefined;
    this.syncing = undefined;
    this.gen++;
    this.wakeAt = Infinity;
    this.#waiters.clear();
    this.#settled = [];
    this.disk.crash(this.rng);
  }

  receive(m: Message): void {
    if (this.raft === undefined) return;
    this.raft.tick(this.env.now);
    this.raft.step(m);
    this.pump();
  }

  /** The wake-up timer fired (the process may be paused: it runs later, then re-arms). */
  fired(gen: number): void {
    if (gen === this.gen && this.env.now >= this.wakeAt) this.wakeAt = Infinity;
  }

  wake(gen: number): void {
    if (gen !== this.gen || this.raft === undefined) return;
    this.raft.tick(this.env.now);
    this.pump();
  }

  synced(gen: number): void {
    if (gen !== this.gen || this.syncing === undefined) return;
    this.disk.sync();
    const rd = this.syncing;
    this.syncing = undefined;
    this.#finish(rd);
    this.pump();
  }

  /** RaftMetadataLog.append: resolves once committed and applied here. */
  propose(r: MetadataRecord): Proposal {
    const raft = this.raft;
    if (raft === undefined) return failed("closed");
    const res = raft.propose(encodeEntry(r));
    if (!res.ok) return failed(res.reason);
    const p: Proposal = { index: res.index, term: res.term, settled: false, ok: false, error: "" };
    const old = this.#waiters.get(res.index);
    if (old !== undefined) {
      // As RaftMetadataLog.append's Map.set: the earlier waiter is dropped and never settles.
      this.env.counts.orphanedProposals++;
      this.env.log(
        `broker ${this.b.id}: proposal ${res.index}/${res.term} replaces the waiter of ${res.index}/${old.term}`,
      );
    }
    this.#waiters.set(res.index, { term: res.term, p });
    this.pump();
    return p;
  }

  /** #kick / #drive: hands out Readies until one must wait for its fsync. */
  pump(): void {
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    try {
      do {
        this.#again = false;
        const r = this.raft;
        while (r !== undefined && r === this.raft && this.syncing === undefined && r.hasReady()) {
          this.#handle(r, r.ready());
        }
      } while (this.#again);
    } finally {
      this.#busy = false;
    }
    this.#rearm();
    // Promise continuations: whoever waited on a proposal settled by these Readies.
    const settled = this.#settled;
    this.#settled = [];
    for (const p of settled) p.then?.(p);
    if (settled.length > 0) this.b.ctl.pump();
  }

  #handle(r: RaftNode, rd: Ready): void {
    for (const ev of rd.events) {
      if (ev.type !== "role") continue;
      this.env.log(`broker ${this.b.id}: metadata ${ev.role} in term ${ev.term}`);
      if (ev.role === "leader") {
        this.env.counts.controllerElections++;
        this.env.metaCheck.becameLeader(r, ev.term);
      }
    }
    if (rd.entries.length > 0) this.env.metaCheck.appended(r, rd.entries);
    this.env.metaCheck.committed(
      rd.committed,
      this.env.raftLeaders(),
      r.role === "leader" ? r.term : 0,
    );
    if (rd.entries.length === 0 && rd.hardState === undefined && rd.snapshot === undefined) {
      return this.#finish(rd);
    }
    const { hardState: hs, entries, snapshot } = rd;
    this.disk.write((s) => {
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
    // The broker's raft.db (raft-storage-sqlite.ts) runs synchronous=FULL: every save is synced,
    // whatever rd.mustSync says (a snapshot install, for one, does not set it).
    this.syncing = rd;
    this.env.timers.push(this.env.now + this.rng.int(1, 5), {
      k: "raftSynced",
      node: this.b.id,
      gen: this.gen,
    });
  }

  /** RaftMetadataLog.#handle after the persist: send, restore, apply, settle, snapshot, advance. */
  #finish(rd: Ready): void {
    const r = this.raft!;
    const b = this.b;
    for (const m of rd.messages) this.env.send(b.id, m.to, { t: "raft", m });
    let changed = false;
    if (rd.snapshot !== undefined) {
      this.env.counts.snapshotInstalls++;
      const before = b.meta.part;
      b.meta = parseImage(rd.snapshot.data);
      b.applied = rd.snapshot.meta.index;
      this.env.metaCheck.restored(b.id, b.applied, before, rd.snapshot.data, b.meta);
      this.env.log(`broker ${b.id}: metadata snapshot installed at ${b.applied}`);
      changed = true;
    }
    for (const e of rd.committed) {
      if (e.index <= b.applied) continue;
      if (e.index !== b.applied + 1) {
        throw new Error(`broker ${b.id} applies ${e.index} after ${b.applied}`);
      }
      const rec = entryRecord(e);
      const before = b.meta.part;
      const err = applyMeta(b.meta, rec, e.index);
      b.applied = e.index;
      this.env.metaCheck.applied(b.id, e, rec, err, before, b.meta, metaImage(b.meta));
      changed = true;
      const w = this.#waiters.get(e.index);
      if (w !== undefined) {
        this.#waiters.delete(e.index);
        if (w.term !== e.term) this.#settle(w.p, false, "lost");
        else if (err !== undefined) this.#settle(w.p, false, err.codeName);
        else this.#settle(w.p, true, "");
      }
    }
    // Proposals below a snapshot install or overtaken by another term are gone.
    for (const [i, w] of this.#waiters) {
      if (i <= b.applied) {
        this.#waiters.delete(i);
        this.#settle(w.p, false, "lost");
      }
    }
    if (rd.snapshotDue !== undefined && rd.snapshotDue.index === b.applied) {
      const s: Snapshot = { meta: { ...rd.snapshotDue }, data: metaImage(b.meta) };
      this.disk.write((st) => {
        if (s.meta.index <= (st.snapshot?.meta.index ?? 0)) return;
        st.entries = st.entries.filter((e) => e.index > s.meta.index);
        st.snapshot = s;
      });
      this.disk.sync();
      r.compact(s);
      this.env.counts.snapshotsTaken++;
    } else if (rd.snapshotDue !== undefined) {
      r.snapshotDeclined();
    }
    r.advance(rd);
    if (changed) b.metadataChanged();
  }

  #settle(p: Proposal, ok: boolean, error: string): void {
    p.settled = true;
    p.ok = ok;
    p.error = error;
    this.#settled.push(p);
  }

  #rearm(): void {
    const r = this.raft;
    if (r === undefined) return;
    const at = Math.max(this.env.now, Math.ceil(r.nextDeadline()));
    if (at < this.wakeAt) {
      this.wakeAt = at;
      this.env.timers.push(at, { k: "raftWake", node: this.b.id, gen: this.gen });
    }
  }
}
