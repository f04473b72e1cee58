// HTTP members of consumer groups (the same groups Kafka clients join). A member joins with a set
// of topics and gets an assignment (the broker runs the assignor when an HTTP member leads);
// every fetch and commit carries member id and generation and counts as a heartbeat. Positions
// are the committed offsets plus a cursor the client holds, so any broker can serve the next
// request and a broker restart loses nothing.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Broker } from "../broker.ts";
import {
  BROKER_ASSIGNOR_NAMES,
  CONSUMER_PROTOCOL_TYPE,
  encodeSubscription,
  type TopicPartitions,
} from "../groups/index.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { type HttpContext, on } from "./context.ts";
import { badRequest, kafkaError, topicNotFound } from "./errors.ts";
import {
  commonErrors,
  err,
  Format,
  GroupParams,
  intQuery,
  jsonOk,
  RecordOut,
  valid,
  z,
} from "./schemas.ts";
import { assignmentOf } from "./groups.ts";
import { recordBytes, renderRecord } from "./render.ts";
import { clientSignal, MAX_WAIT_MS } from "./read.ts";
import { FORWARD_MARGIN_MS, type ReadSpec } from "./partition-access.ts";
import { encodeCursor, parseCursor, type Positions } from "./cursor.ts";
import { refuseUnlessAllowed } from "./acl.ts";

/** HTTP members heartbeat only when they call: a longer default session than Kafka's 45 s. */
const DEFAULT_SESSION_MS = 60_000;
const MAX_JOIN_ATTEMPTS = 5;
/**
 * Protocols an HTTP member offers: the broker's assignors, then names Kafka clients use by default
 * (kafkajs offers only "RoundRobinAssigner"), so mixed groups find a common protocol. When an HTTP
 * member leads under a protocol the broker does not know, it assigns with range.
 */
const HTTP_PROTOCOLS = [...new Set([...BROKER_ASSIGNOR_NAMES, "RoundRobinAssigner"])];

/** A cursor from the client: 400 when it is not one this API issued. */
function decodeCursor(s: string): Positions {
  const pos = parseCursor(s);
  if (pos === undefined) throw badRequest("cursor is not one this API issued");
  return pos;
}

const MemberAuth = z.object({
  member_id: z.string().min(1).max(1000),
  generation_id: z.coerce.number().int().min(-1).max(2_147_483_647),
});

const JoinBody = z.object({
  topics: z.array(z.string().min(1).max(249)).min(1).max(10_000),
  member_id: z.string().max(1000).optional().openapi({ description: "rejoin as this member" }),
  client_id: z.string().max(255).optional(),
  session_timeout_ms: z.number().int().min(1).max(3_600_000).optional().openapi({
    description: "removed after this long without a request (default 60000)",
  }),
  rebalance_timeout_ms: z.number().int().min(1).max(3_600_000).optional(),
}).strict().openapi("JoinGroup");

const TP = z.object({ topic: z.string(), partitions: z.array(z.number().int()) });
const JoinResponse = z.object({
  member_id: z.string(),
  generation_id: z.number().int(),
  protocol: z.string().nullable(),
  leader: z.string(),
  assignment: z.array(TP),
}).openapi("Membership");

const FetchQuery = MemberAuth.extend({
  cursor: z.string().max(4_000_000).optional().openapi({
    description: "the cursor of the previous fetch (positions not yet committed)",
  }),
  max_wait_ms: intQuery(0, MAX_WAIT_MS, "long-poll: wait this long for a first record (default 0)"),
  limit: intQuery(1, 10_000, "at most this many records (default 500)"),
  max_bytes: intQuery(1, 64 * 1024 * 1024, "about this many bytes of log (default 1 MiB)"),
  reset: z.enum(["earliest", "latest"]).optional().openapi({
    description: "where to start a partition without a committed offset (default earliest)",
  }),
  format: Format,
});

const CommitBody = MemberAuth.extend({
  offsets: z.array(z.object({
    topic: z.string().min(1).max(249),
    partition: z.number().int().min(0),
    offset: z.number().int().min(0),
    metadata: z.string().max(4096).nullable().optional(),
  })).max(100_000).optional(),
  cursor: z.string().max(4_000_000).optional().openapi({ description: "commit these positions" }),
}).strict().openapi("Commit");

const memberErrors = {
  ...commonErrors,
  409: err("stale generation or rebalance in progress: join again with your member_id"),
};

/** The implicit heartbeat of every member request: refuses unknown members and stale generations. */
async function heartbeat(broker: Broker, group: string, memberId: string, generation: number) {
  const r = await broker.groups.request({
    type: "heartbeat",
    groupId: group,
    generationId: generation,
    memberId,
    groupInstanceId: null,
  });
  const code = r.kind === "heartbeat" ? r.errorCode : ErrorCode.UNKNOWN_SERVER_ERROR;
  if (code !== 0) {
    throw kafkaError(code, `member ${memberId} of group ${group} (generation ${generation})`);
  }
}

function memberAssignment(broker: Broker, group: string, memberId: string): TopicPartitions[] {
  const d = broker.groups.coordinator.describeGroup(group);
  const m = d.members.find((x) => x.memberId === memberId);
  return m ? assignmentOf(m.assignment) : [];
}

export function memberRoutes(app: OpenAPIHono, { broker, metrics, closing, access }: HttpContext) {
  on(
    app,
    createRoute({
      method: "post",
      path: "/groups/{group}/members",
      tags: ["group members"],
      summary: "Join a group for a set of topics; answers once the group has rebalanced",
      request: {
        params: GroupParams,
        body: { required: true, content: { "application/json": { schema: JoinBody } } },
      },
      responses: { 200: jsonOk(JoinResponse), ...memberErrors },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const body = valid(c, "json", JoinBody);
      for (const t of body.topics) if (!broker.meta.getTopic(t)) throw topicNotFound(t);
      const metadata = encodeSubscription({
        version: 0,
        topics: [...new Set(body.topics)].sort(),
        userData: null,
        ownedPartitions: [],
        generationId: -1,
        rackId: null,
      });
      const session = body.session_timeout_ms ?? DEFAULT_SESSION_MS;
      // A client that hangs up mid-rebalance must not keep a pending join in the group.
      const connection = {};
      const signal = clientSignal(c.req.raw, closing);
      const onAbort = () => broker.groups.disconnected(connection);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        let memberId = body.member_id ?? "";
        for (let attempt = 0; attempt < MAX_JOIN_ATTEMPTS; attempt++) {
          const j = await broker.groups.request({
            type: "join",
            groupId: group,
            memberId,
            groupInstanceId: null,
            clientId: body.client_id ?? "http",
            clientHost: c.req.header("x-forwarded-for") ?? "http",
            sessionTimeoutMs: session,
            rebalanceTimeoutMs: body.rebalance_timeout_ms ?? session,
            protocolType: CONSUMER_PROTOCOL_TYPE,
            protocols: HTTP_PROTOCOLS.map((name) => ({ name, metadata })),
            requireKnownMemberId: false,
            brokerAssigns: true,
          }, connection);
          if (j.kind !== "join") {
            throw kafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "unexpected coordinator answer");
          }
          if (j.errorCode === ErrorCode.UNKNOWN_MEMBER_ID && memberId !== "") {
            memberId = ""; // expired: join as a new member
            continue;
          }
          if (j.errorCode !== 0) throw kafkaError(j.errorCode, `cannot join group ${group}`);
          memberId = j.memberId;
          const s = await broker.groups.request({
            type: "sync",
            groupId: group,
            generationId: j.generationId,
            memberId,
            groupInstanceId: null,
            protocolType: CONSUMER_PROTOCOL_TYPE,
            protocolName: j.protocolName,
            assignments: [],
          }, connection);
          if (s.kind !== "sync") {
            throw kafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "unexpected coordinator answer");
          }
          if (s.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) continue;
          if (s.errorCode !== 0) throw kafkaError(s.errorCode, `cannot join group ${group}`);
          return c.json({
            member_id: memberId,
            generation_id: j.generationId,
            protocol: j.protocolName,
            leader: j.leader,
            assignment: assignmentOf(s.assignment),
          });
        }
        throw kafkaError(ErrorCode.REBALANCE_IN_PROGRESS, `group ${group} kept rebalancing`);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    },
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/groups/{group}/records",
      tags: ["group members"],
      summary: "Fetch the member's assigned partitions from committed offsets plus the cursor",
      request: { params: GroupParams, query: FetchQuery },
      responses: {
        200: jsonOk(z.object({
          records: z.array(RecordOut),
          cursor: z.string(),
          positions: z.array(
            z.object({ topic: z.string(), partition: z.number(), offset: z.number() }),
          ),
        })),
        ...memberErrors,
      },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const q = valid(c, "query", FetchQuery);
      await heartbeat(broker, group, q.member_id, q.generation_id);
      const assigned = memberAssignment(broker, group, q.member_id);
      // READ on each assigned topic, now: the group's leader (a Kafka client, perhaps) chose the
      // assignment, and ACLs may have changed since the join.
      refuseUnlessAllowed(c, 1, {
        replicaId: -1,
        topics: assigned.map((a) => ({ topic: a.topic })),
      });
      const held = q.cursor ? decodeCursor(q.cursor) : new Map();
      const committed = broker.groups.coordinator.fetchOffsets(
        group,
        assigned.map((a) => ({ name: a.topic, partitions: a.partitions })),
      );
      const limit = q.limit ?? 500;
      const maxBytes = q.max_bytes ?? 1024 * 1024;
      const format = q.format ?? "json";
      // Each assigned partition from the cursor, else its committed offset, else `reset`; read
      // wherever it is led (partitions of several leaders are asked in parallel).
      const specs: ReadSpec[] = [];
      for (const t of committed.topics) {
        for (const p of t.partitions) {
          const at: number | undefined = held.get(t.name)?.get(p.partition) ??
            (p.offset >= 0 ? p.offset : undefined);
          specs.push({
            topic: t.name,
            partition: p.partition,
            from: at ?? q.reset ?? "earliest",
            limit,
            maxBytes,
          });
        }
      }
      const wait = q.max_wait_ms ?? 0;
      // Each fetch starts at another partition: one with a backlog cannot take the whole byte
      // budget and record limit every time (the client holds no state to rotate with).
      const first = Math.floor(Math.random() * specs.length);
      const order = [...specs.slice(first), ...specs.slice(0, first)];
      const results = order.length === 0 ? [] : await access.read(order, {
        waitMs: wait,
        maxBytes,
        deadline: performance.now() + wait + FORWARD_MARGIN_MS,
        signal: clientSignal(c.req.raw, closing),
      });
      // Part of the assignment would look like all of it: a partition that cannot be read fails
      // the fetch (its position is kept for the next one).
      const failed = results.find((r) => r.error !== undefined);
      if (failed) throw failed.error;
      const pos: Positions = new Map();
      const out: ReturnType<typeof renderRecord>[] = [];
      for (const r of results) {
        let m = pos.get(r.topic);
        if (m === undefined) pos.set(r.topic, m = new Map());
        if (r.outOfRange) {
          // Retention passed the position: continue from the log start (auto.offset.reset).
          m.set(r.partition, r.outOfRange.logStartOffset);
          continue;
        }
        let next = r.next;
        let taken = 0;
        for (const rec of r.records) {
          if (out.length >= limit) {
            next = rec.offset; // cut by the limit: the rest comes next time
            break;
          }
          out.push(renderRecord(r.topic, r.partition, rec, format));
          taken++;
        }
        m.set(r.partition, next);
        if (taken > 0) {
          metrics.consumed(
            r.topic,
            taken,
            r.records.slice(0, taken).reduce((n, x) => n + recordBytes(x), 0),
          );
        }
      }
      const positions = specs.map((r) => ({
        topic: r.topic,
        partition: r.partition,
        offset: pos.get(r.topic)!.get(r.partition)!,
      }));
      return c.json({ records: out, cursor: encodeCursor(pos), positions });
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/groups/{group}/offsets",
      tags: ["group members"],
      summary: "Commit offsets (explicit, or the positions of a cursor)",
      request: {
        params: GroupParams,
        body: { required: true, content: { "application/json": { schema: CommitBody } } },
      },
      responses: {
        200: jsonOk(z.object({
          offsets: z.array(
            z.object({ topic: z.string(), partition: z.number(), offset: z.number() }),
          ),
        })),
        ...memberErrors,
      },
    }),
    async (c) => {
      const { group } = valid(c, "param", GroupParams);
      const body = valid(c, "json", CommitBody);
      const list: { topic: string; partition: number; offset: number; metadata?: string | null }[] =
        [...(body.offsets ?? [])];
      if (body.cursor) {
        for (const [topic, ps] of decodeCursor(body.cursor)) {
          for (const [partition, offset] of ps) list.push({ topic, partition, offset });
        }
      }
      if (list.length === 0) throw badRequest("nothing to commit: give offsets or a cursor");
      const byTopic = new Map<
        string,
        { partition: number; offset: number; leaderEpoch: number; metadata: string | null }[]
      >();
      for (const o of list) {
        const l = byTopic.get(o.topic) ?? [];
        l.push({
          partition: o.partition,
          offset: o.offset,
          leaderEpoch: -1,
          metadata: o.metadata ?? null,
        });
        byTopic.set(o.topic, l);
      }
      const r = await broker.groups.request({
        type: "offsetCommit",
        groupId: group,
        generationId: body.generation_id,
        memberId: body.member_id,
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
      });
      if (r.kind !== "offsetCommit") {
        throw kafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "unexpected coordinator answer");
      }
      for (const t of r.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== 0) {
            throw kafkaError(
              p.errorCode,
              `commit of ${t.name}-${p.partition} refused for member ${body.member_id} (generation ${body.generation_id})`,
            );
          }
        }
      }
      // A successful commit proves the member alive: keep its session.
      await heartbeat(broker, group, body.member_id, body.generation_id).catch(() => {});
      return c.json({
        offsets: list.map(({ topic, partition, offset }) => ({ topic, partition, offset })),
      });
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/groups/{group}/members/{member}/heartbeat",
      tags: ["group members"],
      summary: "Keep a member alive between fetches",
      request: {
        params: GroupParams.extend({
          member: z.string().min(1).max(1000).openapi({ param: { name: "member", in: "path" } }),
        }),
        query: z.object({ generation_id: z.coerce.number().int().min(-1).max(2_147_483_647) }),
      },
      responses: { 200: jsonOk(z.object({ ok: z.boolean() })), ...memberErrors },
    }),
    async (c) => {
      const { group, member } = c.req.param() as { group: string; member: string };
      await heartbeat(broker, group, member, Number(c.req.query("generation_id")));
      return c.json({ ok: true });
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/groups/{group}/members/{member}",
      tags: ["group members"],
      summary: "Leave the group (its partitions go to the other members)",
      request: {
        params: GroupParams.extend({
          member: z.string().min(1).max(1000).openapi({ param: { name: "member", in: "path" } }),
        }),
      },
      responses: { 204: { description: "left" }, ...memberErrors },
    }),
    async (c) => {
      const { group, member } = c.req.param() as { group: string; member: string };
      const r = await broker.groups.request({
        type: "leave",
        groupId: group,
        members: [{ memberId: member, groupInstanceId: null }],
      });
      const code = r.kind === "leave" ? (r.errorCode || r.members[0]?.errorCode || 0) : -1;
      if (code !== 0) throw kafkaError(code, `member ${member} cannot leave group ${group}`);
      return c.body(null, 204);
    },
  );
}
