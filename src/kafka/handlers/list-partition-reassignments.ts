// ListPartitionReassignments (46, KIP-455): the partitions moving now (all, or the named ones),
// with their replicas (original ∪ target while copying), adding and removing replicas, from the
// committed metadata this broker has applied.
import {
  ApiKey,
  type ListPartitionReassignmentsRequest,
  type ListPartitionReassignmentsResponse,
} from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";
import { ReassignmentAdmin } from "../../core/reassignment-admin.ts";
import type { KafkaContext, RequestContext } from "../context.ts";

type Response = ListPartitionReassignmentsResponse;
type Listed = Response["topics"][number]["partitions"][number];

function listPartitionReassignments(
  ctx: KafkaContext,
  req: RequestContext<ListPartitionReassignmentsRequest>,
): Response {
  const admin = ReassignmentAdmin.of(ctx.meta);
  const moving = admin?.moving() ?? [];
  let wanted: Map<string, Set<number>> | null = null;
  if (req.body.topics !== null) {
    wanted = new Map();
    for (const t of req.body.topics) wanted.set(t.name, new Set(t.partitionIndexes));
  }
  const byTopic = new Map<string, Listed[]>();
  for (const m of moving) {
    if (wanted !== null && !wanted.get(m.topic)?.has(m.partition)) continue;
    let list = byTopic.get(m.topic);
    if (list === undefined) byTopic.set(m.topic, list = []);
    // Queued moves are listed too: Kafka lists every reassignment it has accepted.
    list.push({
      partitionIndex: m.partition,
      replicas: m.state === "copying" ? m.replicas : [...m.original, ...m.adding],
      addingReplicas: m.adding,
      removingReplicas: m.removing,
    });
  }
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
  };
}

export default defineHandler({
  apiKey: ApiKey.ListPartitionReassignments,
  versions: [0, 0],
  handle: listPartitionReassignments,
});
