/**
 * Committed offsets: OffsetCommit validation, OffsetFetch, retention expiry, DeleteGroups, and
 * rebuilding groups from __consumer_offsets records on start.
 */
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import type { Decoded } from "./bytes.ts";
import { Ctx, EMPTY_BYTES, Group, type Member, type OffsetEntry } from "./group.ts";
import {
  decodeOffsetsRecord,
  type EncodedRecord,
  type GroupMetadataValue,
  type OffsetCommitValue,
  type OffsetsRecord,
} from "./records.ts";
import type {
  DeleteGroupsInput,
  DeleteGroupsResponse,
  OffsetCommitInput,
  OffsetCommitResponse,
  OffsetFetchPartition,
  OffsetFetchResult,
  RequestToken,
} from "./types.ts";

export interface PendingCommit {
  appendId: number;
  token: RequestToken | null;
  groupId: string;
  entries: { topic: string; partition: number; entry: OffsetEntry }[];
  response: OffsetCommitResponse;
}

const utf8 = new TextEncoder();

/** The group-level verdict on a commit (0 = go ahead); may create a simple group. */
function commitGroupError(ctx: Ctx, groups: Map<string, Group>, req: OffsetCommitInput): number {
  const g = groups.get(req.groupId);
  if (g === undefined) {
    // No group management behind this commit (standalone consumer, admin tool): allowed.
    if (req.generationId < 0) {
      groups.set(req.groupId, new Group(req.groupId, ctx.now));
      return ErrorCode.NONE;
    }
    return ErrorCode.ILLEGAL_GENERATION;
  }
  if (g.state === "Dead") return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  if (req.groupInstanceId !== null) {
    const current = g.staticMembers.get(req.groupInstanceId);
    if (current !== undefined && current !== req.memberId) return ErrorCode.FENCED_INSTANCE_ID;
  }
  if (req.generationId < 0 && g.members.size === 0) return ErrorCode.NONE;
  const m: Member | undefined = g.members.get(req.memberId);
  if (m === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (req.generationId !== g.generation) return ErrorCode.ILLEGAL_GENERATION;
  if (g.state === "CompletingRebalance") return ErrorCode.REBALANCE_IN_PROGRESS;
  m.lastSeenMs = ctx.now;
  return ErrorCode.NONE;
}

/** Validates and appends; the response waits for `appendDone` unless nothing is appended. */
export function handleOffsetCommit(
  ctx: Ctx,
  groups: Map<string, Group>,
  req: OffsetCommitInput,
): PendingCommit | null {
  const groupError = commitGroupError(ctx, groups, req);
  const response: OffsetCommitResponse = { kind: "offsetCommit", topics: [] };
  const pending: PendingCommit = {
    appendId: -1,
    token: req.token,
    groupId: req.groupId,
    entries: [],
    response,
  };
  for (const t of req.topics) {
    const partitions: { partition: number; errorCode: number }[] = [];
    response.topics.push({ name: t.name, partitions });
    const count = ctx.cfg.partitionCounts(t.name);
    for (const p of t.partitions) {
      const metadata = p.metadata ?? "";
      let errorCode: number = groupError;
      if (errorCode === ErrorCode.NONE) {
        if (count === undefined || p.partition < 0 || p.partition >= count) {
          errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        } else if (utf8.encode(metadata).length > ctx.cfg.offsetMetadataMaxBytes) {
          errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
        }
      }
      partitions.push({ partition: p.partition, errorCode });
      if (errorCode !== ErrorCode.NONE) continue;
      pending.entries.push({
        topic: t.name,
        partition: p.partition,
        entry: {
          offset: p.offset,
          leaderEpoch: p.leaderEpoch,
          metadata,
          // Kafka: an explicit v1 CommitTimestamp is the commit time (offset expiry counts
          // from it); the default (-1) is now.
          commitTimestamp: p.commitTimestamp === undefined || p.commitTimestamp === -1
            ? ctx.now
            : p.commitTimestamp,
          expireTimestamp: req.retentionTimeMs >= 0 ? ctx.now + req.retentionTimeMs : null,
        },
      });
    }
  }
  if (pending.entries.length === 0) {
    ctx.respond(req.token, response);
    return null;
  }
  const records: OffsetsRecord[] = pending.entries.map((e) => ({
    type: "offset",
    group: req.groupId,
    topic: e.topic,
    partition: e.partition,
    value: { ...e.entry },
  }));
  groups.get(req.groupId)!.pendingCommits++;
  pending.appendId = ctx.append(req.groupId, records);
  return pending;
}

/** Kafka's mapping of log append errors to what an OffsetCommit client understands. */
function commitErrorFor(appendError: number): number {
  switch (appendError) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

/** The commit's records are durable (or failed): update the cache and answer. */
export function completeCommit(
  ctx: Ctx,
  groups: Map<string, Group>,
  p: PendingCommit,
  appendError: number,
): void {
  const g = groups.get(p.groupId);
  if (g !== undefined) g.pendingCommits = Math.max(0, g.pendingCommits - 1);
  if (appendError === ErrorCode.NONE) {
    // A group deleted meanwhile stays deleted: its tombstones follow these records in the log.
    if (g !== undefined) { for (const e of p.entries) setOffset(g, e.topic, e.partition, e.entry); }
  } else {
    const code = commitErrorFor(appendError);
    for (const t of p.response.topics) {
      for (const part of t.partitions) if (part.errorCode === ErrorCode.NONE) part.errorCode = code;
    }
  }
  ctx.respond(p.token, p.response);
}

function setOffset(g: Group, topic: string, partition: number, entry: OffsetEntry): void {
  let parts = g.offsets.get(topic);
  if (parts === undefined) g.offsets.set(topic, parts = new Map());
  parts.set(partition, entry);
}

const NO_OFFSET = (partition: number): OffsetFetchPartition => ({
  partition,
  offset: -1,
  leaderEpoch: -1,
  metadata: "",
  errorCode: ErrorCode.NONE,
});

/** OffsetFetch: -1 for partitions without a commit (also for unknown groups: not an error). */
export function fetchOffsets(
  g: Group | undefined,
  topics: readonly { name: string; partitions: readonly number[] }[] | null,
): OffsetFetchResult {
  const of = (topic: string, partition: number): OffsetFetchPartition => {
    const e = g?.offsets.get(topic)?.get(partition);
    if (e === undefined) return NO_OFFSET(partition);
    return {
      partition,
      offset: e.offset,
      leaderEpoch: e.leaderEpoch,
      metadata: e.metadata,
      errorCode: 0,
    };
  };
  if (topics !== null) {
    return {
      errorCode: ErrorCode.NONE,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => of(t.name, p)),
      })),
    };
  }
  const names = g === undefined ? [] : [...g.offsets.keys()].sort();
  return {
    errorCode: ErrorCode.NONE,
    topics: names.map((name) => ({
      name,
      partitions: [...g!.offsets.get(name)!.keys()].sort((a, b) => a - b).map((p) => of(name, p)),
    })),
  };
}

function tombstones(g: Group): OffsetsRecord[] {
  const out: OffsetsRecord[] = [];
  for (const [topic, parts] of g.offsets) {
    for (const partition of parts.keys()) {
      out.push({ type: "offset", group: g.groupId, topic, partition, value: null });
    }
  }
  return out;
}

/**
 * Offsets of groups without members expire `offsetsRetentionMs` after the later of the commit
 * and the time the group became Empty (an explicit RetentionTimeMs wins). An Empty group left
 * with no offsets is removed. Groups with commits in flight are left for the next check.
 */
export function expireOffsets(ctx: Ctx, groups: Map<string, Group>, g: Group): void {
  if (g.state !== "Empty" || g.members.size > 0 || g.pendingCommits > 0) return;
  const records: OffsetsRecord[] = [];
  for (const [topic, parts] of g.offsets) {
    for (const [partition, e] of parts) {
      const base = g.protocolType === null
        ? e.commitTimestamp
        : Math.max(e.commitTimestamp, g.stateSinceMs);
      const expiry = e.expireTimestamp ?? base + ctx.cfg.offsetsRetentionMs;
      if (expiry > ctx.now) continue;
      parts.delete(partition);
      records.push({ type: "offset", group: g.groupId, topic, partition, value: null });
    }
    if (parts.size === 0) g.offsets.delete(topic);
  }
  if (records.length > 0) {
    ctx.event({ kind: "offsetsExpired", groupId: g.groupId, count: records.length });
  }
  const remove = g.offsetCount === 0 && g.pending.size === 0;
  if (remove) records.push({ type: "group", group: g.groupId, value: null });
  if (records.length > 0) ctx.append(g.groupId, records);
  if (remove) {
    ctx.transition(g, "Dead");
    groups.delete(g.groupId);
    ctx.event({ kind: "groupRemoved", groupId: g.groupId, reason: "expired" });
  }
}

/**
 * Drop every group's committed offsets of a deleted topic, with tombstones in __consumer_offsets,
 * so a topic created again under the name is read from its start, not from the old positions.
 */
export function deleteTopicOffsets(ctx: Ctx, groups: Map<string, Group>, topic: string): void {
  for (const g of groups.values()) {
    const parts = g.offsets.get(topic);
    if (parts === undefined || parts.size === 0) continue;
    const records: OffsetsRecord[] = [...parts.keys()].map((partition) => ({
      type: "offset",
      group: g.groupId,
      topic,
      partition,
      value: null,
    }));
    g.offsets.delete(topic);
    ctx.append(g.groupId, records);
    ctx.event({ kind: "offsetsDeleted", groupId: g.groupId, topic, count: records.length });
  }
}

export function handleDeleteGroups(
  ctx: Ctx,
  groups: Map<string, Group>,
  req: DeleteGroupsInput,
): void {
  const response: DeleteGroupsResponse = { kind: "deleteGroups", results: [] };
  for (const groupId of req.groupIds) {
    const g = groups.get(groupId);
    let errorCode: number = ErrorCode.NONE;
    if (groupId === "") errorCode = ErrorCode.INVALID_GROUP_ID;
    else if (g === undefined || g.state === "Dead") errorCode = ErrorCode.GROUP_ID_NOT_FOUND;
    else if (g.members.size > 0 || g.state !== "Empty") errorCode = ErrorCode.NON_EMPTY_GROUP;
    response.results.push({ groupId, errorCode });
    if (errorCode !== ErrorCode.NONE) continue;
    ctx.append(groupId, [...tombstones(g!), { type: "group", group: groupId, value: null }]);
    ctx.transition(g!, "Dead");
    groups.delete(groupId);
    ctx.event({ kind: "groupRemoved", groupId, reason: "deleted" });
  }
  ctx.respond(req.token, response);
}

// ---------------------------------------------------------------------------------------------
// Restore

interface Loaded {
  meta: GroupMetadataValue | null;
  offsets: Map<string, Map<number, OffsetCommitValue>>;
}

/**
 * Replays __consumer_offsets records (oldest first) into groups: Empty groups keep their
 * generation and offsets; groups recorded with members come back Stable and must heartbeat.
 */
export function restoreGroups(
  ctx: Ctx,
  groups: Map<string, Group>,
  records: readonly EncodedRecord[],
): void {
  const loaded = new Map<string, Loaded>();
  const at = (id: string): Loaded => {
    let l = loaded.get(id);
    if (l === undefined) loaded.set(id, l = { meta: null, offsets: new Map() });
    return l;
  };
  for (const r of records) {
    const d: Decoded<OffsetsRecord> = decodeOffsetsRecord(r.key, r.value);
    if (!d.ok) {
      ctx.event({ kind: "recordSkipped", reason: d.error });
      continue;
    }
    const rec = d.value;
    if (rec.type === "other") continue;
    const l = at(rec.group);
    if (rec.type === "group") {
      l.meta = rec.value;
      continue;
    }
    let parts = l.offsets.get(rec.topic);
    if (rec.value === null) {
      parts?.delete(rec.partition);
      continue;
    }
    if (parts === undefined) l.offsets.set(rec.topic, parts = new Map());
    parts.set(rec.partition, rec.value);
  }
  for (const [id, l] of loaded) {
    const hasOffsets = [...l.offsets.values()].some((p) => p.size > 0);
    if (l.meta === null && !hasOffsets) continue;
    const g = new Group(id, ctx.now);
    if (l.meta !== null) restoreMeta(ctx, g, l.meta);
    for (const [topic, parts] of l.offsets) {
      for (const [partition, v] of parts) setOffset(g, topic, partition, { ...v });
    }
    groups.set(id, g);
  }
}

function restoreMeta(ctx: Ctx, g: Group, meta: GroupMetadataValue): void {
  g.generation = meta.generation;
  g.protocolType = meta.protocolType === "" ? null : meta.protocolType;
  g.protocol = meta.protocol;
  g.leader = meta.leader;
  if (meta.currentStateTimestamp >= 0) g.stateSinceMs = meta.currentStateTimestamp;
  if (meta.members.length === 0 || meta.protocol === null) {
    g.protocol = null;
    g.leader = null;
    return;
  }
  for (const r of meta.members) {
    g.members.set(r.memberId, {
      memberId: r.memberId,
      groupInstanceId: r.groupInstanceId,
      clientId: r.clientId,
      clientHost: r.clientHost,
      sessionTimeoutMs: r.sessionTimeoutMs,
      rebalanceTimeoutMs: r.rebalanceTimeoutMs,
      protocolType: meta.protocolType,
      protocols: [{ name: meta.protocol, metadata: r.subscription }],
      assignment: r.assignment.length === 0 ? EMPTY_BYTES : r.assignment,
      brokerAssigns: false,
      lastSeenMs: ctx.now,
      awaitingJoin: false,
      joinToken: null,
      syncToken: null,
    });
    if (r.groupInstanceId !== null) g.staticMembers.set(r.groupInstanceId, r.memberId);
  }
  if (g.leader === null || !g.members.has(g.leader)) g.leader = g.members.keys().next().value!;
  g.state = "Stable";
  g.stateSinceMs = ctx.now;
}
