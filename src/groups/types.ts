/**
 * Inputs and outputs of the group coordinator state machine. The Kafka listener and the HTTP API
 * translate their requests into these inputs, call `GroupCoordinator.handle`, and carry out the
 * returned effects in order: deliver responses, append records to __consumer_offsets (reporting
 * completion back with an `appendDone` input), log or publish events.
 */
import type { PartitionCounts } from "./assignors.ts";
import type { EncodedRecord, OffsetsRecord } from "./records.ts";

/** Opaque to the coordinator: the shell's handle for a request awaiting its response. */
export type RequestToken = number;

export type GroupState = "Empty" | "PreparingRebalance" | "CompletingRebalance" | "Stable" | "Dead";

export interface CoordinatorConfig {
  /** group.initial.rebalance.delay.ms (Kafka default 3000). */
  initialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms / group.max.session.timeout.ms. */
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  /** group.max.size. */
  maxGroupSize: number;
  /** offsets.retention.minutes, in ms. */
  offsetsRetentionMs: number;
  /** offset.metadata.max.bytes. */
  offsetMetadataMaxBytes: number;
  /** Builds a new member id (Kafka: clientId + "-" + UUID); injected so tests are deterministic. */
  newMemberId: (clientId: string) => string;
  /** Partition counts, for broker-run assignments and OffsetCommit topic checks. */
  partitionCounts: PartitionCounts;
}

export const DEFAULT_CONFIG: Omit<CoordinatorConfig, "newMemberId" | "partitionCounts"> = {
  initialRebalanceDelayMs: 3000,
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1_800_000,
  maxGroupSize: 2_147_483_647,
  offsetsRetentionMs: 7 * 24 * 60 * 60 * 1000,
  offsetMetadataMaxBytes: 4096,
};

export interface ProtocolMetadata {
  name: string;
  metadata: Uint8Array;
}

/** What a member says of itself when it joins, and the coordinator keeps as the member. */
export interface MemberJoin {
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  /** <= 0 in a join (JoinGroup v0): "same as the session timeout", which the member then keeps. */
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: ProtocolMetadata[];
  /** HTTP members cannot run an assignor; when such a member leads, the broker assigns. */
  brokerAssigns: boolean;
}

export interface JoinGroupInput extends MemberJoin {
  type: "join";
  token: RequestToken;
  groupId: string;
  /** "" for a first join. */
  memberId: string;
  /** JoinGroup v4+: a new dynamic member first gets MEMBER_ID_REQUIRED with its id. */
  requireKnownMemberId: boolean;
}

/** A member of a group's generation, as SyncGroup, Heartbeat and OffsetCommit name it. */
export interface GenerationMember {
  groupId: string;
  /** -1 in a simple (standalone) commit. */
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export interface SyncGroupInput extends GenerationMember {
  type: "sync";
  token: RequestToken;
  /** SyncGroup v5+; null when not sent. */
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Uint8Array }[];
}

export interface HeartbeatInput extends GenerationMember {
  type: "heartbeat";
  token: RequestToken;
}

export interface LeaveGroupInput {
  type: "leave";
  token: RequestToken;
  groupId: string;
  /** v0-2 send one member; v3+ a batch (static members may be named by instance id only). */
  members: { memberId: string; groupInstanceId: string | null }[];
}

export interface OffsetCommitInput extends GenerationMember {
  type: "offsetCommit";
  token: RequestToken;
  /** OffsetCommit v2-4 RetentionTimeMs; -1 = broker default. */
  retentionTimeMs: number;
  topics: {
    name: string;
    partitions: {
      partition: number;
      offset: number;
      leaderEpoch: number;
      metadata: string | null;
      /** OffsetCommit v1 CommitTimestamp, stored as the commit time; -1 or absent = now. */
      commitTimestamp?: number;
    }[];
  }[];
}

export interface DeleteGroupsInput {
  type: "deleteGroups";
  token: RequestToken;
  groupIds: string[];
}

export interface TickInput {
  type: "tick";
}

/** A topic was deleted: its committed offsets go too, as in Kafka (a new topic of that name starts fresh). */
export interface TopicDeletedInput {
  type: "topicDeleted";
  topic: string;
}

/** The connection that sent these requests closed: their responses can no longer be delivered. */
export interface DisconnectedInput {
  type: "disconnected";
  tokens: RequestToken[];
}

/** Outcome of an `append` effect (errorCode 0 = durable). */
export interface AppendDoneInput {
  type: "appendDone";
  appendId: number;
  errorCode: number;
}

export type CoordinatorInput =
  | JoinGroupInput
  | SyncGroupInput
  | HeartbeatInput
  | LeaveGroupInput
  | OffsetCommitInput
  | DeleteGroupsInput
  | TickInput
  | TopicDeletedInput
  | DisconnectedInput
  | AppendDoneInput;

export interface JoinGroupMember {
  memberId: string;
  groupInstanceId: string | null;
  metadata: Uint8Array;
}

export interface JoinGroupResponse {
  kind: "join";
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  /** Only the leader gets the members (with their metadata for the chosen protocol). */
  members: JoinGroupMember[];
  /** v9+: the leader must not assign (a static leader rejoined into a stable group). */
  skipAssignment: boolean;
}

export interface SyncGroupResponse {
  kind: "sync";
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Uint8Array;
}

export interface HeartbeatResponse {
  kind: "heartbeat";
  errorCode: number;
}

export interface LeaveGroupResponse {
  kind: "leave";
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export interface OffsetCommitResponse {
  kind: "offsetCommit";
  topics: { name: string; partitions: { partition: number; errorCode: number }[] }[];
}

export interface DeleteGroupsResponse {
  kind: "deleteGroups";
  results: { groupId: string; errorCode: number }[];
}

export type CoordinatorResponse =
  | JoinGroupResponse
  | SyncGroupResponse
  | HeartbeatResponse
  | LeaveGroupResponse
  | OffsetCommitResponse
  | DeleteGroupsResponse;

export type RemovalReason =
  | "left"
  | "sessionTimeout"
  | "rebalanceTimeout"
  | "pendingExpired"
  | "fenced";

export type GroupEvent =
  | { kind: "stateChanged"; groupId: string; from: GroupState; to: GroupState; generation: number }
  | { kind: "memberAdded"; groupId: string; memberId: string; groupInstanceId: string | null }
  | { kind: "memberRemoved"; groupId: string; memberId: string; reason: RemovalReason }
  | {
    kind: "generationStarted";
    groupId: string;
    generation: number;
    protocol: string | null;
    leader: string | null;
    memberIds: string[];
  }
  /** The broker computed the assignment (HTTP leader); `fallback` when the protocol is unknown. */
  | {
    kind: "brokerAssigned";
    groupId: string;
    generation: number;
    assignor: string;
    fallback: boolean;
  }
  | { kind: "offsetsExpired"; groupId: string; count: number }
  | { kind: "offsetsDeleted"; groupId: string; topic: string; count: number }
  | { kind: "groupRemoved"; groupId: string; reason: "deleted" | "expired" }
  | { kind: "recordSkipped"; reason: string };

export type CoordinatorEffect =
  | { type: "respond"; token: RequestToken; response: CoordinatorResponse }
  /**
   * Append to __consumer_offsets (the group's partition) in this order. Report the outcome
   * with `appendDone` (offset commits are answered only then).
   */
  | { type: "append"; appendId: number; groupId: string; records: AppendRecord[] }
  | { type: "event"; event: GroupEvent };

export interface AppendRecord extends EncodedRecord {
  /** The same record, decoded, for materialising without a decode. */
  record: OffsetsRecord;
}

export interface OffsetFetchPartition {
  partition: number;
  /** -1 when nothing is committed. */
  offset: number;
  leaderEpoch: number;
  metadata: string;
  errorCode: number;
}

export interface OffsetFetchResult {
  errorCode: number;
  topics: { name: string; partitions: OffsetFetchPartition[] }[];
}

export interface GroupListing {
  groupId: string;
  protocolType: string;
  state: GroupState;
}

export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Metadata for the selected protocol and assignment; empty unless the group is Stable. */
  metadata: Uint8Array;
  assignment: Uint8Array;
}

export interface DescribedGroup {
  errorCode: number;
  groupId: string;
  state: GroupState;
  protocolType: string;
  /** The selected protocol when Stable, else "". */
  protocolData: string;
  generation: number;
  leader: string | null;
  members: DescribedMember[];
}
