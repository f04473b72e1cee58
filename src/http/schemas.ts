// Shared zod schemas and helpers for route definitions: the same objects validate requests and
// describe them in /openapi.json.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { LogDamage } from "../storage/index.ts";

export { z };

export const ErrorSchema = z.object({
  error_code: z.number().int().openapi({ example: 40403 }),
  message: z.string().openapi({ example: "Topic 'orders' does not exist." }),
  kafka_error_code: z.number().int().optional(),
}).passthrough().openapi("Error");

/** An error response of a route, as /openapi.json describes it. */
export const err = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorSchema } },
});

/** Error responses every route may give. */
export const commonErrors = {
  400: err("bad input"),
  401: err("missing or wrong bearer token (with --http-token)"),
  403: err("refused by the ACLs (with --authorizer acl)"),
  404: err("unknown topic, partition or group"),
  503: err("not ready"),
};

export const jsonOk = <T extends z.ZodType>(schema: T, description = "OK") => ({
  description,
  content: { "application/json": { schema } },
});

export const TopicName = z.string().min(1).max(249).openapi({
  param: { name: "topic", in: "path" },
  example: "orders",
});
export const TopicParams = z.object({ topic: TopicName });

export const PartitionParams = z.object({
  topic: TopicName,
  partition: z.string().regex(/^\d{1,9}$/, "partition must be an integer ≥ 0").openapi({
    param: { name: "partition", in: "path" },
    example: "0",
  }),
});

export const GroupParams = z.object({
  group: z.string().min(1).max(255).openapi({
    param: { name: "group", in: "path" },
    example: "g1",
  }),
});

/** An integer query parameter within bounds ("" counts as absent). */
export const intQuery = (min: number, max: number, description: string) =>
  z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.string().regex(/^-?\d{1,16}$/, "must be an integer").transform(Number).pipe(
      z.number().int().min(min).max(max),
    ).optional(),
  ).openapi({ type: "integer", description });

export const Format = z.enum(["json", "text", "base64"]).optional().openapi({
  description:
    "how keys and values are shown: json (parsed JSON when it parses, else text), text (UTF-8), base64",
});

export const RecordOut = z.object({
  topic: z.string(),
  partition: z.number().int(),
  offset: z.number().int(),
  timestamp: z.number().int(),
  key: z.unknown(),
  value: z.unknown(),
  headers: z.array(z.object({ key: z.string(), value: z.unknown() })),
}).openapi("Record");

export const PartitionDamage = z.object({
  state: z.enum(["quarantined", "unreadable"]).openapi({
    description: "quarantined: recovery moved damaged acknowledged records aside and the " +
      "partition refuses writes until repaired (its offsets are not reused); unreadable: a read " +
      "met damaged bytes in place (the records around them are served, writes go on)",
  }),
  from_offset: z.number().int().openapi({ description: "first offset affected" }),
  to_offset: z.number().int().nullable().openapi({
    description: "end (exclusive) of the offsets affected; null when unknown",
  }),
  files: z.array(z.string()).openapi({
    description: "quarantine folders or the damaged segment, relative to the data dir",
  }),
  reason: z.string(),
}).openapi("PartitionDamage");

/** A log's damage as the HTTP API shows it. */
export function damageView(d: LogDamage): z.output<typeof PartitionDamage> {
  return {
    state: d.state,
    from_offset: d.fromOffset,
    to_offset: d.toOffset,
    files: d.files,
    reason: d.reason,
  };
}

/** The validated part of a request (typed by the schema the route was declared with). */
export function valid<S extends z.ZodType>(
  c: Context,
  target: "query" | "param" | "json",
  _schema: S,
): z.output<S> {
  return (c.req.valid as (t: string) => unknown)(target) as z.output<S>;
}
