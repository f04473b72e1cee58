// CreateTopics. Every change goes through the PartitionManager (metadata log, then the open logs), with
// validateOnly honoured.
import { ApiKey, ErrorCode, type Struct } from "../../protocol/kafka/index.ts";
import {
  arr,
  bool,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  nstr,
  num,
  refuseRepeated,
  type RequestContext,
  str,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { describeTopicConfig } from "../../meta/index.ts";
import { wireUuid } from "./shared/brokers.ts";
import { brokerIds, DUPLICATE_NAME } from "./shared/topics.ts";

export async function createTopics(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const v = req.header.apiVersion;
  const validateOnly = bool(req.body.validateOnly);
  const requested = arr(req.body.topics);
  // A name given twice is refused (and not created), answered once, as Kafka's controller does.
  const repeatedName = refuseRepeated(requested.map((t) => str(t.name)));
  const topics = [];
  for (const t of requested) {
    const name = str(t.name);
    const base = {
      name,
      topicId: "00000000000000000000000000000000",
      numPartitions: -1,
      replicationFactor: -1,
      configs: null,
    };
    const fail = (errorCode: number, errorMessage: string) => ({
      ...base,
      errorCode,
      errorMessage,
    });
    const dup = repeatedName(name);
    if (dup !== null) {
      if (dup === "answer") topics.push(fail(ErrorCode.INVALID_REQUEST, DUPLICATE_NAME));
      continue;
    }
    let assignments: number[][] | undefined;
    if (arr(t.assignments).length > 0) {
      const byIndex = [...arr(t.assignments)].sort((a, b) =>
        num(a.partitionIndex) - num(b.partitionIndex)
      );
      if (byIndex.some((a, i) => num(a.partitionIndex) !== i)) {
        topics.push(
          fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "partitions in the assignment must be numbered 0, 1, 2, … with none repeated",
          ),
        );
        continue;
      }
      assignments = byIndex.map((a) => brokerIds(a.brokerIds));
    }
    const configs: Record<string, string> = {};
    for (const c of arr(t.configs)) {
      const value = nstr(c.value);
      if (value !== null) configs[str(c.name)] = value;
    }
    try {
      const info = await ctx.partitions.createTopic(
        name,
        num(t.numPartitions, -1),
        num(t.replicationFactor, -1),
        configs,
        validateOnly,
        false,
        assignments,
      );
      const described = v >= 5
        ? describeTopicConfig(
          info.configs,
          ctx.meta.topicDefaults,
          info.internal,
          info.partitions[0]?.replicas.length,
        ).map((d) => ({
          name: d.name,
          value: d.sensitive ? null : d.value,
          readOnly: d.readOnly,
          configSource: d.sourceCode,
          isSensitive: d.sensitive,
        }))
        : null;
      topics.push({
        ...base,
        topicId: wireUuid(info.topicId),
        errorCode: 0,
        errorMessage: null,
        numPartitions: info.partitions.length,
        replicationFactor: info.partitions[0]?.replicas.length ?? -1,
        configs: described,
      });
      if (!validateOnly) {
        ctx.log.info("topic created", {
          topic: name,
          partitions: info.partitions.length,
          via: "kafka",
        });
      }
    } catch (e) {
      topics.push(fail(errorCodeOf(e), errorMessageOf(e)));
    }
  }
  return { throttleTimeMs: 0, topics };
}

export default defineHandler({
  apiKey: ApiKey.CreateTopics,
  versions: [0, 7],

  handle: createTopics,
});
