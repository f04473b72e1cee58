// Config resources as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs name them.
import { ErrorCode, type Struct } from "../../../protocol/kafka/index.ts";
import { type KafkaContext, num, str } from "../../context.ts";
import type { TopicInfo } from "../../../meta/index.ts";

export const TOPIC = 2;
export const BROKER = 4;

export function resourceError(r: Struct, errorCode: number, errorMessage: string | null) {
  return {
    errorCode,
    errorMessage,
    resourceType: num(r.resourceType),
    resourceName: str(r.resourceName),
  };
}

/** The topic an alter request names, or the error response for that resource. */
export function alterTarget(
  ctx: KafkaContext,
  r: Struct,
): { name: string; topic: TopicInfo } | { error: ReturnType<typeof resourceError> } {
  if (num(r.resourceType) !== TOPIC) {
    return {
      error: resourceError(
        r,
        ErrorCode.INVALID_REQUEST,
        "only topic configs can be altered; broker configs are flags",
      ),
    };
  }
  const name = str(r.resourceName);
  const topic = ctx.meta.getTopic(name);
  if (!topic) {
    return {
      error: resourceError(r, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${name}`),
    };
  }
  return { name, topic };
}

/** Kafka's words for a config named twice for one resource (nothing of it is changed). */
export const DUPLICATE_KEYS = "Error due to duplicate config keys";
