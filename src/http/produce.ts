// Produce over HTTP: the curl-first `POST /topics/{t}/records` (JSON object, array,
// {"records": [...]}, NDJSON, text lines, raw bytes) and Confluent REST v2 `POST /topics/{t}`
// (application/vnd.kafka.{json,binary}.v2+json). Records become RecordBatch v2 here, so the log
// stores the same bytes a Kafka client would have sent.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Acks } from "../core/partition-manager.ts";
import { partitionForKey } from "../core/partitioner.ts";
import type { RecordInput } from "../protocol/record-batch.ts";
import { AppendBatcher } from "./append-batcher.ts";
import { encodeTextBatches, indexIn } from "./text-batches.ts";
import { FramePool } from "../kafka/frame-pool.ts";
import type { Broker } from "../broker.ts";
import type { Metrics } from "../core/metrics.ts";
import { type HttpContext, on } from "./context.ts";
import { badRequest, partitionNotFound, topicNotFound } from "./errors.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-depth.ts";
import { leaderUnknown, type PartitionAccess, PRODUCE_TIMEOUT_MS } from "./partition-access.ts";

import { TopicRoutes } from "./topic-cache.ts";
import { commonErrors, err, jsonOk, PartitionParams, TopicParams, valid, z } from "./schemas.ts";

const enc = new TextEncoder();

/** How JSON keys/values become bytes: curl-first (strings raw), base64, or v2 json (all JSON text). */
export type InFormat = "json" | "text" | "base64" | "v2json";

export function parseAcks(v: string | undefined): Acks {
  if (v === undefined || v === "all" || v === "-1") return -1;
  if (v === "1") return 1;
  return 0;
}

function decodeBase64(s: string, what: string): Uint8Array {
  if (s.length % 4 === 1 || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) {
    throw badRequest(`${what} is not valid base64`);
  }
  return Buffer.from(s, s.includes("-") || s.includes("_") ? "base64url" : "base64");
}

/** A JSON value as text, refused (400) when nested more than MAX_JSON_DEPTH levels. */
function jsonText(v: unknown, what: string): string {
  let text: string;
  try {
    text = JSON.stringify(v);
  } catch (e) {
    // Deep enough to overflow the stack.
    if (!(e instanceof RangeError)) throw e;
    text = "";
  }
  if (text === "" || nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw badRequest(
      `${what} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
    );
  }
  return text;
}

function toBytes(v: unknown, format: InFormat, what: string): Uint8Array | null {
  if (v === undefined || v === null) return null;
  if (format === "v2json") return enc.encode(jsonText(v, what));
  if (typeof v === "string") return format === "base64" ? decodeBase64(v, what) : enc.encode(v);
  if (format === "base64") throw badRequest(`${what} must be a base64 string with format=base64`);
  return enc.encode(jsonText(v, what));
}

export interface ProduceRecord {
  partition?: number;
  input: RecordInput;
}

const FIELDS = new Set(["key", "value", "headers", "timestamp", "partition"]);
/** Bounds the records of one request (a 64 MiB body of empty records would be millions). */
const MAX_RECORDS = 100_000;

function parseRecord(r: unknown, i: number, format: InFormat): ProduceRecord {
  if (r === null || typeof r !== "object" || Array.isArray(r)) {
    throw badRequest(`records[${i}] must be an object`);
  }
  const o = r as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!FIELDS.has(k)) {
      throw badRequest(
        `records[${i}] has an unknown field ${
          JSON.stringify(k)
        } (expected key, value, headers, timestamp, partition)`,
      );
    }
  }
  let partition: number | undefined;
  if (o.partition !== undefined && o.partition !== null) {
    if (typeof o.partition !== "number" || !Number.isInteger(o.partition) || o.partition < 0) {
      throw badRequest(`records[${i}].partition must be an integer ≥ 0`);
    }
    partition = o.partition;
  }
  let timestamp: number | undefined;
  if (o.timestamp !== undefined && o.timestamp !== null) {
    if (typeof o.timestamp === "number" && Number.isSafeInteger(o.timestamp) && o.timestamp >= 0) {
      timestamp = o.timestamp;
    } else if (typeof o.timestamp === "string" && !Number.isNaN(Date.parse(o.timestamp))) {
      timestamp = Date.parse(o.timestamp);
    } else {
      throw badRequest(`records[${i}].timestamp must be epoch milliseconds or an ISO-8601 time`);
    }
  }
  const headers: { key: string; value: Uint8Array | null }[] = [];
  if (o.headers !== undefined && o.headers !== null) {
    let list: (readonly [string, unknown])[];
    if (Array.isArray(o.headers)) {
      list = o.headers.map((h, j) => {
        const hk = h !== null && typeof h === "object" ? (h as { key?: unknown }).key : undefined;
        if (typeof hk !== "string") {
          throw badRequest(`records[${i}].headers[${j}] must be {"key": string, "value": …}`);
        }
        return [hk, (h as { value?: unknown }).value] as const;
      });
    } else if (typeof o.headers === "object") {
      list = Object.entries(o.headers as Record<string, unknown>);
    } else {
      throw badRequest(`records[${i}].headers must be an object or an array of {key, value}`);
    }
    // Header values are text unless the whole request is base64.
    const hf = format === "base64" ? "base64" : "text";
    for (const [k, v] of list) {
      headers.push({ key: k, value: toBytes(v, hf, `records[${i}].headers.${k}`) });
    }
  }
  return {
    partition,
    input: {
      key: toBytes(o.key, format, `records[${i}].key`),
      value: toBytes(o.value, format, `records[${i}].value`),
      headers,
      timestamp,
    },
  };
}

function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}

function checkCount(n: number): void {
  if (n > MAX_RECORDS) throw badRequest(`at most ${MAX_RECORDS} records per request`);
}

/** The records of a parsed JSON body: one record, an array of records or {"records": [...]}. */
export function jsonRecords(body: unknown, format: InFormat): ProduceRecord[] {
  const list = Array.isArray(body) ? body : body !== null && typeof body === "object" &&
      Array.isArray((body as { records?: unknown }).records)
    ? (body as { records: unknown[] }).records
    : [body];
  checkCount(list.length);
  const out = new Array<ProduceRecord>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = parseRecord(list[i], i, format);
  return out;
}

/** The media type of a request, lower case, without parameters. */
export function mediaType(header: string | null | undefined): string {
  const h = header ?? "application/json";
  const semi = h.indexOf(";");
  return (semi < 0 ? h : h.slice(0, semi)).trim().toLowerCase();
}

/**
 * A text/plain body: a record per line (a final newline optional, a trailing \r dropped), as
 * bytes (no decoding: the log keeps exactly what was sent); with `separator`, a line's bytes
 * before its first separator are the key (a line without one has no key), else `key` for all.
 */
export function textRecords(
  body: Uint8Array,
  key: string | undefined,
  separator: string | undefined,
): ProduceRecord[] {
  if (key !== undefined && separator !== undefined) {
    throw badRequest("give key or key_separator, not both");
  }
  const fixedKey = key === undefined ? null : enc.encode(key);
  const sep = separator === undefined ? undefined : enc.encode(separator);
  const out: ProduceRecord[] = [];
  for (let start = 0; start < body.length;) {
    const nl = body.indexOf(0x0a, start);
    const lineEnd = nl < 0 ? body.length : nl;
    const end = lineEnd > start && body[lineEnd - 1] === 0x0d ? lineEnd - 1 : lineEnd;
    let k: Uint8Array | null = fixedKey;
    let valueStart = start;
    if (sep !== undefined) {
      const at = indexIn(body, sep, start, end);
      if (at >= 0) {
        k = body.subarray(start, at);
        valueStart = at + sep.length;
      }
    }
    out.push({ input: { key: k, value: body.subarray(valueStart, end), headers: [] } });
    if (out.length > MAX_RECORDS) checkCount(out.length);
    start = lineEnd + 1;
  }
  return out;
}

async function parseProduceBody(
  c: Context,
  format: InFormat,
  key: string | undefined,
  separator: string | undefined,
): Promise<ProduceRecord[]> {
  const type = mediaType(c.req.header("content-type"));
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    const lines = (await c.req.text()).split("\n").filter((l) => l.trim() !== "");
    checkCount(lines.length);
    return lines.map((l, i) => parseRecord(parseJsonText(l, `line ${i + 1}`), i, format));
  }
  if (type === "text/plain") {
    return textRecords(new Uint8Array(await c.req.arrayBuffer()), key, separator);
  }
  if (separator !== undefined) {
    throw badRequest("key_separator applies to text/plain bodies only");
  }
  if (type === "application/octet-stream") {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const k = key ?? c.req.header("kafka-key");
    return [{
      input: { key: k === undefined ? null : enc.encode(k), value: bytes, headers: [] },
    }];
  }
  // JSON: the route's validator has parsed it (and checked its outer shape) already.
  return jsonRecords(c.req.valid("json" as never), format);
}

export const ProduceQuery = z.object({
  acks: z.enum(["0", "1", "all", "-1"]).optional().openapi({
    description: "0: no wait; 1: written; all (default): synced to disk on the in-sync replicas",
  }),
  format: z.enum(["json", "text", "base64"]).optional().openapi({
    description: "base64: keys, values and header values are base64 strings",
  }),
  key: z.string().max(1_000_000).optional().openapi({
    description: "the key of every record (text/plain and application/octet-stream bodies)",
  }),
  key_separator: z.string().min(1).max(64).optional().openapi({
    description:
      "text/plain bodies: each line is KEY SEPARATOR VALUE (split at the first separator; a " +
      "line without one has no key), like kcat -K",
  }),
  partition: z.string().regex(/^\d{1,9}$/, "must be a partition number").optional().openapi({
    description: "write every record to this partition (overrides keys and record fields)",
  }),
  summary: z.enum(["true", "false"]).optional().openapi({
    description: "true: answer with the number of records and each partition's first offset " +
      "(records of a request are contiguous in each partition) instead of an offset per record; " +
      "for bulk loads, where the per-record answer costs more than the write",
  }),
});

/** A produce result as answered: per record, or per partition with `summary=true`. */
export function produceAnswer(
  offsets: { partition: number; offset: number | null }[],
  summary: boolean,
): unknown {
  if (!summary) return { offsets };
  const parts = new Map<
    number,
    { partition: number; base_offset: number | null; records: number }
  >();
  for (const o of offsets) {
    const p = parts.get(o.partition);
    if (p === undefined) {
      parts.set(o.partition, { partition: o.partition, base_offset: o.offset, records: 1 });
    } else p.records++;
  }
  return { records: offsets.length, partitions: [...parts.values()] };
}

/** The `partition` query parameter as a number, if given. */
export const queryPartition = (q: { partition?: string }) =>
  q.partition === undefined ? undefined : Number(q.partition);

const RecordIn = z.object({
  key: z.unknown().optional(),
  value: z.unknown().optional(),
  headers: z.unknown().optional(),
  timestamp: z.union([z.number(), z.string()]).nullable().optional(),
  partition: z.number().int().min(0).nullable().optional(),
}).openapi("RecordIn");

const ProduceBody = z.union([
  z.array(z.unknown()).openapi({ description: "an array of records" }),
  z.object({ records: z.array(z.unknown()) }).passthrough(),
  z.record(z.string(), z.unknown()).openapi({ description: "one record" }),
]).openapi({ description: "one record, an array of records or {records: [...]}" });

const ProduceResponse = z.union([
  z.object({
    offsets: z.array(z.object({
      partition: z.number().int(),
      offset: z.number().int().nullable(),
    })),
  }),
  z.object({
    records: z.number().int(),
    partitions: z.array(z.object({
      partition: z.number().int(),
      base_offset: z.number().int().nullable().openapi({ description: "null with acks=0" }),
      records: z.number().int(),
    })),
  }).openapi({ description: "with summary=true" }),
]).openapi("ProduceResult");

const V2Record = z.object({
  key: z.unknown().optional(),
  value: z.unknown().optional(),
  partition: z.number().int().min(0).nullable().optional(),
});
const V2Body = z.object({
  records: z.array(V2Record).min(1).max(MAX_RECORDS),
  key_schema: z.string().optional(),
  key_schema_id: z.number().optional(),
  value_schema: z.string().optional(),
  value_schema_id: z.number().optional(),
}).openapi("V2ProduceRequest");
const V2Response = z.object({
  offsets: z.array(z.object({
    partition: z.number().int().nullable(),
    offset: z.number().int().nullable(),
    error_code: z.number().int().nullable(),
    error: z.string().nullable(),
  })),
  key_schema_id: z.number().nullable(),
  value_schema_id: z.number().nullable(),
}).openapi("V2ProduceResponse");

const produceErrors = {
  ...commonErrors,
  413: err("over max.message.bytes or the request limit"),
  415: err("unsupported content type"),
  507: err("disk full"),
};

export type Producer = ReturnType<typeof createProducer>;

/**
 * Text bodies from this size on, bound for one partition, are encoded in one pass
 * (text-batches.ts); smaller ones go through the batcher, which joins concurrent requests.
 */
const TEXT_DIRECT_BYTES = 256 * 1024;
/** Room for a batch header and slack under max.message.bytes, as the batcher leaves. */
const BATCH_OVERHEAD = 128;

/**
 * Routes records to partitions (explicit, murmur2 on the key, else one sticky partition) and
 * appends them wherever each partition is led: here, or at its leader over the cluster port.
 */
export function createProducer(broker: Broker, metrics: Metrics, access: PartitionAccess) {
  let spread = 0;
  const topics = new TopicRoutes(broker);
  const append = (t: string, p: number, batch: Uint8Array, acks: Acks, owned = false) =>
    access.append(
      t,
      p,
      topics.get(t)?.topicId,
      batch,
      acks,
      performance.now() + PRODUCE_TIMEOUT_MS,
      owned,
    );
  // The open log's limit; for a partition led elsewhere the topic's (its leader checks too).
  const maxBatchBytes = (t: string, p: number) =>
    broker.partitions.has(t, p)
      ? broker.partitions.partition(t, p).log.config().maxMessageBytes
      : broker.meta.topicConfig(t).maxMessageBytes;
  const batcher = new AppendBatcher(append, Date.now, maxBatchBytes);
  // Reused output buffers for text bodies: a fresh one per request cost a page fault per 4 KiB.
  const textPool = new FramePool(16 * 1024 * 1024);

  /** Keyless records go to one partition per request, rotating (like Kafka's sticky partitioner). */
  function stickyPartition(topic: string, n: number): number {
    const first = spread++ % n;
    spread %= 1 << 30;
    if (access.leadsHere(topic, first)) return first;
    // Over the partitions this broker leads (no hop), else over those led elsewhere.
    const mine: number[] = [];
    for (let p = 0; p < n; p++) if (access.leadsHere(topic, p)) mine.push(p);
    if (mine.length > 0) return mine[spread % mine.length];
    const led: number[] = [];
    for (let p = 0; p < n; p++) if (access.leaderFor(topic, p) >= 0) led.push(p);
    return led.length > 0 ? led[(first + spread) % led.length] : -1;
  }

  async function produce(topic: string, records: ProduceRecord[], acks: Acks, fixed?: number) {
    const t = topics.get(topic);
    if (!t || t.internal) throw topicNotFound(topic);
    if (records.length === 0) throw badRequest("no records in the body");
    const n = t.partitions;
    if (fixed !== undefined && fixed >= n) {
      throw partitionNotFound(`partition ${fixed} does not exist (topic ${topic} has ${n})`);
    }
    let sticky = -2; // not chosen yet
    const target = new Array<number>(records.length);
    let bytes = 0;
    let only = -1; // the one partition of the request, or -2 when several
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      let p: number;
      const explicit = fixed ?? r.partition;
      if (explicit !== undefined) {
        if (explicit >= n) {
          throw partitionNotFound(
            `records[${i}].partition ${explicit} does not exist (topic ${topic} has ${n})`,
          );
        }
        p = explicit;
      } else if (r.input.key) p = partitionForKey(r.input.key, n);
      else {
        if (sticky === -2) sticky = stickyPartition(topic, n);
        if (sticky < 0) {
          throw leaderUnknown(topic, 0, `no partition of topic ${topic} has a leader right now`);
        }
        p = sticky;
      }
      target[i] = p;
      only = only === -1 || only === p ? p : -2;
      bytes += (r.input.key?.length ?? 0) + (r.input.value?.length ?? 0);
    }
    // A partition nobody leads right now fails the request before anything is written (a
    // partial write with an error would be written twice by the client's retry).
    for (const p of only >= 0 ? [only] : new Set(target)) {
      if (!access.hasLeader(topic, p)) throw leaderUnknown(topic, p);
    }
    const offsets = new Array<number>(records.length);
    if (only >= 0) {
      const base = await batcher.add(topic, only, records.map((r) => r.input), acks);
      for (let j = 0; j < records.length; j++) offsets[j] = base + j;
    } else {
      // Split per partition (and so per leader); each part is appended where it is led.
      const byPartition = new Map<number, number[]>();
      target.forEach((p, i) => {
        const list = byPartition.get(p);
        if (list) list.push(i);
        else byPartition.set(p, [i]);
      });
      await Promise.all([...byPartition].map(async ([p, idx]) => {
        const base = await batcher.add(topic, p, idx.map((i) => records[i].input), acks);
        idx.forEach((i, j) => (offsets[i] = base + j));
      }));
    }
    metrics.produced(topic, records.length, bytes);
    return target.map((p, i) => ({ partition: p, offset: acks === 0 ? null : offsets[i] }));
  }

  /**
   * A large text/plain body bound for one partition (a given partition, one key for all, no
   * keys, or a one-partition topic), encoded into batches in one pass and appended as one
   * request (it would gain nothing from the batcher's company). Undefined when lines carry keys
   * that may spread over partitions: `produce` routes those record by record.
   */
  async function produceText(
    topic: string,
    body: Uint8Array,
    key: string | undefined,
    separator: string | undefined,
    acks: Acks,
    fixed?: number,
  ) {
    const t = topics.get(topic);
    if (!t || t.internal) throw topicNotFound(topic);
    if (key !== undefined && separator !== undefined) {
      throw badRequest("give key or key_separator, not both");
    }
    const n = t.partitions;
    if (fixed !== undefined && fixed >= n) {
      throw partitionNotFound(`partition ${fixed} does not exist (topic ${topic} has ${n})`);
    }
    if (separator !== undefined && fixed === undefined && n > 1) return undefined;
    const fixedKey = key === undefined ? null : enc.encode(key);
    let p = fixed ?? (n === 1 ? 0 : fixedKey ? partitionForKey(fixedKey, n) : -2);
    if (p === -2) {
      p = stickyPartition(topic, n);
      if (p < 0) {
        throw leaderUnknown(topic, 0, `no partition of topic ${topic} has a leader right now`);
      }
    }
    if (!access.hasLeader(topic, p)) throw leaderUnknown(topic, p);
    const sep = separator === undefined ? undefined : enc.encode(separator);
    const b = encodeTextBatches(
      body,
      fixedKey,
      sep,
      maxBatchBytes(topic, p) - BATCH_OVERHEAD,
      Date.now(),
      (size) => FramePool.pooled(size) ? textPool.take(size) : new Uint8Array(size),
    );
    if (b.records === 0) throw badRequest("no records in the body");
    checkCount(b.records);
    // Ours alone: the log rewrites offsets in it instead of copying it first.
    const { baseOffset } = await append(topic, p, b.bytes, acks, true);
    // Written (here, or at the leader) once append resolves; after a failure a write may still
    // be under way, so the buffer is left to the GC then.
    textPool.give(b.bytes);
    metrics.produced(topic, b.records, b.payload);
    return { partition: p, baseOffset: acks === 0 ? null : baseOffset, records: b.records };
  }

  return { produce, produceText, topics };
}

export function produceRoutes(app: OpenAPIHono, { producer }: HttpContext) {
  const produce = producer.produce;

  on(
    app,
    createRoute({
      method: "post",
      path: "/topics/{topic}/records",
      tags: ["records"],
      summary: "Produce records (JSON, NDJSON, text lines or raw bytes)",
      request: {
        params: TopicParams,
        query: ProduceQuery,
        body: {
          required: false,
          content: {
            "application/json": { schema: ProduceBody },
            "application/x-ndjson": { schema: RecordIn },
            "text/plain": { schema: z.string().openapi({ description: "a record per line" }) },
            "application/octet-stream": {
              schema: z.string().openapi({ format: "binary", description: "one record" }),
            },
          },
        },
      },
      responses: {
        200: jsonOk(ProduceResponse, "partition and offset per record"),
        ...produceErrors,
      },
    }),
    async (c) => {
      const { topic } = valid(c, "param", TopicParams);
      const q = valid(c, "query", ProduceQuery);
      if (!producer.topics.get(topic)) throw topicNotFound(topic);
      if (mediaType(c.req.header("content-type")) === "text/plain") {
        const body = new Uint8Array(await c.req.arrayBuffer());
        const r = body.length >= TEXT_DIRECT_BYTES
          ? await producer.produceText(
            topic,
            body,
            q.key,
            q.key_separator,
            parseAcks(q.acks),
            queryPartition(q),
          )
          : undefined;
        if (r !== undefined) {
          return c.json(
            q.summary === "true"
              ? {
                records: r.records,
                partitions: [{
                  partition: r.partition,
                  base_offset: r.baseOffset,
                  records: r.records,
                }],
              }
              : {
                offsets: Array.from({ length: r.records }, (_, i) => ({
                  partition: r.partition,
                  offset: r.baseOffset === null ? null : r.baseOffset + i,
                })),
              },
          );
        }
        const records = textRecords(body, q.key, q.key_separator);
        const offsets = await produce(topic, records, parseAcks(q.acks), queryPartition(q));
        return c.json(produceAnswer(offsets, q.summary === "true"));
      }
      const records = await parseProduceBody(c, q.format ?? "json", q.key, q.key_separator);
      const offsets = await produce(topic, records, parseAcks(q.acks), queryPartition(q));
      return c.json(produceAnswer(offsets, q.summary === "true"));
    },
  );

  /** Confluent REST Proxy v2 produce: same request and response shapes. */
  const v2 = async (c: Context, partition?: number) => {
    const type = (c.req.header("content-type") ?? "").toLowerCase();
    const binary = type.includes("vnd.kafka.binary.");
    const body = valid(c, "json", V2Body);
    const { topic } = valid(c, "param", TopicParams);
    const format: InFormat = binary ? "base64" : "v2json";
    const records = body.records.map((r, i) =>
      parseRecord({ key: r.key, value: r.value, partition: r.partition }, i, format)
    );
    const acks = parseAcks(c.req.query("acks"));
    const out = await produce(topic, records, acks, partition);
    c.header("content-type", "application/vnd.kafka.v2+json");
    return c.body(
      JSON.stringify({
        offsets: out.map((o) => ({ ...o, error_code: null, error: null })),
        key_schema_id: null,
        value_schema_id: null,
      }),
      200,
    );
  };
  const v2Content = {
    "application/vnd.kafka.json.v2+json": { schema: V2Body },
    "application/vnd.kafka.binary.v2+json": { schema: V2Body },
    "application/json": { schema: V2Body },
  };
  on(
    app,
    createRoute({
      method: "post",
      path: "/topics/{topic}",
      tags: ["records"],
      summary: "Produce (Confluent REST Proxy v2)",
      request: { params: TopicParams, body: { required: true, content: v2Content } },
      responses: {
        200: {
          description: "v2 offsets",
          content: { "application/vnd.kafka.v2+json": { schema: V2Response } },
        },
        ...produceErrors,
      },
    }),
    (c) => v2(c),
  );
  on(
    app,
    createRoute({
      method: "post",
      path: "/topics/{topic}/partitions/{partition}",
      tags: ["records"],
      summary: "Produce to one partition (Confluent REST Proxy v2)",
      request: { params: PartitionParams, body: { required: true, content: v2Content } },
      responses: {
        200: {
          description: "v2 offsets",
          content: { "application/vnd.kafka.v2+json": { schema: V2Response } },
        },
        ...produceErrors,
      },
    }),
    (c) => v2(c, Number(c.req.param("partition"))),
  );
}
