// The metadata tables of meta.db as the Raft state machine: committed records go through the
// same applyOrSkip as everywhere else, snapshots are images of the materialised tables.
import type { Snapshot } from "./raft/types.ts";
import type { MetadataStateMachine } from "./raft/metadata-log.ts";
import {
  appliedIndex,
  applyOrSkip,
  type MetaConn,
  type MetadataRecord,
  type MetaError,
  restoreTables,
  snapshotTables,
} from "../meta/index.ts";

export class SqliteMetadataStateMachine implements MetadataStateMachine {
  readonly #db: MetaConn;
  /** The transaction of a batch being applied, and the changes it will announce once committed. */
  #tx: MetaConn | undefined;
  #pending: MetadataRecord[] | undefined;
  /**
   * The applied index and term, as committed (undefined: read them again). Raft asks on every
   * message it handles, heartbeats included, and a select each time was a large share of an
   * idle broker's CPU; only this object writes them, so it knows when they change.
   */
  #applied: { index: number; term: number } | undefined;

  /**
   * @param changed called after a committed record changed the tables (with the record) or a
   *   snapshot replaced them (null), so the broker can bring what it serves in line.
   */
  constructor(
    db: MetaConn,
    private readonly changed: (record: MetadataRecord | null) => void = () => {},
  ) {
    this.#db = db;
  }

  apply(record: MetadataRecord, index: number, term: number): MetaError | undefined {
    // Within a batch each record is a savepoint of the batch's transaction.
    this.#applied = undefined;
    const err = applyOrSkip(this.#tx ?? this.#db, record, index, term);
    this.#applied = undefined;
    if (err === undefined && record.type !== "NoOp" && record.type !== "ProducerIdsAllocated") {
      if (this.#pending !== undefined) this.#pending.push(record);
      else this.#notify(record);
    }
    return err;
  }

  /**
   * One SQLite transaction (one sync under synchronous=FULL) for a batch of committed records;
   * the listener hears of them after the commit, so nothing it does runs inside the transaction.
   */
  batch(fn: () => void): void {
    const pending: MetadataRecord[] = [];
    this.#pending = pending;
    try {
      this.#db.transaction((tx) => {
        this.#tx = tx;
        fn();
      });
    } finally {
      this.#tx = undefined;
      this.#pending = undefined;
      this.#applied = undefined;
    }
    for (const r of pending) this.#notify(r);
  }

  appliedIndex(): number {
    return this.#readApplied().index;
  }

  appliedTerm(): number {
    return this.#readApplied().term;
  }

  #readApplied(): { index: number; term: number } {
    // Inside a batch the transaction may still roll back: read it, do not keep it.
    if (this.#tx !== undefined) return appliedIndex(this.#tx);
    return this.#applied ??= appliedIndex(this.#db);
  }

  snapshot(): string {
    return snapshotTables(this.#db);
  }

  restore(s: Snapshot): void {
    this.#applied = undefined;
    try {
      restoreTables(this.#db, s.data, s.meta.index, s.meta.term);
    } finally {
      this.#applied = undefined;
    }
    this.#notify(null);
  }

  /** A listener's failure must never stop the log from being applied. */
  #notify(record: MetadataRecord | null): void {
    try {
      this.changed(record);
    } catch {
      // the listener logs its own failures
    }
  }
}
