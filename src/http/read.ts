// Read one partition without a group: from an offset, a time, earliest or latest, with count and
// byte limits and a long-poll woken by appends.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { type HttpContext, on } from "./app.ts";
import { badRequest, HttpError } from "./errors.ts";
import {
  commonErrors,
  ErrorSchema,
  Format,
  intQuery,
  jsonOk,
  PartitionParams,
  RecordOut,
  valid,
  z,
} from "./schemas.ts";
import { collect, hostedPartition, offsetForTime, recordBytes, renderRecord } from "./render.ts";
import { OffsetOutOfRangeError } from "../storage/index.ts";

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
});

const ReadResponse = z.object({
  records: z.array(RecordOut),
  next_offset: z.number().int(),
  high_watermark: z.number().int(),
  log_start_offset: z.number().int(),
}).openapi("ReadResult");

/** Abort the wait when the client goes away, so parked long-polls do not pile up. */
/** Aborted when the client goes away or the broker shuts down (a long-poll then answers). */
export function clientSignal(req: Request, closing: AbortSignal): AbortSignal {
  const ac = new AbortController();
  req.signal?.addEventListener("abort", () => ac.abort(), { once: true });
  if (closing.aborted) ac.abort();
  else closing.addEventListener("abort", () => ac.abort(), { once: true });
  return ac.signal;
}

export function readRoutes(app: OpenAPIHono, { broker, metrics, closing }: HttpContext) {
  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}/partitions/{partition}/records",
      tags: ["records"],
      summary: "Read a partition from an offset or a time (no group)",
      request: { params: PartitionParams, query: ReadQuery },
      responses: {
        200: jsonOk(ReadResponse, "records and the next offset"),
        ...commonErrors,
        416: {
          description: "offset outside the log; gives log_start_offset and high_watermark",
          content: { "application/json": { schema: ErrorSchema } },
        },
      },
    }),
    async (c) => {
      const { topic, partition: pRaw } = valid(c, "param", PartitionParams);
      const q = valid(c, "query", ReadQuery);
      const partition = Number(pRaw);
      const st = hostedPartition(broker, topic, partition);
      const format = q.format ?? "json";
      const limit = q.limit ?? 100;
      const maxBytes = q.max_bytes ?? 1024 * 1024;
      let offset: number;
      if (q.timestamp !== undefined) {
        const ts = /^\d+$/.test(q.timestamp) ? Number(q.timestamp) : Date.parse(q.timestamp);
        if (Number.isNaN(ts)) {
          throw badRequest("timestamp must be epoch milliseconds or an ISO-8601 time");
        }
        offset = offsetForTime(broker, topic, partition, ts);
      } else if ((q.offset ?? "earliest") === "earliest") offset = st.log.logStartOffset();
      else if (q.offset === "latest") offset = broker.partitions.highWatermark(topic, partition);
      else offset = Number(q.offset);
      const range = () => ({
        log_start_offset: st.log.logStartOffset(),
        high_watermark: broker.partitions.highWatermark(topic, partition),
      });
      try {
        const waitMs = q.max_wait_ms ?? 0;
        if (waitMs > 0 && offset >= broker.partitions.highWatermark(topic, partition)) {
          await broker.partitions.waitForData(
            topic,
            partition,
            offset,
            waitMs,
            clientSignal(c.req.raw, closing),
          );
        }
        const got = collect(broker, topic, partition, offset, limit, maxBytes);
        metrics.consumed(
          topic,
          got.records.length,
          got.records.reduce((n, r) => n + recordBytes(r), 0),
        );
        return c.json({
          records: got.records.map((r) => renderRecord(topic, partition, r, format)),
          next_offset: got.next,
          ...range(),
        });
      } catch (e) {
        if (e instanceof OffsetOutOfRangeError) {
          const r = range();
          throw new HttpError(
            416,
            41601,
            `offset ${offset} is outside the log [${r.log_start_offset}, ${r.high_watermark}]`,
            1,
            r,
          );
        }
        throw e;
      }
    },
  );
}
