// AlterPartitionReassignments (45, KIP-455): start moves (a replica list) and cancel them (null
// replicas) for named partitions, as kafka-reassign-partitions and kafkajs'
// admin.alterPartitionReassignments send it. The controller decides (ReassignmentAdmin passes
// the request on from any broker); each partition is answered with its own error code. v1
// (KIP-860): AllowReplicationFactorChange false refuses a target that changes a partition's
// replication factor (INVALID_REPLICATION_FACTOR), echoed in the response.
import {
  type AlterPartitionReassignmentsRequest,
  type AlterPartitionReassignmentsResponse,
  ApiKey,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";
import { ReassignmentAdmin } from "../../core/reassignment-admin.ts";
import { MAX_REASSIGN_PARTITIONS, type ReassignItem } from "../../replication/reassign-requests.ts";
import { errorCodeOf, errorMessageOf, type KafkaContext, type RequestContext } from "../context.ts";

type Response = AlterPartitionReassignmentsResponse;
type PartitionAnswer = Response["responses"][number]["partitions"][number];

function answer(
  items: readonly ReassignItem[],
  codes: readonly { errorCode: number; message: string | null }[],
): Response["responses"] {
  const byTopic = new Map<string, PartitionAnswer[]>();
  items.forEach((it, i) => {
    let list = byTopic.get(it.topic);
    if (list === undefined) byTopic.set(it.topic, list = []);
    list.push({
      partitionIndex: it.partition,
      errorCode: codes[i].errorCode,
      errorMessage: codes[i].message,
    });
  });
  return [...byTopic].map(([name, partitions]) => ({ name, partitions }));
}

async function alterPartitionReassignments(
  ctx: KafkaContext,
  req: RequestContext<AlterPartitionReassignmentsRequest>,
): Promise<Response> {
  const items: ReassignItem[] = [];
  for (const t of req.body.topics) {
    for (const p of t.partitions) {
      items.push({ topic: t.name, partition: p.partitionIndex, target: p.replicas });
    }
  }
  const allow = req.body.allowReplicationFactorChange;
  const fail = (errorCode: number, message: string): Response => ({
    throttleTimeMs: 0,
    allowReplicationFactorChange: allow,
    errorCode,
    errorMessage: message,
    responses: answer(items, items.map(() => ({ errorCode, message }))),
  });
  if (items.length > MAX_REASSIGN_PARTITIONS) {
    return fail(ErrorCode.INVALID_REQUEST, `at most ${MAX_REASSIGN_PARTITIONS} partitions`);
  }
  // Ill-formed entries are answered on their own; the rest go to the controller.
  const bad = (it: ReassignItem) =>
    it.topic === "" || it.partition < 0 || (it.target !== null && it.target.some((id) => id < 0));
  const good = items.filter((it) => !bad(it));
  const admin = ReassignmentAdmin.of(ctx.meta);
  if (admin === undefined) return fail(ErrorCode.NOT_CONTROLLER, "this broker has no controller");
  try {
    const results = good.length === 0 ? [] : await admin.alter(good, 0, !allow);
    let j = 0;
    const codes = items.map((it) =>
      bad(it)
        ? { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message: "malformed partition entry" }
        : { errorCode: results[j].errorCode, message: results[j++].message }
    );
    return {
      throttleTimeMs: 0,
      allowReplicationFactorChange: allow,
      errorCode: 0,
      errorMessage: null,
      responses: answer(items, codes),
    };
  } catch (e) {
    return fail(errorCodeOf(e), errorMessageOf(e));
  }
}

export default defineHandler({
  apiKey: ApiKey.AlterPartitionReassignments,
  versions: [0, 1],
  handle: alterPartitionReassignments,
});
