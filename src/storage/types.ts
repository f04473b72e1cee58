// Public types of the partition log engine: configuration, interfaces and typed errors.
// Errors carry the Kafka error code the front ends should answer with.
import { ErrorCode } from "../protocol/kafka/error-codes.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type Logger = (level: LogLevel, msg: string, fields?: { [k: string]: unknown }) => void;
export const noopLogger: Logger = () => {};

export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** `always`: every append is synced before it is acknowledged, at any acks. */
export type FlushPolicy = { kind: "always" } | { kind: "interval"; ms: number };

/** Per-partition config. The meta layer validates names and ranges; the log obeys. */
export interface LogConfig {
  segmentBytes: number;
  segmentMs: number;
  /** -1 = infinite. */
  retentionMs: number;
  /** -1 = infinite. */
  retentionBytes: number;
  maxMessageBytes: number;
  messageTimestampType: "CreateTime" | "LogAppendTime";
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  producerIdExpirationMs: number;
  /** Bytes between sparse index entries. */
  indexIntervalBytes: number;
}

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 3600 * 1000,
  retentionMs: 7 * 24 * 3600 * 1000,
  retentionBytes: -1,
  maxMessageBytes: 1048588,
  messageTimestampType: "CreateTime",
  messageTimestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
  messageTimestampAfterMaxMs: Number.MAX_SAFE_INTEGER,
  producerIdExpirationMs: 86400000,
  indexIntervalBytes: 4096,
});

// ---------- errors ----------

/** Base of every error the log raises on purpose; `errorCode` is the Kafka error code. */
export class LogError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}
/** Disk full or I/O failure (KAFKA_STORAGE_ERROR). The log keeps serving reads. */
export class StorageError extends LogError {
  override name = "StorageError";
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
    if (cause !== undefined) this.cause = cause;
  }
}
/**
 * Stored bytes fail their own check (CRC-32C, length, magic) when read: the segment was damaged
 * after it was written. Served as KAFKA_STORAGE_ERROR, never as the damaged bytes.
 */
export class CorruptLogError extends StorageError {
  override name = "CorruptLogError";
  /**
   * `file`: the damaged segment file (or quarantine folder), relative to the data dir.
   * `offset`: the offset whose batch is damaged or quarantined, -1 when unknown.
   */
  constructor(message: string, readonly file: string, readonly offset = -1) {
    super(message);
  }
}
/**
 * An append to a partition whose damaged acknowledged records are quarantined: refused until an
 * operator repairs it, so their offsets are never reused (KAFKA_STORAGE_ERROR; not a full disk).
 */
export class QuarantinedLogError extends StorageError {
  override name = "QuarantinedLogError";
}
/** A partition directory belongs to another topic id: the caller deletes it. */
export class TopicIdMismatchError extends StorageError {
  override name = "TopicIdMismatchError";
}
/** A LogError class named `name` whose errors are answered with `code`. */
function codedLogError(name: string, code: number) {
  return class extends LogError {
    override name = name;
    constructor(message: string) {
      super(code, message);
    }
  };
}
export class CorruptRecordError
  extends codedLogError("CorruptRecordError", ErrorCode.CORRUPT_MESSAGE) {}
export class InvalidRecordError
  extends codedLogError("InvalidRecordError", ErrorCode.INVALID_RECORD) {}
export class InvalidTimestampError
  extends codedLogError("InvalidTimestampError", ErrorCode.INVALID_TIMESTAMP) {}
export class MessageTooLargeError
  extends codedLogError("MessageTooLargeError", ErrorCode.MESSAGE_TOO_LARGE) {}
export class OutOfOrderSequenceError
  extends codedLogError("OutOfOrderSequenceError", ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) {}
export class InvalidProducerEpochError
  extends codedLogError("InvalidProducerEpochError", ErrorCode.INVALID_PRODUCER_EPOCH) {}
export class OffsetOutOfRangeError
  extends codedLogError("OffsetOutOfRangeError", ErrorCode.OFFSET_OUT_OF_RANGE) {}

// ---------- partition log ----------

/** Damage a partition's log knows of (docs/storage.md, "Damaged data and quarantine"). */
export interface LogDamage {
  /**
   * "quarantined": recovery found acknowledged records damaged (below what was synced, or followed
   * by intact ones, so not a torn write), moved their files aside and ended the log before them.
   * Client appends are refused until an operator repairs the partition, so those offsets are never
   * reused. "unreadable": a read met damaged bytes in place; the records around them are served
   * and appends go on (no offset is at risk).
   */
  state: "quarantined" | "unreadable";
  /** First offset affected. */
  fromOffset: number;
  /** End (exclusive) of the offsets affected, null when unknown. */
  toOffset: number | null;
  /** Where the damaged bytes are, relative to the data dir (quarantine folders or a segment). */
  files: string[];
  reason: string;
}

export interface AppendOptions {
  /** Leader epoch written into each batch's partitionLeaderEpoch (client origin). */
  leaderEpoch: number;
  /** acks=all: `ack` waits for the fdatasync covering these bytes. */
  requireDurable?: boolean;
  /**
   * "client" (default): assign offsets, check producer sequences, validate timestamps.
   * "replication": batches keep their offsets (must start at the log end) and epochs.
   */
  origin?: "client" | "replication";
  /**
   * The caller owns `batches` and nothing else reads them: the log may rewrite offsets, epochs
   * and CRCs in place instead of copying them to its staging buffer first.
   */
  inPlace?: boolean;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  recordCount: number;
  /** now for LogAppendTime topics, else -1. */
  logAppendTime: number;
  logStartOffset: number;
  /** True when an idempotent retry was recognised: nothing was written. */
  duplicate: boolean;
  /** Resolves once an fdatasync covering these bytes finished; rejects (handled) on sync failure. */
  durable: Promise<void>;
  /** What to await before acknowledging: `durable` under acks=all or flush=always, else resolved. */
  ack: Promise<void>;
}

export interface ReadResult {
  /** Whole batches, starting with the one containing the requested offset. Empty at the end. */
  records: Uint8Array;
  /** Base offset of the first batch returned (or the requested offset when empty). */
  firstOffset: number;
  /** Offset after the last batch returned. */
  nextOffset: number;
  logStartOffset: number;
  logEndOffset: number;
}

export interface EpochEndOffset {
  /** The largest known epoch <= the requested one, or -1. */
  leaderEpoch: number;
  /** -1 when unknown. */
  endOffset: number;
}

export interface RetentionResult {
  deletedSegments: number;
  deletedBytes: number;
  logStartOffset: number;
}

export interface ProducerBatchInfo {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
  lastOffset: number;
}

export interface ProducerEntry {
  producerId: number;
  producerEpoch: number;
  /** Oldest first, at most 5. */
  batches: ProducerBatchInfo[];
  /** Clock time of the last append, for expiration. */
  lastUpdateMs: number;
}

export interface PartitionLog {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  logStartOffset(): number;
  logEndOffset(): number;
  /** Append one or more RecordBatch v2 bytes. Throws a LogError subclass; never half-applies. */
  append(batches: Uint8Array, opts: AppendOptions): AppendResult;
  /**
   * Whole batches from the one containing `offset`, at most `maxBytes` but at least one batch,
   * not past `upperOffset` (default: log end). Throws OffsetOutOfRangeError outside
   * [logStart, logEnd].
   */
  read(offset: number, maxBytes: number, upperOffset?: number): ReadResult;
  /**
   * The same batches as `read`, also stopping where `into` is full, copied into `into` (pread)
   * instead of viewed through a memory map. `records` is a view of `into`, so it is valid only
   * until the caller reuses `into`; only when the first batch alone does not fit is it a new
   * buffer. For callers that own a reused buffer (first reads through a fresh map are costly).
   */
  readInto(offset: number, maxBytes: number, into: Uint8Array, upperOffset?: number): ReadResult;
  /** First offset whose record timestamp is >= ts, or null if none. */
  offsetForTimestamp(ts: number): { offset: number; timestamp: number } | null;
  latestEpoch(): number;
  endOffsetForEpoch(epoch: number): EpochEndOffset;
  /** Advance the log start offset (bounded by the log end); delete segments wholly below. */
  deleteRecords(offset: number): Promise<number>;
  enforceRetention(): Promise<RetentionResult>;
  /** Start a new segment at the log end (nothing to do when the active one is empty). */
  roll(): void;
  /** Drop everything at and above `offset` (follower truncation). */
  truncateTo(offset: number): Promise<void>;
  /**
   * Follower only: the leader's log starts at `offset`, past this log's end (retention or
   * DeleteRecords removed what this replica never copied): drop everything and start empty there.
   */
  resetTo(offset: number): Promise<void>;
  config(): LogConfig;
  updateConfig(patch: Partial<LogConfig>): void;
  /** Sync everything written so far. */
  flush(): Promise<void>;
  /** Resolves once offsets below `offset` are durable. */
  waitDurable(offset: number): Promise<void>;
  /** Offsets below this are durable (fsynced): what a replica may count toward the high watermark. */
  durableEndOffset(): number;
  /**
   * A new leader records that its epoch starts at the log end, before it appends anything, so a
   * follower asking about that epoch gets an answer (Kafka does the same on becoming leader).
   */
  assignEpoch(epoch: number): void;
  producerState(producerId: number): ProducerEntry | undefined;
  sizeBytes(): number;
  /** Known damage (quarantined or unreadable records), or null. */
  damaged(): LogDamage | null;
  /**
   * Whether this log was reopened from a clean checkpoint, so nothing was lost since it was last
   * written (false for a log created or recovered at this open).
   */
  openedClean(): boolean;
  /** Flush, write indexes, snapshots and a clean checkpoint. */
  close(): Promise<void>;
}

export interface PartitionSpec {
  topic: string;
  partition: number;
  topicId: string;
  config?: Partial<LogConfig>;
}

export interface PartitionLogInfo {
  topic: string;
  partition: number;
  topicId: string;
  open: boolean;
}

export interface LogStore {
  /** Open the partition's log, creating it if absent. TopicIdMismatchError if the dir is another topic's. */
  openLog(spec: PartitionSpec): Promise<PartitionLog>;
  getLog(topic: string, partition: number): PartitionLog | undefined;
  /** Close (if open) and remove the partition's files. */
  deleteLog(topic: string, partition: number): Promise<void>;
  /** Logs present (on disk or in memory), open or not. */
  listLogs(): PartitionLogInfo[];
  /** Run retention on every open log. */
  enforceRetention(): Promise<void>;
  closeAll(): Promise<void>;
}
