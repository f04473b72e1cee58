// Consumer groups admin over HTTP: list, describe (members, assignment, committed offset, end
// offset, lag), reset the offsets of an inactive group, delete. The groups are the ones Kafka
// clients join; the member endpoints are in members.ts.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Broker } from "../broker.ts";
import { groupCoordinator } from "../core/group-service.ts";
import { decodeAssignment, type TopicPartitions } from "../groups/index.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { type HttpContext, on } from "./context.ts";
import {
  badRequest,
  HttpError,
  kafkaError,
  notFound,
  partitionNotFound,
  topicNotFound,
} from "./errors.ts";
import { commonErrors, err, GroupParams, jsonOk, valid, z } from "./schemas.ts";
import { leaderUrl, remotePartitionStats } from "./render.ts";
import { forwardedBy, forwardToCoordinator } from "./forward.ts";
import type { From } from "./partition-access.ts";
import type { GroupRow, PartitionStats } from "../cluster/node.ts";

export interface GroupOffsetRow {
  topic: string;
  partition: number;
  committed_offset: number | null;
  end_offset: number | null;
  lag: number | null;
  metadata: string | null;
}

/** End offsets of partitions led elsewhere, by topic (see remotePartitionStats). */
type RemoteEnds = Map<string, Map<number, PartitionStats>>;

function endOffset(
  broker: Broker,
  topic: string,
  partition: number,
  remote: RemoteEnds,
): number | null {
  return broker.partitions.has(topic, partition)
    ? broker.partitions.highWatermark(topic, partition)
    : remote.get(topic)?.get(partition)?.highWatermark ?? null;
}

/**
 * Committed offsets of a group (plus partitions assigned but not yet committed) with lag. End
 * offsets of partitions led by other brokers come from `remote` (null when not given).
 */
export function groupOffsets(
  broker: Broker,
  groupId: string,
  assigned: TopicPartitions[] = [],
  remote: RemoteEnds = new Map(),
): GroupOffsetRow[] {
  const rows = new Map<string, GroupOffsetRow>();
  const add = (
    topic: string,
    partition: number,
    committed: number | null,
    metadata: string | null,
  ) => {
    const end = endOffset(broker, topic, partition, remote);
    rows.set(`${topic}\u0000${partition}`, {
      topic,
      partition,
      committed_offset: committed,
      end_offset: end,
      lag: end === null ? null : Math.max(0, end - (committed ?? 0)),
      metadata,
    });
  };
  for (const tp of assigned) for (const p of tp.partitions) add(tp.topic, p, null, null);
  const fetched = broker.groups.coordinator.fetchOffsets(groupId, null);
  for (const t of fetched.topics) {
    for (const p of t.partitions) {
      if (p.offset >= 0) add(t.name, p.partition, p.offset, p.metadata || null);
    }
  }
  return [...rows.values()].sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition
  );
}

export function assignmentOf(bytes: Uint8Array): TopicPartitions[] {
  if (bytes.length === 0) return [];
  const a = decodeAssignment(bytes);
  return a.ok ? a.value.assignedPartitions : [];
}

/** The groups this broker coordinates, as GET /groups lists them. */
export function localGroups(groups: Pick<Broker["groups"], "coordinator">): GroupRow[] {
  return groups.coordinator.listGroups().map((g) => ({
    group_id: g.groupId,
    state: g.state,
    protocol_type: g.protocolType,
    members: groups.coordinator.describeGroup(g.groupId).members.length,
  }));
}

/** The same rows, with the end offsets of partitions led by other brokers asked of them. */
async function groupOffsetsEverywhere(
  broker: Broker,
  groupId: string,
  assigned: TopicPartitions[],
): Promise<GroupOffsetRow[]> {
  const local = groupOffsets(broker, groupId, assigned);
  const wanted = new Map<string, number[]>();
  for (const r of local) {
    if (r.end_offset === null) wanted.set(r.topic, [...(wanted.get(r.topic) ?? []), r.partition]);
  }
  if (wanted.size === 0) return local;
  const remote: RemoteEnds = new Map();
  await Promise.all(
    [...wanted].map(async ([t, ps]) => remote.set(t, await remotePartitionStats(broker, t, ps))),
  );
  return groupOffsets(broker, groupId, assigned, remote);
}

export async function describeGroup(broker: Broker, groupId: string) {
  const d = broker.groups.coordinator.describeGroup(groupId);
  const members = d.members.map((m) => ({
    member_id: m.memberId,
    group_instance_id: m.groupInstanceId,
    client_id: m.clientId,
    client_host: m.clientHost,
    assignment: assignmentOf(m.assignment),
  }));
  const offsets = await groupOffsetsEverywhere(
    broker,
    groupId,
    members.flatMap((m) => m.assignment),
  );
  if (d.state === "Dead" && offsets.length === 0) return undefined;
  return {
    group_id: groupId,
    state: d.state,
    protocol_type: d.protocolType,
    protocol: d.protocolData,
    generation_id: d.generation,
    leader: d.leader,
    members,
    offsets,
    // Unknown (null) when a partition's end offset could not be had (its leader is down): a
    // partial sum would make the group look caught up.
    lag: offsets.some((o) => o.lag === null) ? null : offsets.reduce((n, o) => n + (o.lag ?? 0), 0),
  };
}

const TP = z.object({ topic: z.string(), partitions: z.array(z.number().int()) });
const GroupDescription = z.object({
  group_id: z.string(),
  state: z.string(),
  protocol_type: z.string(),
  protocol: z.string(),
  generation_id: z.number().int(),
  leader: z.string().nullable(),
  members: z.array(z.object({
    member_id: z.string(),
    group_instance_id: z.string().nullable(),
    client_id: z.string(),
    client_host: z.string(),
    assignment: z.array(TP),
  })),
  offsets: z.array(z.object({
    topic: z.string(),
    partition: z.number().int(),
    committed_offset: z.number().int().nullable(),
    end_offset: z.number().int().nullable(),
    lag: z.number().int().nullable(),
    metadata: z.string().nullable(),
  })),
  lag: z.number().int().nullable().openapi({ description: "null when some end offset is unknown" }),
}).openapi("Group");

const ResetBody = z.object({
  to: z.enum(["earliest", "latest", "timestamp", "offsets"]),
  timestamp: z.union([z.number().int().min(0), z.string().max(64)]).optional().openapi({
    description: "with to=timestamp: epoch ms or ISO-8601",
  }),
  topics: z.array(z.string().min(1).max(249)).max(10_000).optional().openapi({
    description: "topics to reset (default: every topic the group has offsets for)",
  }),
  offsets: z.array(z.object({
    topic: z.string().min(1).max(249),
    partition: z.number().int().min(0),
    offset: z.number().int().min(0),
  })).max(100_000).optional().openapi({ description: "with to=offsets" }),
  dry_run: z.boolean().optional(),
}).strict().openapi("ResetOffsets");

export function groupRoutes(app: OpenAPIHono, { broker, access }: HttpContext) {
  // In a cluster a group lives on one broker (the leader of its __consumer_offsets partition):
  // elsewhere its requests are passed to that broker, never served by a second group of that
  // name. 503 only while no coordinator is known (or for a request passed on already).
  const onlyAtCoordinator = async (c: Context, next: () => Promise<void>) => {
    const group = c.req.param("group") ?? "";
    if (group === "" || broker.groups.coordinates(group)) return await next();
    let id = groupCoordinator(broker.meta, group);
    const peers = access.remote?.peers;
    const since = performance.now();
    let moving = false;
    // Coordination moves with __consumer_offsets leadership: a broker taking over is waited for
    // a moment, and a request the old coordinator refused (nothing done) goes to the new one.
    for (let attempt = 0; attempt < 3 && performance.now() - since < 2000; attempt++) {
      if (id === broker.nodeId) {
        while (!broker.groups.coordinates(group) && performance.now() - since < 1000) {
          await Bun.sleep(20);
        }
        if (broker.groups.coordinates(group)) return await next();
        break;
      }
      if (id < 0 || forwardedBy(c) !== undefined || !peers) break;
      const res = await forwardToCoordinator(c, broker, peers, group, id);
      if (res !== "moved") return res;
      moving = true;
      await Bun.sleep(50);
      if (broker.groups.coordinates(group)) return await next();
      const now = groupCoordinator(broker.meta, group);
      if (now === id) break;
      id = now;
    }
    throw new HttpError(
      503,
      50316,
      id < 0
        ? `group ${group} has no coordinator right now (its __consumer_offsets partition has no leader): retry shortly`
        : moving
        ? `group ${group} is changing coordinator (last asked: broker ${id}): retry shortly`
        : id === broker.nodeId
        ? `broker ${id} is taking over as the coordinator of group ${group}: retry shortly`
        : `group ${group} is coordinated by broker ${id}${
          leaderUrl(broker, id)
        }: send its requests there`,
      ErrorCode.NOT_COORDINATOR,
    );
  };
  app.use("/groups/:group", onlyAtCoordinator);
  app.use("/groups/:group/*", onlyAtCoordinator);
  on(
    app,
    createRoute({
      method: "get",
      path: "/groups",
      tags: ["groups"],
      summary: "List consumer groups",
      responses: {
        200: jsonOk(z.array(z.object({
          group_id: z.string(),
          state: z.string(),
          protocol_type: z.string(),
          members: z.number().int(),
        }))),
        ...commonErrors,
      },
    }),
    async (c) => {
      // Every broker's groups (each lists those it coordinates), asked over the cluster port.
      const lists = await Promise.all(
        broker.meta.listBrokers().filter((b) => b.nodeId !== broker.nodeId)
          .map((b) => broker.cluster.groupList(b.nodeId)),
      );
      const rows = new Map<string, GroupRow>();
      for (const list of [localGroups(broker.groups), ...lists]) {
        for (const g of list) if (!rows.has(g.group_id)) rows.set(g.group_id, g);
      }
      return c.json([...rows.values()].sort((a, b) => (a.group_id < b.group_id ? -1 : 1)));
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/groups/{group}",
      tags: ["groups"],
      summary: "Describe a group: members, assignment, committed offset, end offset and lag",
      request: { params: GroupParams },
      responses: { 200: jsonOk(GroupDescription), ...commonErrors },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const d = await describeGroup(broker, group);
      if (!d) throw notFound(`group ${group} not found`, 40404);
      return c.json(d);
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/groups/{group}",
      tags: ["groups"],
      summary: "Delete an inactive group and its offsets",
      request: { params: GroupParams },
      responses: {
        204: { description: "deleted" },
        ...commonErrors,
        409: err("the group has members"),
      },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const r = await broker.groups.request({ type: "deleteGroups", groupIds: [group] });
      const code = r.kind === "deleteGroups" ? r.results[0]?.errorCode ?? 0 : -1;
      if (code !== 0) throw kafkaError(code, `cannot delete group ${group}`);
      return c.body(null, 204);
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/groups/{group}/offsets/reset",
      tags: ["groups"],
      summary: "Reset the offsets of an inactive group (earliest, latest, a time or explicit)",
      request: {
        params: GroupParams,
        body: { required: true, content: { "application/json": { schema: ResetBody } } },
      },
      responses: {
        200: jsonOk(z.object({
          offsets: z.array(z.object({
            topic: z.string(),
            partition: z.number().int(),
            offset: z.number().int(),
          })),
          dry_run: z.boolean(),
        })),
        ...commonErrors,
        409: err("the group has active members"),
      },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const body = valid(c, "json", ResetBody);
      const d = broker.groups.coordinator.describeGroup(group);
      if (d.state !== "Empty" && d.state !== "Dead") {
        throw kafkaError(
          ErrorCode.NON_EMPTY_GROUP,
          `group ${group} is ${d.state} with ${d.members.length} member(s); offsets can only be reset while it is inactive`,
        );
      }
      const targets: { topic: string; partition: number; offset: number }[] = [];
      if (body.to === "offsets") {
        if (!body.offsets?.length) {
          throw badRequest("to=offsets needs offsets: [{topic, partition, offset}]");
        }
        // As kafka-consumer-groups --reset-offsets --to-offset does: within the log's range
        // (asked of each partition's leader, here or elsewhere).
        const specs = body.offsets.map((o) => {
          const t = broker.meta.getTopic(o.topic);
          if (!t?.partitions.some((p) => p.partition === o.partition)) {
            throw partitionNotFound(`partition ${o.topic}-${o.partition} not found`);
          }
          return {
            topic: o.topic,
            partition: o.partition,
            from: "latest" as const,
            limit: 1,
            maxBytes: 0,
          };
        });
        const ranges = await access.read(specs, { deadline: performance.now() + 10_000 });
        body.offsets.forEach((o, i) => {
          const r = ranges[i];
          if (r.error) throw r.error;
          const offset = Math.min(Math.max(o.offset, r.logStartOffset), r.highWatermark);
          targets.push({ topic: o.topic, partition: o.partition, offset });
        });
      } else {
        const topics = body.topics ??
          [...new Set(groupOffsets(broker, group).map((o) => o.topic))];
        if (topics.length === 0) {
          throw badRequest("the group has no offsets yet: name the topics to reset");
        }
        let from: From = body.to === "earliest" ? "earliest" : "latest";
        if (body.to === "timestamp") {
          const t = body.timestamp;
          const ts = typeof t === "number" ? t : t !== undefined ? Date.parse(t) : NaN;
          if (Number.isNaN(ts) || ts < 0) {
            throw badRequest("to=timestamp needs timestamp (epoch ms or ISO-8601)");
          }
          from = { timestamp: ts };
        }
        for (const name of topics) {
          const t = broker.meta.getTopic(name);
          if (!t) throw topicNotFound(name);
          const found = await access.offsets(name, t.partitions.map((p) => p.partition), from);
          for (const r of found) {
            if (r.error) throw r.error;
            targets.push({ topic: name, partition: r.partition, offset: r.offset });
          }
        }
      }
      if (!body.dry_run) {
        const byTopic = new Map<string, { partition: number; offset: number }[]>();
        for (const o of targets) {
          const l = byTopic.get(o.topic) ?? [];
          l.push({ partition: o.partition, offset: o.offset });
          byTopic.set(o.topic, l);
        }
        // A standalone commit (generation -1): allowed only while the group has no members.
        const r = await broker.groups.request({
          type: "offsetCommit",
          groupId: group,
          generationId: -1,
          memberId: "",
          groupInstanceId: null,
          retentionTimeMs: -1,
          topics: [...byTopic].map(([name, ps]) => ({
            name,
            partitions: ps.map((p) => ({ ...p, leaderEpoch: -1, metadata: null })),
          })),
        });
        if (r.kind === "offsetCommit") {
          for (const t of r.topics) {
            for (const p of t.partitions) {
              if (p.errorCode !== 0) {
                throw kafkaError(
                  p.errorCode,
                  `cannot reset ${t.name}-${p.partition} of group ${group}`,
                );
              }
            }
          }
        }
      }
      return c.json({ offsets: targets, dry_run: body.dry_run ?? false });
    },
  );
}
