// Planted bugs added with the baseline check (issue #21, second round): Kafka handlers, HTTP,
// groups and storage validation edges the first list left out.
import type { Mutation } from "../types.ts";

export const MORE: readonly Mutation[] = [
  {
    id: "kafka-ofle-leader-epoch-unchecked",
    file: "src/kafka/handlers/offset-for-leader-epoch.ts",
    find: "        if (epochErr) return { ...out, errorCode: epochErr };\n",
    replace: "",
    tests: ["test/kafka/fetch-rules.test.ts"],
    why: "OffsetForLeaderEpoch ignores current_leader_epoch: a follower or consumer with stale " +
      "metadata truncates against an answer from a leader it should not trust " +
      "(FENCED_LEADER_EPOCH).",
  },
  {
    id: "http-read-at-hw-refused",
    file: "src/http/partition-access.ts",
    find: "if (offset < lso || offset > hw) throw outsideLog(offset, lso, hw);",
    replace: "if (offset < lso || offset >= hw) throw outsideLog(offset, lso, hw);",
    tests: ["test/http/batches.test.ts"],
    why: "An HTTP read at the high watermark (the next offset to be written) answers 416 " +
      "instead of an empty list: a reader polling at the end of the log gets errors.",
  },
  {
    id: "groups-max-size-plus-one",
    file: "src/groups/membership.ts",
    find: "if (g.members.size + g.pending.size >= ctx.cfg.maxGroupSize) {",
    replace: "if (g.members.size + g.pending.size > ctx.cfg.maxGroupSize) {",
    tests: ["test/groups/membership.test.ts"],
    why: "A group takes one member more than group.max.size before GROUP_MAX_SIZE_REACHED.",
  },
  {
    id: "groups-rebalance-waits-for-all",
    file: "src/groups/membership.ts",
    find: "if (g.allMembersJoined() || ctx.now >= g.rebalanceDeadlineMs) completeJoin(ctx, g);",
    replace: "if (g.allMembersJoined()) completeJoin(ctx, g);",
    tests: ["test/groups/membership.test.ts"],
    why: "A rebalance waits for every member to rejoin, past the rebalance timeout: one dead " +
      "consumer stops the whole group.",
  },
  {
    id: "groups-static-instance-unchecked",
    file: "src/groups/membership.ts",
    find:
      "  if (req.groupInstanceId !== m.groupInstanceId) return fail(ErrorCode.FENCED_INSTANCE_ID);\n",
    replace: "",
    tests: ["test/groups/static-membership.test.ts"],
    why: "JoinGroup with a known member id but another group.instance.id is accepted instead " +
      "of FENCED_INSTANCE_ID: two static members can share one identity.",
  },
  {
    id: "storage-max-message-bytes-from-batch-length",
    file: "src/storage/validate.ts",
    find: "if (client && batchLength >= 0 && size > ctx.config.maxMessageBytes) {",
    replace: "if (client && batchLength >= 0 && batchLength > ctx.config.maxMessageBytes) {",
    tests: ["test/kafka/fetch-rules.test.ts", "test/storage/contract.test.ts"],
    why: "max.message.bytes is compared with the batch length field (the size less its 12-byte " +
      "prefix), so a batch up to 12 bytes over the limit is accepted.",
  },
  {
    id: "storage-client-control-batch",
    file: "src/storage/validate.ts",
    find: "      if (attributes & ATTR_CONTROL) {\n",
    replace: "      if (attributes & ATTR_CONTROL && false) {\n",
    tests: ["test/kafka/fetch-rules.test.ts", "test/storage/contract.test.ts"],
    why: "A client may write a control batch (a transaction marker): consumers skip its " +
      "records, or read_committed ones misread a transaction's end.",
  },
];
