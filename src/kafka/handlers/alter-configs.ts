// AlterConfigs (topics only: broker configs are static).
import {
  type AlterConfigsRequest,
  type AlterConfigsResponse,
  ApiKey,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import {
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  repeated,
  type RequestContext,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { alterTarget, DUPLICATE_KEYS, resourceError } from "./shared/config-resources.ts";

/** AlterConfigs replaces a topic's whole override set with the one given. */
export async function alterConfigs(
  ctx: KafkaContext,
  req: RequestContext<AlterConfigsRequest>,
): Promise<AlterConfigsResponse> {
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
    for (const c of r.configs) if (c.value !== null) set[c.name] = c.value;
    const del = Object.keys(t.configs).filter((k) => !Object.hasOwn(set, k));
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
  apiKey: ApiKey.AlterConfigs,
  versions: [0, 2],
  handle: alterConfigs,
});
