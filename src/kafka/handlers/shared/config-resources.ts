// Config resources as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs name them.
import { ErrorCode } from "../../../protocol/kafka/index.ts";
import { errorCodeOf, errorMessageOf, type KafkaContext, repeated } from "../../context.ts";
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

/** What one resource's configs change into: keys set and keys removed, or why it cannot. */
export type TopicConfigChange =
  | { set: Record<string, string>; del: string[] }
  | { errorCode: number; errorMessage: string };

/**
 * The loop AlterConfigs and IncrementalAlterConfigs share: each resource must be a known topic
 * naming each config once; `change` turns its configs into the keys to set and remove, which are
 * applied (or only validated) and answered per resource.
 */
export async function alterTopicConfigs<R extends Resource & { configs: { name: string }[] }>(
  ctx: KafkaContext,
  resources: readonly R[],
  validateOnly: boolean,
  change: (r: R, topic: TopicInfo) => TopicConfigChange,
): Promise<ReturnType<typeof resourceError>[]> {
  const responses = [];
  for (const r of resources) {
    const target = alterTarget(ctx, r);
    if ("error" in target) {
      responses.push(target.error);
      continue;
    }
    if (repeated(r.configs.map((c) => c.name)).size > 0) {
      responses.push(resourceError(r, ErrorCode.INVALID_REQUEST, DUPLICATE_KEYS));
      continue;
    }
    const c = change(r, target.topic);
    if ("errorCode" in c) {
      responses.push(resourceError(r, c.errorCode, c.errorMessage));
      continue;
    }
    try {
      await ctx.partitions.alterTopicConfigs(target.name, c.set, c.del, validateOnly);
      responses.push(resourceError(r, 0, null));
    } catch (e) {
      responses.push(resourceError(r, errorCodeOf(e), errorMessageOf(e)));
    }
  }
  return responses;
}
