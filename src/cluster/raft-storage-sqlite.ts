// RaftStorage on its own SQLite file (<dataDir>/raft.db): hard state (term, vote, commit), log
// entries and the latest snapshot. synchronous=FULL makes every committed transaction durable
// before save() returns, which is what the Ready contract needs: term and vote are on disk
// before any message that depends on them leaves. A separate file from meta.db because meta.db
// runs with the looser WAL defaults the rest of the broker wants.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { quickCheck } from "../meta/damage.ts";
import { parseEntry } from "./raft/messages.ts";
import type { RaftStorage } from "./raft/storage.ts";
import type { Entry, HardState, PersistedState, Snapshot } from "./raft/types.ts";

export const RAFT_DB_FILE = "raft.db";

export class RaftStorageError extends Error {
  override readonly name = "RaftStorageError";
}

function entryBody(e: Entry): string {
  return JSON.stringify(e);
}

/**
 * Whether `raft.db` in `dataDir` holds a metadata log (a hard state or a snapshot), read without
 * creating anything: the broker rebuilds a missing or damaged meta.db from it.
 */
export function raftLogHasState(dataDir: string): boolean {
  const path = join(dataDir, RAFT_DB_FILE);
  if (!existsSync(path)) return false;
  let db: Database | undefined;
  try {
    db = new Database(path, { readwrite: true, create: false });
    const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    const names = new Set(tables.map((t) => t.name));
    if (!names.has("hard_state") || !names.has("snapshot")) return false;
    return db.query("SELECT 1 FROM hard_state WHERE id = 1").get() !== null ||
      db.query("SELECT 1 FROM snapshot WHERE id = 1").get() !== null;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

export class SqliteRaftStorage implements RaftStorage {
  readonly #db: Database;
  #snapIndex = 0;

  constructor(dataDir: string) {
    const path = join(dataDir, RAFT_DB_FILE);
    try {
      this.#db = new Database(path, { create: true, strict: true });
      const damage = quickCheck(this.#db);
      if (damage !== null) throw new Error(damage);
    } catch (e) {
      // Unlike meta.db, the Raft log is not derived from anything else in a cluster.
      throw new RaftStorageError(
        `${path} is damaged or unreadable (${(e as Error).message}); refusing to start. ` +
          "On a single broker, moving it aside rebuilds it from meta.db at the next start; " +
          "a cluster member should be removed and join again with an empty data dir.",
      );
    }
    this.#db.run("PRAGMA journal_mode=WAL");
    this.#db.run("PRAGMA synchronous=FULL");
    this.#db.run(
      "CREATE TABLE IF NOT EXISTS hard_state (id INTEGER PRIMARY KEY CHECK (id = 1), " +
        "term INTEGER NOT NULL, vote INTEGER NOT NULL, commit_index INTEGER NOT NULL)",
    );
    this.#db.run(
      "CREATE TABLE IF NOT EXISTS entries (idx INTEGER PRIMARY KEY, body TEXT NOT NULL)",
    );
    this.#db.run(
      "CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY CHECK (id = 1), " +
        "idx INTEGER NOT NULL, term INTEGER NOT NULL, config TEXT NOT NULL, data TEXT NOT NULL)",
    );
    // Small facts the cluster shell keeps across restarts (e.g. the SWIM incarnation).
    this.#db.run("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
  }

  /** True when nothing was ever persisted (a fresh data dir, or a joiner before its snapshot). */
  isEmpty(): boolean {
    const hs = this.#db.query("SELECT term FROM hard_state WHERE id = 1").get();
    const snap = this.#db.query("SELECT idx FROM snapshot WHERE id = 1").get();
    return hs === null && snap === null;
  }

  load(): PersistedState {
    const hsRow = this.#db.query("SELECT term, vote, commit_index FROM hard_state WHERE id = 1")
      .get() as { term: number; vote: number; commit_index: number } | null;
    const hardState: HardState = hsRow === null
      ? { term: 0, vote: -1, commit: 0 }
      : { term: hsRow.term, vote: hsRow.vote, commit: hsRow.commit_index };
    const snapRow = this.#db.query("SELECT idx, term, config, data FROM snapshot WHERE id = 1")
      .get() as { idx: number; term: number; config: string; data: string } | null;
    let snapshot: Snapshot | undefined;
    if (snapRow !== null) {
      snapshot = {
        meta: { index: snapRow.idx, term: snapRow.term, config: JSON.parse(snapRow.config) },
        data: snapRow.data,
      };
    }
    this.#snapIndex = snapshot?.meta.index ?? 0;
    const rows = this.#db.query("SELECT idx, body FROM entries WHERE idx > ? ORDER BY idx")
      .all(this.#snapIndex) as { idx: number; body: string }[];
    const entries: Entry[] = [];
    for (const r of rows) {
      const e = parseEntry(JSON.parse(r.body));
      // Our own file: a bad row means corruption, and guessing would break Raft's guarantees.
      if (e === undefined || e.index !== r.idx) {
        throw new RaftStorageError(`${RAFT_DB_FILE}: corrupt entry at index ${r.idx}`);
      }
      if (entries.length > 0 && e.index !== entries[entries.length - 1].index + 1) {
        throw new RaftStorageError(`${RAFT_DB_FILE}: gap in the log before index ${e.index}`);
      }
      entries.push(e);
    }
    if (entries.length > 0 && entries[0].index !== this.#snapIndex + 1) {
      throw new RaftStorageError(`${RAFT_DB_FILE}: log does not start after the snapshot`);
    }
    return { hardState, snapshot, entries };
  }

  save(
    hs: HardState | undefined,
    entries: Entry[],
    snapshot: Snapshot | undefined,
    _sync: boolean,
  ): Promise<void> {
    // Every transaction is synced (synchronous=FULL): the unsynced case is rare (commit-index
    // only updates) and not worth a second code path.
    try {
      this.#db.transaction(() => {
        if (snapshot !== undefined) {
          this.#putSnapshot(snapshot);
          this.#db.query("DELETE FROM entries").run();
        }
        if (entries.length > 0) {
          this.#db.query("DELETE FROM entries WHERE idx >= ?").run(entries[0].index);
          const ins = this.#db.query("INSERT INTO entries (idx, body) VALUES (?, ?)");
          for (const e of entries) ins.run(e.index, entryBody(e));
        }
        if (hs !== undefined) {
          this.#db.query(
            "INSERT INTO hard_state (id, term, vote, commit_index) VALUES (1, ?, ?, ?) " +
              "ON CONFLICT(id) DO UPDATE SET term = excluded.term, vote = excluded.vote, " +
              "commit_index = excluded.commit_index",
          ).run(hs.term, hs.vote, hs.commit);
        }
      })();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  saveSnapshot(s: Snapshot): Promise<void> {
    try {
      if (s.meta.index > this.#snapIndex) {
        this.#db.transaction(() => {
          this.#putSnapshot(s);
          this.#db.query("DELETE FROM entries WHERE idx <= ?").run(s.meta.index);
        })();
      }
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  getKv(k: string): string | undefined {
    const r = this.#db.query("SELECT v FROM kv WHERE k = ?").get(k) as { v: string } | null;
    return r?.v;
  }

  setKv(k: string, v: string): void {
    this.#db.query(
      "INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v",
    )
      .run(k, v);
  }

  close(): void {
    this.#db.close();
  }

  #putSnapshot(s: Snapshot): void {
    this.#db.query(
      "INSERT INTO snapshot (id, idx, term, config, data) VALUES (1, ?, ?, ?, ?) " +
        "ON CONFLICT(id) DO UPDATE SET idx = excluded.idx, term = excluded.term, " +
        "config = excluded.config, data = excluded.data",
    ).run(s.meta.index, s.meta.term, JSON.stringify(s.meta.config), s.data);
    this.#snapIndex = s.meta.index;
  }
}
