// Raft metadata quorum: a pure state machine (RaftNode) and the glue the broker uses.
export { bootstrapState, emptyState } from "./bootstrap.ts";
export { applyConfChange, checkConfChange, isVoter, quorum } from "./config.ts";
export { type MembershipView, nextMembershipChange, type VoterTarget } from "./controller.ts";
export { parseEntry, parseMessage } from "./messages.ts";
export {
  type MetadataStateMachine,
  RaftError,
  RaftMetadataLog,
  REAL_CLOCK,
  type ShellClock,
} from "./metadata-log.ts";
export { RaftNode } from "./node.ts";
export { MemoryStorage, type RaftStorage, type RaftTransport } from "./storage.ts";
export * from "./types.ts";
