// Planted bugs in storage edges no crash campaign exercises (retention, idempotence, lookups)
// and in the consumer groups.
import type { Mutation } from "../types.ts";

const LOG = "src/storage/partition-log.ts";

export const STORAGE_GROUPS: readonly Mutation[] = [
  {
    id: "storage-retention-from-first-batch",
    file: LOG,
    find: "retentionMs >= 0 && now - s.maxTimestamp > retentionMs",
    replace: "retentionMs >= 0 && now - s.firstBatchTimestamp > retentionMs",
    tests: ["test/storage/retention.test.ts", "test/storage/retention-edges.test.ts"],
    why: "Time retention measures a segment's age from its first batch, not its newest: a " +
      "segment still being written to is deleted with records younger than retention.ms.",
  },
  {
    id: "storage-retention-bytes-below-limit",
    file: LOG,
    find: "if (excess - s.size < 0) return false;",
    replace: "if (excess <= 0) return false;",
    tests: ["test/storage/retention.test.ts", "test/storage/retention-edges.test.ts"],
    why: "Size retention deletes the oldest segment even when that takes the log below " +
      "retention.bytes.",
  },
  {
    id: "storage-sequence-below-expected-appended",
    file: "src/storage/producer-state.ts",
    find: "if (tail && h.baseSequence !== nextSequence(tail.lastSeq)) {",
    replace: "if (tail && h.baseSequence > nextSequence(tail.lastSeq)) {",
    tests: ["test/storage/contract.test.ts", "test/kafka/fetch-rules.test.ts"],
    why: "The idempotent producer appends a batch whose sequence is below the expected one once " +
      "it has left the five-batch cache (a duplicate written twice) instead of " +
      "OUT_OF_ORDER_SEQUENCE.",
  },
  {
    id: "storage-offset-for-timestamp-equal-skipped",
    file: LOG,
    find:
      "if (seg.isEmpty() || seg.maxTimestamp < ts || seg.nextOffset <= this.logStart) continue;",
    replace:
      "if (seg.isEmpty() || seg.maxTimestamp <= ts || seg.nextOffset <= this.logStart) continue;",
    tests: ["test/storage/contract.test.ts", "test/storage/index.test.ts"],
    why: "A timestamp lookup skips the segment whose newest record has exactly that timestamp, " +
      "answering a later offset.",
  },
  {
    id: "storage-delete-records-past-end",
    file: LOG,
    find: "if (!Number.isSafeInteger(offset) || offset < 0 || offset > end) {",
    replace: "if (!Number.isSafeInteger(offset) || offset < 0) {",
    tests: ["test/storage/contract.test.ts"],
    why: "deleteRecords accepts an offset past the log end, moving the log start beyond it.",
  },
  {
    id: "groups-commit-ignores-generation",
    file: "src/groups/offsets.ts",
    find: "  if (req.generationId !== g.generation) return ErrorCode.ILLEGAL_GENERATION;\n",
    replace: "",
    tests: ["test/groups/offsets.test.ts"],
    why: "An offset commit from a member of an older generation is accepted (a zombie consumer " +
      "overwrites the new owner's offsets).",
  },
  {
    id: "groups-heartbeat-ignores-generation",
    file: "src/groups/membership.ts",
    find: "  if (generationId !== g.generation) return ErrorCode.ILLEGAL_GENERATION;\n  return m;",
    replace: "  return m;",
    tests: ["test/groups/membership.test.ts"],
    why: "Heartbeat and SyncGroup accept a stale generation: a member that missed a rebalance " +
      "keeps its old partitions.",
  },
  {
    id: "groups-range-extra-to-last",
    file: "src/groups/assignors.ts",
    find: "const count = per + (i < extra ? 1 : 0);",
    replace: "const count = per + (i >= subs.length - extra ? 1 : 0);",
    tests: ["test/groups/assignors.test.ts"],
    why: "The range assignor gives the extra partitions to the last members instead of the " +
      "first (Kafka's order): mixed-version groups disagree on the plan.",
  },
  {
    id: "groups-commit-during-completing-rebalance",
    file: "src/groups/offsets.ts",
    find: '  if (g.state === "CompletingRebalance") return ErrorCode.REBALANCE_IN_PROGRESS;\n',
    replace: "",
    tests: ["test/groups/offsets.test.ts"],
    why: "An offset commit is accepted while the group waits for its SyncGroup: a member commits " +
      "for partitions it may no longer own.",
  },
  {
    id: "groups-session-timeout-max-unchecked",
    file: "src/groups/membership.ts",
    find: "if (req.sessionTimeoutMs < min || req.sessionTimeoutMs > max) {",
    replace: "if (req.sessionTimeoutMs < min) {",
    tests: ["test/groups/membership.test.ts"],
    why: "JoinGroup accepts a session timeout above group.max.session.timeout.ms: a dead member " +
      "holds its partitions for as long as it asked.",
  },
  {
    id: "storage-bumped-epoch-any-sequence",
    file: "src/storage/producer-state.ts",
    find: "      if (h.baseSequence !== 0) {\n",
    replace: "      if (h.baseSequence < 0) {\n",
    tests: ["test/storage/contract.test.ts", "test/kafka/fetch-rules.test.ts"],
    why: "A producer's first batch in a new epoch is accepted at any sequence, not only 0: " +
      "batches lost across the bump go unnoticed.",
  },
];
