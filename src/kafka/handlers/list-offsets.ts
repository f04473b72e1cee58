// ListOffsets: the earliest, latest or max-timestamp offset of a partition, or the first offset
// at or after a timestamp.
import {
  ApiKey,
  ErrorCode,
  type ListOffsetsRequest,
  type ListOffsetsResponse,
} from "../../protocol/kafka/index.ts";
import { errorCodeOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { batchSizeAt, decodeRecordBatch, readBatchHeader } from "../../protocol/record-batch.ts";
import { decompress } from "../../protocol/compression/index.ts";
import { leaderEpochError } from "./shared/leader-epoch.ts";

const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;
/** Bytes read per step when scanning batch headers for the max timestamp. */
const SCAN_CHUNK = 1024 * 1024;
/** Bound on the scan (batches), so one request cannot hold the loop for long. */
const SCAN_MAX_BATCHES = 2_000_000;

/** The offset and timestamp of the record with the largest timestamp below the high watermark. */
function maxTimestampOffset(ctx: KafkaContext, topic: string, partition: number) {
  const log = ctx.partitions.partition(topic, partition).log;
  const hw = ctx.partitions.highWatermark(topic, partition);
  let offset = log.logStartOffset();
  let best: { pos: number; bytes: Uint8Array; ts: number } | null = null;
  let batches = 0;
  while (offset < hw && batches < SCAN_MAX_BATCHES) {
    const r = ctx.partitions.read(topic, partition, offset, SCAN_CHUNK);
    if (r.records.length === 0) break;
    let pos = 0;
    while (pos + 61 <= r.records.length) {
      const size = batchSizeAt(r.records, pos);
      if (size <= 0 || pos + size > r.records.length) break;
      const h = readBatchHeader(r.records, pos);
      if (best === null || h.maxTimestamp > best.ts) {
        best = { pos, bytes: r.records, ts: h.maxTimestamp };
      }
      pos += size;
      batches++;
    }
    offset = r.nextOffset;
  }
  if (best === null) return { offset: -1, timestamp: -1 };
  // The exact record inside the winning batch (the first one carrying the max timestamp).
  const batch = decodeRecordBatch(best.bytes, best.pos, (c, b) => decompress(c, b));
  for (const rec of batch.records ?? []) {
    if (rec.timestamp === best.ts) return { offset: rec.offset, timestamp: rec.timestamp };
  }
  return { offset: batch.header.baseOffset, timestamp: best.ts };
}

type PartitionAnswer = ListOffsetsResponse["topics"][number]["partitions"][number] & {
  offset: number;
};

/** One partition's answer in the v1+ form (an offset and its timestamp). */
function answer(
  ctx: KafkaContext,
  name: string,
  p: ListOffsetsRequest["topics"][number]["partitions"][number],
): PartitionAnswer {
  const partitionIndex = p.partitionIndex;
  const out = {
    partitionIndex,
    errorCode: 0,
    timestamp: -1,
    offset: -1,
    leaderEpoch: -1,
    oldStyleOffsets: [],
  };
  const where = ctx.partitions.leaderError(name, partitionIndex);
  if (where !== 0) return { ...out, errorCode: where };
  const st = ctx.partitions.partition(name, partitionIndex);
  const epochErr = leaderEpochError(p.currentLeaderEpoch, st.leaderEpoch);
  if (epochErr) return { ...out, errorCode: epochErr };
  const ts = p.timestamp;
  try {
    if (ts === LATEST) {
      // No transactions: the last stable offset is the high watermark.
      const offset = ctx.partitions.highWatermark(name, partitionIndex);
      return { ...out, offset, leaderEpoch: st.leaderEpoch };
    }
    if (ts === EARLIEST) {
      return { ...out, offset: st.log.logStartOffset(), leaderEpoch: st.leaderEpoch };
    }
    if (ts === MAX_TIMESTAMP) {
      return {
        ...out,
        ...maxTimestampOffset(ctx, name, partitionIndex),
        leaderEpoch: st.leaderEpoch,
      };
    }
    if (ts < 0) return { ...out, errorCode: ErrorCode.INVALID_REQUEST };
    const found = st.log.offsetForTimestamp(ts);
    const hw = ctx.partitions.highWatermark(name, partitionIndex);
    if (!found || found.offset >= hw) return out;
    return {
      ...out,
      offset: found.offset,
      timestamp: found.timestamp,
      leaderEpoch: st.leaderEpoch,
    };
  } catch (e) {
    return { ...out, errorCode: errorCodeOf(e) };
  }
}

/**
 * v0 (Kafka 0.8's form, which Burrow and sarama before 0.10.1 send) answers a list of at most
 * MaxNumOffsets offsets instead of one offset and timestamp: here the v1 answer as a list of one
 * (Kafka also listed older segment base offsets below it, which no client uses).
 */
export function listOffsets(
  ctx: KafkaContext,
  req: RequestContext<ListOffsetsRequest>,
): ListOffsetsResponse {
  const v0 = req.header.apiVersion === 0;
  const topics = req.body.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => {
      const a = answer(ctx, t.name, p);
      if (!v0) return a;
      // Only v0's fields: the encoder refuses v1's Timestamp and Offset away from their defaults.
      const found = a.errorCode === 0 && a.offset >= 0 && p.maxNumOffsets > 0;
      const { partitionIndex, errorCode } = a;
      return { partitionIndex, errorCode, oldStyleOffsets: found ? [a.offset] : [] };
    }),
  }));
  return { throttleTimeMs: 0, topics };
}

export default defineHandler({
  apiKey: ApiKey.ListOffsets,
  versions: [0, 7],
  handle: listOffsets,
});
