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
  OFF_LEADER_EPOCH,
  OFF_MAX_TIMESTAMP,
  readBatchHeader,
  RecordFormatError,
  recordsSection,
  rewriteBatchCrc,
  walkRecordTimestamps,
  writeI64,
} from "../protocol/record-batch.ts";
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
  if (buf.length === 0) throw new InvalidRecordError("no record batch");
  while (pos < buf.length) {
    if (pos + BATCH_HEADER_SIZE > buf.length) throw new CorruptRecordError("truncated batch");
    const batchLength = view.getInt32(pos + 8);
    const size = BATCH_LOG_OVERHEAD + batchLength;
    if (view.getInt8(pos + 16) !== 2) {
      throw new InvalidRecordError(`magic ${view.getInt8(pos + 16)} (only v2 is accepted)`);
    }
    if (batchLength >= 0 && size > ctx.config.maxMessageBytes) {
      throw new MessageTooLargeError(
        `batch of ${size} bytes > max.message.bytes (${ctx.config.maxMessageBytes})`,
      );
    }
    const bad = checkBatchStructure(buf, pos);
    if (bad !== null) throw new CorruptRecordError(bad);
    const h = readBatchHeader(buf, pos);
    if (h.lastOffsetDelta < 0 || h.recordsCount < 0) {
      throw new InvalidRecordError("negative record count");
    }
    const client = ctx.origin === "client";
    if (client) {
      if (h.recordsCount === 0 || h.lastOffsetDelta + 1 !== h.recordsCount) {
        throw new InvalidRecordError("lastOffsetDelta + 1 != recordsCount");
      }
      if (h.attributes & ATTR_CONTROL) {
        throw new InvalidRecordError("clients may not write control batches");
      }
      if (h.producerId >= 0 && h.baseSequence < 0) {
        throw new InvalidRecordError("idempotent batch without a sequence");
      }
      if (h.attributes & ATTR_TIMESTAMP_TYPE) {
        throw new InvalidTimestampError("clients may not send LogAppendTime batches");
      }
      if (h.producerId < -1) throw new InvalidRecordError("bad producerId");
    } else if (h.baseOffset !== next) {
      throw new InvalidRecordError(`replicated batch at ${h.baseOffset}, expected ${next}`);
    }
    const baseOffset = client ? next : h.baseOffset;
    const codec = (h.attributes & ATTR_COMPRESSION_MASK) as CompressionCodec;
    let maxTs = h.maxTimestamp;
    let rewrite = false;
    const timestamped = client && !logAppend;
    if (client) {
      // Walk the records: counts, offset deltas and the true max timestamp.
      let section: Uint8Array | null = buf.subarray(pos + BATCH_HEADER_SIZE, pos + size);
      if (codec !== 0) {
        try {
          section = ctx.decompress ? ctx.decompress(codec, section) : null;
        } catch (e) {
          throw new CorruptRecordError(`cannot decompress: ${String(e)}`);
        }
      }
      if (section !== null) {
        const t0 = ctx.stats ? Bun.nanoseconds() : 0;
        let n = 0;
        let trueMax = -1;
        const lo = ctx.now - ctx.config.messageTimestampBeforeMaxMs;
        const hi = ctx.now + ctx.config.messageTimestampAfterMaxMs;
        try {
          walkRecordTimestamps(section, h.recordsCount, h.baseTimestamp, (od, ts) => {
            if (od !== n) throw new InvalidRecordError(`record offset delta ${od} at index ${n}`);
            n++;
            if (ts > trueMax) trueMax = ts;
            if (timestamped && (ts < lo || ts > hi)) {
              throw new InvalidTimestampError(`record timestamp ${ts} outside the allowed range`);
            }
          });
        } catch (e) {
          if (e instanceof RecordFormatError) throw new CorruptRecordError(e.message);
          throw e;
        }
        if (ctx.stats) ctx.stats.walkNs += Bun.nanoseconds() - t0;
        if (timestamped && trueMax !== h.maxTimestamp) {
          maxTs = trueMax;
          rewrite = true;
        }
      } else if (timestamped) {
        // Opaque compressed batch: only the header timestamps can be checked.
        const lo = ctx.now - ctx.config.messageTimestampBeforeMaxMs;
        const hi = ctx.now + ctx.config.messageTimestampAfterMaxMs;
        for (const ts of [h.baseTimestamp, h.maxTimestamp]) {
          if (ts < lo || ts > hi) throw new InvalidTimestampError(`timestamp ${ts} out of range`);
        }
      }
    }
    if (client && logAppend) {
      view.setInt16(pos + OFF_ATTRIBUTES, h.attributes | ATTR_TIMESTAMP_TYPE);
      maxTs = ctx.now;
      rewrite = true;
    }
    if (rewrite) {
      writeI64(view, pos + OFF_MAX_TIMESTAMP, maxTs);
      rewriteBatchCrc(buf, pos, size);
    }
    // Outside the CRC: no recomputation needed.
    writeI64(view, pos + OFF_BASE_OFFSET, baseOffset);
    const epoch = client ? ctx.leaderEpoch : h.partitionLeaderEpoch;
    if (client) view.setInt32(pos + OFF_LEADER_EPOCH, epoch);
    out.push({
      pos,
      size,
      baseOffset,
      lastOffset: baseOffset + h.lastOffsetDelta,
      maxTimestamp: maxTs,
      leaderEpoch: epoch,
      producerId: h.producerId,
      producerEpoch: h.producerEpoch,
      baseSequence: h.baseSequence,
      lastOffsetDelta: h.lastOffsetDelta,
      recordCount: h.recordsCount,
    });
    next = baseOffset + h.lastOffsetDelta + 1;
    pos += size;
  }
  return out;
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
