// IncrementalAlterConfigs (topics only: broker configs are static).
import {
  ApiKey,
  ErrorCode,
  type IncrementalAlterConfigsRequest,
  type IncrementalAlterConfigsResponse,
} from "../../protocol/kafka/index.ts";
import {
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  repeated,
  type RequestContext,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { describeTopicConfig, TOPIC_CONFIGS } from "../../meta/index.ts";
import { alterTarget, DUPLICATE_KEYS, resourceError } from "./shared/config-resources.ts";

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

/** IncrementalAlterConfigs: SET, DELETE, and APPEND/SUBTRACT on list configs. */
export async function incrementalAlterConfigs(
  ctx: KafkaContext,
  req: RequestContext<IncrementalAlterConfigsRequest>,
): Promise<IncrementalAlterConfigsResponse> {
  const validateOnly = req.body.validateOnly;
  const responses = [];
  for (const r of req.body.resources) {
    const target = alterTarget(ctx, r);
    if ("error" in target) {
      responses.push(target.error);
      continue;
    }
    const { name, topic: t } = target;
    if (repeated(r.configs.map((c) => c.name)).size > 0) {
      responses.push(resourceError(r, ErrorCode.INVALID_REQUEST, DUPLICATE_KEYS));
      continue;
    }
    const set: Record<string, string> = {};
    const del: string[] = [];
    let error: [number, string] | null = null;
    const current = describeTopicConfig(
      t.configs,
      ctx.meta.topicDefaults,
      t.internal,
      t.partitions[0]?.replicas.length,
    );
    for (const c of r.configs) {
      const { name: key, configOperation: op, value } = c;
      const def = TOPIC_CONFIGS.find((d) => d.name === key);
      if (op === SET) {
        if (value === null) error = [ErrorCode.INVALID_REQUEST, `SET of ${key} needs a value`];
        else set[key] = value;
      } else if (op === DELETE) del.push(key);
      else if (op === APPEND || op === SUBTRACT) {
        if (!def || def.type !== "list" || value === null) {
          error = [
            ErrorCode.INVALID_CONFIG,
            `${key} is not a list config; APPEND/SUBTRACT do not apply`,
          ];
          continue;
        }
        const have = (set[key] ?? current.find((d) => d.name === key)?.value ?? "").split(",").map((
          s,
        ) => s.trim())
          .filter((s) => s !== "");
        const items = value.split(",").map((s) => s.trim()).filter((s) => s !== "");
        const next = op === APPEND
          ? [...have, ...items.filter((i) => !have.includes(i))]
          : have.filter((h) => !items.includes(h));
        set[key] = next.join(",");
      } else error = [ErrorCode.INVALID_REQUEST, `unknown config operation ${op}`];
    }
    if (error) {
      responses.push(resourceError(r, error[0], error[1]));
      continue;
    }
    try {
      await ctx.partitions.alterTopicConfigs(name, set, del, validateOnly);
      responses.push(resourceError(r, 0, null));
    } catch (e) {
      responses.push(resourceError(r, errorCodeOf(e), errorMessageOf(e)));
    }
  }
  return { throttleTimeMs: 0, responses };
}

export default defineHandler({
  apiKey: ApiKey.IncrementalAlterConfigs,
  versions: [0, 1],
  handle: incrementalAlterConfigs,
});
