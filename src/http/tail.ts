// Follow a topic across all its partitions: a bounded JSON read, or with follow=true a live tail
// as server-sent events (Accept: text/event-stream) or NDJSON. The SSE event id is
// "partition:offset" of the record, followed by ",partition:next" for the other partitions, so a
// reconnect with Last-Event-ID resumes every partition exactly where the client stopped.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import type { Metrics } from "../core/metrics.ts";
import { type HttpContext, on } from "./app.ts";
import { badRequest, topicNotFound } from "./errors.ts";
import { commonErrors, Format, intQuery, RecordOut, TopicParams, valid, z } from "./schemas.ts";
import {
  collect,
  type Format as Fmt,
  recordBytes,
  renderRecord,
  requireLedHere,
  resolveFrom,
} from "./render.ts";
import { CorruptLogError, OffsetOutOfRangeError, StorageError } from "../storage/index.ts";
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

class Cursor {
  readonly next = new Map<number, number>();
  /** The partitions that existed when the read started have their positions. */
  #started = false;
  constructor(
    readonly broker: Broker,
    readonly topic: string,
    readonly from: string,
    resume: Map<number, number> | undefined,
  ) {
    this.refresh();
    for (const [p, o] of resume ?? []) if (this.next.has(p)) this.next.set(p, o);
  }

  /** Pick up partitions added since the last round (they start at the `from` position). */
  refresh(): boolean {
    const t = this.broker.meta.getTopic(this.topic);
    if (!t) return false;
    requireLedHere(this.broker, this.topic, t.partitions.map((p) => p.partition));
    for (const p of t.partitions) {
      if (this.next.has(p.partition) || !this.broker.partitions.has(this.topic, p.partition)) {
        continue;
      }
      // A partition that appears while following starts at its beginning: nothing is missed.
      const from = this.#started && this.from === "latest" ? "earliest" : this.from;
      const o = resolveFrom(this.broker, this.topic, p.partition, from);
      if (o === undefined) throw badRequest("from must be earliest, latest, an offset or a time");
      this.next.set(p.partition, o);
    }
    this.#started = true;
    return true;
  }

  /** One fair round over the partitions. */
  round(
    perPartition: number,
  ): { partition: number; records: ReturnType<typeof collect>["records"] }[] {
    const out = [];
    for (const [p, offset] of this.next) {
      let got;
      try {
        got = collect(this.broker, this.topic, p, offset, perPartition, ROUND_BYTES);
      } catch (e) {
        // Retention moved the log start past us: continue from the new start.
        if (!(e instanceof OffsetOutOfRangeError)) throw e;
        const st = this.broker.partitions.partition(this.topic, p);
        this.next.set(
          p,
          Math.max(st.log.logStartOffset(), Math.min(offset, st.log.logEndOffset())),
        );
        continue;
      }
      this.next.set(p, got.next);
      if (got.records.length > 0) out.push({ partition: p, records: got.records });
    }
    return out;
  }

  /** The SSE id after delivering `offset` of `partition`, given what else was delivered. */
  static idFor(delivered: Map<number, number>, partition: number, offset: number): string {
    let id = `${partition}:${offset}`;
    for (const [p, o] of delivered) if (p !== partition) id += `,${p}:${o}`;
    return id;
  }

  /** Wait for an append on any partition, at most `ms`. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    const ac = new AbortController();
    const stop = () => ac.abort();
    signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.race(
        [...this.next].map(([p, o]) =>
          this.broker.partitions.waitForData(this.topic, p, o, ms, ac.signal).catch(() => false)
        ),
      );
    } finally {
      ac.abort();
      signal.removeEventListener("abort", stop);
    }
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
      // Opens the stream at once (curl -N shows the connection is live before any record).
      ctrl.enqueue(enc.encode(sse ? ": connected\nretry: 1000\n\n" : ""));
    },
    async pull(ctrl) {
      // Each pull yields one chunk: a batch of records, a heartbeat, or the end.
      for (let guard = 0; guard < 1_000_000 && !ac.signal.aborted; guard++) {
        if (!cursor.refresh()) {
          end(ctrl, 40403, `topic ${cursor.topic} was deleted`);
          return;
        }
        for (const [p, o] of cursor.next) if (!delivered.has(p)) delivered.set(p, o);
        let parts;
        try {
          parts = cursor.round(ROUND_RECORDS);
        } catch (e) {
          if (e instanceof StorageError) {
            if (e instanceof CorruptLogError) {
              reportDamage(cursor.broker.log, e, { via: `live tail of ${cursor.topic}` });
            }
            // Damaged or unreadable log bytes: retrying at once would spin on them. Tell the
            // client and end the stream (the broker has logged it; a reconnect retries).
            end(ctrl, 50056, e.message);
            return;
          }
          // The topic or a partition vanished mid-round: the refresh above reports it next time.
          continue;
        }
        if (parts.length > 0) {
          let text = "";
          for (const { partition, records } of parts) {
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
        const idle = Date.now() - lastSent;
        if (idle >= heartbeatMs) {
          ctrl.enqueue(enc.encode(sse ? `: heartbeat ${Date.now()}\n\n` : "\n"));
          lastSent = Date.now();
          return;
        }
        await cursor.wait(heartbeatMs - idle, ac.signal);
      }
      ctrl.close();
    },
    cancel() {
      ac.abort();
    },
  });
}

export function tailRoutes(app: OpenAPIHono, { broker, metrics, closing }: HttpContext) {
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
    (c) => {
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
      const cursor = new Cursor(broker, topic, q.from ?? (follow ? "latest" : "earliest"), resume);
      if (!follow) {
        const limit = q.limit ?? 100;
        const records = [];
        for (let i = 0; i < 100 && records.length < limit; i++) {
          const parts = cursor.round(Math.min(ROUND_RECORDS, limit - records.length));
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
