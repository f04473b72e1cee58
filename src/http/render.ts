// How stored records are shown over HTTP, and the one loop that turns log bytes into records.
import type { Broker } from "../broker.ts";
import type { PartitionStats } from "../cluster/node.ts";
import {
  ATTR_CONTROL,
  BATCH_HEADER_SIZE,
  batchSizeAt,
  decodeRecordBatch,
  type KafkaRecord,
} from "../protocol/record-batch.ts";
import { decompress } from "../protocol/compression/index.ts";
import { CorruptLogError } from "../storage/index.ts";
import { ErrorCode } from "../protocol/kafka/index.ts";
import { HttpError, topicNotFound } from "./errors.ts";

export type Format = "json" | "text" | "base64";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A key or value: JSON when it parses (format=json), else UTF-8 text, else base64. */
export function render(v: Uint8Array | null, format: Format): unknown {
  if (v === null) return null;
  if (format === "base64") return Buffer.from(v).toString("base64");
  let text: string;
  try {
    text = utf8.decode(v);
  } catch {
    return format === "text"
      ? Buffer.from(v).toString("base64")
      : { base64: Buffer.from(v).toString("base64") };
  }
  if (format === "text" || !mayBeJson(text)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether text can start a JSON value: most plain text is told apart without a throw. */
function mayBeJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    // { [ " - 0-9 t(rue) f(alse) n(ull)
    return c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) ||
      c === 0x74 || c === 0x66 || c === 0x6e;
  }
  return false;
}

export interface RenderedRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: unknown;
  value: unknown;
  headers: { key: string; value: unknown }[];
}

export function renderRecord(
  topic: string,
  partition: number,
  r: KafkaRecord,
  format: Format,
): RenderedRecord {
  return {
    topic,
    partition,
    offset: r.offset,
    timestamp: r.timestamp,
    key: render(r.key, format),
    value: render(r.value, format),
    headers: r.headers.map((h) => ({
      key: h.key,
      value: render(h.value, format === "json" ? "text" : format),
    })),
  };
}

export interface Collected {
  records: KafkaRecord[];
  /** Where the next read starts (past skipped control batches too). */
  next: number;
  bytes: number;
}

/** Bounds the reads per call, whatever the limits say. */
const MAX_READS = 1000;
/**
 * Log bytes read per step: a read stops decoding as soon as `limit` records are in hand, so a
 * large max_bytes does not decode megabytes of batches for a few records.
 */
const READ_STEP = 1024 * 1024;

/**
 * Records of one partition from `offset`, at most `limit` records and about `maxBytes` of log
 * (at least one batch, so an oversized batch cannot stall a reader). Control batches (transaction
 * markers) are skipped; compressed batches are decoded.
 */
export function collect(
  broker: Broker,
  topic: string,
  partition: number,
  offset: number,
  limit: number,
  maxBytes: number,
): Collected {
  const out: KafkaRecord[] = [];
  let next = offset;
  let bytes = 0;
  const inflate = (codec: number, data: Uint8Array) => decompress(codec, data);
  for (let i = 0; i < MAX_READS && out.length < limit && bytes < maxBytes; i++) {
    const want = Math.max(1, Math.min(READ_STEP, maxBytes - bytes));
    let read;
    try {
      read = broker.partitions.read(topic, partition, next, want);
    } catch (e) {
      // Damaged bytes further on: answer with the records before them; alone, the error.
      if (e instanceof CorruptLogError && out.length > 0) break;
      throw e;
    }
    const buf = read.records;
    if (buf.length === 0) break;
    bytes += buf.length;
    for (let pos = 0; pos + BATCH_HEADER_SIZE <= buf.length && out.length < limit;) {
      const size = batchSizeAt(buf, pos);
      if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
      const b = decodeRecordBatch(buf, pos, inflate);
      pos += size;
      const batchEnd = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      if ((b.header.attributes & ATTR_CONTROL) !== 0 || !b.records) {
        next = Math.max(next, batchEnd);
        continue;
      }
      for (const r of b.records) {
        if (r.offset < next || out.length >= limit) continue;
        out.push(r);
        next = r.offset + 1;
      }
      if (out.length < limit) next = Math.max(next, batchEnd);
    }
    if (out.length >= limit || read.nextOffset >= read.highWatermark) break;
    next = Math.max(next, read.nextOffset);
  }
  return { records: out, next, bytes };
}

export function recordBytes(r: KafkaRecord): number {
  return (r.key?.length ?? 0) + (r.value?.length ?? 0);
}

/**
 * Offsets and size of the partitions of `topic` that other brokers lead, asked of those brokers
 * (in parallel, 1 s each): a whole-topic or group view on any broker shows every partition.
 */
export async function remotePartitionStats(
  broker: Broker,
  topic: string,
  partitions: Iterable<number>,
): Promise<Map<number, PartitionStats>> {
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    if (broker.partitions.has(topic, p)) continue;
    const leader = broker.partitions.leaderOf(topic, p);
    if (leader < 0) continue;
    byLeader.set(leader, [...(byLeader.get(leader) ?? []), p]);
  }
  const out = new Map<number, PartitionStats>();
  const answers = await Promise.all(
    [...byLeader].map(([leader, ps]) => broker.cluster.partitionStats(leader, topic, ps)),
  );
  for (const list of answers) for (const st of list) out.set(st.partition, st);
  return out;
}

/** " at http://host:port" for a registered broker, else "". */
export function leaderUrl(broker: Broker, nodeId: number): string {
  const b = broker.meta.listBrokers().find((x) => x.nodeId === nodeId);
  return b ? ` at http://${b.host}:${b.httpPort}` : "";
}

/**
 * Throws 503 (NOT_LEADER_OR_FOLLOWER) when some of these partitions are led by other brokers:
 * reads over several partitions (a whole topic, a group member's assignment) are served only by a
 * broker that leads all of them, rather than quietly returning part of the records.
 */
export function requireLedHere(broker: Broker, topic: string, partitions: Iterable<number>): void {
  const away = new Map<number, number[]>();
  for (const p of partitions) {
    if (broker.partitions.leaderError(topic, p) === 0) continue;
    const leader = broker.partitions.leaderOf(topic, p);
    away.set(leader, [...(away.get(leader) ?? []), p]);
  }
  if (away.size === 0) return;
  const where = [...away].map(([b, ps]) =>
    `partition${ps.length > 1 ? "s" : ""} ${ps.join(", ")} on broker ${b}${leaderUrl(broker, b)}`
  ).join("; ");
  throw new HttpError(
    503,
    50306,
    `this broker does not lead all of topic ${topic}: ${where}. Read those partitions from their ` +
      "leaders (GET /topics/{topic}/partitions/{partition}/records), or consume with a Kafka client",
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
  );
}

/**
 * The partition's local state, or the 404 a user can act on: no such topic (40403), no such
 * partition with the topic's count (40402), or not hosted by this broker (40402, naming the leader).
 */
export function hostedPartition(broker: Broker, topic: string, partition: number) {
  if (broker.partitions.has(topic, partition)) return broker.partitions.partition(topic, partition);
  const t = broker.meta.getTopic(topic);
  if (!t) throw topicNotFound(topic);
  const p = t.partitions.find((x) => x.partition === partition);
  if (!p) {
    throw new HttpError(
      404,
      40402,
      `partition ${partition} does not exist (topic ${topic} has ${t.partitions.length})`,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
  }
  throw new HttpError(
    404,
    40402,
    `partition ${topic}-${partition} is not on this broker: ask its leader, broker ${p.leader}${
      leaderUrl(broker, p.leader)
    }`,
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
  );
}

/** A start position: earliest, latest, an offset, or a time (epoch ms or ISO-8601). */
export function resolveFrom(
  broker: Broker,
  topic: string,
  partition: number,
  from: string,
): number | undefined {
  const st = broker.partitions.partition(topic, partition);
  if (from === "earliest") return st.log.logStartOffset();
  if (from === "latest") return broker.partitions.highWatermark(topic, partition);
  if (/^\d{1,16}$/.test(from)) return Number(from);
  const ts = Date.parse(from);
  if (Number.isNaN(ts)) return undefined;
  return offsetForTime(broker, topic, partition, ts);
}

export function offsetForTime(broker: Broker, topic: string, partition: number, ts: number) {
  const st = broker.partitions.partition(topic, partition);
  return st.log.offsetForTimestamp(ts)?.offset ?? broker.partitions.highWatermark(topic, partition);
}
