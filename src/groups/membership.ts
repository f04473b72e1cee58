/** The classic group membership protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, timeouts. */
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { assignorFor, type AssignorMember, rangeAssignor } from "./assignors.ts";
import { decodeSubscription, encodeAssignment } from "./consumer-protocol.ts";
import { Ctx, EMPTY_BYTES, Group, type Member, sameProtocols } from "./group.ts";
import type {
  HeartbeatInput,
  JoinGroupInput,
  JoinGroupResponse,
  LeaveGroupInput,
  LeaveGroupResponse,
  RemovalReason,
  RequestToken,
  SyncGroupInput,
  SyncGroupResponse,
} from "./types.ts";

export function joinError(errorCode: number, memberId = ""): JoinGroupResponse {
  return {
    kind: "join",
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: "",
    memberId,
    members: [],
    skipAssignment: false,
  };
}

export function syncError(errorCode: number): SyncGroupResponse {
  return {
    kind: "sync",
    errorCode,
    protocolType: null,
    protocolName: null,
    assignment: EMPTY_BYTES,
  };
}

function joinSuccess(g: Group, m: Member, skipAssignment = false): JoinGroupResponse {
  const isLeader = g.leader === m.memberId;
  return {
    kind: "join",
    errorCode: ErrorCode.NONE,
    generationId: g.generation,
    protocolType: g.protocolType,
    protocolName: g.protocol,
    leader: g.leader ?? "",
    memberId: m.memberId,
    members: isLeader
      ? [...g.members.values()].map((x) => ({
        memberId: x.memberId,
        groupInstanceId: x.groupInstanceId,
        metadata: g.metadataOf(x),
      }))
      : [],
    skipAssignment,
  };
}

function syncSuccess(g: Group, m: Member): SyncGroupResponse {
  return {
    kind: "sync",
    errorCode: ErrorCode.NONE,
    protocolType: g.protocolType,
    protocolName: g.protocol,
    assignment: m.assignment,
  };
}

/** A stale member id for a static instance: the instance now belongs to another member id. */
function isFenced(g: Group, memberId: string, groupInstanceId: string | null): boolean {
  if (groupInstanceId === null) return false;
  const current = g.staticMembers.get(groupInstanceId);
  return current !== undefined && current !== memberId;
}

// ---------------------------------------------------------------------------------------------
// JoinGroup

export function handleJoin(ctx: Ctx, groups: Map<string, Group>, req: JoinGroupInput): void {
  const fail = (code: number, memberId = req.memberId) =>
    ctx.respond(req.token, joinError(code, memberId));
  if (req.groupId === "") return fail(ErrorCode.INVALID_GROUP_ID);
  const { minSessionTimeoutMs: min, maxSessionTimeoutMs: max } = ctx.cfg;
  if (req.sessionTimeoutMs < min || req.sessionTimeoutMs > max) {
    return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
  }
  let g = groups.get(req.groupId);
  if (g === undefined) {
    if (req.memberId !== "") return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    g = new Group(req.groupId, ctx.now);
    groups.set(req.groupId, g);
  }
  if (g.state === "Dead") return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (!g.supportsProtocols(req.protocolType, req.protocols, req.memberId)) {
    return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  }

  if (req.memberId === "") {
    if (req.groupInstanceId !== null) {
      const oldId = g.staticMembers.get(req.groupInstanceId);
      if (oldId !== undefined) return replaceStaticMember(ctx, g, g.members.get(oldId)!, req);
    }
    if (g.members.size + g.pending.size >= ctx.cfg.maxGroupSize) {
      return fail(ErrorCode.GROUP_MAX_SIZE_REACHED);
    }
    const memberId = ctx.cfg.newMemberId(req.clientId);
    if (req.groupInstanceId === null && req.requireKnownMemberId) {
      // The id is reserved for one session timeout; the client rejoins with it at once.
      g.pending.set(memberId, ctx.now + req.sessionTimeoutMs);
      return fail(ErrorCode.MEMBER_ID_REQUIRED, memberId);
    }
    return addMemberAndRebalance(ctx, g, memberId, req);
  }

  if (g.pending.has(req.memberId)) {
    g.pending.delete(req.memberId);
    return addMemberAndRebalance(ctx, g, req.memberId, req);
  }
  if (isFenced(g, req.memberId, req.groupInstanceId)) return fail(ErrorCode.FENCED_INSTANCE_ID);
  const m = g.members.get(req.memberId);
  if (m === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
  if (req.groupInstanceId !== m.groupInstanceId) return fail(ErrorCode.FENCED_INSTANCE_ID);

  const unchanged = m.protocolType === req.protocolType &&
    sameProtocols(m.protocols, req.protocols);
  switch (g.state) {
    case "PreparingRebalance":
      updateMember(ctx, m, req);
      return tryCompleteJoin(ctx, g);
    case "CompletingRebalance":
      if (unchanged) {
        // A duplicate join (e.g. its response was lost): answer with the current generation.
        m.lastSeenMs = ctx.now;
        return ctx.respond(req.token, joinSuccess(g, m));
      }
      updateMember(ctx, m, req);
      return prepareRebalance(ctx, g);
    case "Stable":
      if (unchanged && g.leader !== m.memberId) {
        m.lastSeenMs = ctx.now;
        return ctx.respond(req.token, joinSuccess(g, m));
      }
      updateMember(ctx, m, req);
      return prepareRebalance(ctx, g);
    default:
      return fail(ErrorCode.UNKNOWN_MEMBER_ID);
  }
}

function updateMember(ctx: Ctx, m: Member, req: JoinGroupInput): void {
  // A second join while one is held: answer the older request so responses stay in order.
  if (m.joinToken !== null) {
    ctx.respond(m.joinToken, joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId));
  }
  m.protocolType = req.protocolType;
  // Copies: request bytes may live in buffers the listener reuses.
  m.protocols = req.protocols.map((p) => ({ name: p.name, metadata: p.metadata.slice() }));
  m.sessionTimeoutMs = req.sessionTimeoutMs;
  m.rebalanceTimeoutMs = req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
  m.clientId = req.clientId;
  m.clientHost = req.clientHost;
  m.brokerAssigns = req.brokerAssigns;
  m.awaitingJoin = true;
  m.joinToken = req.token;
  m.lastSeenMs = ctx.now;
}

function addMemberAndRebalance(ctx: Ctx, g: Group, memberId: string, req: JoinGroupInput): void {
  const m: Member = {
    memberId,
    groupInstanceId: req.groupInstanceId,
    clientId: req.clientId,
    clientHost: req.clientHost,
    sessionTimeoutMs: req.sessionTimeoutMs,
    rebalanceTimeoutMs: 0,
    protocolType: req.protocolType,
    protocols: req.protocols,
    assignment: EMPTY_BYTES,
    brokerAssigns: req.brokerAssigns,
    lastSeenMs: ctx.now,
    awaitingJoin: false,
    joinToken: null,
    syncToken: null,
  };
  updateMember(ctx, m, req);
  if (g.members.size === 0) g.protocolType = req.protocolType;
  g.members.set(memberId, m);
  if (m.groupInstanceId !== null) g.staticMembers.set(m.groupInstanceId, memberId);
  if (g.leader === null) g.leader = memberId;
  ctx.event({
    kind: "memberAdded",
    groupId: g.groupId,
    memberId,
    groupInstanceId: m.groupInstanceId,
  });
  if (g.state === "PreparingRebalance" && g.initialDelayUntilMs !== null) {
    // Each newcomer during the initial delay extends it, up to the rebalance timeout.
    g.initialDelayUntilMs = Math.min(
      ctx.now + ctx.cfg.initialRebalanceDelayMs,
      g.initialDelayLimitMs,
    );
  }
  prepareRebalance(ctx, g);
}

/** A static member rejoined without its member id: the new id replaces the old one. */
function replaceStaticMember(ctx: Ctx, g: Group, old: Member, req: JoinGroupInput): void {
  const newId = ctx.cfg.newMemberId(req.clientId);
  const fenced = ErrorCode.FENCED_INSTANCE_ID;
  ctx.respond(old.joinToken, joinError(fenced, old.memberId));
  ctx.respond(old.syncToken, syncError(fenced));
  const unchanged = old.protocolType === req.protocolType &&
    sameProtocols(old.protocols, req.protocols);
  const m: Member = {
    ...old,
    memberId: newId,
    joinToken: null,
    syncToken: null,
    lastSeenMs: ctx.now,
  };
  // Keep join order: the replacement takes the old member's place.
  const entries = [...g.members.entries()].map(([id, x]): [string, Member] =>
    id === old.memberId ? [newId, m] : [id, x]
  );
  g.members.clear();
  for (const [id, x] of entries) g.members.set(id, x);
  g.staticMembers.set(req.groupInstanceId!, newId);
  if (g.leader === old.memberId) g.leader = newId;
  ctx.event({
    kind: "memberRemoved",
    groupId: g.groupId,
    memberId: old.memberId,
    reason: "fenced",
  });
  ctx.event({
    kind: "memberAdded",
    groupId: g.groupId,
    memberId: newId,
    groupInstanceId: m.groupInstanceId,
  });

  if (g.state === "Stable" && unchanged) {
    m.clientId = req.clientId;
    m.clientHost = req.clientHost;
    m.sessionTimeoutMs = req.sessionTimeoutMs;
    m.rebalanceTimeoutMs = req.rebalanceTimeoutMs > 0
      ? req.rebalanceTimeoutMs
      : req.sessionTimeoutMs;
    ctx.storeGroup(g);
    // No rebalance: a static leader keeps the current assignment (KIP-814 SkipAssignment).
    return ctx.respond(req.token, joinSuccess(g, m, g.leader === newId));
  }
  updateMember(ctx, m, req);
  if (g.state === "PreparingRebalance") return tryCompleteJoin(ctx, g);
  prepareRebalance(ctx, g);
}

export function prepareRebalance(ctx: Ctx, g: Group): void {
  if (g.state === "CompletingRebalance") {
    // Held SyncGroups belong to a generation that will never be completed.
    for (const m of g.members.values()) {
      ctx.respond(m.syncToken, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      m.syncToken = null;
      m.assignment = EMPTY_BYTES;
    }
  }
  if (g.state !== "PreparingRebalance") {
    const timeout = g.maxRebalanceTimeoutMs();
    g.rebalanceDeadlineMs = ctx.now + timeout;
    if (g.state === "Empty" && ctx.cfg.initialRebalanceDelayMs > 0) {
      g.initialDelayLimitMs = ctx.now + timeout;
      g.initialDelayUntilMs = ctx.now + Math.min(ctx.cfg.initialRebalanceDelayMs, timeout);
    } else {
      g.initialDelayUntilMs = null;
    }
    ctx.transition(g, "PreparingRebalance");
  } else {
    // A member with a longer rebalance timeout joined: Kafka's deadline is the group's maximum.
    g.rebalanceDeadlineMs = Math.max(
      g.rebalanceDeadlineMs,
      g.stateSinceMs + g.maxRebalanceTimeoutMs(),
    );
  }
  tryCompleteJoin(ctx, g);
}

/** Completes the join phase when everyone rejoined, or the deadline passed. */
export function tryCompleteJoin(ctx: Ctx, g: Group): void {
  if (g.state !== "PreparingRebalance") return;
  if (g.initialDelayUntilMs !== null) {
    if (ctx.now < g.initialDelayUntilMs) return;
    g.initialDelayUntilMs = null;
    return completeJoin(ctx, g);
  }
  if (g.allMembersJoined() || ctx.now >= g.rebalanceDeadlineMs) completeJoin(ctx, g);
}

function completeJoin(ctx: Ctx, g: Group): void {
  // Dynamic members that did not rejoin in time are dropped; static ones stay until their
  // session expires (Kafka: only the session timeout removes static members).
  const late = [...g.members.values()].filter((m) => !m.awaitingJoin && m.groupInstanceId === null);
  for (const m of late) removeMember(ctx, g, m, "rebalanceTimeout");
  // Ids still pending after MEMBER_ID_REQUIRED stay reserved until their own expiry.
  g.generation++;
  if (g.members.size === 0) {
    g.protocol = null;
    g.leader = null;
    ctx.transition(g, "Empty");
    ctx.storeGroup(g);
    return;
  }
  g.protocol = g.selectProtocol();
  const joined = [...g.members.values()].filter((m) => m.awaitingJoin);
  const leader = g.leader !== null ? g.members.get(g.leader) : undefined;
  if (leader === undefined || (!leader.awaitingJoin && joined.length > 0)) {
    g.leader = (joined[0] ?? g.members.values().next().value!).memberId;
  }
  ctx.transition(g, "CompletingRebalance");
  ctx.event({
    kind: "generationStarted",
    groupId: g.groupId,
    generation: g.generation,
    protocol: g.protocol,
    leader: g.leader,
    memberIds: [...g.members.keys()],
  });
  for (const m of g.members.values()) {
    if (m.awaitingJoin) ctx.respond(m.joinToken, joinSuccess(g, m));
    m.awaitingJoin = false;
    m.joinToken = null;
    m.lastSeenMs = ctx.now;
  }
  if (g.members.get(g.leader!)!.brokerAssigns) assignOnBehalf(ctx, g);
}

/** The leader is an HTTP member: run the assignor here and complete the generation. */
function assignOnBehalf(ctx: Ctx, g: Group): void {
  const name = g.protocol ?? "range";
  const known = assignorFor(name);
  const assignor = known ?? rangeAssignor;
  const members: AssignorMember[] = [];
  for (const m of g.members.values()) {
    const sub = decodeSubscription(g.metadataOf(m));
    // A member whose subscription does not parse subscribes to nothing (and gets nothing).
    members.push({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      subscription: sub.ok ? sub.value : {
        version: 0,
        topics: [],
        userData: null,
        ownedPartitions: [],
        generationId: -1,
        rackId: null,
      },
    });
  }
  const plan = assignor.assign(members, ctx.cfg.partitionCounts);
  const assignments = new Map<string, Uint8Array>();
  for (const [memberId, parts] of plan) {
    assignments.set(
      memberId,
      encodeAssignment({ version: 0, assignedPartitions: parts, userData: null }),
    );
  }
  ctx.event({
    kind: "brokerAssigned",
    groupId: g.groupId,
    generation: g.generation,
    assignor: assignor.name,
    fallback: known === undefined,
  });
  completeSync(ctx, g, assignments);
}

function completeSync(ctx: Ctx, g: Group, assignments: Map<string, Uint8Array>): void {
  for (const m of g.members.values()) m.assignment = assignments.get(m.memberId) ?? EMPTY_BYTES;
  ctx.transition(g, "Stable");
  for (const m of g.members.values()) {
    ctx.respond(m.syncToken, syncSuccess(g, m));
    m.syncToken = null;
    m.lastSeenMs = ctx.now;
  }
  ctx.storeGroup(g);
}

// ---------------------------------------------------------------------------------------------
// SyncGroup, Heartbeat

/** The shared checks of SyncGroup, Heartbeat: the member if valid, else an error code. */
function validateMember(
  g: Group | undefined,
  groupId: string,
  memberId: string,
  groupInstanceId: string | null,
  generationId: number,
): Member | number {
  if (groupId === "") return ErrorCode.INVALID_GROUP_ID;
  if (g === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (g.state === "Dead") return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  if (isFenced(g, memberId, groupInstanceId)) return ErrorCode.FENCED_INSTANCE_ID;
  const m = g.members.get(memberId);
  if (m === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (generationId !== g.generation) return ErrorCode.ILLEGAL_GENERATION;
  return m;
}

export function handleSync(ctx: Ctx, groups: Map<string, Group>, req: SyncGroupInput): void {
  const g = groups.get(req.groupId);
  const m = validateMember(g, req.groupId, req.memberId, req.groupInstanceId, req.generationId);
  if (typeof m === "number") return ctx.respond(req.token, syncError(m));
  const group = g!;
  if (
    (req.protocolType !== null && req.protocolType !== group.protocolType) ||
    (req.protocolName !== null && req.protocolName !== group.protocol)
  ) {
    return ctx.respond(req.token, syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
  }
  m.lastSeenMs = ctx.now;
  switch (group.state) {
    case "PreparingRebalance":
      return ctx.respond(req.token, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    case "Stable":
      return ctx.respond(req.token, syncSuccess(group, m));
    case "CompletingRebalance": {
      if (m.syncToken !== null) {
        ctx.respond(m.syncToken, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      }
      m.syncToken = req.token;
      if (group.leader !== m.memberId) return;
      const assignments = new Map<string, Uint8Array>();
      for (const a of req.assignments) {
        if (group.members.has(a.memberId)) assignments.set(a.memberId, a.assignment.slice());
      }
      return completeSync(ctx, group, assignments);
    }
    default:
      return ctx.respond(req.token, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
  }
}

export function handleHeartbeat(ctx: Ctx, groups: Map<string, Group>, req: HeartbeatInput): void {
  const g = groups.get(req.groupId);
  const m = validateMember(g, req.groupId, req.memberId, req.groupInstanceId, req.generationId);
  const reply = (errorCode: number) => ctx.respond(req.token, { kind: "heartbeat", errorCode });
  if (typeof m === "number") return reply(m);
  m.lastSeenMs = ctx.now;
  if (g!.state === "PreparingRebalance") return reply(ErrorCode.REBALANCE_IN_PROGRESS);
  if (g!.state === "Empty") return reply(ErrorCode.UNKNOWN_MEMBER_ID);
  reply(ErrorCode.NONE);
}

// ---------------------------------------------------------------------------------------------
// Leaving and expiry

/** Removes one member (its held requests are answered) without updating the group's state. */
export function removeMember(ctx: Ctx, g: Group, m: Member, reason: RemovalReason): void {
  const code = reason === "fenced" ? ErrorCode.FENCED_INSTANCE_ID : ErrorCode.UNKNOWN_MEMBER_ID;
  ctx.respond(m.joinToken, joinError(code, m.memberId));
  ctx.respond(m.syncToken, syncError(code));
  m.joinToken = null;
  m.syncToken = null;
  g.members.delete(m.memberId);
  if (m.groupInstanceId !== null && g.staticMembers.get(m.groupInstanceId) === m.memberId) {
    g.staticMembers.delete(m.groupInstanceId);
  }
  if (g.leader === m.memberId) g.leader = g.members.keys().next().value ?? null;
  ctx.event({ kind: "memberRemoved", groupId: g.groupId, memberId: m.memberId, reason });
}

/** After members left or expired: rebalance, or finish a rebalance that waited on them. */
export function afterRemoval(ctx: Ctx, g: Group): void {
  if (g.state === "Stable" || g.state === "CompletingRebalance") prepareRebalance(ctx, g);
  else tryCompleteJoin(ctx, g);
}

export function handleLeave(ctx: Ctx, groups: Map<string, Group>, req: LeaveGroupInput): void {
  const response: LeaveGroupResponse = { kind: "leave", errorCode: ErrorCode.NONE, members: [] };
  const g = groups.get(req.groupId);
  if (req.groupId === "") response.errorCode = ErrorCode.INVALID_GROUP_ID;
  else if (g?.state === "Dead") response.errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
  if (response.errorCode !== ErrorCode.NONE) return ctx.respond(req.token, response);
  let removed = false;
  for (const who of req.members) {
    const entry = { memberId: who.memberId, groupInstanceId: who.groupInstanceId, errorCode: 0 };
    response.members.push(entry);
    if (g === undefined) {
      entry.errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
      continue;
    }
    if (who.groupInstanceId === null && g.pending.delete(who.memberId)) {
      removed = true;
      continue;
    }
    // Admins may name a static member by instance id alone.
    const memberId = who.memberId === "" && who.groupInstanceId !== null
      ? g.staticMembers.get(who.groupInstanceId) ?? ""
      : who.memberId;
    if (isFenced(g, memberId, who.groupInstanceId)) {
      entry.errorCode = ErrorCode.FENCED_INSTANCE_ID;
      continue;
    }
    const m = g.members.get(memberId);
    if (m === undefined) {
      entry.errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
      continue;
    }
    removeMember(ctx, g, m, "left");
    removed = true;
  }
  if (g !== undefined && removed) afterRemoval(ctx, g);
  ctx.respond(req.token, response);
}

/** Session and pending-id expiry plus rebalance deadlines, at time ctx.now. */
export function expireMembers(ctx: Ctx, g: Group): void {
  let removed = false;
  for (const [id, expiry] of [...g.pending]) {
    if (ctx.now >= expiry) {
      g.pending.delete(id);
      ctx.event({
        kind: "memberRemoved",
        groupId: g.groupId,
        memberId: id,
        reason: "pendingExpired",
      });
      removed = true;
    }
  }
  for (const m of [...g.members.values()]) {
    // A member whose join or sync we are holding is waiting on us, not silent.
    if (m.awaitingJoin || m.syncToken !== null) continue;
    if (ctx.now >= m.lastSeenMs + m.sessionTimeoutMs) {
      removeMember(ctx, g, m, "sessionTimeout");
      removed = true;
    }
  }
  if (removed) afterRemoval(ctx, g);
  else tryCompleteJoin(ctx, g);
}

/** The earliest time at which expireMembers could change this group. */
export function nextMemberDeadline(g: Group): number | null {
  let next: number | null = null;
  const consider = (t: number) => {
    if (next === null || t < next) next = t;
  };
  for (const t of g.pending.values()) consider(t);
  for (const m of g.members.values()) {
    if (!m.awaitingJoin && m.syncToken === null) consider(m.lastSeenMs + m.sessionTimeoutMs);
  }
  if (g.state === "PreparingRebalance") consider(g.initialDelayUntilMs ?? g.rebalanceDeadlineMs);
  return next;
}

/** Forget tokens whose connection closed; the member still counts as joined (as in Kafka). */
/**
 * This broker no longer coordinates the group (its __consumer_offsets partition moved): members
 * waiting in JoinGroup or SyncGroup hear NOT_COORDINATOR and find the new coordinator.
 */
export function unloadGroup(ctx: Ctx, g: Group): void {
  for (const m of g.members.values()) {
    ctx.respond(m.joinToken, joinError(ErrorCode.NOT_COORDINATOR, m.memberId));
    ctx.respond(m.syncToken, syncError(ErrorCode.NOT_COORDINATOR));
    m.joinToken = null;
    m.syncToken = null;
  }
}

export function dropTokens(g: Group, tokens: ReadonlySet<RequestToken>): void {
  for (const m of g.members.values()) {
    if (m.joinToken !== null && tokens.has(m.joinToken)) m.joinToken = null;
    if (m.syncToken !== null && tokens.has(m.syncToken)) m.syncToken = null;
  }
}
