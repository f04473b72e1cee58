// Heartbeat: keeps a member alive and tells it when a rebalance starts.
import {
  ApiKey,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask } from "./shared/group-coordinator.ts";

export async function heartbeat(
  ctx: KafkaContext,
  req: RequestContext<HeartbeatRequest>,
): Promise<HeartbeatResponse> {
  const b = req.body;
  const r = await ask(ctx, req, {
    type: "heartbeat",
    groupId: b.groupId,
    generationId: b.generationId,
    memberId: b.memberId,
    groupInstanceId: b.groupInstanceId,
  });
  return { throttleTimeMs: 0, errorCode: r.errorCode };
}

export default defineHandler({
  apiKey: ApiKey.Heartbeat,
  versions: [0, 4],
  needsGroups: true,
  handle: heartbeat,
});
