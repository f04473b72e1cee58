// OffsetCommit: commits go through the group coordinator into __consumer_offsets.
import { ApiKey, type Struct } from "../../protocol/kafka/index.ts";
import { arr, type KafkaContext, nstr, num, type RequestContext, str } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, expect } from "./shared/group-coordinator.ts";

/**
 * OffsetCommit. v0 carries no generation or member: it is a simple commit (generation -1, no
 * member id), accepted only while the group has no members (else UNKNOWN_MEMBER_ID), as Kafka's
 * coordinator treats a generation -1 commit. v1 adds them (checked as in v2+) and a per-partition
 * CommitTimestamp (-1 = now). v2-4 carry RetentionTimeMs.
 */
export async function offsetCommit(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const v = req.header.apiVersion;
  const topics = arr(b.topics).map((t) => ({
    name: str(t.name),
    partitions: arr(t.partitions).map((p) => ({
      partition: num(p.partitionIndex),
      offset: num(p.committedOffset),
      leaderEpoch: num(p.committedLeaderEpoch, -1),
      metadata: nstr(p.committedMetadata),
      commitTimestamp: v === 1 ? num(p.commitTimestamp, -1) : -1,
    })),
  }));
  const r = expect(
    await ask(ctx, req, {
      type: "offsetCommit",
      groupId: str(b.groupId),
      generationId: v >= 1 ? num(b.generationIdOrMemberEpoch, -1) : -1,
      memberId: v >= 1 ? str(b.memberId) : "",
      groupInstanceId: nstr(b.groupInstanceId),
      retentionTimeMs: num(b.retentionTimeMs, -1),
      topics,
    }),
    "offsetCommit",
  );
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode: r.errorCode,
        })),
      })),
    };
  }
  return {
    throttleTimeMs: 0,
    topics: r.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition,
        errorCode: p.errorCode,
      })),
    })),
  };
}

// From v0, below Kafka 4.0's v2: sarama 1.22 commits with v1 at its default retention and
// kafka-python pinned below 0.9 with v0/v1 (Kafka 3.x served them; 4.0 does not).
export default defineHandler({
  apiKey: ApiKey.OffsetCommit,
  versions: [0, 9],
  needsGroups: true,
  handle: offsetCommit,
});
