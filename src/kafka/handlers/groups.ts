// Group APIs: wire bodies become GroupService inputs (the one coordinator that HTTP members
// join too) and coordinator responses become wire bodies. JoinGroup and SyncGroup wait for
// the rebalance; a connection that closes drops its waiting requests.
import { ErrorCode } from "../../protocol/kafka/index.ts";
import type { Struct } from "../../protocol/kafka/index.ts";
import type { CoordinatorResponse, GroupState } from "../../groups/index.ts";
import {
  arr,
  bool,
  errorCodeOf,
  type KafkaContext,
  nstr,
  num,
  type RequestContext,
  str,
} from "../context.ts";

async function ask(
  ctx: KafkaContext,
  req: RequestContext,
  input: Parameters<KafkaContext["groups"]["request"]>[0],
) {
  if ("groupId" in input && !ctx.groups.coordinates(input.groupId)) {
    return { kind: "error" as const, errorCode: ErrorCode.NOT_COORDINATOR };
  }
  try {
    return await ctx.groups.request(input, req.connection);
  } catch (e) {
    // The service refuses only when shutting down: tell the client to look elsewhere.
    const code = errorCodeOf(e);
    return {
      kind: "error" as const,
      errorCode: code === -1 ? ErrorCode.COORDINATOR_NOT_AVAILABLE : code,
    };
  }
}

type Answer = CoordinatorResponse | { kind: "error"; errorCode: number };

function expect<K extends CoordinatorResponse["kind"]>(
  r: Answer,
  kind: K,
): Extract<CoordinatorResponse, { kind: K }> | { errorCode: number; kind: "error" } {
  if (r.kind === kind || r.kind === "error") return r as Extract<CoordinatorResponse, { kind: K }>;
  throw new Error(`coordinator answered ${r.kind} to ${kind}`);
}

export async function joinGroup(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const v = req.header.apiVersion;
  const session = num(b.sessionTimeoutMs);
  const r = expect(
    await ask(ctx, req, {
      type: "join",
      groupId: str(b.groupId),
      memberId: str(b.memberId),
      groupInstanceId: nstr(b.groupInstanceId),
      clientId: req.header.clientId ?? "",
      clientHost: req.clientHost,
      sessionTimeoutMs: session,
      rebalanceTimeoutMs: v >= 1 ? num(b.rebalanceTimeoutMs, -1) : -1,
      protocolType: str(b.protocolType),
      protocols: arr(b.protocols).map((p) => ({
        name: str(p.name),
        metadata: p.metadata instanceof Uint8Array ? p.metadata : new Uint8Array(0),
      })),
      requireKnownMemberId: v >= 4,
      brokerAssigns: false,
    }),
    "join",
  );
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: -1,
      protocolName: v >= 7 ? null : "",
      leader: "",
      memberId: str(b.memberId),
      members: [],
    };
  }
  return {
    throttleTimeMs: 0,
    errorCode: r.errorCode,
    generationId: r.generationId,
    protocolType: r.protocolType,
    // Before v7 the name is not nullable.
    protocolName: v >= 7 ? r.protocolName : r.protocolName ?? "",
    leader: r.leader,
    skipAssignment: v >= 9 && r.skipAssignment,
    memberId: r.memberId,
    members: r.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata,
    })),
  };
}

export async function syncGroup(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const r = expect(
    await ask(ctx, req, {
      type: "sync",
      groupId: str(b.groupId),
      generationId: num(b.generationId),
      memberId: str(b.memberId),
      groupInstanceId: nstr(b.groupInstanceId),
      protocolType: nstr(b.protocolType),
      protocolName: nstr(b.protocolName),
      assignments: arr(b.assignments).map((a) => ({
        memberId: str(a.memberId),
        assignment: a.assignment instanceof Uint8Array ? a.assignment : new Uint8Array(0),
      })),
    }),
    "sync",
  );
  if (r.kind === "error") {
    return { throttleTimeMs: 0, errorCode: r.errorCode, assignment: new Uint8Array(0) };
  }
  return {
    throttleTimeMs: 0,
    errorCode: r.errorCode,
    protocolType: r.protocolType,
    protocolName: r.protocolName,
    assignment: r.assignment,
  };
}

export async function heartbeat(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const r = expect(
    await ask(ctx, req, {
      type: "heartbeat",
      groupId: str(b.groupId),
      generationId: num(b.generationId),
      memberId: str(b.memberId),
      groupInstanceId: nstr(b.groupInstanceId),
    }),
    "heartbeat",
  );
  return { throttleTimeMs: 0, errorCode: r.errorCode };
}

export async function leaveGroup(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const v = req.header.apiVersion;
  const members = v >= 3
    ? arr(b.members).map((m) => ({
      memberId: str(m.memberId),
      groupInstanceId: nstr(m.groupInstanceId),
    }))
    : [{ memberId: str(b.memberId), groupInstanceId: null }];
  const r = expect(
    await ask(ctx, req, { type: "leave", groupId: str(b.groupId), members }),
    "leave",
  );
  if (r.kind === "error") return { throttleTimeMs: 0, errorCode: r.errorCode, members: [] };
  return { throttleTimeMs: 0, errorCode: r.errorCode, members: v >= 3 ? r.members : [] };
}

/**
 * OffsetCommit. v0 carries no generation or member: it is a simple commit (generation -1, no
 * member id), accepted only while the group has no members (else UNKNOWN_MEMBER_ID), as Kafka's
 * coordinator treats a generation -1 commit. v1 adds them (checked as in v2+) and a per-partition
 * CommitTimestamp (-1 = now). v2-4 carry RetentionTimeMs.
 */
export async function offsetCommit(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const v = req.header.apiVersion;
  const topics = arr(b.topics).map((t) => ({
    name: str(t.name),
    partitions: arr(t.partitions).map((p) => ({
      partition: num(p.partitionIndex),
      offset: num(p.committedOffset),
      leaderEpoch: num(p.committedLeaderEpoch, -1),
      metadata: nstr(p.committedMetadata),
      commitTimestamp: v === 1 ? num(p.commitTimestamp, -1) : -1,
    })),
  }));
  const r = expect(
    await ask(ctx, req, {
      type: "offsetCommit",
      groupId: str(b.groupId),
      generationId: v >= 1 ? num(b.generationIdOrMemberEpoch, -1) : -1,
      memberId: v >= 1 ? str(b.memberId) : "",
      groupInstanceId: nstr(b.groupInstanceId),
      retentionTimeMs: num(b.retentionTimeMs, -1),
      topics,
    }),
    "offsetCommit",
  );
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode: r.errorCode,
        })),
      })),
    };
  }
  return {
    throttleTimeMs: 0,
    topics: r.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition,
        errorCode: p.errorCode,
      })),
    })),
  };
}

function fetchGroupOffsets(ctx: KafkaContext, groupId: string, topicsRaw: unknown) {
  const topics = topicsRaw === null || topicsRaw === undefined ? null : arr(topicsRaw).map((t) => ({
    name: str(t.name),
    partitions: (Array.isArray(t.partitionIndexes) ? t.partitionIndexes : []).map((n) => num(n)),
  }));
  if (!ctx.groups.coordinates(groupId)) {
    // Another broker holds the group's offsets: the client looks the coordinator up again.
    const code = ErrorCode.NOT_COORDINATOR;
    return {
      errorCode: code,
      topics: (topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => ({
          partitionIndex,
          committedOffset: -1,
          committedLeaderEpoch: -1,
          metadata: null,
          errorCode: code,
        })),
      })),
    };
  }
  const r = ctx.groups.coordinator.fetchOffsets(groupId, topics);
  return {
    errorCode: r.errorCode,
    topics: r.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition,
        committedOffset: p.offset,
        committedLeaderEpoch: p.leaderEpoch,
        metadata: p.metadata,
        errorCode: p.errorCode,
      })),
    })),
  };
}

export async function offsetFetch(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const ids = req.header.apiVersion >= 8 ? arr(b.groups).map((g) => str(g.groupId)) : [
    str(b.groupId),
  ];
  // Commits accepted before this request are answered even if still being written.
  await Promise.all(ids.map((id) => ctx.groups.commitsSettled(id)));
  if (req.header.apiVersion >= 8) {
    return {
      throttleTimeMs: 0,
      groups: arr(b.groups).map((g) => ({
        groupId: str(g.groupId),
        ...fetchGroupOffsets(ctx, str(g.groupId), g.topics),
      })),
    };
  }
  // v0-1 have no "all topics" form: an absent list is an empty one.
  const topics = req.header.apiVersion < 2 && b.topics === null ? [] : b.topics;
  const r = fetchGroupOffsets(ctx, str(b.groupId), topics);
  return { throttleTimeMs: 0, topics: r.topics, errorCode: r.errorCode };
}

const STATES: readonly GroupState[] = [
  "Empty",
  "PreparingRebalance",
  "CompletingRebalance",
  "Stable",
  "Dead",
];

export function listGroups(ctx: KafkaContext, req: RequestContext): Struct {
  const wanted = Array.isArray(req.body.statesFilter)
    ? (req.body.statesFilter as unknown[]).map(str)
    : [];
  const states = wanted.filter((s): s is GroupState => (STATES as string[]).includes(s));
  // A filter naming only unknown states matches nothing.
  const groups = wanted.length > 0 && states.length === 0
    ? []
    : ctx.groups.coordinator.listGroups(states);
  const types = Array.isArray(req.body.typesFilter)
    ? (req.body.typesFilter as unknown[]).map(str)
    : [];
  const classic = types.length === 0 || types.some((t) => t.toLowerCase() === "classic");
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    groups: classic
      ? groups.map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: g.state,
        groupType: "classic",
      }))
      : [],
  };
}

export function describeGroups(ctx: KafkaContext, req: RequestContext): Struct {
  const ids = Array.isArray(req.body.groups) ? (req.body.groups as unknown[]).map(str) : [];
  return {
    throttleTimeMs: 0,
    groups: ids.map((id) => {
      if (!ctx.groups.coordinates(id)) {
        return {
          errorCode: ErrorCode.NOT_COORDINATOR,
          groupId: id,
          groupState: "",
          protocolType: "",
          protocolData: "",
          members: [],
          authorizedOperations: -2147483648,
        };
      }
      const g = ctx.groups.coordinator.describeGroup(id);
      return {
        errorCode: g.errorCode,
        groupId: g.groupId,
        groupState: g.state,
        protocolType: g.protocolType,
        protocolData: g.protocolData,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
        authorizedOperations: bool(req.body.includeAuthorizedOperations) ? 0 : -2147483648,
      };
    }),
  };
}

export async function deleteGroups(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const ids = Array.isArray(req.body.groupsNames)
    ? (req.body.groupsNames as unknown[]).map(str)
    : [];
  const here = ids.filter((id) => ctx.groups.coordinates(id));
  const elsewhere = ids.filter((id) => !here.includes(id))
    .map((groupId) => ({ groupId, errorCode: ErrorCode.NOT_COORDINATOR }));
  if (here.length === 0) return { throttleTimeMs: 0, results: elsewhere };
  const r = expect(await ask(ctx, req, { type: "deleteGroups", groupIds: here }), "deleteGroups");
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      results: [...here.map((groupId) => ({ groupId, errorCode: r.errorCode })), ...elsewhere],
    };
  }
  return { throttleTimeMs: 0, results: [...r.results, ...elsewhere] };
}
