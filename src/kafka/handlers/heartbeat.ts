// Heartbeat: keeps a member alive and tells it when a rebalance starts.
import { ApiKey, type Struct } from "../../protocol/kafka/index.ts";
import { type KafkaContext, nstr, num, type RequestContext, str } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, expect } from "./shared/group-coordinator.ts";

export async function heartbeat(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const r = expect(
    await ask(ctx, req, {
      type: "heartbeat",
      groupId: str(b.groupId),
      generationId: num(b.generationId),
      memberId: str(b.memberId),
      groupInstanceId: nstr(b.groupInstanceId),
    }),
    "heartbeat",
  );
  return { throttleTimeMs: 0, errorCode: r.errorCode };
}

export default defineHandler({
  apiKey: ApiKey.Heartbeat,
  versions: [0, 4],
  needsGroups: true,
  handle: heartbeat,
});
