/**
 * The group coordinator (classic protocol) as a pure state machine: `handle(input, nowMs)`
 * returns the effects to carry out. No timers, sockets or storage inside; the shell calls
 * `handle({ type: "tick" }, now)` periodically (or at `nextDeadlineMs()`).
 */
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { Ctx, EMPTY_BYTES, Group } from "./group.ts";
import {
  dropTokens,
  expireMembers,
  handleHeartbeat,
  handleJoin,
  handleLeave,
  handleSync,
  nextMemberDeadline,
  unloadGroup,
} from "./membership.ts";
import {
  completeCommit,
  deleteTopicOffsets,
  expireOffsets,
  fetchOffsets,
  handleDeleteGroups,
  handleOffsetCommit,
  type PendingCommit,
  restoreGroups,
} from "./offsets.ts";
import type { EncodedRecord } from "./records.ts";
import {
  type CoordinatorConfig,
  type CoordinatorEffect,
  type CoordinatorInput,
  DEFAULT_CONFIG,
  type DescribedGroup,
  type GroupListing,
  type GroupState,
  type OffsetFetchResult,
} from "./types.ts";

export interface CoordinatorOptions extends Partial<CoordinatorConfig> {
  /** How often a tick scans for expired offsets (Kafka: offsets.retention.check.interval.ms). */
  offsetsRetentionCheckIntervalMs?: number;
}

function defaultMemberId(clientId: string): string {
  return `${clientId}-${crypto.randomUUID()}`;
}

export class GroupCoordinator {
  readonly config: CoordinatorConfig;
  private readonly groups = new Map<string, Group>();
  private readonly commits = new Map<number, PendingCommit>();
  private appendSeq = 0;
  /** Time only moves forward, whatever the shell passes. */
  private now = 0;
  private nextRetentionCheckMs = 0;
  private readonly retentionCheckIntervalMs: number;

  constructor(options: CoordinatorOptions = {}) {
    const { offsetsRetentionCheckIntervalMs, ...rest } = options;
    this.config = {
      ...DEFAULT_CONFIG,
      newMemberId: defaultMemberId,
      partitionCounts: () => undefined,
      ...rest,
    };
    this.retentionCheckIntervalMs = offsetsRetentionCheckIntervalMs ?? 600_000;
  }

  private ctx(nowMs: number): Ctx {
    if (Number.isFinite(nowMs) && nowMs > this.now) this.now = nowMs;
    return new Ctx(this.now, this.config, () => ++this.appendSeq);
  }

  handle(input: CoordinatorInput, nowMs: number): CoordinatorEffect[] {
    const ctx = this.ctx(nowMs);
    switch (input.type) {
      case "join":
        handleJoin(ctx, this.groups, input);
        this.dropIfVacant(input.groupId);
        break;
      case "sync":
        handleSync(ctx, this.groups, input);
        break;
      case "heartbeat":
        handleHeartbeat(ctx, this.groups, input);
        break;
      case "leave":
        handleLeave(ctx, this.groups, input);
        break;
      case "offsetCommit": {
        const pending = handleOffsetCommit(ctx, this.groups, input);
        if (pending !== null) this.commits.set(pending.appendId, pending);
        break;
      }
      case "deleteGroups":
        handleDeleteGroups(ctx, this.groups, input);
        break;
      case "appendDone": {
        const pending = this.commits.get(input.appendId);
        if (pending !== undefined) {
          this.commits.delete(input.appendId);
          completeCommit(ctx, this.groups, pending, input.errorCode);
        }
        break;
      }
      case "disconnected": {
        const tokens = new Set(input.tokens);
        for (const g of this.groups.values()) dropTokens(g, tokens);
        for (const c of this.commits.values()) {
          if (c.token !== null && tokens.has(c.token)) c.token = null;
        }
        break;
      }
      case "tick":
        this.tick(ctx);
        break;
      case "topicDeleted":
        deleteTopicOffsets(ctx, this.groups, input.topic);
        break;
    }
    return ctx.out;
  }

  private tick(ctx: Ctx): void {
    for (const g of [...this.groups.values()]) {
      expireMembers(ctx, g);
      this.dropIfVacant(g.groupId);
    }
    if (ctx.now >= this.nextRetentionCheckMs) {
      this.nextRetentionCheckMs = ctx.now + this.retentionCheckIntervalMs;
      for (const g of [...this.groups.values()]) expireOffsets(ctx, this.groups, g);
    }
  }

  /** A group that never got past its first join attempt leaves no trace. */
  private dropIfVacant(groupId: string): void {
    const g = this.groups.get(groupId);
    if (
      g !== undefined && g.state === "Empty" && g.generation === 0 && g.members.size === 0 &&
      g.pending.size === 0 && g.offsetCount === 0 && g.pendingCommits === 0
    ) {
      this.groups.delete(groupId);
    }
  }

  /** Rebuilds state from __consumer_offsets records, oldest first (call before serving). */
  restore(records: readonly EncodedRecord[], nowMs: number): CoordinatorEffect[] {
    const ctx = this.ctx(nowMs);
    restoreGroups(ctx, this.groups, records);
    return ctx.out;
  }

  /**
   * Forget the groups `owns` selects (their offsets partition is led elsewhere now): waiting
   * members hear NOT_COORDINATOR. Commits in flight finish through their appendDone (the append
   * fails on the lost leadership). Loading them again later starts from the log.
   */
  unload(owns: (groupId: string) => boolean, nowMs: number): CoordinatorEffect[] {
    const ctx = this.ctx(nowMs);
    for (const [id, g] of [...this.groups]) {
      if (!owns(id)) continue;
      unloadGroup(ctx, g);
      this.groups.delete(id);
    }
    return ctx.out;
  }

  /** When the shell should tick next at the latest (null: nothing is timed). */
  nextDeadlineMs(): number | null {
    let next: number | null = null;
    for (const g of this.groups.values()) {
      const t = nextMemberDeadline(g);
      if (t !== null && (next === null || t < next)) next = t;
    }
    if (this.groups.size > 0 && (next === null || this.nextRetentionCheckMs < next)) {
      next = Math.max(this.nextRetentionCheckMs, this.now);
    }
    return next;
  }

  /** OffsetFetch (null topics = everything the group committed). Reads never change state. */
  fetchOffsets(
    groupId: string,
    topics: readonly { name: string; partitions: readonly number[] }[] | null,
  ): OffsetFetchResult {
    return fetchOffsets(this.groups.get(groupId), topics);
  }

  listGroups(states?: readonly GroupState[]): GroupListing[] {
    const out: GroupListing[] = [];
    for (const g of this.groups.values()) {
      if (states !== undefined && states.length > 0 && !states.includes(g.state)) continue;
      out.push({ groupId: g.groupId, protocolType: g.protocolType ?? "", state: g.state });
    }
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  /** DescribeGroups for one group; an unknown group is reported as Dead with no error (Kafka). */
  describeGroup(groupId: string): DescribedGroup {
    const g = this.groups.get(groupId);
    if (groupId === "") return { ...deadGroup(groupId), errorCode: ErrorCode.INVALID_GROUP_ID };
    if (g === undefined) return deadGroup(groupId);
    const stable = g.state === "Stable";
    return {
      errorCode: ErrorCode.NONE,
      groupId,
      state: g.state,
      protocolType: g.protocolType ?? "",
      protocolData: stable ? g.protocol ?? "" : "",
      generation: g.generation,
      leader: g.leader,
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable ? g.metadataOf(m) : EMPTY_BYTES,
        assignment: stable ? m.assignment : EMPTY_BYTES,
      })),
    };
  }
}

function deadGroup(groupId: string): DescribedGroup {
  return {
    errorCode: ErrorCode.NONE,
    groupId,
    state: "Dead",
    protocolType: "",
    protocolData: "",
    generation: -1,
    leader: null,
    members: [],
  };
}
