// OffsetFetch: a group's commits, one group (v0-7) or several (v8+).
import {
  ApiKey,
  ErrorCode,
  type OffsetFetchRequest,
  type OffsetFetchResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";

/** The topics asked for (null: all of them), as v0-7 and each v8+ group name them. */
type Wanted = readonly { name: string; partitionIndexes: number[] }[] | null;

function fetchGroupOffsets(ctx: KafkaContext, groupId: string, wanted: Wanted) {
  const topics = wanted?.map((t) => ({ name: t.name, partitions: t.partitionIndexes })) ?? null;
  if (!ctx.groups.coordinates(groupId)) {
    // Another broker holds the group's offsets: the client looks the coordinator up again.
    const code = ErrorCode.NOT_COORDINATOR;
    return {
      errorCode: code,
      topics: (topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => ({
          partitionIndex,
          committedOffset: -1,
          committedLeaderEpoch: -1,
          metadata: null,
          errorCode: code,
        })),
      })),
    };
  }
  const r = ctx.groups.coordinator.fetchOffsets(groupId, topics);
  return {
    errorCode: r.errorCode,
    topics: r.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition,
        committedOffset: p.offset,
        committedLeaderEpoch: p.leaderEpoch,
        metadata: p.metadata,
        errorCode: p.errorCode,
      })),
    })),
  };
}

export async function offsetFetch(
  ctx: KafkaContext,
  req: RequestContext<OffsetFetchRequest>,
): Promise<OffsetFetchResponse> {
  const b = req.body;
  const ids = req.header.apiVersion >= 8 ? b.groups.map((g) => g.groupId) : [b.groupId];
  // Commits accepted before this request are answered even if still being written.
  await Promise.all(ids.map((id) => ctx.groups.commitsSettled(id)));
  if (req.header.apiVersion >= 8) {
    return {
      throttleTimeMs: 0,
      groups: b.groups.map((g) => ({
        groupId: g.groupId,
        ...fetchGroupOffsets(ctx, g.groupId, g.topics),
      })),
    };
  }
  // v0-1 have no "all topics" form: an absent list is an empty one.
  const topics = req.header.apiVersion < 2 && b.topics === null ? [] : b.topics;
  const r = fetchGroupOffsets(ctx, b.groupId, topics);
  return { throttleTimeMs: 0, topics: r.topics, errorCode: r.errorCode };
}

// From v0: kafka-python pinned to 0.8.1 reads its commits back with it. Answered like v1: Kafka
// 0.8 read v0 from ZooKeeper, but here every commit lives in __consumer_offsets.
export default defineHandler({
  apiKey: ApiKey.OffsetFetch,
  versions: [0, 9],
  needsGroups: true,
  handle: offsetFetch,
});
