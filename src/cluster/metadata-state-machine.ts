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
    const err = applyOrSkip(this.#db, record, index, term);
    if (err === undefined && record.type !== "NoOp" && record.type !== "ProducerIdsAllocated") {
      this.#notify(record);
    }
    return err;
  }

  appliedIndex(): number {
    return appliedIndex(this.#db).index;
  }

  appliedTerm(): number {
    return appliedIndex(this.#db).term;
  }

  snapshot(): string {
    return snapshotTables(this.#db);
  }

  restore(s: Snapshot): void {
    restoreTables(this.#db, s.data, s.meta.index, s.meta.term);
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
