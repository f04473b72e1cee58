// Cluster status, health, readiness and Prometheus metrics.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import { type GaugeFamily, gaugeFamily } from "../core/metrics.ts";
import {
  type ElectionTarget,
  ElectionType,
  followerPositions,
  MAX_ELECTION_TARGETS,
  NotControllerError,
  ReplicationAdmin,
} from "../core/replication-admin.ts";
import { errorName } from "../protocol/kafka/error-codes.ts";
import { type HttpContext, on } from "./context.ts";
import { badRequest, HttpError, topicNotFound } from "./errors.ts";
import { commonErrors, damageView, err, jsonOk, PartitionDamage, valid, z } from "./schemas.ts";
import { groupOffsets } from "./groups.ts";
import { exporterFamilies, RemoteEnds } from "./kafka-exporter.ts";

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
    state: z.enum(["alive", "fenced", "shutting_down", "unknown"]).openapi({
      description: "the broker's session as the controller sees it: alive, fenced (leads " +
        "nothing), shutting_down (controlled shutdown), unknown (unfenced, no live session " +
        "at this moment); from the metadata's fenced flag when the controller was not reached",
    }),
    heartbeat_age_ms: z.number().int().nullable().openapi({
      description: "ms since its last heartbeat reached the controller (null: none or unknown)",
    }),
  })),
  broker_states_from: z.enum(["controller", "metadata"]).openapi({
    description: "whether `state` is the controller's answer (within 1 s) or the metadata's",
  }),
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

/** Partitions held here whose log knows of damage (docs/storage.md, Damaged data and quarantine). */
function damagedPartitions(broker: Broker) {
  // Absent in tests that stub the broker for readiness alone.
  const held = (broker.partitions as Broker["partitions"] | undefined)?.partitions() ?? [];
  return held.flatMap((st) => {
    const d = st.log.damaged();
    return d === null ? [] : [{ topic: st.topic, partition: st.partition, ...damageView(d) }];
  });
}

/** Gauges computed at scrape time from the log and group state. */
function collectGauges(broker: Broker, remote: RemoteEnds): GaugeFamily[] {
  const hw = gaugeFamily(
    "broker_partition_high_watermark",
    "high watermark per partition held here (a follower's as it knows it)",
  );
  const end = gaugeFamily(
    "broker_partition_log_end_offset",
    "log end offset per partition held here",
  );
  const start = gaugeFamily("broker_partition_log_start_offset", "log start offset per partition");
  const size = gaugeFamily("broker_partition_size_bytes", "bytes on disk per partition");
  const damaged = gaugeFamily(
    "broker_partition_damaged",
    "1 when the partition's log here holds damaged records (quarantined: writes refused " +
      "until repaired; or unreadable in place), else 0",
  );
  const quarantined = gaugeFamily(
    "broker_partition_quarantined_offsets",
    "offsets of acknowledged records quarantined as damaged (kept out of use until repaired)",
  );
  const counts = gaugeFamily("broker_topic_partitions", "partition count per topic");
  const lag = gaugeFamily(
    "broker_group_lag",
    "records between a group's committed offset and the high watermark, per partition",
  );
  // Not "_sum": promtool reserves that suffix for histograms and summaries.
  const lagSum = gaugeFamily(
    "broker_group_total_lag",
    "total lag of a group over the partitions it committed offsets for",
  );
  for (const t of broker.meta.listTopics()) {
    counts.samples.push({ labels: { topic: t.name }, value: t.partitions.length });
  }
  for (const st of broker.partitions.partitions()) {
    const labels = { topic: st.topic, partition: String(st.partition) };
    hw.samples.push({ labels, value: st.highWatermark() });
    end.samples.push({ labels, value: st.log.logEndOffset() });
    start.samples.push({ labels, value: st.log.logStartOffset() });
    size.samples.push({ labels, value: st.log.sizeBytes() });
    const d = st.log.damaged();
    damaged.samples.push({ labels, value: d === null ? 0 : 1 });
    const span = d?.state === "quarantined" && d.toOffset !== null ? d.toOffset - d.fromOffset : 0;
    quarantined.samples.push({ labels, value: span });
  }
  for (const g of broker.groups.coordinator.listGroups()) {
    let sum = 0;
    // Partitions led elsewhere: their high watermark as of the previous scrape (RemoteEnds).
    for (const o of groupOffsets(broker, g.groupId, [], remote.ends)) {
      if (o.lag === null) continue;
      sum += o.lag;
      lag.samples.push({
        labels: { group: g.groupId, topic: o.topic, partition: String(o.partition) },
        value: o.lag,
      });
    }
    lagSum.samples.push({ labels: { group: g.groupId }, value: sum });
  }
  return [
    hw,
    end,
    start,
    size,
    damaged,
    quarantined,
    counts,
    lag,
    lagSum,
    ...replicationGauges(broker),
  ];
}

/**
 * Replication health at scrape time: partitions led here that are under-replicated or under
 * min.insync.replicas, each follower's lag behind the leader, offline partitions (from the
 * metadata: every broker reports the cluster's count), ISR changes of partitions led here, and
 * the controller's counters (counted while this broker was the controller).
 */
function replicationGauges(broker: Broker): GaugeFamily[] {
  const fam = (name: string, help: string, type: "gauge" | "counter" = "gauge"): GaugeFamily => ({
    ...gaugeFamily(name, help),
    type,
  });
  const one = (f: GaugeFamily, value: number) => {
    f.samples.push({ labels: {}, value });
    return f;
  };
  const lagRecords = fam(
    "broker_follower_lag_records",
    "records a follower is behind the leader's log end, per partition led here",
  );
  const lagSeconds = fam(
    "broker_follower_lag_seconds",
    "seconds since a follower last had everything the leader had, per partition led here",
  );
  let led = 0;
  let under = 0;
  let underMin = 0;
  for (const r of broker.partitions.partitions()) {
    if (!r.isLeader) continue;
    led++;
    if (r.isr.length < r.replicas.length) under++;
    if (r.isr.length < r.minInsyncReplicas) underMin++;
    const end = r.log.logEndOffset();
    for (const f of followerPositions(r)) {
      const labels = { topic: r.topic, partition: String(r.partition), follower: String(f.id) };
      if (f.logEnd >= 0) lagRecords.samples.push({ labels, value: Math.max(0, end - f.logEnd) });
      lagSeconds.samples.push({ labels, value: f.caughtUpAgoMs / 1000 });
    }
  }
  let offline = 0;
  for (const t of broker.meta.listTopics()) {
    for (const p of t.partitions) if (p.leader < 0) offline++;
  }
  const out = [
    one(fam("broker_leader_partitions", "partitions this broker leads"), led),
    one(
      fam(
        "broker_under_replicated_partitions",
        "partitions led here whose ISR is smaller than their replicas",
      ),
      under,
    ),
    one(
      fam(
        "broker_under_min_isr_partitions",
        "partitions led here whose ISR is below min.insync.replicas (acks=all fails)",
      ),
      underMin,
    ),
    one(
      fam(
        "broker_offline_partitions",
        "partitions without a leader in the cluster (from this broker's metadata)",
      ),
      offline,
    ),
    lagRecords,
    lagSeconds,
  ];
  const admin = ReplicationAdmin.of(broker.partitions);
  if (admin === undefined) return out;
  const c = admin.controllerCounters();
  out.push(
    one(
      fam("broker_isr_shrinks_total", "ISR shrinks of partitions led here", "counter"),
      admin.isr.shrinks,
    ),
    one(
      fam("broker_isr_expands_total", "ISR expansions of partitions led here", "counter"),
      admin.isr.expands,
    ),
    one(fam("broker_controller_active", "1 while this broker is the controller"), c.active ? 1 : 0),
    one(
      fam(
        "broker_controller_elections_total",
        "leaders elected (or partitions taken offline) by this broker as controller",
        "counter",
      ),
      c.elections,
    ),
    one(
      fam(
        "broker_controller_fences_total",
        "brokers fenced by this broker as controller",
        "counter",
      ),
      c.fences,
    ),
    one(
      fam(
        "broker_controller_unfences_total",
        "brokers unfenced by this broker as controller",
        "counter",
      ),
      c.unfences,
    ),
    one(
      fam(
        "broker_controller_isr_changes_total",
        "ISR changes committed by this broker as controller",
        "counter",
      ),
      c.isrChanges,
    ),
  );
  return out;
}

const ElectLeadersBody = z.object({
  type: z.enum(["preferred", "unclean"]).optional().openapi({
    description: "preferred (default): the first replica leads again where it is live and in " +
      "the ISR; unclean: a partition without a leader gets a live ISR member, else any live " +
      "replica (records it lacks are lost)",
  }),
  topic: z.string().min(1).max(249).optional().openapi({
    description: "only this topic (default, as with `{}`: every partition of every topic)",
  }),
  partitions: z.array(z.number().int().min(0).max(0x7fffffff)).max(100_000).optional().openapi({
    description: "only these partitions of `topic` (default: all of them)",
  }),
}).strict().openapi("ElectLeaders");

const ElectionResults = z.object({
  elected: z.number().int().openapi({ description: "partitions that got a new leader" }),
  results: z.array(z.object({
    topic: z.string(),
    partition: z.number().int(),
    error_code: z.number().int().openapi({ description: "Kafka error code, 0 when elected" }),
    error: z.string().nullable().openapi({ example: "ELECTION_NOT_NEEDED" }),
    message: z.string().nullable(),
  })),
}).openapi("ElectionResults");

const MemberParams = z.object({
  node_id: z.string().regex(/^\d{1,10}$/, "node_id must be an integer ≥ 0").openapi({
    param: { name: "node_id", in: "path" },
    example: "3",
  }),
});

const RemovedMember = z.object({
  node_id: z.number().int(),
  removed: z.boolean().openapi({ description: "false: it was not a member (nothing changed)" }),
  voters: z.array(z.number().int()),
  learners: z.array(z.number().int()),
}).openapi("RemovedMember");

/** A refusal of removeNode (here or passed back from the leader) as an HTTP error. */
function removeNodeError(e: unknown): HttpError {
  const msg = e instanceof Error ? e.message : String(e);
  if (/is alive|cannot remove itself/.test(msg)) return new HttpError(409, 40901, msg);
  if (/bad nodeId/.test(msg)) return badRequest(msg);
  return new HttpError(503, 50301, `the metadata leader could not remove the broker: ${msg}`);
}

export function clusterRoutes(app: OpenAPIHono, { broker, metrics }: HttpContext) {
  const remote = new RemoteEnds(broker);
  metrics.collect(() => collectGauges(broker, remote));
  metrics.collect(() => exporterFamilies(broker, remote));

  on(
    app,
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["cluster"],
      summary: "Liveness (no token needed; without it, only `status`)",
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
      summary: "Readiness: 200 only once the broker serves (no token needed; without it, only " +
        "`ready`)",
      responses: {
        200: jsonOk(z.object({
          ready: z.boolean(),
          damaged_partitions: z.array(
            PartitionDamage.extend({ topic: z.string(), partition: z.number().int() }),
          ).optional().openapi({
            description: "present when partitions held here are damaged: the broker still " +
              "serves (200), those partitions need an operator (docs/storage.md)",
          }),
        })),
        503: jsonOk(
          z.object({ ready: z.boolean(), error_code: z.number().int(), message: z.string() }),
          "not ready",
        ),
      },
    }),
    (c) => {
      if (broker.isReady()) {
        const damaged = damagedPartitions(broker);
        if (damaged.length === 0) return c.json({ ready: true }, 200);
        return c.json({ ready: true, damaged_partitions: damaged }, 200);
      }
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
    async (c) => {
      const topics = broker.meta.listTopics();
      const st = broker.cluster.status();
      const sessions = await ReplicationAdmin.of(broker.partitions)?.brokerSessions(1000);
      const state = new Map(sessions?.brokers.map((b) => [b.id, b]));
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
          state: state.get(b.nodeId)?.state ?? (b.fenced ? "fenced" : "alive"),
          heartbeat_age_ms: state.get(b.nodeId)?.heartbeatAgeMs ?? null,
        })),
        broker_states_from: sessions?.source ?? "metadata",
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
      method: "post",
      path: "/cluster/elect-leaders",
      tags: ["cluster"],
      summary: "Elect partition leaders: preferred replicas, or unclean for offline partitions",
      request: {
        body: { required: true, content: { "application/json": { schema: ElectLeadersBody } } },
      },
      responses: {
        200: jsonOk(ElectionResults),
        ...commonErrors,
        503: err("not ready, or no controller could be reached (kafka_error_code 41)"),
      },
    }),
    async (c) => {
      const { type, topic, partitions } = valid(c, "json", ElectLeadersBody);
      if (partitions !== undefined && topic === undefined) {
        throw badRequest("partitions needs a topic");
      }
      let targets: ElectionTarget[] | null = null;
      if (topic !== undefined) {
        const t = broker.meta.getTopic(topic);
        if (!t) throw topicNotFound(topic);
        targets = (partitions ?? t.partitions.map((p) => p.partition)).map((partition) => ({
          topic,
          partition,
        }));
        if (targets.length > MAX_ELECTION_TARGETS) {
          throw badRequest(`at most ${MAX_ELECTION_TARGETS} partitions per request`);
        }
      }
      const admin = ReplicationAdmin.of(broker.partitions);
      if (admin === undefined) throw new NotControllerError("this broker has no controller");
      const results = await admin.electLeaders(
        type === "unclean" ? ElectionType.UNCLEAN : ElectionType.PREFERRED,
        targets,
        30_000,
      );
      return c.json({
        elected: results.filter((r) => r.errorCode === 0).length,
        results: results.map((r) => ({
          topic: r.topic,
          partition: r.partition,
          error_code: r.errorCode,
          error: r.errorCode === 0 ? null : errorName(r.errorCode),
          message: r.message,
        })),
      }, 200);
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/cluster/members/{node_id}",
      tags: ["cluster"],
      summary: "Remove a dead broker from the metadata quorum (voter or learner)",
      request: {
        params: MemberParams,
        query: z.object({
          force: z.enum(["true", "false"]).optional().openapi({
            description: "remove it even while it holds a connection to the leader (alive)",
          }),
        }),
      },
      responses: {
        200: jsonOk(RemovedMember),
        ...commonErrors,
        409: err("the broker is alive (not forced), or it is the leader itself"),
        503: err("no metadata leader could be reached"),
      },
    }),
    async (c) => {
      const id = Number(valid(c, "param", MemberParams).node_id);
      if (id > 2147483647) throw badRequest("node_id must be at most 2147483647");
      const force = (c.req.query("force") ?? "false") === "true";
      let r;
      try {
        r = await broker.cluster.removeNode(id, force);
      } catch (e) {
        throw removeNodeError(e);
      }
      return c.json(
        { node_id: r.nodeId, removed: r.removed, voters: r.voters, learners: r.learners },
        200,
      );
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
