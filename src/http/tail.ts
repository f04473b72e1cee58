// Follow a topic across all its partitions: a bounded JSON read, or with follow=true a live tail
// as server-sent events (Accept: text/event-stream) or NDJSON. The SSE event id is
// "partition:offset" of the record, followed by ",partition:next" for the other partitions, so a
// reconnect with Last-Event-ID resumes every partition exactly where the client stopped. Each
// partition is read at its leader (here or over the cluster port, partition-access.ts), so a tail
// on any broker streams records as they are written wherever the partitions are led.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import type { Metrics } from "../core/metrics.ts";
import { type HttpContext, on } from "./context.ts";
import { badRequest, type HttpError, topicNotFound } from "./errors.ts";
import { commonErrors, Format, intQuery, RecordOut, TopicParams, valid, z } from "./schemas.ts";
import { type Format as Fmt, parseFrom, recordBytes, renderRecord } from "./render.ts";
import { FORWARD_MARGIN_MS, type From, type PartitionAccess } from "./partition-access.ts";
import type { KafkaRecord } from "../protocol/record-batch.ts";
import { CorruptLogError, StorageError } from "../storage/index.ts";
import { reportDamage } from "../core/damage-log.ts";

const TailQuery = z.object({
  from: z.string().max(64).optional().openapi({
    description:
      "earliest, latest (default), an offset (every partition) or a time (epoch ms or ISO-8601)",
  }),
  follow: z.enum(["true", "false"]).optional().openapi({
    description: "keep the response open and stream new records (SSE or NDJSON)",
  }),
  limit: intQuery(1, 10_000, "without follow: at most this many records (default 100)"),
  heartbeat_ms: intQuery(100, 60_000, "idle heartbeat interval of a stream (default 15000)"),
  format: Format,
});

/** Records per partition per round: keeps partitions interleaved fairly. */
const ROUND_RECORDS = 500;
const ROUND_BYTES = 1024 * 1024;
/** Bytes of log per leader per round. */
const CALL_BYTES = 8 * 1024 * 1024;

/** Parse "p:o,q:n": the first pair is a delivered record (resume after it), the rest next offsets. */
export function parseEventId(id: string): Map<number, number> | undefined {
  const out = new Map<number, number>();
  const pairs = id.split(",");
  if (pairs.length > 100_000) return undefined;
  for (let i = 0; i < pairs.length; i++) {
    const m = /^(\d{1,9}):(\d{1,16})$/.exec(pairs[i].trim());
    if (!m) return undefined;
    out.set(Number(m[1]), Number(m[2]) + (i === 0 ? 1 : 0));
  }
  return out;
}

type Part = { partition: number; records: KafkaRecord[] };

class Cursor {
  /** Each partition's next position, once resolved. */
  readonly next = new Map<number, number>();
  /** Partitions whose start is not resolved yet (new ones, or a leader that did not answer). */
  readonly #unresolved = new Map<number, From>();
  /** The partitions that existed when the read started have their positions. */
  #started = false;
  #rotate = 0;
  /** Waits on partitions where nothing arrived go on across rounds (see ReadOptions.waits). */
  readonly #waits = new Map<string, Promise<unknown>>();
  constructor(
    readonly broker: Broker,
    readonly access: PartitionAccess,
    readonly topic: string,
    readonly from: From,
    resume: Map<number, number> | undefined,
  ) {
    this.refresh();
    for (const [p, o] of resume ?? []) {
      if (this.#unresolved.delete(p)) this.next.set(p, o);
    }
  }

  /** Pick up partitions added since the last round (they start at the `from` position). */
  refresh(): boolean {
    const t = this.broker.meta.getTopic(this.topic);
    if (!t) return false;
    for (const p of t.partitions) {
      if (this.next.has(p.partition) || this.#unresolved.has(p.partition)) continue;
      // A partition that appears while following starts at its beginning: nothing is missed.
      this.#unresolved.set(
        p.partition,
        this.#started && this.from === "latest" ? "earliest" : this.from,
      );
    }
    this.#started = true;
    return true;
  }

  /** Resolve the start of every partition (at their leaders): 503 when one has no leader. */
  async resolve(deadline: number): Promise<void> {
    if (this.#unresolved.size === 0) return;
    const ps = [...this.#unresolved.keys()];
    const found = await this.access.read(
      ps.map((p) => ({
        topic: this.topic,
        partition: p,
        from: this.#unresolved.get(p)!,
        limit: 1,
        maxBytes: 0,
      })),
      { deadline },
    );
    for (const r of found) {
      if (r.error) throw r.error;
      this.next.set(r.partition, r.offset);
      this.#unresolved.delete(r.partition);
    }
  }

  /**
   * One fair round over the partitions (wherever they are led), waiting up to `waitMs` for a
   * first record. Partitions that cannot be read this round come back as errors.
   */
  async round(
    perPartition: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<{ parts: Part[]; errors: HttpError[] }> {
    const all = [...this.next.keys(), ...this.#unresolved.keys()];
    // Rotating the order: a busy partition cannot keep the others out of a leader's byte budget.
    const start = all.length > 0 ? this.#rotate++ % all.length : 0;
    this.#rotate %= 1 << 30;
    const order = [...all.slice(start), ...all.slice(0, start)];
    const results = await this.access.read(
      order.map((p) => ({
        topic: this.topic,
        partition: p,
        from: this.next.get(p) ?? this.#unresolved.get(p)!,
        limit: perPartition,
        maxBytes: ROUND_BYTES,
      })),
      {
        waitMs,
        maxBytes: CALL_BYTES,
        deadline: performance.now() + waitMs + FORWARD_MARGIN_MS,
        signal,
        waits: this.#waits,
      },
    );
    const parts: Part[] = [];
    const errors: HttpError[] = [];
    for (const r of results) {
      const p = r.partition;
      if (r.outOfRange) {
        // Retention moved the log start past us: continue from the new start.
        const { logStartOffset: lso, highWatermark: hw } = r.outOfRange;
        const at = this.next.get(p);
        if (at !== undefined && lso >= 0) this.next.set(p, Math.max(lso, Math.min(at, hw)));
        continue;
      }
      if (r.error) {
        errors.push(r.error);
        continue;
      }
      if (r.offset < 0) continue;
      this.#unresolved.delete(p);
      this.next.set(p, r.next);
      if (r.records.length > 0) parts.push({ partition: p, records: r.records });
    }
    return { parts, errors };
  }

  /** The SSE id after delivering `offset` of `partition`, given what else was delivered. */
  static idFor(delivered: Map<number, number>, partition: number, offset: number): string {
    let id = `${partition}:${offset}`;
    for (const [p, o] of delivered) if (p !== partition) id += `,${p}:${o}`;
    return id;
  }
}

function liveStream(
  cursor: Cursor,
  sse: boolean,
  format: Fmt,
  heartbeatMs: number,
  reqSignal: AbortSignal | undefined,
  metrics: Metrics,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const ac = new AbortController();
  reqSignal?.addEventListener("abort", () => ac.abort(), { once: true });
  let lastSent = Date.now();
  // Positions delivered to the client (cursor.next runs ahead within a chunk).
  const delivered = new Map(cursor.next);
  /** The last chunk of a stream that cannot go on: an error event (or line), then the end. */
  const end = (
    ctrl: ReadableStreamDefaultController<Uint8Array>,
    code: number,
    message: string,
  ) => {
    const msg = JSON.stringify({ error_code: code, message });
    ctrl.enqueue(enc.encode(sse ? `event: error\ndata: ${msg}\n\n` : msg + "\n"));
    ctrl.close();
  };
  return new ReadableStream<Uint8Array>({
    start(ctrl) {
      // Opens the stream at once (curl -N shows the connection is live before any record; an
      // empty chunk would not send the headers, so NDJSON starts with its heartbeat line).
      ctrl.enqueue(enc.encode(sse ? ": connected\nretry: 1000\n\n" : "\n"));
    },
    async pull(ctrl) {
      // Each pull yields one chunk: a batch of records, a heartbeat, or the end.
      for (let guard = 0; guard < 1_000_000 && !ac.signal.aborted; guard++) {
        if (!cursor.refresh()) {
          end(ctrl, 40403, `topic ${cursor.topic} was deleted`);
          return;
        }
        for (const [p, o] of cursor.next) if (!delivered.has(p)) delivered.set(p, o);
        const idle = Date.now() - lastSent;
        let got;
        try {
          got = await cursor.round(ROUND_RECORDS, Math.max(0, heartbeatMs - idle), ac.signal);
        } catch (e) {
          if (e instanceof StorageError) {
            if (e instanceof CorruptLogError) {
              reportDamage(cursor.broker.log, e, { via: `live tail of ${cursor.topic}` });
            }
            end(ctrl, 50056, e.message);
            return;
          }
          // The topic or a partition vanished mid-round: the refresh above reports it next time.
          await Bun.sleep(100);
          continue;
        }
        // Damaged or unreadable log bytes: retrying at once would spin on them. Tell the client
        // and end the stream (the broker has logged it; a reconnect retries). Other failures (a
        // leader moving or unreachable) are retried: the stream goes on with the other partitions.
        const fatal = got.errors.find((e) => e.status === 500 || e.status === 507);
        if (fatal) {
          end(ctrl, fatal.errorCode, fatal.message);
          return;
        }
        if (got.parts.length > 0) {
          let text = "";
          for (const { partition, records } of got.parts) {
            let bytes = 0;
            for (const r of records) {
              const json = JSON.stringify(renderRecord(cursor.topic, partition, r, format));
              bytes += recordBytes(r);
              delivered.set(partition, r.offset + 1);
              if (sse) {
                const id = Cursor.idFor(delivered, partition, r.offset);
                text += `id: ${id}\nevent: record\ndata: ${json}\n\n`;
              } else text += json + "\n";
            }
            metrics.consumed(cursor.topic, records.length, bytes);
          }
          ctrl.enqueue(enc.encode(text));
          lastSent = Date.now();
          return;
        }
        const left = heartbeatMs - (Date.now() - lastSent);
        if (left <= 0) {
          ctrl.enqueue(enc.encode(sse ? `: heartbeat ${Date.now()}\n\n` : "\n"));
          lastSent = Date.now();
          return;
        }
        // Partitions that could not be read answer at once: do not spin on them.
        if (got.errors.length > 0 && !ac.signal.aborted) await Bun.sleep(Math.min(500, left));
      }
      ctrl.close();
    },
    cancel() {
      ac.abort();
    },
  });
}

export function tailRoutes(app: OpenAPIHono, { broker, metrics, closing, access }: HttpContext) {
  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}/records",
      tags: ["records"],
      summary: "Read or follow a topic across all partitions (SSE or NDJSON with follow=true)",
      request: {
        params: TopicParams,
        query: TailQuery,
        headers: z.object({
          "last-event-id": z.string().max(2_000_000).optional().openapi({
            description: 'resume a stream: "partition:offset[,partition:next…]" from an SSE id',
          }),
        }),
      },
      responses: {
        200: {
          description: "records (JSON), or a live stream",
          content: {
            "application/json": {
              schema: z.object({
                records: z.array(RecordOut),
                next_offsets: z.record(z.string(), z.number().int()),
              }),
            },
            "text/event-stream": { schema: z.string() },
            "application/x-ndjson": { schema: z.string() },
          },
        },
        ...commonErrors,
      },
    }),
    async (c) => {
      const { topic } = valid(c, "param", TopicParams);
      const q = valid(c, "query", TailQuery);
      const t = broker.meta.getTopic(topic);
      if (!t) throw topicNotFound(topic);
      const lastId = c.req.header("last-event-id");
      let resume: Map<number, number> | undefined;
      if (lastId !== undefined && lastId !== "") {
        resume = parseEventId(lastId);
        if (!resume) {
          throw badRequest('Last-Event-ID must be "partition:offset[,partition:offset…]"');
        }
      }
      const format = q.format ?? "json";
      const accept = (c.req.header("accept") ?? "").toLowerCase();
      const sse = accept.includes("text/event-stream");
      const follow = q.follow === "true" || sse;
      const from = parseFrom(q.from ?? (follow ? "latest" : "earliest"));
      if (from === undefined) {
        throw badRequest("from must be earliest, latest, an offset or a time");
      }
      const cursor = new Cursor(broker, access, topic, from, resume);
      // Every partition's start, at its leader (503 while one has no leader).
      await cursor.resolve(performance.now() + FORWARD_MARGIN_MS);
      if (!follow) {
        const limit = q.limit ?? 100;
        const records = [];
        for (let i = 0; i < 100 && records.length < limit; i++) {
          const { parts, errors } = await cursor.round(
            Math.min(ROUND_RECORDS, limit - records.length),
            0,
          );
          // Part of the topic would look like all of it: fail rather than answer with less.
          if (errors.length > 0) throw errors[0];
          if (parts.length === 0) break;
          for (const { partition, records: rs } of parts) {
            for (const r of rs) records.push(renderRecord(topic, partition, r, format));
          }
        }
        // A round may overshoot the limit: rewind the partitions whose records were cut.
        for (const r of records.slice(limit).reverse()) cursor.next.set(r.partition, r.offset);
        return c.json({
          records: records.slice(0, limit),
          next_offsets: Object.fromEntries([...cursor.next].map(([p, o]) => [String(p), o])),
        });
      }
      const body = liveStream(
        cursor,
        sse,
        format,
        q.heartbeat_ms ?? 15_000,
        // The stream ends cleanly when the client leaves or the broker shuts down.
        AbortSignal.any([c.req.raw.signal, closing]),
        metrics,
      );
      return new Response(body, {
        headers: {
          "content-type": sse ? "text/event-stream; charset=utf-8" : "application/x-ndjson",
          "cache-control": "no-cache",
          "x-accel-buffering": "no",
        },
      });
    },
  );
}
