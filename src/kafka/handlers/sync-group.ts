// SyncGroup: waits for the leader's assignment; a connection that closes drops its waiting
// requests.
import {
  ApiKey,
  type SyncGroupRequest,
  type SyncGroupResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, memberOf } from "./shared/group-coordinator.ts";

export async function syncGroup(
  ctx: KafkaContext,
  req: RequestContext<SyncGroupRequest>,
): Promise<SyncGroupResponse> {
  const b = req.body;
  const r = await ask(ctx, req, {
    type: "sync",
    ...memberOf(b),
    protocolType: b.protocolType,
    protocolName: b.protocolName,
    assignments: b.assignments.map((a) => ({ memberId: a.memberId, assignment: a.assignment })),
  });
  if (r.kind === "error") {
    return { throttleTimeMs: 0, errorCode: r.errorCode, assignment: new Uint8Array(0) };
  }
  return {
    throttleTimeMs: 0,
    errorCode: r.errorCode,
    protocolType: r.protocolType,
    protocolName: r.protocolName,
    assignment: r.assignment,
  };
}

export default defineHandler({
  apiKey: ApiKey.SyncGroup,
  versions: [0, 5],
  needsGroups: true,
  handle: syncGroup,
});
