// A log a clean shutdown vouched for (clean-manifest.ts), opened on first use: until then it
// answers what a start asks of every partition (log start and end, latest epoch, size, that it
// is clean) from the manifest, holding no descriptor, mapping or index. The first call that needs
// its files opens it synchronously (recovery.ts openCleanSync: no scan, as after a clean stop).
import type { ManifestEntry } from "./clean-manifest.ts";
import type { SegmentPartitionLog } from "./partition-log.ts";
import type {
  AppendOptions,
  AppendResult,
  EpochEndOffset,
  LogConfig,
  LogDamage,
  PartitionLog,
  ProducerEntry,
  ReadResult,
  RetentionResult,
} from "./types.ts";

const RESOLVED = Promise.resolve();

export class LazyPartitionLog implements PartitionLog {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  #real: SegmentPartitionLog | null = null;
  #cfg: LogConfig;

  /** `open` gives the log with `config`, or throws (then it is being opened the ordinary way). */
  constructor(
    readonly entry: ManifestEntry,
    config: LogConfig,
    private readonly open: (config: LogConfig) => SegmentPartitionLog,
  ) {
    this.topic = entry.topic;
    this.partition = entry.partition;
    this.topicId = entry.topicId;
    this.#cfg = { ...config };
  }

  /** The opened log, or null while only the manifest's figures are known. */
  get opened(): SegmentPartitionLog | null {
    return this.#real;
  }

  /** The store opened it another way (after `open` threw): calls go to it from now on. */
  adopt(log: SegmentPartitionLog): void {
    this.#real = log;
  }

  #log(): SegmentPartitionLog {
    return this.#real ??= this.open(this.#cfg);
  }

  logStartOffset(): number {
    return this.#real?.logStartOffset() ?? this.entry.logStart;
  }
  logEndOffset(): number {
    return this.#real?.logEndOffset() ?? this.entry.logEnd;
  }
  durableEndOffset(): number {
    return this.#real?.durableEndOffset() ?? this.entry.logEnd;
  }
  latestEpoch(): number {
    return this.#real?.latestEpoch() ?? this.entry.epoch;
  }
  sizeBytes(): number {
    return this.#real?.sizeBytes() ?? this.entry.sizeBytes;
  }
  openedClean(): boolean {
    return this.#real?.openedClean() ?? true;
  }
  damaged(): LogDamage | null {
    return this.#real?.damaged() ?? null;
  }
  config(): LogConfig {
    return this.#real?.config() ?? { ...this.#cfg };
  }
  updateConfig(patch: Partial<LogConfig>): void {
    if (this.#real !== null) this.#real.updateConfig(patch);
    else this.#cfg = { ...this.#cfg, ...patch };
  }
  flush(): Promise<void> {
    return this.#real?.flush() ?? RESOLVED;
  }
  waitDurable(offset: number): Promise<void> {
    if (this.#real === null && offset <= this.entry.logEnd) return RESOLVED;
    return this.#log().waitDurable(offset);
  }
  assignEpoch(epoch: number): void {
    // The usual restart: the leader keeps its epoch, which the log already ends with.
    if (this.#real === null && epoch <= this.entry.epoch) return;
    this.#log().assignEpoch(epoch);
  }
  enforceRetention(): Promise<RetentionResult> {
    // Retention deletes closed segments only; an unopened log's producers expire once opened.
    if (this.#real === null && this.entry.segments <= 1) {
      return Promise.resolve({
        deletedSegments: 0,
        deletedBytes: 0,
        logStartOffset: this.entry.logStart,
      });
    }
    return this.#log().enforceRetention();
  }
  close(): Promise<void> {
    return this.#real?.close() ?? RESOLVED;
  }

  append(batches: Uint8Array, opts: AppendOptions): AppendResult {
    return this.#log().append(batches, opts);
  }
  read(offset: number, maxBytes: number, upperOffset?: number): ReadResult {
    return this.#log().read(offset, maxBytes, upperOffset);
  }
  readInto(offset: number, maxBytes: number, into: Uint8Array, upperOffset?: number): ReadResult {
    return this.#log().readInto(offset, maxBytes, into, upperOffset);
  }
  offsetForTimestamp(ts: number): { offset: number; timestamp: number } | null {
    return this.#log().offsetForTimestamp(ts);
  }
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    // What a follower's fetch asks of every partition it follows: the latest epoch ends at the
    // log end, and a later one is unknown (as LeaderEpochCache answers), without opening.
    const latest = this.entry.epoch;
    if (this.#real === null && latest >= 0 && epoch >= latest) {
      return epoch === latest
        ? { leaderEpoch: epoch, endOffset: this.entry.logEnd }
        : { leaderEpoch: -1, endOffset: -1 };
    }
    return this.#log().endOffsetForEpoch(epoch);
  }
  deleteRecords(offset: number): Promise<number> {
    return this.#log().deleteRecords(offset);
  }
  roll(): void {
    this.#log().roll();
  }
  truncateTo(offset: number): Promise<void> {
    return this.#log().truncateTo(offset);
  }
  resetTo(offset: number): Promise<void> {
    return this.#log().resetTo(offset);
  }
  producerState(producerId: number): ProducerEntry | undefined {
    return this.#log().producerState(producerId);
  }
}
