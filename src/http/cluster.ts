// Cluster status, health, readiness and Prometheus metrics.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import type { GaugeFamily } from "../core/metrics.ts";
import { type HttpContext, on } from "./app.ts";
import { commonErrors, jsonOk, z } from "./schemas.ts";
import { groupOffsets } from "./groups.ts";

const ClusterInfo = z.object({
  cluster_id: z.string(),
  controller: z.number().int().nullable(),
  node_id: z.number().int(),
  version: z.string(),
  brokers: z.array(z.object({
    node_id: z.number().int(),
    host: z.string(),
    kafka_port: z.number().int(),
    http_port: z.number().int(),
    cluster_port: z.number().int(),
    fenced: z.boolean(),
  })),
  topics: z.number().int(),
  partitions: z.number().int(),
  groups: z.number().int(),
  members: z.array(z.object({
    id: z.number().int(),
    addresses: z.object({ cluster: z.string(), kafka: z.string(), http: z.string() }),
    state: z.enum(["alive", "suspect", "dead", "left"]),
    incarnation: z.number().int(),
  })).openapi({ description: "gossip (SWIM) view of the members: a hint, not a verdict" }),
  quorum: z.object({
    voters: z.array(z.number().int()),
    learners: z.array(z.number().int()),
    leader: z.number().int(),
    term: z.number().int(),
    commit_index: z.number().int(),
    applied_index: z.number().int(),
    role: z.string(),
  }).openapi({ description: "the Raft metadata quorum as this broker sees it (leader -1: none)" }),
}).openapi("Cluster");

/** The answer while the broker starts or stops. */
export const NOT_READY = {
  error_code: 50300,
  message: "the broker is not ready: it is starting or shutting down; retry shortly",
};

/** Gauges computed at scrape time from the log and group state. */
function collectGauges(broker: Broker): GaugeFamily[] {
  const hw: GaugeFamily = {
    name: "broker_partition_high_watermark",
    help: "high watermark per partition",
    samples: [],
  };
  const start: GaugeFamily = {
    name: "broker_partition_log_start_offset",
    help: "log start offset per partition",
    samples: [],
  };
  const size: GaugeFamily = {
    name: "broker_partition_size_bytes",
    help: "bytes on disk per partition",
    samples: [],
  };
  const counts: GaugeFamily = {
    name: "broker_topic_partitions",
    help: "partition count per topic",
    samples: [],
  };
  const lag: GaugeFamily = {
    name: "broker_group_lag",
    help: "records between a group's committed offset and the high watermark, per partition",
    samples: [],
  };
  const lagSum: GaugeFamily = {
    name: "broker_group_lag_sum",
    help: "total lag of a group",
    samples: [],
  };
  for (const t of broker.meta.listTopics()) {
    counts.samples.push({ labels: { topic: t.name }, value: t.partitions.length });
  }
  for (const st of broker.partitions.partitions()) {
    const labels = { topic: st.topic, partition: String(st.partition) };
    hw.samples.push({ labels, value: st.log.logEndOffset() });
    start.samples.push({ labels, value: st.log.logStartOffset() });
    size.samples.push({ labels, value: st.log.sizeBytes() });
  }
  for (const g of broker.groups.coordinator.listGroups()) {
    let sum = 0;
    for (const o of groupOffsets(broker, g.groupId)) {
      if (o.lag === null) continue;
      sum += o.lag;
      lag.samples.push({
        labels: { group: g.groupId, topic: o.topic, partition: String(o.partition) },
        value: o.lag,
      });
    }
    lagSum.samples.push({ labels: { group: g.groupId }, value: sum });
  }
  return [hw, start, size, counts, lag, lagSum];
}

export function clusterRoutes(app: OpenAPIHono, { broker, metrics }: HttpContext) {
  metrics.collect(() => collectGauges(broker));

  on(
    app,
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["cluster"],
      summary: "Liveness (no token needed)",
      responses: {
        200: jsonOk(z.object({ status: z.string(), node_id: z.number(), version: z.string() })),
      },
    }),
    (c) => c.json({ status: "ok", node_id: broker.nodeId, version: broker.version }),
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/readyz",
      tags: ["cluster"],
      summary: "Readiness: 200 only once the broker serves",
      responses: {
        200: jsonOk(z.object({ ready: z.boolean() })),
        503: jsonOk(
          z.object({ ready: z.boolean(), error_code: z.number().int(), message: z.string() }),
          "not ready",
        ),
      },
    }),
    (c) => {
      if (broker.isReady()) return c.json({ ready: true }, 200);
      return c.json({ ready: false, ...NOT_READY }, 503);
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/cluster",
      tags: ["cluster"],
      summary: "Cluster id, brokers and controller",
      responses: { 200: jsonOk(ClusterInfo), ...commonErrors },
    }),
    (c) => {
      const topics = broker.meta.listTopics();
      const st = broker.cluster.status();
      return c.json({
        cluster_id: broker.clusterId,
        // The Raft leader is the controller.
        controller: st.quorum.leader >= 0 ? st.quorum.leader : null,
        node_id: broker.nodeId,
        version: broker.version,
        brokers: broker.meta.listBrokers().map((b) => ({
          node_id: b.nodeId,
          host: b.host,
          kafka_port: b.kafkaPort,
          http_port: b.httpPort,
          cluster_port: b.clusterPort,
          fenced: b.fenced,
        })),
        topics: topics.filter((t) => !t.internal).length,
        partitions: topics.reduce((n, t) => n + t.partitions.length, 0),
        groups: broker.groups.coordinator.listGroups().length,
        members: st.members,
        quorum: {
          voters: st.quorum.voters,
          learners: st.quorum.learners,
          leader: st.quorum.leader,
          term: st.quorum.term,
          commit_index: st.quorum.commitIndex,
          applied_index: st.quorum.appliedIndex,
          role: st.quorum.role,
        },
      });
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/metrics",
      tags: ["cluster"],
      summary: "Prometheus metrics",
      responses: {
        200: {
          description: "text exposition format",
          content: { "text/plain": { schema: z.string() } },
        },
      },
    }),
    (c) => {
      c.header("content-type", "text/plain; version=0.0.4; charset=utf-8");
      return c.body(metrics.render(), 200);
    },
  );
}
