// broker consume TOPIC: read a topic (or follow it, or consume as a group member), like kcat -C.
// Any broker serves any partition (it reads at the leader over the cluster port), so reads go to
// the broker the CLI talks to; when that one stops, the client moves to another broker and a
// follow resumes where it was (Last-Event-ID). Output is buffered and the next page is fetched
// while the current one is printed.
import { ApiClient, CliError, enc, UsageError } from "./client.ts";
import { type Command, intFlag, need } from "./command.ts";
import { Output } from "./output.ts";
import { Progress } from "./progress.ts";
import { batchesEnd, byteTemplate, printBatches } from "./print-batches.ts";
import {
  ATTR_CONTROL,
  BATCH_HEADER_SIZE,
  batchSizeAt,
  decodeRecordBatch,
} from "../protocol/record-batch.ts";
import { decompress } from "../protocol/compression/index.ts";
import { isatty } from "node:tty";

interface Rec {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
}

const FIELDS = /\{(topic|partition|offset|timestamp|key|value|headers)\}/g;

/** The text of a record per --format (default {value}) or --json, with its newline. */
export function formatter(template: string | undefined, asJson: boolean): (r: Rec) => string {
  if (asJson) return (r) => JSON.stringify(r) + "\n";
  const t = (template ?? "{value}").replaceAll("\\n", "\n").replaceAll("\\t", "\t");
  if (t === "{value}") return (r) => (r.value ?? "") + "\n";
  // Split once into literal text and field names; each record only fills them in.
  const pieces = t.split(FIELDS);
  return (r) => {
    let s = "";
    for (let i = 0; i < pieces.length; i++) {
      if (i % 2 === 0) s += pieces[i];
      else if (pieces[i] === "headers") {
        s += r.headers.map((h) => `${h.key}=${h.value ?? ""}`).join(",");
      } else {
        const v = r[pieces[i] as keyof Rec];
        s += v === null ? "" : String(v);
      }
    }
    return s + "\n";
  };
}

interface Page {
  records: Rec[];
  next_offset: number;
  high_watermark: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A key or value as the JSON route's format=text shows it: UTF-8 text, else base64. */
function text(v: Uint8Array | null): string | null {
  if (v === null) return null;
  try {
    return utf8.decode(v);
  } catch {
    return Buffer.from(v).toString("base64");
  }
}

/**
 * The records of whole batches at or after `from` (control batches skipped), shown as the JSON
 * route shows them, and where the next read starts.
 */
export function decodeBatches(
  buf: Uint8Array,
  topic: string,
  partition: number,
  from: number,
): { records: Rec[]; next: number } {
  const records: Rec[] = [];
  let next = from;
  for (let pos = 0; pos + BATCH_HEADER_SIZE <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
    const b = decodeRecordBatch(buf, pos, decompress);
    pos += size;
    next = Math.max(next, b.header.baseOffset + b.header.lastOffsetDelta + 1);
    if ((b.header.attributes & ATTR_CONTROL) !== 0 || !b.records) continue;
    for (const r of b.records) {
      if (r.offset < from) continue;
      records.push({
        topic,
        partition,
        offset: r.offset,
        timestamp: r.timestamp,
        key: text(r.key),
        value: text(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: text(h.value) })),
      });
    }
  }
  return { records, next };
}

/**
 * Bytes of stored batches per request: at 1 MiB the response has a length the client allocates
 * once and memory the allocator reuses; 8 MiB pages cost twice the page faults (measured).
 */
const BATCH_BYTES = 1 << 20;

/** How read records reach the output: decoded (JSON pages) or as stored batches. */
interface Sink {
  recs(recs: Rec[]): Promise<void>;
  /** Prints the records at or after `from` (at most `max`) of whole batches; how many. */
  batches(buf: Uint8Array, partition: number, from: number, max: number): Promise<number>;
}

type Fetched =
  | { json: Page }
  | { buf: Uint8Array; offset: number; high: number };

/**
 * Records of one partition from `from` up to the high watermark as it was when read. The first
 * page comes from the JSON route (it resolves earliest, latest and times); the rest as stored
 * batches, printed from their bytes (a tenth of the work: nothing is rendered and parsed as
 * JSON, and no record objects are made), or, where that route is refused, JSON pages.
 */
async function readPartition(
  client: ApiClient,
  topic: string,
  partition: number,
  from: string,
  max: number,
  sink: Sink,
): Promise<number> {
  let n = 0;
  let batches = true;
  const base = `/topics/${enc(topic)}/partitions/${partition}`;
  const jsonPage = async (q: string, limit: number): Promise<Fetched> => ({
    json: await client.call<Page>(
      "GET",
      `${base}/records?${q}&format=text&limit=${limit}&max_bytes=8388608`,
      undefined,
      { retry: true },
    ),
  });
  const page = async (offset: number, hw: number, limit: number): Promise<Fetched> => {
    if (batches) {
      const res = await client.raw(
        "GET",
        `${base}/batches?offset=${offset}&max_bytes=${BATCH_BYTES}`,
        {},
        { retry: true },
      );
      if (res.ok) {
        const buf = new Uint8Array(await res.arrayBuffer());
        return { buf, offset, high: Number(res.headers.get("x-high-watermark") ?? hw) };
      }
      await res.arrayBuffer().catch(() => {});
      batches = false;
    }
    return await jsonPage(`offset=${offset}`, limit);
  };
  let next: Promise<Fetched> | undefined = jsonPage(
    isTime(from) ? `timestamp=${enc(from)}` : `offset=${from}`,
    // Small: it only has to resolve the start (stored batches follow, where served).
    Math.min(500, max),
  );
  // Bounded: each page returns records or moves on (past control batches) or reaches the high
  // watermark.
  let prev = -1;
  for (let round = 0; round < 10_000_000 && next !== undefined; round++) {
    const f: Fetched = await next;
    const nextOffset: number = "json" in f ? f.json.next_offset : batchesEnd(f.buf, f.offset);
    const high: number = "json" in f ? f.json.high_watermark : f.high;
    const pending: number = "json" in f ? Math.min(f.json.records.length, max - n) : 0;
    // The next page is on its way while this one is printed (dropped if --count is reached).
    next = nextOffset >= high || nextOffset <= prev || n + pending >= max
      ? undefined
      : page(nextOffset, high, Math.min(10_000, max - n - pending));
    next?.catch(() => {});
    prev = nextOffset;
    if ("json" in f) {
      const take = f.json.records.slice(0, max - n);
      n += take.length;
      await sink.recs(take);
    } else n += await sink.batches(f.buf, partition, f.offset, max - n);
    if (n >= max) break;
  }
  return n;
}

/** An offset has at most 12 digits; 13 and more are epoch milliseconds (as in reset-offsets). */
function isTime(from: string): boolean {
  return from !== "earliest" && from !== "latest" && !/^\d{1,12}$/.test(from);
}

/** The `from` the topic stream takes: an epoch-ms time becomes ISO-8601 (digits are offsets there). */
function streamFrom(from: string): string {
  if (/^\d{13,}$/.test(from)) {
    const d = new Date(Number(from));
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  return from;
}

/**
 * The live tail (NDJSON). A broken stream (the broker stopped) is resumed on another broker
 * from the positions delivered so far: Last-Event-ID "p:last,q:next,…".
 */
async function follow(
  client: ApiClient,
  topic: string,
  from: string,
  partition: number | undefined,
  max: number,
  emit: (recs: Rec[]) => Promise<void>,
): Promise<void> {
  await client.discover();
  const delivered = new Map<number, number>(); // partition -> last offset printed
  let n = 0;
  for (let attempt = 0; n < max; attempt++) {
    const resume = [...delivered];
    const headers: Record<string, string> = { accept: "application/x-ndjson" };
    if (resume.length > 0) {
      headers["last-event-id"] = resume.map(([p, o], i) => `${p}:${i === 0 ? o : o + 1}`)
        .join(",");
    }
    let res: Response;
    try {
      res = await client.raw(
        "GET",
        `/topics/${enc(topic)}/records?follow=true&from=${
          enc(streamFrom(from))
        }&format=text&heartbeat_ms=5000`,
        { headers },
        { retry: true, timeoutMs: null },
      );
    } catch (e) {
      throw e instanceof CliError ? e : new CliError((e as Error).message);
    }
    if (!res.ok || !res.body) await client.answer(res); // throws with the server's message
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk, { stream: true });
        const recs: Rec[] = [];
        let nl;
        let start = 0;
        while ((nl = buf.indexOf("\n", start)) >= 0 && n + recs.length < max) {
          const line = buf.slice(start, nl);
          start = nl + 1;
          if (line.trim() === "") continue; // heartbeat
          const r = JSON.parse(line) as Rec & { error_code?: number; message?: string };
          if (r.error_code !== undefined) throw new CliError(r.message ?? "stream ended");
          delivered.set(r.partition, r.offset);
          if (partition !== undefined && r.partition !== partition) continue;
          recs.push(r);
        }
        buf = buf.slice(start);
        n += recs.length;
        if (recs.length > 0) await emit(recs);
        if (n >= max) return;
      }
    } catch (e) {
      if (e instanceof CliError) throw e;
      // The connection broke: resume below.
    }
    // The stream ended without an error line: the broker went away. Resume on any broker.
    client.next();
    await Bun.sleep(Math.min(100 * 2 ** Math.min(attempt, 4), 2000));
  }
}

async function consumeGroup(
  client: ApiClient,
  group: string,
  topic: string,
  from: string,
  keepGoing: boolean,
  max: number,
  emit: (recs: Rec[]) => Promise<void>,
): Promise<void> {
  await client.discover();
  const join = (memberId?: string) =>
    client.call<{ member_id: string; generation_id: number }>(
      "POST",
      `/groups/${enc(group)}/members`,
      { topics: [topic], member_id: memberId, client_id: "broker-cli" },
      { retry: true },
    );
  let m = await join();
  let stopping = false;
  const leave = () => {
    stopping = true;
  };
  process.once("SIGINT", leave);
  process.once("SIGTERM", leave);
  let n = 0;
  const reset = from === "latest" ? "latest" : "earliest";
  try {
    for (let round = 0; round < Number.MAX_SAFE_INTEGER && !stopping && n < max; round++) {
      let r;
      try {
        r = await client.call<{ records: Rec[]; cursor: string }>(
          "GET",
          `/groups/${enc(group)}/records?member_id=${
            enc(m.member_id)
          }&generation_id=${m.generation_id}&max_wait_ms=${
            keepGoing ? 2000 : 500
          }&format=text&reset=${reset}&limit=${Math.min(10_000, max - n)}`,
          undefined,
          { retry: true },
        );
      } catch (e) {
        // The group rebalanced (a member came or went): rejoin as the same member.
        if (/^409|^404/.test((e as Error).message)) {
          m = await join(m.member_id);
          continue;
        }
        throw e;
      }
      n += r.records.length;
      if (r.records.length > 0) {
        await emit(r.records);
        await client.call("POST", `/groups/${enc(group)}/offsets`, {
          member_id: m.member_id,
          generation_id: m.generation_id,
          cursor: r.cursor,
        }, { retry: true }).catch(
          () => {/* a rebalance: the next fetch rejoins; records may repeat */},
        );
      } else if (!keepGoing) break;
    }
  } finally {
    await client.call("DELETE", `/groups/${enc(group)}/members/${enc(m.member_id)}`).catch(
      () => {},
    );
  }
}

interface TopicView {
  partitions: {
    partition: number;
    log_start_offset: number | null;
    high_watermark: number | null;
  }[];
}

/** Records a bounded read will print, when the start and the partitions' offsets tell. */
function expected(parts: TopicView["partitions"], from: string): number | undefined {
  let total = 0;
  for (const p of parts) {
    if (p.high_watermark === null || p.log_start_offset === null) return undefined;
    if (from === "earliest") total += p.high_watermark - p.log_start_offset;
    else if (from === "latest") continue;
    else if (/^\d{1,12}$/.test(from)) {
      total += Math.max(0, p.high_watermark - Math.max(Number(from), p.log_start_offset));
    } else return undefined;
  }
  return total;
}

export const consumeCommand: Command = {
  name: "consume",
  usage:
    "consume TOPIC [--from earliest|latest|OFFSET|TIME] [--partition N] [--group G] [--follow] [--format FMT] [--count N]",
  summary: "Print records of a topic (all partitions by default), like kcat -C.",
  flags: [
    "-o, --from POS       earliest (default), latest, an offset or a time (ISO-8601, or epoch ms: 13+ digits)",
    "-p, --partition N    only this partition",
    "-G, --group G        consume as a member of group G (commits as it goes)",
    "-f, --follow         keep waiting for new records (Ctrl-C stops)",
    "--format FMT         output template with {key} {value} {offset} {partition} {timestamp} {topic} {headers}",
    "-c, --count N        stop after N records",
  ],
  examples: [
    "broker consume orders",
    "broker consume orders --from latest --follow",
    "broker consume orders --format '{partition}:{offset} {key}={value}'",
    "broker consume orders --group billing --follow",
    "broker consume orders --from 2024-06-01T00:00:00Z --json",
  ],
  options: {
    from: { type: "string", short: "o" },
    partition: { type: "string", short: "p" },
    group: { type: "string", short: "G" },
    follow: { type: "boolean", short: "f" },
    format: { type: "string" },
    count: { type: "string", short: "c" },
  },
  async run(ctx) {
    const topic = need(ctx, 0, "topic", "consume");
    const from = (ctx.values.from as string | undefined) ?? "earliest";
    if (isTime(from) && Number.isNaN(/^\d+$/.test(from) ? Number(from) : Date.parse(from))) {
      throw new UsageError(
        `--from must be earliest, latest, an offset or a time (ISO-8601 or epoch ms), not ${from}`,
      );
    }
    const partition = intFlag(ctx.values.partition, "partition");
    const max = intFlag(ctx.values.count, "count") ?? Number.MAX_SAFE_INTEGER;
    if (max < 0) throw new UsageError("--count must be ≥ 0");
    const fmt = formatter(ctx.values.format as string | undefined, ctx.json);
    const bytesFmt = byteTemplate(ctx.values.format as string | undefined, ctx.json);
    const output = new Output();
    const group = ctx.values.group as string | undefined;
    const follows = ctx.values.follow === true;
    // Progress only for bounded reads: a follow or a group member waits, and the wait is not
    // progress to report.
    const progress = new Progress({
      verb: "consumed",
      // Not over the records themselves when both go to the terminal.
      // (isatty, not process.stdout: that would make a piped stdout non-blocking; output.ts)
      enabled: !follows && group === undefined && process.stderr.isTTY === true && !isatty(1),
    });
    const emit = async (recs: Rec[]) => {
      let bytes = 0;
      for (const r of recs) {
        const s = fmt(r);
        bytes += s.length;
        output.push(s);
      }
      progress.add(recs.length, bytes);
      // Followers see each batch at once; bulk reads leave it to the buffer.
      if (follows || group !== undefined) await output.flush();
      else await output.maybeFlush();
    };
    const sink: Sink = {
      recs: emit,
      async batches(buf, p, offset, limit) {
        if (bytesFmt === undefined) {
          // --json and {headers} are rendered from decoded records.
          const recs = decodeBatches(buf, topic, p, offset).records.slice(0, limit);
          await emit(recs);
          return recs.length;
        }
        const before = output.size;
        const n = printBatches(buf, topic, p, offset, limit, bytesFmt, output).records;
        progress.add(n, output.size - before);
        await output.maybeFlush();
        return n;
      },
    };
    try {
      if (max === 0) return 0;
      if (group !== undefined) {
        await consumeGroup(ctx.client, group, topic, from, follows, max, emit);
        return 0;
      }
      if (follows) {
        await follow(ctx.client, topic, from, partition, max, emit);
        return 0;
      }
      const t = await ctx.client.call<TopicView>("GET", `/topics/${enc(topic)}`);
      const parts = partition !== undefined
        ? t.partitions.filter((p) => p.partition === partition)
        : t.partitions;
      if (parts.length === 0) throw new CliError(`topic ${topic} has no partition ${partition}`);
      const total = expected(parts, from);
      if (total !== undefined) progress.totalRecords = Math.min(total, max);
      await ctx.client.discover();
      let n = 0;
      for (const p of parts) {
        n += await readPartition(ctx.client, topic, p.partition, from, max - n, sink);
        if (n >= max) break;
      }
      return 0;
    } finally {
      progress.done();
      await output.flush();
    }
  },
};
