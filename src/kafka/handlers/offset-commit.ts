// OffsetCommit: commits go through the group coordinator into __consumer_offsets.
import {
  ApiKey,
  type OffsetCommitRequest,
  type OffsetCommitResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask } from "./shared/group-coordinator.ts";

/**
 * OffsetCommit. v0 carries no generation or member: it is a simple commit (generation -1, no
 * member id), accepted only while the group has no members (else UNKNOWN_MEMBER_ID), as Kafka's
 * coordinator treats a generation -1 commit. v1 adds them (checked as in v2+) and a per-partition
 * CommitTimestamp (-1 = now). v2-4 carry RetentionTimeMs.
 */
export async function offsetCommit(
  ctx: KafkaContext,
  req: RequestContext<OffsetCommitRequest>,
): Promise<OffsetCommitResponse> {
  const b = req.body;
  const v = req.header.apiVersion;
  const topics = b.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partition: p.partitionIndex,
      offset: p.committedOffset,
      leaderEpoch: p.committedLeaderEpoch,
      metadata: p.committedMetadata,
      commitTimestamp: v === 1 ? p.commitTimestamp : -1,
    })),
  }));
  const r = await ask(ctx, req, {
    type: "offsetCommit",
    groupId: b.groupId,
    generationId: v >= 1 ? b.generationIdOrMemberEpoch : -1,
    memberId: v >= 1 ? b.memberId : "",
    groupInstanceId: b.groupInstanceId,
    retentionTimeMs: b.retentionTimeMs,
    topics,
  });
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
