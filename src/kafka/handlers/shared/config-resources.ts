// Config resources as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs name them.
import { ErrorCode } from "../../../protocol/kafka/index.ts";
import type { KafkaContext } from "../../context.ts";
import type { TopicInfo } from "../../../meta/index.ts";

export const TOPIC = 2;
export const BROKER = 4;

/** A resource as the alter requests name it (both have these two fields). */
interface Resource {
  resourceType: number;
  resourceName: string;
}

export function resourceError(r: Resource, errorCode: number, errorMessage: string | null) {
  return { errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
}

/** The topic an alter request names, or the error response for that resource. */
export function alterTarget(
  ctx: KafkaContext,
  r: Resource,
): { name: string; topic: TopicInfo } | { error: ReturnType<typeof resourceError> } {
  if (r.resourceType !== TOPIC) {
    return {
      error: resourceError(
        r,
        ErrorCode.INVALID_REQUEST,
        "only topic configs can be altered; broker configs are flags",
      ),
    };
  }
  const name = r.resourceName;
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
