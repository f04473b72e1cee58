// Topic admin over HTTP: list, create, describe, delete, configs, add partitions.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import { type HttpContext, on } from "./context.ts";
import { topicNotFound } from "./errors.ts";
import { repairRoutes } from "./repair.ts";
import { INTERNAL_TOPIC_CONFIGS } from "../meta/topic-configs.ts";
import type { PartitionStats } from "../cluster/node.ts";
import type { LogDamage } from "../storage/index.ts";
import {
  commonErrors,
  damageView,
  err,
  jsonOk,
  PartitionDamage,
  TopicParams,
  valid,
  z,
} from "./schemas.ts";

/**
 * What each partition's leader says of it (offsets, size, followers' positions), asked of the
 * leaders in parallel (1 s each; this broker answers for itself); missing when a leader does not
 * answer or the partition has none.
 */
async function leaderStats(
  broker: Broker,
  topic: string,
  partitions: readonly { partition: number; leader: number }[],
): Promise<Map<number, PartitionStats>> {
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    if (p.leader < 0) continue;
    byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p.partition]);
  }
  const answers = await Promise.all(
    [...byLeader].map(([leader, ps]) => broker.cluster.partitionStats(leader, topic, ps)),
  );
  const out = new Map<number, PartitionStats>();
  for (const list of answers) for (const st of list) out.set(st.partition, st);
  return out;
}

/** Each replica's log end and lag behind the leader's log end, as the leader knows them. */
function replicaPositions(
  p: { leader: number; replicas: number[]; isr: number[] },
  s: PartitionStats | undefined,
) {
  const end = s?.logEndOffset;
  return p.replicas.map((id) => {
    const row = {
      broker_id: id,
      in_sync: p.isr.includes(id),
      log_end_offset: null as number | null,
      lag: null as number | null,
      lag_ms: null as number | null,
    };
    if (s === undefined || end === undefined) return row;
    if (id === p.leader) return { ...row, log_end_offset: end, lag: 0, lag_ms: 0 };
    const f = s.followers?.find((x) => x.id === id);
    if (f === undefined) return row;
    row.lag_ms = f.caughtUpAgoMs;
    if (f.logEnd < 0) return row; // it has not fetched from this leader yet
    return { ...row, log_end_offset: f.logEnd, lag: Math.max(0, end - f.logEnd) };
  });
}

const nullable = (d: LogDamage | null) => (d === null ? null : damageView(d));

export async function describeTopic(broker: Broker, name: string) {
  const t = broker.meta.getTopic(name);
  if (!t) return undefined;
  const stats = await leaderStats(broker, t.name, t.partitions);
  return {
    name: t.name,
    topic_id: t.topicId,
    internal: t.internal,
    // The topic's overrides, plus what the broker fixes for an internal topic.
    configs: t.internal ? { ...t.configs, ...INTERNAL_TOPIC_CONFIGS } : t.configs,
    partitions: t.partitions.map((p) => {
      // The leader's answer; without one, this broker's own copy when it holds one.
      const s = stats.get(p.partition);
      const copy = broker.partitions.has(t.name, p.partition)
        ? broker.partitions.partition(t.name, p.partition)
        : undefined;
      return {
        partition: p.partition,
        leader: p.leader,
        leader_epoch: p.leaderEpoch,
        replicas: p.replicas,
        isr: p.isr,
        log_start_offset: s?.logStartOffset ?? copy?.log.logStartOffset() ?? null,
        high_watermark: s?.highWatermark ?? copy?.highWatermark() ?? null,
        log_end_offset: s?.logEndOffset ?? null,
        size_bytes: s?.sizeBytes ?? copy?.log.sizeBytes() ?? null,
        under_replicated: p.isr.length < p.replicas.length,
        offline: p.leader < 0,
        replica_positions: replicaPositions(p, s),
        damage: copy ? nullable(copy.log.damaged()) : null,
      };
    }),
  };
}

const ConfigValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const ConfigMap = z.record(z.string().min(1).max(255), ConfigValue);

const TopicSummary = z.object({
  name: z.string(),
  partitions: z.number().int(),
  replication_factor: z.number().int(),
  internal: z.boolean(),
});
const PartitionInfo = z.object({
  partition: z.number().int(),
  leader: z.number().int(),
  leader_epoch: z.number().int(),
  replicas: z.array(z.number().int()),
  isr: z.array(z.number().int()),
  log_start_offset: z.number().int().nullable(),
  high_watermark: z.number().int().nullable(),
  log_end_offset: z.number().int().nullable().openapi({
    description: "the leader's log end (null when the leader did not answer)",
  }),
  size_bytes: z.number().int().nullable(),
  under_replicated: z.boolean().openapi({ description: "the ISR is smaller than the replicas" }),
  offline: z.boolean().openapi({ description: "no leader (-1): nothing can be read or written" }),
  replica_positions: z.array(z.object({
    broker_id: z.number().int(),
    in_sync: z.boolean(),
    log_end_offset: z.number().int().nullable(),
    lag: z.number().int().nullable().openapi({
      description: "records behind the leader's log end",
    }),
    lag_ms: z.number().int().nullable().openapi({
      description: "milliseconds since the replica last had everything the leader had",
    }),
  })).openapi({
    description:
      "each replica as the leader sees it (nulls when unknown: no leader, no answer, or a " +
      "follower that has not fetched from this leader yet)",
  }),
  damage: PartitionDamage.nullable().openapi({
    description: "damage this broker's copy of the partition knows of (null: none, or no copy " +
      "here); see docs/storage.md, Damaged data and quarantine",
  }),
});
const TopicDescription = z.object({
  name: z.string(),
  topic_id: z.string(),
  internal: z.boolean(),
  configs: z.record(z.string(), z.string()),
  partitions: z.array(PartitionInfo),
}).openapi("Topic");

const CreateTopic = z.object({
  // Kafka's rules (1-249 of [a-zA-Z0-9._-], not "." or "..") are checked by the metadata store,
  // which answers 422 with the reason; this bound only keeps hostile bodies small.
  name: z.string().max(10_000).openapi({
    example: "orders",
    description: "1-249 characters of a-z, A-Z, 0-9, '.', '_', '-'; not '.' or '..'",
  }),
  partitions: z.number().int().min(-1).max(1_000_000).optional().openapi({
    description: "default: the broker's num.partitions",
  }),
  replication_factor: z.number().int().min(-1).max(32767).optional(),
  configs: ConfigMap.optional().openapi({ example: { "retention.ms": "86400000" } }),
}).strict().openapi("CreateTopic");

const ValidateOnly = z.object({
  validate_only: z.enum(["true", "false"]).optional().openapi({
    description: "check the request without applying it",
  }),
});

const AlterConfigs = z.union([
  z.object({
    set: ConfigMap.optional(),
    delete: z.array(z.string().min(1).max(255)).max(1000).optional(),
  }).strict(),
  z.record(z.string().min(1).max(255), z.union([z.string(), z.number(), z.boolean(), z.null()])),
]).openapi({
  description:
    '{"retention.ms": "3600000", "segment.ms": null} (null resets) or {"set": {…}, "delete": […]}',
});

export function topicRoutes(app: OpenAPIHono, ctx: HttpContext) {
  const { broker } = ctx;
  // A damaged copy's repair decision (src/http/repair.ts).
  repairRoutes(app, ctx);
  const existing = async (name: string) => {
    const d = await describeTopic(broker, name);
    if (!d) throw topicNotFound(name);
    return d;
  };
  const mustExist = (name: string) => {
    if (!broker.meta.getTopic(name)) throw topicNotFound(name);
  };

  on(
    app,
    createRoute({
      method: "get",
      path: "/topics",
      tags: ["topics"],
      summary: "List topics",
      request: {
        query: z.object({
          internal: z.enum(["true", "false"]).optional().openapi({
            description: "include internal topics (__consumer_offsets)",
          }),
        }),
      },
      responses: { 200: jsonOk(z.array(TopicSummary)), ...commonErrors },
    }),
    (c) => {
      const all = c.req.query("internal") === "true";
      return c.json(
        broker.meta.listTopics().filter((t) => all || !t.internal).map((t) => ({
          name: t.name,
          partitions: t.partitions.length,
          replication_factor: t.partitions[0]?.replicas.length ?? 0,
          internal: t.internal,
        })),
      );
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/topics",
      tags: ["topics"],
      summary: "Create a topic",
      request: {
        query: ValidateOnly,
        body: { required: true, content: { "application/json": { schema: CreateTopic } } },
      },
      responses: {
        201: jsonOk(TopicDescription, "created"),
        ...commonErrors,
        409: err("a topic of that name exists"),
        422: err("invalid name, partitions, replication factor or config"),
      },
    }),
    async (c) => {
      const body = valid(c, "json", CreateTopic);
      const validateOnly = c.req.query("validate_only") === "true";
      await broker.partitions.createTopic(
        body.name,
        body.partitions ?? -1,
        body.replication_factor ?? -1,
        body.configs ?? {},
        validateOnly,
      );
      if (validateOnly) return c.json({ name: body.name, validated: true });
      return c.json(await existing(body.name), 201);
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}",
      tags: ["topics"],
      summary: "Describe a topic: per partition leader, epoch, replicas, ISR, each replica's " +
        "log end and lag, offsets, size, under-replicated and offline flags",
      request: { params: TopicParams },
      responses: { 200: jsonOk(TopicDescription), ...commonErrors },
    }),
    async (c) => c.json(await existing(valid(c, "param", TopicParams).topic)),
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/topics/{topic}",
      tags: ["topics"],
      summary: "Delete a topic and its data",
      request: { params: TopicParams },
      responses: { 204: { description: "deleted" }, ...commonErrors },
    }),
    async (c) => {
      await broker.partitions.deleteTopic(valid(c, "param", TopicParams).topic);
      return c.body(null, 204);
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/topics/{topic}/configs",
      tags: ["topics"],
      summary: "Every config of a topic with its value and source",
      request: { params: TopicParams },
      responses: {
        200: jsonOk(z.array(z.object({
          name: z.string(),
          value: z.string().nullable(),
          source: z.string(),
          is_default: z.boolean(),
        }))),
        ...commonErrors,
      },
    }),
    (c) => {
      const { topic } = valid(c, "param", TopicParams);
      mustExist(topic);
      return c.json(
        broker.meta.describeTopicConfigs(topic).map((d) => ({
          name: d.name,
          value: d.value,
          source: d.source,
          is_default: d.isDefault,
        })),
      );
    },
  );

  on(
    app,
    createRoute({
      method: "patch",
      path: "/topics/{topic}/configs",
      tags: ["topics"],
      summary: "Alter topic configs (null or delete resets to the default)",
      request: {
        params: TopicParams,
        query: ValidateOnly,
        body: { required: true, content: { "application/json": { schema: AlterConfigs } } },
      },
      responses: { 200: jsonOk(TopicDescription), ...commonErrors, 422: err("invalid config") },
    }),
    async (c) => {
      const { topic } = valid(c, "param", TopicParams);
      const body = valid(c, "json", AlterConfigs) as Record<string, unknown>;
      mustExist(topic);
      let set: Record<string, string> = {};
      let del: string[] = [];
      if ("set" in body || "delete" in body) {
        set = (body.set as Record<string, string> | undefined) ?? {};
        del = (body.delete as string[] | undefined) ?? [];
      } else {
        for (const [k, v] of Object.entries(body)) {
          if (v === null) del.push(k);
          else set[k] = String(v);
        }
      }
      await broker.partitions.alterTopicConfigs(
        topic,
        set,
        del,
        c.req.query("validate_only") === "true",
      );
      return c.json(await existing(topic));
    },
  );

  const AddPartitions = z.object({
    count: z.number().int().min(1).max(1_000_000).openapi({ description: "the new total" }),
  }).strict();
  on(
    app,
    createRoute({
      method: "post",
      path: "/topics/{topic}/partitions",
      tags: ["topics"],
      summary: "Add partitions (count is the new total)",
      request: {
        params: TopicParams,
        query: ValidateOnly,
        body: { required: true, content: { "application/json": { schema: AddPartitions } } },
      },
      responses: { 200: jsonOk(TopicDescription), ...commonErrors, 422: err("invalid count") },
    }),
    async (c) => {
      const { topic } = valid(c, "param", TopicParams);
      const { count } = valid(c, "json", AddPartitions);
      mustExist(topic);
      await broker.partitions.createPartitions(
        topic,
        count,
        c.req.query("validate_only") === "true",
      );
      return c.json(await existing(topic));
    },
  );
}
