// Partition reassignment over HTTP: submit a plan (Kafka's reassignment JSON), see every move
// with its progress, change the throttle, cancel, and generate a balanced plan for given topics
// over a broker list (after a broker joined, or to empty one before decommissioning it).
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  NoControllerError,
  reassignErrorName,
  ReassignmentAdmin,
} from "../core/reassignment-admin.ts";
import { MAX_THROTTLE } from "../replication/reassign-requests.ts";
import type { ReassignResult } from "../replication/reassign-requests.ts";
import { type HttpContext, on } from "./context.ts";
import { badRequest } from "./errors.ts";
import { commonErrors, err, jsonOk, valid, z } from "./schemas.ts";

// A topic name in a query or a body (schemas.ts' TopicName is declared as the path parameter, and
// OpenAPI refuses one parameter in two locations: /openapi.json and /docs answered 500).
const TopicName = z.string().min(1).max(249).openapi({ example: "orders" });

const BrokerId = z.number().int().min(0).max(2147483647);
const Throttle = z.number().int().min(0).max(MAX_THROTTLE).openapi({
  description: "bytes/s for the adding replicas' copy, on the leader and on the follower side " +
    "(0: the brokers' --reassignment-throttle, by default none); cleared when the move completes",
});

const PlanEntry = z.object({
  topic: TopicName,
  partition: z.number().int().min(0),
  replicas: z.array(BrokerId).max(1000).nullable().openapi({
    description: "the new replica set, first = preferred leader; null cancels this partition",
  }),
});

const Plan = z.object({
  version: z.literal(1).optional(),
  partitions: z.array(PlanEntry).max(100_000),
  throttle: Throttle.optional(),
  allow_replication_factor_change: z.boolean().optional().openapi({
    description: "false: a target whose size differs from the partition's replication factor " +
      "is refused with INVALID_REPLICATION_FACTOR (38), as Kafka's KIP-860 option (default true)",
  }),
}).openapi("ReassignmentPlan", {
  description: "Kafka's reassignment JSON (kafka-reassign-partitions --reassignment-json-file)",
});

const Results = z.object({
  accepted: z.number().int(),
  results: z.array(z.object({
    topic: z.string(),
    partition: z.number().int(),
    error_code: z.number().int(),
    error: z.string().nullable(),
    message: z.string().nullable(),
  })),
});

const Progress = z.object({
  broker: z.number().int(),
  copied_bytes: z.number().int(),
  total_bytes: z.number().int(),
  in_isr: z.boolean(),
  rate_bytes_per_sec: z.number().nullable(),
  eta_sec: z.number().nullable(),
});

const Moving = z.object({
  topic: z.string(),
  partition: z.number().int(),
  state: z.enum(["queued", "copying"]),
  replicas: z.array(z.number().int()),
  isr: z.array(z.number().int()),
  leader: z.number().int(),
  target: z.array(z.number().int()),
  original: z.array(z.number().int()),
  adding: z.array(z.number().int()),
  removing: z.array(z.number().int()),
  throttle: z.number().int(),
  progress: z.array(Progress).openapi({
    description: "per adding replica: bytes it holds of the leader's log (estimated from its " +
      "fetch offset), the leader's log size, the rate since the previous GET, time left",
  }),
});

const View = z.object({
  partitions: z.array(Moving),
  copied_bytes: z.number().int(),
  total_bytes: z.number().int(),
  rate_bytes_per_sec: z.number().nullable(),
  eta_sec: z.number().nullable(),
});

const GenerateBody = z.object({
  topics: z.array(TopicName).max(10_000).openapi({
    description: "topics to move (empty: every non-internal topic)",
  }),
  brokers: z.array(BrokerId).min(1).max(10_000),
  replication_factor: z.number().int().min(1).max(1000).optional().openapi({
    description: "a new replication factor for every partition (default: each keeps its own)",
  }),
  include_internal: z.boolean().optional().openapi({
    description: "with an empty topic list, internal topics (__consumer_offsets) too",
  }),
});

const Assignment = z.object({
  version: z.literal(1),
  partitions: z.array(z.object({
    topic: z.string(),
    partition: z.number().int(),
    replicas: z.array(z.number().int()),
  })),
});

const noController = {
  503: err("not ready, or no controller could be reached (kafka_error_code 41)"),
};

function resultsJson(results: readonly ReassignResult[]) {
  return {
    accepted: results.filter((r) => r.errorCode === 0).length,
    results: results.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      error_code: r.errorCode,
      error: reassignErrorName(r.errorCode),
      message: r.message,
    })),
  };
}

function adminOf(ctx: HttpContext): ReassignmentAdmin {
  const a = ReassignmentAdmin.of(ctx.broker.meta);
  if (a === undefined) throw new NoControllerError("this broker has no controller");
  return a;
}

export function reassignmentRoutes(app: OpenAPIHono, ctx: HttpContext) {
  on(
    app,
    createRoute({
      method: "post",
      path: "/reassignments",
      tags: ["reassignments"],
      summary: "Move partitions to new replica sets (null replicas cancels), optionally throttled",
      request: { body: { required: true, content: { "application/json": { schema: Plan } } } },
      responses: { 200: jsonOk(Results), ...commonErrors, ...noController },
    }),
    async (c) => {
      const { partitions, throttle, allow_replication_factor_change: allow } = valid(
        c,
        "json",
        Plan,
      );
      const items = partitions.map((p) => ({
        topic: p.topic,
        partition: p.partition,
        target: p.replicas,
      }));
      return c.json(
        resultsJson(await adminOf(ctx).alter(items, throttle ?? 0, allow === false)),
        200,
      );
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/reassignments",
      tags: ["reassignments"],
      summary: "Partitions moving now, with per-replica progress (bytes copied, rate, ETA)",
      request: {
        query: z.object({
          topic: TopicName.optional().openapi({ description: "only this topic's partitions" }),
        }),
      },
      responses: { 200: jsonOk(View), ...commonErrors },
    }),
    async (c) => {
      const { topic } = valid(c, "query", z.object({ topic: TopicName.optional() }));
      const v = await adminOf(ctx).view(topic);
      return c.json({
        partitions: v.partitions.map((m) => ({
          topic: m.topic,
          partition: m.partition,
          state: m.state,
          replicas: m.replicas,
          isr: m.isr,
          leader: m.leader,
          target: m.target,
          original: m.original,
          adding: m.adding,
          removing: m.removing,
          throttle: m.throttle,
          progress: m.progress.map((p) => ({
            broker: p.broker,
            copied_bytes: p.copiedBytes,
            total_bytes: p.totalBytes,
            in_isr: p.inIsr,
            rate_bytes_per_sec: p.rateBytesPerSec,
            eta_sec: p.etaSec,
          })),
        })),
        copied_bytes: v.copiedBytes,
        total_bytes: v.totalBytes,
        rate_bytes_per_sec: v.rateBytesPerSec,
        eta_sec: v.etaSec,
      }, 200);
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/reassignments",
      tags: ["reassignments"],
      summary: "Cancel moves: named partitions, a topic's, or all; back to the original replicas",
      request: {
        query: z.object({
          topic: TopicName.optional(),
          partition: z.coerce.number().int().min(0).optional(),
        }),
      },
      responses: { 200: jsonOk(Results), ...commonErrors, ...noController },
    }),
    async (c) => {
      const q = valid(
        c,
        "query",
        z.object({ topic: TopicName.optional(), partition: z.number().optional() }),
      );
      if (q.partition !== undefined && q.topic === undefined) {
        throw badRequest("partition needs a topic");
      }
      const a = adminOf(ctx);
      const items = q.partition !== undefined
        ? [{ topic: q.topic!, partition: q.partition, target: null }]
        : a.moving(q.topic).map((m) => ({ topic: m.topic, partition: m.partition, target: null }));
      return c.json(resultsJson(items.length === 0 ? [] : await a.alter(items)), 200);
    },
  );

  on(
    app,
    createRoute({
      method: "put",
      path: "/reassignments/throttle",
      tags: ["reassignments"],
      summary: "Change the throttle of moving partitions (a topic's, or all), while they run",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: z.object({ throttle: Throttle, topic: TopicName.optional() }),
            },
          },
        },
      },
      responses: { 200: jsonOk(Results), ...commonErrors, ...noController },
    }),
    async (c) => {
      const b = valid(c, "json", z.object({ throttle: z.number(), topic: z.string().optional() }));
      const a = adminOf(ctx);
      const items = a.moving(b.topic).map((m) => ({ topic: m.topic, partition: m.partition }));
      return c.json(
        resultsJson(items.length === 0 ? [] : await a.setThrottle(items, b.throttle)),
        200,
      );
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/reassignments/generate",
      tags: ["reassignments"],
      summary: "Propose a balanced assignment of topics over a broker list (changes nothing)",
      request: {
        body: { required: true, content: { "application/json": { schema: GenerateBody } } },
      },
      responses: {
        200: jsonOk(z.object({ current: Assignment, proposed: Assignment })),
        ...commonErrors,
      },
    }),
    async (c) => {
      const b = valid(c, "json", GenerateBody);
      const g = await adminOf(ctx).generate(
        b.topics,
        b.brokers,
        b.replication_factor,
        b.include_internal ?? false,
      );
      return c.json({
        current: { version: 1 as const, partitions: g.current },
        proposed: { version: 1 as const, partitions: g.proposed },
      }, 200);
    },
  );
}
