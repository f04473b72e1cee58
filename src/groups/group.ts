/** In-memory group and member state plus the small rules shared by the coordinator's handlers. */
import type { GroupMemberRecord, GroupMetadataValue, OffsetsRecord } from "./records.ts";
import { encodeOffsetsRecord } from "./records.ts";
import type {
  AppendRecord,
  CoordinatorConfig,
  CoordinatorEffect,
  CoordinatorResponse,
  GroupEvent,
  GroupState,
  MemberJoin,
  ProtocolMetadata,
  RequestToken,
} from "./types.ts";

export interface Member extends MemberJoin {
  memberId: string;
  assignment: Uint8Array;
  /** Last request from the member (its session runs from here). */
  lastSeenMs: number;
  /** Rejoined in the current rebalance (its response may have been lost with its connection). */
  awaitingJoin: boolean;
  joinToken: RequestToken | null;
  syncToken: RequestToken | null;
}

export interface OffsetEntry {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  expireTimestamp: number | null;
}

export const EMPTY_BYTES = new Uint8Array(0);

export class Group {
  state: GroupState = "Empty";
  /** When the group entered its current state (offset expiry of Empty groups counts from here). */
  stateSinceMs: number;
  generation = 0;
  /** null for a "simple" group that only ever had standalone offset commits. */
  protocolType: string | null = null;
  protocol: string | null = null;
  leader: string | null = null;
  /** Insertion order is join order ("the first member" when a leader must be chosen). */
  readonly members = new Map<string, Member>();
  readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED, with their expiry time. */
  readonly pending = new Map<string, number>();
  rebalanceDeadlineMs = 0;
  initialDelayUntilMs: number | null = null;
  initialDelayLimitMs = 0;
  /** topic → partition → committed offset. */
  readonly offsets = new Map<string, Map<number, OffsetEntry>>();
  /** Offset commits appended but not yet acknowledged. */
  pendingCommits = 0;

  constructor(readonly groupId: string, nowMs: number) {
    this.stateSinceMs = nowMs;
  }

  get offsetCount(): number {
    let n = 0;
    for (const parts of this.offsets.values()) n += parts.size;
    return n;
  }

  /** Protocol names every member supports, in the order of the first member's preference. */
  candidateProtocols(excluding?: string): string[] {
    let names: string[] | null = null;
    for (const m of this.members.values()) {
      if (m.memberId === excluding) continue;
      const mine = m.protocols.map((p) => p.name);
      names = names === null ? mine : names.filter((n) => mine.includes(n));
    }
    return names ?? [];
  }

  /**
   * Kafka's supportsProtocols: an empty group takes any non-empty offer; otherwise the type must
   * match and at least one offered protocol must be supported by every other member.
   */
  supportsProtocols(
    protocolType: string,
    protocols: readonly ProtocolMetadata[],
    memberId: string,
  ): boolean {
    const others = [...this.members.keys()].filter((id) => id !== memberId);
    if (others.length === 0) return protocolType.length > 0 && protocols.length > 0;
    if (this.protocolType !== null && protocolType !== this.protocolType) return false;
    const common = this.candidateProtocols(memberId);
    return protocols.some((p) => common.includes(p.name));
  }

  /** Each member votes for its most preferred candidate; most votes wins (ties: first candidate). */
  selectProtocol(): string | null {
    const candidates = this.candidateProtocols();
    if (candidates.length === 0) return null;
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.includes(p.name))!.name;
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best = candidates[0];
    for (const c of candidates) if ((votes.get(c) ?? 0) > (votes.get(best) ?? 0)) best = c;
    return best;
  }

  allMembersJoined(): boolean {
    if (this.pending.size > 0) return false;
    for (const m of this.members.values()) if (!m.awaitingJoin) return false;
    return true;
  }

  maxRebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  metadataOf(m: Member): Uint8Array {
    return m.protocols.find((p) => p.name === this.protocol)?.metadata ?? EMPTY_BYTES;
  }

  metadataRecord(): GroupMetadataValue {
    const members: GroupMemberRecord[] = [...this.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      sessionTimeoutMs: m.sessionTimeoutMs,
      subscription: this.metadataOf(m),
      assignment: m.assignment,
    }));
    return {
      protocolType: this.protocolType ?? "",
      generation: this.generation,
      protocol: this.protocol,
      leader: this.leader,
      currentStateTimestamp: this.stateSinceMs,
      members,
    };
  }
}

export function sameProtocols(
  a: readonly ProtocolMetadata[],
  b: readonly ProtocolMetadata[],
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].name !== b[i].name) return false;
    const x = a[i].metadata;
    const y = b[i].metadata;
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

/** Collects the effects of one input, in order. */
export class Ctx {
  readonly out: CoordinatorEffect[] = [];
  constructor(
    readonly now: number,
    readonly cfg: CoordinatorConfig,
    private readonly nextAppendId: () => number,
  ) {}

  respond(token: RequestToken | null, response: CoordinatorResponse): void {
    if (token !== null) this.out.push({ type: "respond", token, response });
  }

  event(event: GroupEvent): void {
    this.out.push({ type: "event", event });
  }

  append(groupId: string, records: OffsetsRecord[]): number {
    const appendId = this.nextAppendId();
    const encoded: AppendRecord[] = records.map((record) => ({
      ...encodeOffsetsRecord(record),
      record,
    }));
    this.out.push({ type: "append", appendId, groupId, records: encoded });
    return appendId;
  }

  transition(g: Group, to: GroupState): void {
    if (g.state === to) return;
    const from = g.state;
    g.state = to;
    g.stateSinceMs = this.now;
    this.event({ kind: "stateChanged", groupId: g.groupId, from, to, generation: g.generation });
  }

  /** Records the group's metadata (generation, protocol, members) so a restart restores it. */
  storeGroup(g: Group): void {
    this.append(g.groupId, [{ type: "group", group: g.groupId, value: g.metadataRecord() }]);
  }
}
