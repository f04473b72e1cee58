// Compaction of __consumer_offsets, so that the topic (which start-up replays whole) stays near
// the size of the groups' live state instead of growing with every commit.
//
// Kafka compacts the topic in place (the latest record per key survives). Here a partition is
// compacted by copying forward: the latest record of every key still live is appended again at
// the end of the log, in a fresh segment, and once that copy is durable the log start offset
// moves to it, which deletes the old segments. Replaying the copy gives the same state as
// replaying the whole log, and a crash at any point leaves a log that replays to that state too
// (at worst the old records and the copy both remain).
//
// Keys are gathered from the old records in steps that yield to the event loop; the records
// written meanwhile are read, and the copy appended, in one synchronous turn, so no commit can
// land between what the copy saw and the copy itself.
import { OFFSETS_TOPIC } from "../groups/index.ts";
import {
  decodeRecordBatches,
  encodeRecordBatch,
  type KafkaRecord,
} from "../protocol/record-batch.ts";
import { decompress } from "../protocol/compression/index.ts";
import type { Logger } from "../log.ts";
import type { PartitionLog } from "../storage/index.ts";
import type { PartitionManager } from "./partition-manager.ts";

export interface OffsetsCompactionOptions {
  /** A partition is considered once it holds at least this many bytes (default 16 MiB). */
  minBytes?: number;
  /** ... and has grown to this many times its live size after the last compaction (default 2). */
  growthFactor?: number;
  /** How often partitions are checked (default 60 s). */
  checkIntervalMs?: number;
}

const READ_STEP = 1024 * 1024;
/** Records per copied batch: well under max.message.bytes for Kafka-sized keys and values. */
const COPY_BATCH_RECORDS = 2000;

interface Live {
  key: Uint8Array;
  value: Uint8Array | null;
}

export interface CompactionResult {
  partition: number;
  /** Records before (from the old log start to the copy) and records copied. */
  recordsBefore: number;
  recordsCopied: number;
  bytesBefore: number;
  bytesAfter: number;
  logStartOffset: number;
}

export class OffsetsCompactor {
  readonly #minBytes: number;
  readonly #growth: number;
  readonly #interval: number;
  /** Bytes the partition held right after its last compaction (0: never compacted here). */
  readonly #liveBytes = new Map<number, number>();
  readonly #running = new Set<number>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  constructor(
    private readonly partitions: PartitionManager,
    private readonly log: Logger,
    private readonly partitionCount: () => number,
    opts: OffsetsCompactionOptions = {},
  ) {
    this.#minBytes = opts.minBytes ?? 16 * 1024 * 1024;
    this.#growth = opts.growthFactor ?? 2;
    this.#interval = opts.checkIntervalMs ?? 60_000;
  }

  start(): void {
    this.#timer = setInterval(() => void this.checkAll(), this.#interval);
    // Housekeeping must not keep the process alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    while (this.#running.size > 0) await Bun.sleep(5);
  }

  /** Compact every local partition that has grown past its thresholds. */
  async checkAll(): Promise<CompactionResult[]> {
    const done: CompactionResult[] = [];
    for (let p = 0; p < this.partitionCount(); p++) {
      if (this.#stopped) break;
      // Only the leader compacts: followers copy what it decided.
      if (this.partitions.leaderError(OFFSETS_TOPIC, p) !== 0) continue;
      const size = this.partitions.partition(OFFSETS_TOPIC, p).log.sizeBytes();
      const live = this.#liveBytes.get(p) ?? 0;
      if (size < this.#minBytes || size < live * this.#growth) continue;
      const r = await this.compact(p);
      if (r) done.push(r);
    }
    return done;
  }

  /** Copy the live records of one partition forward and drop what is older. */
  async compact(partition: number): Promise<CompactionResult | null> {
    if (this.#running.has(partition) || this.#stopped) return null;
    this.#running.add(partition);
    try {
      return await this.#compact(partition);
    } catch (e) {
      this.log.warn("__consumer_offsets compaction failed; the log is left as it was", {
        partition,
        error: String(e),
      });
      return null;
    } finally {
      this.#running.delete(partition);
    }
  }

  async #compact(partition: number): Promise<CompactionResult | null> {
    const log = this.partitions.partition(OFFSETS_TOPIC, partition).log;
    const start = log.logStartOffset();
    const bytesBefore = log.sizeBytes();
    const live = new Map<string, Live>();
    let count = 0;
    // Phase 1: the bulk, yielding between steps.
    let at = start;
    const mark = log.logEndOffset();
    while (at < mark) {
      const next = gather(log, at, mark, live);
      count += next.records;
      at = next.offset;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#stopped || log.logStartOffset() !== start) return null;
    }
    // Phase 2, one synchronous turn: what was written meanwhile, then the copy.
    while (at < log.logEndOffset()) {
      const next = gather(log, at, log.logEndOffset(), live);
      count += next.records;
      at = next.offset;
    }
    const kept = [...live.values()].filter((r) => r.value !== null);
    if (kept.length >= count) {
      this.#liveBytes.set(partition, bytesBefore); // nothing to drop until it grows again
      return null;
    }
    // A fresh segment for the copy, so every segment before it can be deleted.
    log.roll();
    const copyStart = log.logEndOffset();
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < kept.length; i += COPY_BATCH_RECORDS) {
      const batch = encodeRecordBatch({
        records: kept.slice(i, i + COPY_BATCH_RECORDS).map((r) => ({ key: r.key, value: r.value })),
        baseTimestamp: Date.now(),
      });
      appends.push(this.partitions.append(OFFSETS_TOPIC, partition, batch, -1));
    }
    // Durable before the old records go.
    await Promise.all(appends);
    const logStartOffset = await log.deleteRecords(copyStart);
    const bytesAfter = log.sizeBytes();
    this.#liveBytes.set(partition, bytesAfter);
    const result = {
      partition,
      recordsBefore: count,
      recordsCopied: kept.length,
      bytesBefore,
      bytesAfter,
      logStartOffset,
    };
    this.log.info("__consumer_offsets compacted", { ...result });
    return result;
  }
}

/**
 * The keyed records of one read of `__consumer_offsets` from `from` (not past `upTo`, at most
 * about `maxBytes`), and where the next read starts. Start-up replay and compaction both read so.
 */
export function readKeyedRecords(
  log: PartitionLog,
  from: number,
  upTo: number,
  maxBytes: number,
): { records: (KafkaRecord & { key: Uint8Array })[]; next: number } {
  const read = log.read(from, maxBytes, upTo);
  if (read.records.length === 0) return { records: [], next: upTo };
  const records: (KafkaRecord & { key: Uint8Array })[] = [];
  for (const b of decodeRecordBatches(read.records, (c, bytes) => decompress(c, bytes))) {
    for (const r of b.records ?? []) {
      if (r.offset >= from && r.key !== null) records.push(r as KafkaRecord & { key: Uint8Array });
    }
  }
  return { records, next: read.nextOffset };
}

/** Read one step of records from `from` (not past `upTo`) into `live`, the latest per key. */
function gather(
  log: PartitionLog,
  from: number,
  upTo: number,
  live: Map<string, Live>,
): { offset: number; records: number } {
  const { records, next } = readKeyedRecords(log, from, upTo, READ_STEP);
  for (const r of records) {
    const id = Buffer.from(r.key.buffer, r.key.byteOffset, r.key.byteLength).toString("base64");
    // Re-inserted, so the map keeps keys in the order of their latest record.
    live.delete(id);
    live.set(id, { key: r.key.slice(), value: r.value === null ? null : r.value.slice() });
  }
  return { offset: next, records: records.length };
}
