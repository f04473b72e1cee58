// The IO shell's view of stable storage and of the network. The real implementations (SQLite,
// TCP) live elsewhere; MemoryStorage serves tests and single-process use.
import type { Entry, HardState, Message, PersistedState, Snapshot } from "./types.ts";

export interface RaftStorage {
  /** Everything persisted, for a restart. */
  load(): PersistedState;
  /**
   * Persists one Ready's snapshot, entries (replacing stored entries from entries[0].index on)
   * and hard state; resolves once durable (fsync'd) when sync is true.
   */
  save(
    hs: HardState | undefined,
    entries: Entry[],
    snapshot: Snapshot | undefined,
    sync: boolean,
  ): Promise<void>;
  /** Stores a snapshot taken locally and drops the entries it covers. */
  saveSnapshot(s: Snapshot): Promise<void>;
}

export interface RaftTransport {
  /** Best effort, unordered, may drop: Raft tolerates all of it. */
  send(m: Message): void;
  /** Registers the handler for incoming messages (decoded, not yet validated: parseMessage). */
  onMessage(handler: (m: unknown) => void): void;
  close(): void;
}

/** Storage in memory; durable for the life of the object. */
export class MemoryStorage implements RaftStorage {
  hardState: HardState = { term: 0, vote: -1, commit: 0 };
  snapshot: Snapshot | undefined;
  entries: Entry[] = [];

  load(): PersistedState {
    return {
      hardState: { ...this.hardState },
      snapshot: this.snapshot,
      entries: [...this.entries],
    };
  }

  save(
    hs: HardState | undefined,
    entries: Entry[],
    snapshot: Snapshot | undefined,
    _sync: boolean,
  ): Promise<void> {
    if (snapshot !== undefined) {
      this.snapshot = snapshot;
      this.entries = [];
    }
    if (entries.length > 0) {
      const first = entries[0].index;
      const base = this.snapshot?.meta.index ?? 0;
      this.entries.length = Math.max(0, Math.min(this.entries.length, first - base - 1));
      this.entries.push(...entries);
    }
    if (hs !== undefined) this.hardState = { ...hs };
    return Promise.resolve();
  }

  saveSnapshot(s: Snapshot): Promise<void> {
    const base = this.snapshot?.meta.index ?? 0;
    if (s.meta.index > base) {
      this.entries = this.entries.filter((e) => e.index > s.meta.index);
      this.snapshot = s;
    }
    return Promise.resolve();
  }
}
