// ElectLeaders (43): preferred-replica or unclean leader elections, decided by the controller.
// Kafka clients send it to the controller Metadata names; a broker that is not the controller
// passes it on over the cluster port (ReplicationAdmin), and answers NOT_CONTROLLER only when no
// controller can be reached. v0 has no election type (preferred) and no top-level error code.
import {
  ApiKey,
  type ElectLeadersRequest,
  type ElectLeadersResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { defineHandler } from "../api.ts";
import {
  type ElectionResult,
  type ElectionTarget,
  ElectionType,
  MAX_ELECTION_TARGETS,
  ReplicationAdmin,
} from "../../core/replication-admin.ts";
import { errorCodeOf, errorMessageOf, type KafkaContext, type RequestContext } from "../context.ts";

/** Results grouped by topic, topics in the order they first appear. */
function grouped(
  results: readonly ElectionResult[],
): ElectLeadersResponse["replicaElectionResults"] {
  const byTopic = new Map<
    string,
    ElectLeadersResponse["replicaElectionResults"][number]["partitionResult"][number][]
  >();
  for (const r of results) {
    let list = byTopic.get(r.topic);
    if (list === undefined) byTopic.set(r.topic, list = []);
    list.push({ partitionId: r.partition, errorCode: r.errorCode, errorMessage: r.message });
  }
  return [...byTopic].map(([topic, partitionResult]) => ({ topic, partitionResult }));
}

export async function electLeaders(
  ctx: KafkaContext,
  req: RequestContext<ElectLeadersRequest>,
): Promise<ElectLeadersResponse> {
  const v = req.header.apiVersion;
  const type = v >= 1 ? req.body.electionType : ElectionType.PREFERRED;
  const named = req.body.topicPartitions;
  const targets: ElectionTarget[] | null = named === null
    ? null
    : named.flatMap((t) => t.partitionId.map((partition) => ({ topic: t.topic, partition })));
  // A request-wide error: top-level from v1, and on every named partition (all v0 can carry).
  const fail = (errorCode: number, message: string): ElectLeadersResponse => ({
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: grouped(
      (targets ?? []).map((t) => ({ ...t, errorCode, message })),
    ),
  });
  if (type !== ElectionType.PREFERRED && type !== ElectionType.UNCLEAN) {
    return fail(ErrorCode.INVALID_REQUEST, `Unknown election type ${type}`);
  }
  if (targets !== null && targets.length > MAX_ELECTION_TARGETS) {
    return fail(
      ErrorCode.INVALID_REQUEST,
      `at most ${MAX_ELECTION_TARGETS} partitions per request`,
    );
  }
  // Nothing named: nothing to do (null, not empty, means every partition).
  if (targets !== null && targets.length === 0) {
    return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: [] };
  }
  const admin = ReplicationAdmin.of(ctx.partitions);
  if (admin === undefined) {
    return fail(ErrorCode.NOT_CONTROLLER, "this broker has no controller to ask");
  }
  try {
    const results = await admin.electLeaders(type, targets, req.body.timeoutMs);
    return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: grouped(results) };
  } catch (e) {
    return fail(errorCodeOf(e), errorMessageOf(e));
  }
}

export default defineHandler({
  apiKey: ApiKey.ElectLeaders,
  versions: [0, 2],
  handle: electLeaders,
});
