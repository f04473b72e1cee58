// Heartbeat: keeps a member alive and tells it when a rebalance starts.
import {
  ApiKey,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, memberOf } from "./shared/group-coordinator.ts";

export async function heartbeat(
  ctx: KafkaContext,
  req: RequestContext<HeartbeatRequest>,
): Promise<HeartbeatResponse> {
  const r = await ask(ctx, req, { type: "heartbeat", ...memberOf(req.body) });
  return { throttleTimeMs: 0, errorCode: r.errorCode };
}

export default defineHandler({
  apiKey: ApiKey.Heartbeat,
  versions: [0, 4],
  needsGroups: true,
  handle: heartbeat,
});
