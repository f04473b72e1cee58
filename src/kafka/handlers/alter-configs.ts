// AlterConfigs (topics only: broker configs are static).
import {
  type AlterConfigsRequest,
  type AlterConfigsResponse,
  ApiKey,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { alterTopicConfigs } from "./shared/config-resources.ts";

/** AlterConfigs replaces a topic's whole override set with the one given. */
export async function alterConfigs(
  ctx: KafkaContext,
  req: RequestContext<AlterConfigsRequest>,
): Promise<AlterConfigsResponse> {
  const responses = await alterTopicConfigs(
    ctx,
    req.body.resources,
    req.body.validateOnly,
    (r, t) => {
      const set: Record<string, string> = {};
      for (const c of r.configs) if (c.value !== null) set[c.name] = c.value;
      return { set, del: Object.keys(t.configs).filter((k) => !Object.hasOwn(set, k)) };
    },
  );
  return { throttleTimeMs: 0, responses };
}

export default defineHandler({
  apiKey: ApiKey.AlterConfigs,
  versions: [0, 2],
  handle: alterConfigs,
});
