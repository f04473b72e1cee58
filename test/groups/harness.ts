/** Drives a GroupCoordinator like a shell would: a manual clock, tokens, auto-acked appends. */
import {
  type CoordinatorEffect,
  type CoordinatorInput,
  type CoordinatorOptions,
  type CoordinatorResponse,
  encodeSubscription,
  GroupCoordinator,
  type GroupEvent,
  type HeartbeatResponse,
  type JoinGroupResponse,
  type LeaveGroupResponse,
  type OffsetCommitResponse,
  type ProtocolMetadata,
  type SyncGroupResponse,
} from "../../src/groups/index.ts";

export const TOPICS: Record<string, number> = { t1: 3, t2: 2, t3: 5 };

export function subscription(topics: string[]): Uint8Array {
  return encodeSubscription({
    version: 0,
    topics,
    userData: null,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  });
}

export function protocols(names: string[], topics = ["t1"]): ProtocolMetadata[] {
  return names.map((name) => ({ name, metadata: subscription(topics) }));
}

type Omit2<T, K extends keyof T> = Pick<T, Exclude<keyof T, K>>;
type WithoutToken<T> = T extends { token: number } ? Omit2<T, "token"> : T;

export interface JoinOpts {
  group?: string;
  memberId?: string;
  instance?: string | null;
  client?: string;
  session?: number;
  rebalance?: number;
  protocolType?: string;
  protocols?: ProtocolMetadata[];
  v4?: boolean;
  http?: boolean;
}

export class Harness {
  now = 0;
  private tokenSeq = 0;
  private idSeq = 0;
  readonly c: GroupCoordinator;
  readonly responses = new Map<number, CoordinatorResponse>();
  readonly events: GroupEvent[] = [];
  readonly appends: Extract<CoordinatorEffect, { type: "append" }>[] = [];
  /** When false, appends wait for an explicit ack(). */
  autoAck = true;
  ackError = 0;

  constructor(opts: CoordinatorOptions = {}) {
    this.c = new GroupCoordinator({
      initialRebalanceDelayMs: 0,
      newMemberId: (clientId) => `${clientId}-${++this.idSeq}`,
      partitionCounts: (t) => TOPICS[t],
      offsetsRetentionCheckIntervalMs: 0,
      ...opts,
    });
  }

  apply(effects: CoordinatorEffect[]): void {
    for (const e of effects) {
      if (e.type === "respond") {
        if (this.responses.has(e.token)) throw new Error(`token ${e.token} answered twice`);
        this.responses.set(e.token, e.response);
      } else if (e.type === "event") this.events.push(e.event);
      else {
        this.appends.push(e);
        if (this.autoAck) this.ack(e.appendId, this.ackError);
      }
    }
  }

  ack(appendId: number, errorCode = 0): void {
    this.apply(this.c.handle({ type: "appendDone", appendId, errorCode }, this.now));
  }

  send(input: WithoutToken<CoordinatorInput>): number {
    const token = ++this.tokenSeq;
    this.apply(this.c.handle({ ...input, token } as CoordinatorInput, this.now));
    return token;
  }

  advance(ms: number): void {
    this.now += ms;
    this.apply(this.c.handle({ type: "tick" }, this.now));
  }

  response<T extends CoordinatorResponse>(token: number): T | undefined {
    return this.responses.get(token) as T | undefined;
  }

  join(o: JoinOpts = {}): number {
    return this.send({
      type: "join",
      groupId: o.group ?? "g",
      memberId: o.memberId ?? "",
      groupInstanceId: o.instance ?? null,
      clientId: o.client ?? "c",
      clientHost: "/127.0.0.1",
      sessionTimeoutMs: o.session ?? 10_000,
      rebalanceTimeoutMs: o.rebalance ?? 20_000,
      protocolType: o.protocolType ?? "consumer",
      protocols: o.protocols ?? protocols(["range"]),
      requireKnownMemberId: o.v4 ?? true,
      brokerAssigns: o.http ?? false,
    });
  }

  joinResp(token: number): JoinGroupResponse | undefined {
    return this.response<JoinGroupResponse>(token);
  }

  /** First join of a new dynamic member (v4: through MEMBER_ID_REQUIRED); returns the held token. */
  joinNew(o: JoinOpts = {}): { token: number; memberId: string } {
    const first = this.joinResp(this.join({ ...o, memberId: "" }))!;
    if (first.errorCode !== 79) {
      throw new Error(`expected MEMBER_ID_REQUIRED, got ${first.errorCode}`);
    }
    return { token: this.join({ ...o, memberId: first.memberId }), memberId: first.memberId };
  }

  sync(
    memberId: string,
    generationId: number,
    assignments: { memberId: string; assignment: Uint8Array }[] = [],
    o: { group?: string; instance?: string | null; protocolName?: string | null } = {},
  ): number {
    return this.send({
      type: "sync",
      groupId: o.group ?? "g",
      generationId,
      memberId,
      groupInstanceId: o.instance ?? null,
      protocolType: null,
      protocolName: o.protocolName ?? null,
      assignments,
    });
  }

  syncResp(token: number): SyncGroupResponse | undefined {
    return this.response<SyncGroupResponse>(token);
  }

  heartbeat(
    memberId: string,
    generationId: number,
    group = "g",
    instance: string | null = null,
  ): number {
    const t = this.send({
      type: "heartbeat",
      groupId: group,
      generationId,
      memberId,
      groupInstanceId: instance,
    });
    return this.response<HeartbeatResponse>(t)!.errorCode;
  }

  leave(
    members: { memberId: string; groupInstanceId?: string | null }[],
    group = "g",
  ): LeaveGroupResponse {
    const t = this.send({
      type: "leave",
      groupId: group,
      members: members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId ?? null,
      })),
    });
    return this.response<LeaveGroupResponse>(t)!;
  }

  commit(
    o: {
      group?: string;
      generation?: number;
      memberId?: string;
      instance?: string | null;
      retention?: number;
      offsets?: {
        topic: string;
        partition: number;
        offset: number;
        metadata?: string | null;
        commitTimestamp?: number;
      }[];
    } = {},
  ): number {
    const byTopic = new Map<
      string,
      {
        partition: number;
        offset: number;
        leaderEpoch: number;
        metadata: string | null;
        commitTimestamp?: number;
      }[]
    >();
    for (const x of o.offsets ?? [{ topic: "t1", partition: 0, offset: 10 }]) {
      if (!byTopic.has(x.topic)) byTopic.set(x.topic, []);
      byTopic.get(x.topic)!.push({
        partition: x.partition,
        offset: x.offset,
        leaderEpoch: -1,
        metadata: x.metadata ?? "",
        ...(x.commitTimestamp === undefined ? {} : { commitTimestamp: x.commitTimestamp }),
      });
    }
    return this.send({
      type: "offsetCommit",
      groupId: o.group ?? "g",
      generationId: o.generation ?? -1,
      memberId: o.memberId ?? "",
      groupInstanceId: o.instance ?? null,
      retentionTimeMs: o.retention ?? -1,
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    });
  }

  commitCodes(token: number): number[] {
    const r = this.response<OffsetCommitResponse>(token);
    if (r === undefined) return [];
    return r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
  }

  state(group = "g"): string {
    return this.c.describeGroup(group).state;
  }

  generation(group = "g"): number {
    return this.c.describeGroup(group).generation;
  }
}
