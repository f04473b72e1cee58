// Produce and read records over HTTP (curl-first JSON). Records are turned into RecordBatch v2
// here, so the log stores the same bytes a Kafka client would have sent.
import type { Context, Hono } from "hono";
import type { Broker } from "../broker.ts";
import type { Acks } from "../core/partition-manager.ts";
import { partitionForKey } from "../core/partitioner.ts";
import {
  decodeRecordBatches,
  encodeRecordBatch,
  type KafkaRecord,
  type RecordInput,
} from "../protocol/record-batch.ts";
import { decompress } from "../protocol/compression/index.ts";
import { OffsetOutOfRangeError } from "../storage/index.ts";
import { badRequest, errorResponse, HttpError } from "./errors.ts";
import { readJson } from "./body.ts";

const enc = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: true });

type Format = "json" | "text" | "base64";

function parseFormat(v: string | undefined, dflt: Format): Format {
  if (v === undefined) return dflt;
  if (v === "json" || v === "text" || v === "base64") return v;
  throw badRequest(`format must be json, text or base64, not ${JSON.stringify(v)}`);
}

function parseAcks(v: string | undefined): Acks {
  if (v === undefined || v === "all" || v === "-1") return -1;
  if (v === "1") return 1;
  if (v === "0") return 0;
  throw badRequest(`acks must be 0, 1 or all, not ${JSON.stringify(v)}`);
}

function decodeBase64(s: string, what: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) throw badRequest(`${what} is not valid base64`);
  return Buffer.from(s, s.includes("-") || s.includes("_") ? "base64url" : "base64");
}

/** A key or value from JSON: strings are UTF-8 (or base64 with format=base64), anything else its JSON text. */
function toBytes(v: unknown, format: Format, what: string): Uint8Array | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return format === "base64" ? decodeBase64(v, what) : enc.encode(v);
  if (format === "base64") throw badRequest(`${what} must be a base64 string with format=base64`);
  return enc.encode(JSON.stringify(v));
}

interface ProduceRecord {
  partition?: number;
  input: RecordInput;
}

function parseRecord(r: unknown, i: number, format: Format): ProduceRecord {
  if (r === null || typeof r !== "object" || Array.isArray(r)) {
    throw badRequest(`records[${i}] must be an object`);
  }
  const o = r as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!["key", "value", "headers", "timestamp", "partition"].includes(k)) {
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
    } else {throw badRequest(
        `records[${i}].timestamp must be epoch milliseconds or an ISO-8601 time`,
      );}
  }
  const headers: { key: string; value: Uint8Array | null }[] = [];
  if (o.headers !== undefined && o.headers !== null) {
    const list = Array.isArray(o.headers)
      ? o.headers.map((h, j) => {
        if (
          h === null || typeof h !== "object" || typeof (h as { key?: unknown }).key !== "string"
        ) {
          throw badRequest(`records[${i}].headers[${j}] must be {"key": string, "value": …}`);
        }
        return [(h as { key: string }).key, (h as { value?: unknown }).value] as const;
      })
      : typeof o.headers === "object"
      ? Object.entries(o.headers as Record<string, unknown>)
      : null;
    if (!list) {
      throw badRequest(`records[${i}].headers must be an object or an array of {key, value}`);
    }
    for (const [k, v] of list) {
      headers.push({ key: k, value: toBytes(v, format, `records[${i}].headers.${k}`) });
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

async function parseProduceBody(c: Context, format: Format): Promise<ProduceRecord[]> {
  const type = (c.req.header("content-type") ?? "application/json").split(";")[0].trim()
    .toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    const text = await c.req.text();
    const lines = text.split("\n").filter((l) => l.trim() !== "");
    return lines.map((l, i) => {
      let v: unknown;
      try {
        v = JSON.parse(l);
      } catch {
        throw badRequest(`line ${i + 1} is not valid JSON`);
      }
      return parseRecord(v, i, format);
    });
  }
  if (type === "text/plain") {
    const text = await c.req.text();
    return text.split("\n").filter((l, i, a) => !(l === "" && i === a.length - 1)).map((l) => ({
      input: { key: null, value: enc.encode(l.endsWith("\r") ? l.slice(0, -1) : l), headers: [] },
    }));
  }
  if (type === "application/octet-stream") {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const key = c.req.query("key");
    return [{
      input: { key: key === undefined ? null : enc.encode(key), value: bytes, headers: [] },
    }];
  }
  // `curl -d` sends form-urlencoded by default: treat it as the JSON it almost always is.
  if (
    type !== "application/json" && type !== "application/x-www-form-urlencoded" &&
    !type.endsWith("+json")
  ) {
    throw new HttpError(
      415,
      41500,
      `unsupported content type ${type}: use application/json, application/x-ndjson, text/plain or application/octet-stream`,
    );
  }
  const body = await readJson(c);
  const list = Array.isArray(body) ? body : body !== null && typeof body === "object" &&
      Array.isArray((body as { records?: unknown }).records)
    ? (body as { records: unknown[] }).records
    : [body];
  return list.map((r, i) => parseRecord(r, i, format));
}

/** How a stored key/value is shown: JSON when it parses, else UTF-8 text, else base64 (format=json). */
function render(v: Uint8Array | null, format: Format): unknown {
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
  if (format === "text") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function renderRecord(topic: string, partition: number, r: KafkaRecord, format: Format) {
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

function intQuery(c: Context, name: string, dflt: number, min: number, max: number): number {
  const v = c.req.query(name);
  if (v === undefined || v === "") return dflt;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name} must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`${name} must be between ${min} and ${max}`);
  return n;
}

export function recordRoutes(app: Hono, broker: Broker) {
  let spread = 0;

  app.post("/topics/:topic/records", async (c) => {
    const topic = c.req.param("topic");
    const t = broker.meta.getTopic(topic);
    if (!t) return c.json({ error_code: 40403, message: `topic ${topic} not found` }, 404);
    const acks = parseAcks(c.req.query("acks"));
    const format = parseFormat(c.req.query("format"), "json");
    const records = await parseProduceBody(c, format);
    if (records.length === 0) throw badRequest("no records in the body");
    const n = t.partitions.length;
    // Records without key or partition go to one partition per request (sticky), rotating.
    const sticky = spread++ % n;
    const byPartition = new Map<number, number[]>();
    const target = records.map((r, i) => {
      let p: number;
      if (r.partition !== undefined) {
        if (r.partition >= n) {
          throw badRequest(
            `records[${i}].partition ${r.partition} does not exist (topic has ${n})`,
          );
        }
        p = r.partition;
      } else if (r.input.key) p = partitionForKey(r.input.key, n);
      else p = sticky;
      const list = byPartition.get(p) ?? [];
      list.push(i);
      byPartition.set(p, list);
      return p;
    });
    const now = Date.now();
    const offsets = new Array<number>(records.length);
    await Promise.all([...byPartition].map(async ([p, idx]) => {
      const batch = encodeRecordBatch({
        records: idx.map((i) => records[i].input),
        baseTimestamp: now,
      });
      const res = await broker.partitions.append(topic, p, batch, acks);
      idx.forEach((i, j) => (offsets[i] = res.baseOffset + j));
    }));
    if (acks === 0) return c.json({ offsets: target.map((p) => ({ partition: p, offset: null })) });
    return c.json({ offsets: target.map((p, i) => ({ partition: p, offset: offsets[i] })) });
  });

  app.get("/topics/:topic/partitions/:partition/records", async (c) => {
    const topic = c.req.param("topic");
    const partRaw = c.req.param("partition");
    if (!/^\d+$/.test(partRaw)) throw badRequest("partition must be an integer");
    const partition = Number(partRaw);
    const st = broker.partitions.partition(topic, partition);
    const format = parseFormat(c.req.query("format"), "json");
    const limit = intQuery(c, "limit", 100, 1, 10_000);
    const maxBytes = intQuery(c, "max_bytes", 1024 * 1024, 1, 64 * 1024 * 1024);
    const maxWait = intQuery(c, "max_wait_ms", 0, 0, 300_000);
    const offsetQ = c.req.query("offset") ?? "earliest";
    const tsQ = c.req.query("timestamp");
    let offset: number;
    if (tsQ !== undefined) {
      const ts = /^\d+$/.test(tsQ) ? Number(tsQ) : Date.parse(tsQ);
      if (Number.isNaN(ts)) {
        throw badRequest("timestamp must be epoch milliseconds or an ISO-8601 time");
      }
      offset = st.log.offsetForTimestamp(ts)?.offset ??
        broker.partitions.highWatermark(topic, partition);
    } else if (offsetQ === "earliest") offset = st.log.logStartOffset();
    else if (offsetQ === "latest") offset = broker.partitions.highWatermark(topic, partition);
    else if (/^\d+$/.test(offsetQ)) offset = Number(offsetQ);
    else throw badRequest("offset must be an integer, earliest or latest");

    const ac = new AbortController();
    c.req.raw.signal?.addEventListener("abort", () => ac.abort(), { once: true });
    try {
      if (maxWait > 0 && offset >= broker.partitions.highWatermark(topic, partition)) {
        await broker.partitions.waitForData(topic, partition, offset, maxWait, ac.signal);
      }
      const out = [];
      let next = offset;
      let read = broker.partitions.read(topic, partition, offset, maxBytes);
      while (out.length < limit) {
        if (read.records.length === 0) break;
        for (
          const b of decodeRecordBatches(read.records, (codec, bytes) => decompress(codec, bytes))
        ) {
          if (!b.records) continue;
          for (const r of b.records) {
            if (r.offset < offset || out.length >= limit) continue;
            out.push(renderRecord(topic, partition, r, format));
            next = r.offset + 1;
          }
          if (out.length < limit) {
            next = Math.max(next, b.header.baseOffset + b.header.lastOffsetDelta + 1);
          }
        }
        if (out.length >= limit || read.nextOffset >= read.highWatermark) break;
        read = broker.partitions.read(topic, partition, read.nextOffset, maxBytes);
      }
      return c.json({
        records: out,
        next_offset: next,
        high_watermark: broker.partitions.highWatermark(topic, partition),
        log_start_offset: st.log.logStartOffset(),
      });
    } catch (e) {
      if (e instanceof OffsetOutOfRangeError) {
        return errorResponse(c, new HttpError(416, 41601, e.message), {
          log_start_offset: st.log.logStartOffset(),
          high_watermark: broker.partitions.highWatermark(topic, partition),
        });
      }
      throw e;
    }
  });
}
