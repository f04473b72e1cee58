// RaftMetadataLog: the MetadataLog of src/meta/log.ts on top of a RaftNode, plus the IO shell
// that carries out its Ready batches in the contract's order (persist and sync, then send,
// then apply, then advance). Writers see the same interface as with the local log: append
// resolves once the record is committed and applied here.
import type { MetaError } from "../../meta/errors.ts";
import type { LogEntry, MetadataLog } from "../../meta/log.ts";
import { encodeRecord, type MetadataRecord, parseRecord } from "../../meta/records.ts";
import { parseMessage } from "./messages.ts";
import type { RaftNode } from "./node.ts";
import type { RaftStorage, RaftTransport } from "./storage.ts";
import type { ConfChange, Entry, Ready, Snapshot } from "./types.ts";

/** The metadata tables as a Raft state machine (the broker backs it with SQLite). */
export interface MetadataStateMachine {
  /** Applies a committed record; a MetaError result means it consumed its index as a no-op. */
  apply(record: MetadataRecord, index: number, term: number): MetaError | undefined;
  appliedIndex(): number;
  /** An image of the state at appliedIndex(). */
  snapshot(): string;
  /** Replaces the state by a snapshot's image. */
  restore(s: Snapshot): void;
  /**
   * Runs `fn` (the apply calls of one batch of committed entries) as one durable write, when the
   * state machine can: a restart's thousands of leader changes then cost one sync, not one each.
   */
  batch?(fn: () => void): void;
}

export interface ShellClock {
  now(): number;
  /** Calls fn after ms; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const REAL_CLOCK: ShellClock = {
  now: () => performance.now(),
  setTimer: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** Why a Raft operation failed (not the Kafka-level error of a record). */
export class RaftError extends Error {
  override readonly name = "RaftError";
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

const DISK_FULL_RETRY_MS = 100;

/** SQLite's or the OS's "no space left" (the broker's space reserve reacts to the same). */
function isDiskFull(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  return err?.code === "SQLITE_FULL" || err?.code === "ENOSPC" ||
    (typeof err?.message === "string" && /disk is full|ENOSPC|SQLITE_FULL/.test(err.message));
}

interface Waiter {
  term: number;
  resolve: (index: number) => void;
  reject: (e: Error) => void;
}

function entryRecord(e: Entry): MetadataRecord {
  // Conf changes and no-ops change no table; they still take their index.
  return e.kind === "normal" ? parseRecord(e.data) : { type: "NoOp" };
}

export class RaftMetadataLog implements MetadataLog {
  #node: RaftNode;
  #storage: RaftStorage;
  #transport: RaftTransport;
  #sm: MetadataStateMachine;
  #clock: ShellClock;
  #waiters = new Map<number, Waiter>();
  #reads = new Map<string, { resolve: (i: number) => void; reject: (e: Error) => void }>();
  #readyReads: { index: number; resolve: (i: number) => void }[] = [];
  #readSeq = 0;
  #busy = false;
  #again = false;
  #cancelTimer: (() => void) | undefined;
  #closed = false;
  #fatal: Error | undefined;

  /** node must have been built from storage.load() with appliedIndex = sm.appliedIndex(). */
  constructor(
    node: RaftNode,
    storage: RaftStorage,
    transport: RaftTransport,
    sm: MetadataStateMachine,
    clock: ShellClock = REAL_CLOCK,
  ) {
    this.#node = node;
    this.#storage = storage;
    this.#transport = transport;
    this.#sm = sm;
    this.#clock = clock;
    transport.onMessage((raw) => {
      const m = parseMessage(raw);
      if (m === undefined || this.#closed) return;
      this.#node.tick(this.#clock.now());
      this.#node.step(m);
      this.#kick();
    });
    this.#kick();
  }

  get node(): RaftNode {
    return this.#node;
  }

  append(record: MetadataRecord): Promise<number> {
    if (this.#closed || this.#fatal) {
      return Promise.reject(this.#fatal ?? new RaftError("closed", "metadata log is closed"));
    }
    let rec: MetadataRecord;
    try {
      rec = parseRecord(encodeRecord(record));
    } catch (e) {
      return Promise.reject(e);
    }
    const r = this.#node.propose(encodeRecord(rec));
    if (!r.ok) {
      return Promise.reject(
        new RaftError(r.reason, `cannot append: ${r.reason} (leader ${this.#node.leader})`),
      );
    }
    const p = new Promise<number>((resolve, reject) =>
      this.#wait(r.index, r.term, resolve, reject)
    );
    this.#kick();
    return p;
  }

  /** Leader only: proposes a single-server change; resolves once committed and applied here. */
  changeMembership(change: ConfChange): Promise<number> {
    if (this.#closed || this.#fatal) {
      return Promise.reject(this.#fatal ?? new RaftError("closed", "metadata log is closed"));
    }
    const r = this.#node.proposeConfChange(change);
    if (!r.ok) {
      return Promise.reject(
        new RaftError(r.reason, `cannot change membership: ${r.detail ?? r.reason}`),
      );
    }
    const p = new Promise<number>((resolve, reject) =>
      this.#wait(r.index, r.term, resolve, reject)
    );
    this.#kick();
    return p;
  }

  /** Leader only: hands leadership to the most caught-up voter (graceful shutdown). */
  transferLeadership(): boolean {
    if (this.#closed || this.#fatal) return false;
    const r = this.#node.transferLeadership();
    this.#kick();
    return r.ok;
  }

  /** The transport saw every connection from `id` close (see RaftNode.hintPeerGone). */
  hintPeerGone(id: number): void {
    if (this.#closed || this.#fatal) return;
    this.#node.tick(this.#clock.now());
    this.#node.hintPeerGone(id);
    this.#kick();
  }

  /** Runs an election now (the only voter need not wait out an election timeout). */
  campaignNow(): void {
    if (this.#closed || this.#fatal) return;
    this.#node.campaignNow();
    this.#kick();
  }

  /**
   * A proposal waits for its index to commit. An earlier proposal at the same index (a term this
   * node lost, its entry cut, the index reused now) can no longer commit: it is answered first,
   * or whoever awaits it (the controller's serial queue) would wait for ever.
   */
  #wait(index: number, term: number, resolve: (i: number) => void, reject: (e: Error) => void) {
    this.#waiters.get(index)?.reject(new RaftError("lost", `entry ${index} was replaced`));
    this.#waiters.set(index, { term, resolve, reject });
  }

  /** Called after every Ready is carried out (the shell's membership policy hooks in here). */
  onReady: (() => void) | undefined;

  /** Called when a write finds the disk full: true if it freed space (then retried at once). */
  onDiskFull: (() => boolean) | undefined;

  /** Linearizable read barrier: resolves with an index once this node has applied it. */
  readBarrier(): Promise<number> {
    if (this.#closed || this.#fatal) {
      return Promise.reject(this.#fatal ?? new RaftError("closed", "metadata log is closed"));
    }
    const ctx = `${this.#node.id}:${++this.#readSeq}`;
    const p = new Promise<number>((resolve, reject) => this.#reads.set(ctx, { resolve, reject }));
    this.#node.readIndex(ctx);
    this.#kick();
    return p;
  }

  appliedIndex(): number {
    return this.#sm.appliedIndex();
  }

  /** Committed entries still held in the Raft log (older ones live in snapshots only). */
  read(fromIndex: number, max: number): LogEntry[] {
    const limit = Math.max(0, Math.min(Math.floor(max), 10_000));
    if (!Number.isFinite(fromIndex) || limit === 0) return [];
    const lo = Math.max(Math.floor(fromIndex), 1);
    const hi = Math.min(this.#node.commit + 1, lo + limit);
    return this.#node.log.slice(lo, hi).map((e) => ({
      index: e.index,
      term: e.term,
      record: entryRecord(e),
    }));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelTimer?.();
    const err = new RaftError("closed", "metadata log is closed");
    for (const w of this.#waiters.values()) w.reject(err);
    for (const r of this.#reads.values()) r.reject(err);
    this.#waiters.clear();
    this.#reads.clear();
    this.#transport.close();
  }

  #kick(): void {
    if (this.#closed || this.#fatal) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    queueMicrotask(() => this.#drive());
  }

  async #drive(): Promise<void> {
    try {
      do {
        this.#again = false;
        while (!this.#closed && this.#node.hasReady()) await this.#handle(this.#node.ready());
      } while (this.#again && !this.#closed);
    } catch (e) {
      // Storage failed: continuing could break the persist-before-send rule. Stop.
      this.#fatal = e instanceof Error ? e : new Error(String(e));
      this.close();
    } finally {
      this.#busy = false;
    }
    this.#arm();
  }

  async #handle(rd: Ready): Promise<void> {
    if (rd.snapshot !== undefined || rd.entries.length > 0 || rd.hardState !== undefined) {
      await this.#persist(rd);
    }
    for (const m of rd.messages) this.#transport.send(m);
    if (rd.snapshot !== undefined) this.#sm.restore(rd.snapshot);
    // Writers hear the outcome once the whole batch is applied (and durable).
    const outcomes: { e: Entry; err: MetaError | undefined }[] = [];
    const applyAll = () => {
      for (const e of rd.committed) {
        if (e.index <= this.#sm.appliedIndex()) continue;
        outcomes.push({ e, err: this.#sm.apply(entryRecord(e), e.index, e.term) });
      }
    };
    const apply = () => {
      if (this.#sm.batch !== undefined && rd.committed.length > 1) this.#sm.batch(applyAll);
      else applyAll();
    };
    try {
      apply();
    } catch (e) {
      // A full disk under the tables: once space is freed, the records not applied yet are
      // applied again (a batch rolled back whole; applied ones are skipped by index).
      if (!isDiskFull(e) || this.onDiskFull?.() !== true) throw e;
      apply();
    }
    for (const { e, err } of outcomes) {
      const w = this.#waiters.get(e.index);
      if (w !== undefined) {
        this.#waiters.delete(e.index);
        if (w.term !== e.term) w.reject(new RaftError("lost", `entry ${e.index} was replaced`));
        else if (err !== undefined) w.reject(err);
        else w.resolve(e.index);
      }
    }
    // Proposals below a snapshot install or overtaken by another term are gone.
    const applied = this.#sm.appliedIndex();
    for (const [i, w] of this.#waiters) {
      if (i <= applied) {
        this.#waiters.delete(i);
        w.reject(new RaftError("lost", `entry ${i} was replaced`));
      }
    }
    for (const rs of rd.readStates) {
      const r = this.#reads.get(rs.ctx);
      if (r === undefined) continue;
      this.#reads.delete(rs.ctx);
      this.#readyReads.push({ index: rs.index, resolve: r.resolve });
    }
    for (const ev of rd.events) {
      if (ev.type !== "readFailed") continue;
      const r = this.#reads.get(ev.ctx);
      this.#reads.delete(ev.ctx);
      r?.reject(new RaftError("read_failed", ev.reason));
    }
    this.#readyReads = this.#readyReads.filter((r) => {
      if (r.index > applied) return true;
      r.resolve(r.index);
      return false;
    });
    if (rd.snapshotDue !== undefined && applied === rd.snapshotDue.index) {
      const s: Snapshot = { meta: rd.snapshotDue, data: this.#sm.snapshot() };
      try {
        await this.#storage.saveSnapshot(s);
        this.#node.compact(s);
      } catch (e) {
        if (!isDiskFull(e)) throw e;
        this.#node.snapshotDeclined();
      }
    } else if (rd.snapshotDue !== undefined) {
      this.#node.snapshotDeclined();
    }
    this.#node.advance(rd);
    this.onReady?.();
  }

  /**
   * Persists a Ready before anything of it goes out. A full disk is not fatal: the broker frees
   * its space reserve (onDiskFull) or retention frees segments, so the same Ready is retried;
   * writers waiting now hear the error (their entries may still commit later, as after a
   * timeout). Any other storage error is.
   */
  async #persist(rd: Ready): Promise<void> {
    for (;;) {
      try {
        await this.#storage.save(rd.hardState, rd.entries, rd.snapshot, rd.mustSync);
        return;
      } catch (e) {
        if (!isDiskFull(e) || this.#closed) throw e;
        // The broker's space reserve is kept for this: the metadata (elections, ISR changes, a
        // retention change that frees space) must still commit on a full disk.
        if (this.onDiskFull?.() === true) continue;
        for (const w of this.#waiters.values()) w.reject(e as Error);
        this.#waiters.clear();
        await new Promise<void>((r) => this.#clock.setTimer(DISK_FULL_RETRY_MS, r));
      }
    }
  }

  #arm(): void {
    if (this.#closed) return;
    this.#cancelTimer?.();
    const wait = Math.max(0, this.#node.nextDeadline() - this.#clock.now());
    this.#cancelTimer = this.#clock.setTimer(wait, () => {
      this.#cancelTimer = undefined;
      this.#node.tick(this.#clock.now());
      this.#kick();
    });
  }
}
