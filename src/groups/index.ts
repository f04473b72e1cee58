/** Public surface of the group coordinator (pure; no IO). */
export { type CoordinatorOptions, GroupCoordinator } from "./coordinator.ts";
export * from "./types.ts";
export {
  type Assignor,
  assignorFor,
  type AssignorMember,
  BROKER_ASSIGNOR_NAMES,
  type PartitionCounts,
  rangeAssignor,
  roundRobinAssignor,
} from "./assignors.ts";
export {
  type Assignment,
  CONSUMER_PROTOCOL_TYPE,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  type Subscription,
  type TopicPartitions,
} from "./consumer-protocol.ts";
export {
  decodeOffsetsRecord,
  type EncodedRecord,
  encodeOffsetsRecord,
  type GroupMemberRecord,
  type GroupMetadataValue,
  type OffsetCommitValue,
  OFFSETS_TOPIC,
  offsetsPartitionFor,
  type OffsetsRecord,
} from "./records.ts";
export type { Decoded } from "./bytes.ts";
