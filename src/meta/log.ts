// The metadata log seen by writers. `append` resolves once the record is committed and applied
// to this broker's SQLite, so a writer can read its own change right after. Today the log is
// LocalMetadataLog; a Raft log implements the same interface later and no writer changes.
import { asc, gte, sql } from "drizzle-orm";
import type { MetaConn } from "./apply.ts";
import { appliedIndex, applyRecord } from "./apply.ts";
import { encodeRecord, type MetadataRecord, parseRecord } from "./records.ts";
import * as s from "./schema.ts";

export interface LogEntry {
  index: number;
  term: number;
  record: MetadataRecord;
}

export interface MetadataLog {
  /**
   * Appends a record; resolves with its index once committed and applied locally. Rejects
   * (MetaError) when the record does not fit the current state.
   */
  append(record: MetadataRecord): Promise<number>;
  /** Highest index applied to this broker's SQLite. */
  appliedIndex(): number;
  /** Committed entries with index >= fromIndex, at most `max`, in order. */
  read(fromIndex: number, max: number): LogEntry[];
  close(): void;
}

/** Term of every local entry: one node, one everlasting term. */
export const LOCAL_TERM = 1;

/**
 * The single-node log. It lives in the table metadata_log of the same SQLite database, and
 * each append writes the entry and applies it in ONE transaction. Why: the log and the
 * tables can never disagree after a crash (no replay-on-start window, no second file to
 * fsync), and a record that does not apply is rolled back instead of being committed.
 */
export class LocalMetadataLog implements MetadataLog {
  #db: MetaConn;
  #now: () => number;
  #closed = false;

  constructor(db: MetaConn, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
    // Entries past the applied index can only exist if the log was written by another
    // implementation (or restored from a copy): apply them before serving anything.
    const applied = appliedIndex(db).index;
    for (let from = applied + 1;;) {
      const batch = this.read(from, 1000);
      if (batch.length === 0) break;
      for (const e of batch) applyRecord(db, e.record, e.index, e.term);
      from = batch[batch.length - 1].index + 1;
    }
  }

  append(record: MetadataRecord): Promise<number> {
    try {
      if (this.#closed) throw new Error("metadata log is closed");
      const rec = parseRecord(encodeRecord(record));
      const index = this.#db.transaction((tx) => {
        const last = tx.select({ i: sql<number | null>`max(${s.metadataLog.index})` })
          .from(s.metadataLog).get()?.i ?? 0;
        const index = Math.max(last, appliedIndex(tx).index) + 1;
        tx.insert(s.metadataLog).values({
          index,
          term: LOCAL_TERM,
          record: encodeRecord(rec),
          appendedAt: this.#now(),
        }).run();
        applyRecord(tx, rec, index, LOCAL_TERM);
        return index;
      }, { behavior: "immediate" });
      return Promise.resolve(index);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  appliedIndex(): number {
    return appliedIndex(this.#db).index;
  }

  read(fromIndex: number, max: number): LogEntry[] {
    const limit = Math.max(0, Math.min(Math.floor(max), 10_000));
    return this.#db.select().from(s.metadataLog).where(gte(s.metadataLog.index, fromIndex))
      .orderBy(asc(s.metadataLog.index)).limit(limit).all()
      .map((r) => ({ index: r.index, term: r.term, record: parseRecord(r.record) }));
  }

  close(): void {
    this.#closed = true;
  }
}
