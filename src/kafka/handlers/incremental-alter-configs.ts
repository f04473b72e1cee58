// IncrementalAlterConfigs (topics only: broker configs are static).
import {
  ApiKey,
  ErrorCode,
  type IncrementalAlterConfigsRequest,
  type IncrementalAlterConfigsResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { TOPIC_CONFIGS } from "../../meta/index.ts";
import { alterTopicConfigs, type TopicConfigChange } from "./shared/config-resources.ts";
import type { TopicInfo } from "../../meta/index.ts";

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

type Resource = IncrementalAlterConfigsRequest["resources"][number];

/** One resource's operations as the keys to set and remove (SET, DELETE, APPEND, SUBTRACT). */
function change(ctx: KafkaContext, r: Resource, t: TopicInfo): TopicConfigChange {
  const set: Record<string, string> = {};
  const del: string[] = [];
  let error: TopicConfigChange | null = null;
  const current = ctx.meta.describeTopicConfigsOf(t);
  for (const c of r.configs) {
    const { name: key, configOperation: op, value } = c;
    const def = TOPIC_CONFIGS.find((d) => d.name === key);
    if (op === SET) {
      if (value === null) {
        error = {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `SET of ${key} needs a value`,
        };
      } else set[key] = value;
    } else if (op === DELETE) del.push(key);
    else if (op === APPEND || op === SUBTRACT) {
      if (!def || def.type !== "list" || value === null) {
        error = {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: `${key} is not a list config; APPEND/SUBTRACT do not apply`,
        };
        continue;
      }
      const have = listItems(set[key] ?? current.find((d) => d.name === key)?.value ?? "");
      const items = listItems(value);
      const next = op === APPEND
        ? [...have, ...items.filter((i) => !have.includes(i))]
        : have.filter((h) => !items.includes(h));
      set[key] = next.join(",");
    } else {
      error = {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `unknown config operation ${op}`,
      };
    }
  }
  return error ?? { set, del };
}

const listItems = (v: string) => v.split(",").map((s) => s.trim()).filter((s) => s !== "");

/** IncrementalAlterConfigs: SET, DELETE, and APPEND/SUBTRACT on list configs. */
export async function incrementalAlterConfigs(
  ctx: KafkaContext,
  req: RequestContext<IncrementalAlterConfigsRequest>,
): Promise<IncrementalAlterConfigsResponse> {
  const { resources, validateOnly } = req.body;
  const responses = await alterTopicConfigs(
    ctx,
    resources,
    validateOnly,
    (r, t) => change(ctx, r, t),
  );
  return { throttleTimeMs: 0, responses };
}

export default defineHandler({
  apiKey: ApiKey.IncrementalAlterConfigs,
  versions: [0, 1],
  handle: incrementalAlterConfigs,
});
