// Sans-IO validation and rewriting of incoming RecordBatch v2 bytes (kafka-protocol.md 3.6).
// Works in place on a staging copy: assigns offsets, stamps the leader epoch, fixes maxTimestamp.
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_TIMESTAMP_TYPE,
  BATCH_HEADER_SIZE,
  BATCH_LOG_OVERHEAD,
  type BatchHeader,
  checkBatchStructure,
  type CompressionCodec,
  type DecompressFn,
  OFF_ATTRIBUTES,
  OFF_BASE_OFFSET,
  OFF_BASE_SEQUENCE,
  OFF_BASE_TIMESTAMP,
  OFF_BATCH_LENGTH,
  OFF_LAST_OFFSET_DELTA,
  OFF_LEADER_EPOCH,
  OFF_MAGIC,
  OFF_MAX_TIMESTAMP,
  OFF_PRODUCER_EPOCH,
  OFF_PRODUCER_ID,
  OFF_RECORDS_COUNT,
  readI64,
  RecordFormatError,
  recordsSection,
  rewriteBatchCrc,
  scanRecordTimestamps,
  walkRecordTimestamps,
  writeI64,
} from "../protocol/record-batch.ts";
import { CompressionError, DEFAULT_MAX_OUTPUT_BYTES } from "../protocol/compression/index.ts";
import {
  CorruptRecordError,
  InvalidRecordError,
  InvalidTimestampError,
  type LogConfig,
  MessageTooLargeError,
} from "./types.ts";

/** What the log needs to know about each batch it stores. */
export interface BatchMeta {
  /** Position inside the staging buffer. */
  pos: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  leaderEpoch: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  lastOffsetDelta: number;
  recordCount: number;
}

export interface PrepareContext {
  now: number;
  config: LogConfig;
  origin: "client" | "replication";
  /** First offset to assign (client) or expected first base offset (replication). */
  nextOffset: number;
  leaderEpoch: number;
  decompress?: DecompressFn;
  /** Statistics sink: time spent walking records for timestamps (ns), for the benchmark. */
  stats?: { walkNs: number };
}

/**
 * Validate every batch in `buf` (mutated in place) and rewrite offsets/epochs/timestamps.
 * Throws CorruptRecordError, InvalidRecordError, InvalidTimestampError, MessageTooLargeError.
 */
export function prepareBatches(buf: Uint8Array, ctx: PrepareContext): BatchMeta[] {
  const out: BatchMeta[] = [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  let next = ctx.nextOffset;
  const logAppend = ctx.config.messageTimestampType === "LogAppendTime";
  const client = ctx.origin === "client";
  if (buf.length === 0) throw new InvalidRecordError("no record batch");
  while (pos < buf.length) {
    if (pos + BATCH_HEADER_SIZE > buf.length) throw new CorruptRecordError("truncated batch");
    const batchLength = view.getInt32(pos + OFF_BATCH_LENGTH);
    const size = BATCH_LOG_OVERHEAD + batchLength;
    if (view.getInt8(pos + OFF_MAGIC) !== 2) {
      throw new InvalidRecordError(`magic ${view.getInt8(pos + OFF_MAGIC)} (only v2 is accepted)`);
    }
    // A follower takes what its leader took: a max.message.bytes lowered since must not wedge it.
    if (client && batchLength >= 0 && size > ctx.config.maxMessageBytes) {
      throw new MessageTooLargeError(
        `batch of ${size} bytes > max.message.bytes (${ctx.config.maxMessageBytes})`,
      );
    }
    const bad = checkBatchStructure(buf, pos, buf.length, view);
    if (bad !== null) throw new CorruptRecordError(bad);
    // Header fields read one by one: a header object per batch was garbage on the hot path.
    const attributes = view.getInt16(pos + OFF_ATTRIBUTES);
    const lastOffsetDelta = view.getInt32(pos + OFF_LAST_OFFSET_DELTA);
    const recordsCount = view.getInt32(pos + OFF_RECORDS_COUNT);
    const producerId = readI64(view, pos + OFF_PRODUCER_ID);
    const baseSequence = view.getInt32(pos + OFF_BASE_SEQUENCE);
    const headerMaxTs = readI64(view, pos + OFF_MAX_TIMESTAMP);
    if (lastOffsetDelta < 0 || recordsCount < 0) {
      throw new InvalidRecordError("negative record count");
    }
    if (client) {
      if (recordsCount === 0 || lastOffsetDelta + 1 !== recordsCount) {
        throw new InvalidRecordError("lastOffsetDelta + 1 != recordsCount");
      }
      if (attributes & ATTR_CONTROL) {
        throw new InvalidRecordError("clients may not write control batches");
      }
      if (producerId >= 0 && baseSequence < 0) {
        throw new InvalidRecordError("idempotent batch without a sequence");
      }
      if (attributes & ATTR_TIMESTAMP_TYPE) {
        throw new InvalidTimestampError("clients may not send LogAppendTime batches");
      }
      if (producerId < -1) throw new InvalidRecordError("bad producerId");
    } else if (readI64(view, pos + OFF_BASE_OFFSET) !== next) {
      throw new InvalidRecordError(
        `replicated batch at ${readI64(view, pos + OFF_BASE_OFFSET)}, expected ${next}`,
      );
    }
    const baseOffset = client ? next : readI64(view, pos + OFF_BASE_OFFSET);
    let maxTs = headerMaxTs;
    let rewrite = false;
    const timestamped = client && !logAppend;
    if (client) {
      // Walk the records: counts, offset deltas and the true max timestamp.
      const baseTs = readI64(view, pos + OFF_BASE_TIMESTAMP);
      const trueMax = walkTimestamps(
        buf,
        pos,
        size,
        attributes,
        recordsCount,
        baseTs,
        headerMaxTs,
        ctx,
      );
      if (trueMax !== null && timestamped && trueMax !== headerMaxTs) {
        maxTs = trueMax;
        rewrite = true;
      }
    }
    if (client && logAppend) {
      view.setInt16(pos + OFF_ATTRIBUTES, attributes | ATTR_TIMESTAMP_TYPE);
      maxTs = ctx.now;
      rewrite = true;
    }
    if (rewrite) {
      writeI64(view, pos + OFF_MAX_TIMESTAMP, maxTs);
      rewriteBatchCrc(buf, pos, size, view);
    }
    // Outside the CRC: no recomputation needed.
    writeI64(view, pos + OFF_BASE_OFFSET, baseOffset);
    const epoch = client ? ctx.leaderEpoch : view.getInt32(pos + OFF_LEADER_EPOCH);
    if (client) view.setInt32(pos + OFF_LEADER_EPOCH, epoch);
    out.push({
      pos,
      size,
      baseOffset,
      lastOffset: baseOffset + lastOffsetDelta,
      maxTimestamp: maxTs,
      leaderEpoch: epoch,
      producerId,
      producerEpoch: view.getInt16(pos + OFF_PRODUCER_EPOCH),
      baseSequence,
      lastOffsetDelta,
      recordCount: recordsCount,
    });
    next = baseOffset + lastOffsetDelta + 1;
    pos += size;
  }
  return out;
}

/** Smallest and largest record timestamp of the batch being walked (reused: no garbage). */
const span = new Float64Array(2);

/**
 * Check a client batch's records (offset deltas, timestamps in the allowed range) and return its
 * true max timestamp, or null when the batch is compressed and cannot be opened here.
 */
function walkTimestamps(
  buf: Uint8Array,
  pos: number,
  size: number,
  attributes: number,
  count: number,
  baseTs: number,
  headerMaxTs: number,
  ctx: PrepareContext,
): number | null {
  const timestamped = ctx.config.messageTimestampType !== "LogAppendTime";
  const lo = ctx.now - ctx.config.messageTimestampBeforeMaxMs;
  const hi = ctx.now + ctx.config.messageTimestampAfterMaxMs;
  const codec = (attributes & ATTR_COMPRESSION_MASK) as CompressionCodec;
  let section: Uint8Array | null = buf.subarray(pos + BATCH_HEADER_SIZE, pos + size);
  if (codec !== 0) {
    try {
      section = ctx.decompress ? ctx.decompress(codec, section) : null;
    } catch (e) {
      // Past the ceiling on decoded bytes (a guard against decompression bombs): a batch too
      // large to accept, which clients do not retry, rather than a corrupt one, which they do.
      if (e instanceof CompressionError && e.code === "OUTPUT_LIMIT") {
        throw new MessageTooLargeError(
          `the batch decompresses to more than ${
            DEFAULT_MAX_OUTPUT_BYTES / 2 ** 20
          } MiB, the most this broker decodes to check a batch (${e.message})`,
        );
      }
      throw new CorruptRecordError(`cannot decompress: ${String(e)}`);
    }
  }
  if (section === null) {
    // Opaque compressed batch: only the header timestamps can be checked.
    if (timestamped) {
      for (const ts of [baseTs, headerMaxTs]) {
        if (ts < lo || ts > hi) throw new InvalidTimestampError(`timestamp ${ts} out of range`);
      }
    }
    return null;
  }
  const t0 = ctx.stats ? Bun.nanoseconds() : 0;
  let sequential: boolean;
  try {
    sequential = scanRecordTimestamps(section, count, baseTs, span);
  } catch (e) {
    if (e instanceof RecordFormatError) throw new CorruptRecordError(e.message);
    throw e;
  }
  if (ctx.stats) ctx.stats.walkNs += Bun.nanoseconds() - t0;
  if (!sequential || (timestamped && (span[0] < lo || span[1] > hi))) {
    explainRecords(section, count, baseTs, timestamped, lo, hi);
  }
  // -1 ("no timestamp") is the floor, as the header's own convention has it.
  return span[1] > -1 ? span[1] : -1;
}

/** The slow path of a refused batch: walk again to name the first offending record. */
function explainRecords(
  section: Uint8Array,
  count: number,
  baseTs: number,
  timestamped: boolean,
  lo: number,
  hi: number,
): never {
  let n = 0;
  walkRecordTimestamps(section, count, baseTs, (od, ts) => {
    if (od !== n) throw new InvalidRecordError(`record offset delta ${od} at index ${n}`);
    n++;
    if (timestamped && (ts < lo || ts > hi)) {
      throw new InvalidTimestampError(`record timestamp ${ts} outside the allowed range`);
    }
  });
  throw new InvalidRecordError("records refused");
}

/**
 * First record with timestamp >= ts inside a batch whose maxTimestamp >= ts. LogAppendTime and
 * opaque compressed batches answer with the batch's base offset and maxTimestamp.
 */
export function firstOffsetAtOrAfter(
  batch: Uint8Array,
  h: BatchHeader,
  ts: number,
  decompress?: DecompressFn,
): { offset: number; timestamp: number } {
  const whole = { offset: h.baseOffset, timestamp: h.maxTimestamp };
  if (h.attributes & ATTR_TIMESTAMP_TYPE) return whole;
  let section: Uint8Array | null;
  try {
    section = recordsSection(batch, decompress);
  } catch {
    return whole;
  }
  if (section === null) return whole;
  let found: { offset: number; timestamp: number } | null = null;
  try {
    walkRecordTimestamps(section, h.recordsCount, h.baseTimestamp, (od, t) => {
      if (found === null && t >= ts) found = { offset: h.baseOffset + od, timestamp: t };
    });
  } catch {
    return whole;
  }
  return found ?? whole;
}
