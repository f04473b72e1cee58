// Read one partition without a group: from an offset, a time, earliest or latest, with count and
// byte limits and a long-poll woken by appends; at the partition's leader, here or over the
// cluster port (partition-access.ts).
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { type HttpContext, on } from "./context.ts";
import { badRequest } from "./errors.ts";
import {
  commonErrors,
  err,
  Format,
  intQuery,
  jsonOk,
  PartitionParams,
  RecordOut,
  valid,
  z,
} from "./schemas.ts";
import { existingPartition, recordBytes, renderRecord } from "./render.ts";
import { FORWARD_MARGIN_MS, type From, outsideLog } from "./partition-access.ts";
import { BATCH_HEADER_SIZE, batchSizeAt, readBatchHeader } from "../protocol/record-batch.ts";

export const MAX_WAIT_MS = 300_000;

const ReadQuery = z.object({
  offset: z.string().regex(/^(earliest|latest|\d{1,16})$/, "must be an integer, earliest or latest")
    .optional().openapi({ description: "start offset, earliest (default) or latest" }),
  timestamp: z.string().max(64).optional().openapi({
    description: "start at the first record at or after this time (epoch ms or ISO-8601)",
  }),
  limit: intQuery(1, 10_000, "at most this many records (default 100)"),
  max_bytes: intQuery(1, 64 * 1024 * 1024, "about this many bytes of log (default 1 MiB)"),
  max_wait_ms: intQuery(0, MAX_WAIT_MS, "wait this long for a first record (default 0)"),
  format: Format,
  replica: z.enum(["leader", "local"]).optional().openapi({
    description: "leader (default): the partition's leader, wherever it is; local: this " +
      "broker's own copy (a follower's, up to its high watermark), for checking replicas",
  }),
});

const ReadResponse = z.object({
  records: z.array(RecordOut),
  next_offset: z.number().int(),
  high_watermark: z.number().int(),
  log_start_offset: z.number().int(),
}).openapi("ReadResult");

/** Aborted when the client goes away or the broker shuts down (a long-poll then answers). */
export function clientSignal(req: Request, closing: AbortSignal): AbortSignal {
  const ac = new AbortController();
  req.signal?.addEventListener("abort", () => ac.abort(), { once: true });
  if (closing.aborted) ac.abort();
  else closing.addEventListener("abort", () => ac.abort(), { once: true });
  return ac.signal;
}

const BatchQuery = z.object({
  offset: z.string().regex(/^\d{1,16}$/, "must be an offset").openapi({
    description: "the batch holding this offset comes first",
    example: "0",
  }),
  max_bytes: intQuery(
    1,
    16 * 1024 * 1024,
    "about this many bytes of whole batches (default 1 MiB)",
  ),
});

/** Bytes per write of a large body. */
const CHUNK = 1 << 20;

/**
 * A body written in 1 MiB pieces: Bun sends one large typed array at several times the CPU
 * (about 40 ms per 8 MiB, measured; the whole of `broker consume`'s cost at the broker).
 */
function chunked(body: Uint8Array): Uint8Array | ReadableStream<Uint8Array> {
  if (body.length <= CHUNK) return body;
  return new ReadableStream({
    type: "direct",
    pull(c) {
      for (let at = 0; at < body.length; at += CHUNK) c.write(body.subarray(at, at + CHUNK));
      c.close();
    },
  });
}

export function readRoutes(app: OpenAPIHono, { broker, metrics, closing, access }: HttpContext) {
  // Log bytes as stored: whole RecordBatch v2 batches for clients that decode them (`broker
  // consume`), with none of the per-record work of the JSON route. Any broker answers: one that
  // does not lead the partition passes the leader's bytes on as they are (partition-access.ts).
  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}/partitions/{partition}/batches",
      tags: ["records"],
      summary:
        "Read a partition's record batches as stored (Kafka RecordBatch v2), wherever it is led",
      request: { params: PartitionParams, query: BatchQuery },
      responses: {
        200: {
          description: "whole batches up to the high watermark (empty at the end); headers " +
            "X-High-Watermark, X-Log-Start-Offset, X-Next-Offset",
          content: { "application/vnd.kafka.record-batch": { schema: z.string() } },
        },
        ...commonErrors,
        416: err("offset outside the log"),
      },
    }),
    async (c) => {
      const { topic, partition: pRaw } = valid(c, "param", PartitionParams);
      const q = valid(c, "query", BatchQuery);
      const partition = Number(pRaw);
      existingPartition(broker, topic, partition);
      const r = await access.batches(
        topic,
        partition,
        Number(q.offset),
        q.max_bytes ?? 1024 * 1024,
        performance.now() + FORWARD_MARGIN_MS,
      );
      let records = 0;
      for (let pos = 0; pos + BATCH_HEADER_SIZE <= r.bytes.length;) {
        const size = batchSizeAt(r.bytes, pos);
        if (size < BATCH_HEADER_SIZE) break;
        records += readBatchHeader(r.bytes, pos).lastOffsetDelta + 1;
        pos += size;
      }
      metrics.consumed(topic, records, r.bytes.length);
      return new Response(chunked(r.bytes), {
        headers: {
          "content-type": "application/vnd.kafka.record-batch",
          "x-high-watermark": String(r.highWatermark),
          "x-log-start-offset": String(r.logStartOffset),
          "x-next-offset": String(r.next),
        },
      });
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}/partitions/{partition}/records",
      tags: ["records"],
      summary: "Read a partition from an offset or a time (no group), wherever it is led",
      request: { params: PartitionParams, query: ReadQuery },
      responses: {
        200: jsonOk(ReadResponse, "records and the next offset"),
        ...commonErrors,
        416: err("offset outside the log; gives log_start_offset and high_watermark"),
      },
    }),
    async (c) => {
      const { topic, partition: pRaw } = valid(c, "param", PartitionParams);
      const q = valid(c, "query", ReadQuery);
      const partition = Number(pRaw);
      existingPartition(broker, topic, partition);
      const format = q.format ?? "json";
      let from: From;
      if (q.timestamp !== undefined) {
        const ts = /^\d+$/.test(q.timestamp) ? Number(q.timestamp) : Date.parse(q.timestamp);
        if (Number.isNaN(ts) || ts < 0) {
          throw badRequest("timestamp must be epoch milliseconds or an ISO-8601 time");
        }
        from = { timestamp: ts };
      } else if ((q.offset ?? "earliest") === "earliest") from = "earliest";
      else if (q.offset === "latest") from = "latest";
      else from = Number(q.offset);
      const waitMs = q.max_wait_ms ?? 0;
      const [got] = await access.read([{
        topic,
        partition,
        from,
        limit: q.limit ?? 100,
        maxBytes: q.max_bytes ?? 1024 * 1024,
      }], {
        waitMs,
        deadline: performance.now() + waitMs + FORWARD_MARGIN_MS,
        signal: clientSignal(c.req.raw, closing),
        replica: q.replica,
      });
      if (got.outOfRange) {
        const r = got.outOfRange;
        throw outsideLog(got.offset, r.logStartOffset, r.highWatermark);
      }
      if (got.error) throw got.error;
      metrics.consumed(
        topic,
        got.records.length,
        got.records.reduce((n, r) => n + recordBytes(r), 0),
      );
      return c.json({
        records: got.records.map((r) => renderRecord(topic, partition, r, format)),
        next_offset: got.next,
        high_watermark: got.highWatermark,
        log_start_offset: got.logStartOffset,
      });
    },
  );
}
