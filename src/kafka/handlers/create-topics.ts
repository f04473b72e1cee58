// CreateTopics. Every change goes through the PartitionManager (metadata log, then the open logs), with
// validateOnly honoured.
import {
  ApiKey,
  type CreateTopicsRequest,
  type CreateTopicsRequestTopics,
  type CreateTopicsResponse,
  type CreateTopicsResponseTopics,
  ErrorCode,
  ZERO_UUID,
} from "../../protocol/kafka/index.ts";
import {
  answerOnce,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  type RequestContext,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { wireUuid } from "./shared/brokers.ts";
import { DUPLICATE_NAME } from "./shared/topics.ts";

export async function createTopics(
  ctx: KafkaContext,
  req: RequestContext<CreateTopicsRequest>,
): Promise<CreateTopicsResponse> {
  const v = req.header.apiVersion;
  const validateOnly = req.body.validateOnly;
  // A name given twice is refused (and not created), answered once, as Kafka's controller does.
  const topics = await answerOnce(
    req.body.topics,
    (t) => t.name,
    (t) => failed(t.name, ErrorCode.INVALID_REQUEST, DUPLICATE_NAME),
    (t) => createTopic(ctx, v, validateOnly, t),
  );
  return { throttleTimeMs: 0, topics };
}

const failed = (
  name: string,
  errorCode: number,
  errorMessage: string,
): CreateTopicsResponseTopics => ({
  name,
  topicId: ZERO_UUID,
  errorCode,
  errorMessage,
  numPartitions: -1,
  replicationFactor: -1,
  configs: null,
});

async function createTopic(
  ctx: KafkaContext,
  v: number,
  validateOnly: boolean,
  t: CreateTopicsRequestTopics,
): Promise<CreateTopicsResponseTopics> {
  const name = t.name;
  let assignments: number[][] | undefined;
  if (t.assignments.length > 0) {
    const byIndex = [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
    if (byIndex.some((a, i) => a.partitionIndex !== i)) {
      return failed(
        name,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "partitions in the assignment must be numbered 0, 1, 2, … with none repeated",
      );
    }
    assignments = byIndex.map((a) => a.brokerIds);
  }
  const configs: Record<string, string> = {};
  for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
  try {
    const info = await ctx.partitions.createTopic(
      name,
      t.numPartitions,
      t.replicationFactor,
      configs,
      validateOnly,
      false,
      assignments,
    );
    const described = v >= 5
      ? ctx.meta.describeTopicConfigsOf(info).map((d) => ({
        name: d.name,
        value: d.sensitive ? null : d.value,
        readOnly: d.readOnly,
        configSource: d.sourceCode,
        isSensitive: d.sensitive,
      }))
      : null;
    if (!validateOnly) {
      ctx.log.info("topic created", {
        topic: name,
        partitions: info.partitions.length,
        via: "kafka",
      });
    }
    return {
      name,
      topicId: wireUuid(info.topicId),
      errorCode: 0,
      errorMessage: null,
      numPartitions: info.partitions.length,
      replicationFactor: info.partitions[0]?.replicas.length ?? -1,
      configs: described,
    };
  } catch (e) {
    return failed(name, errorCodeOf(e), errorMessageOf(e));
  }
}

export default defineHandler({
  apiKey: ApiKey.CreateTopics,
  versions: [0, 7],
  handle: createTopics,
});
