// How stored records are shown over HTTP, and the one loop that turns log bytes into records.
import type { Broker } from "../broker.ts";
import type { PartitionStats } from "../cluster/node.ts";
import type { From } from "../cluster/remote-partitions.ts";
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
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-depth.ts";

export type Format = "json" | "text" | "base64";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A key or value: JSON when it parses (format=json) and nests at most MAX_JSON_DEPTH levels
 * (deeper would overflow the stack when the response is written), else UTF-8 text, else base64.
 */
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
  if (format === "text" || !mayBeJson(text) || nestedDeeperThan(text, MAX_JSON_DEPTH)) return text;
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
    next = decodeInto(buf, out, limit, next);
    if (out.length >= limit || read.nextOffset >= read.highWatermark) break;
    next = Math.max(next, read.nextOffset);
  }
  return { records: out, next, bytes };
}

const inflate = (codec: number, data: Uint8Array) => decompress(codec, data);

/**
 * Decode the records of whole batches in `buf` at or after `next` into `out`, up to `limit`
 * records; returns where the next read starts. Control batches are skipped.
 */
export function decodeInto(
  buf: Uint8Array,
  out: KafkaRecord[],
  limit: number,
  next: number,
): number {
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
  return next;
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
 * The 404 a user can act on when a partition does not exist: no such topic (40403), or no such
 * partition with the topic's count (40402). Returns the topic's metadata.
 */
export function existingPartition(broker: Broker, topic: string, partition: number) {
  const t = broker.meta.getTopic(topic);
  if (!t) throw topicNotFound(topic);
  if (!t.partitions.some((x) => x.partition === partition)) {
    throw new HttpError(
      404,
      40402,
      `partition ${partition} does not exist (topic ${topic} has ${t.partitions.length})`,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
  }
  return t;
}

/** A start position from a query: earliest, latest, an offset, or a time (epoch ms or ISO-8601). */
export function parseFrom(from: string): From | undefined {
  if (from === "earliest" || from === "latest") return from;
  if (/^\d{1,16}$/.test(from)) return Number(from);
  const ts = Date.parse(from);
  if (Number.isNaN(ts) || ts < 0) return undefined;
  return { timestamp: ts };
}
