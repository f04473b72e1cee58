// LeaveGroup: one member (v0-2) or a batch of members (v3+) leave.
import {
  ApiKey,
  type LeaveGroupRequest,
  type LeaveGroupResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask } from "./shared/group-coordinator.ts";

export async function leaveGroup(
  ctx: KafkaContext,
  req: RequestContext<LeaveGroupRequest>,
): Promise<LeaveGroupResponse> {
  const b = req.body;
  const v = req.header.apiVersion;
  const members = v >= 3
    ? b.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId }))
    : [{ memberId: b.memberId, groupInstanceId: null }];
  const r = await ask(ctx, req, { type: "leave", groupId: b.groupId, members });
  if (r.kind === "error") return { throttleTimeMs: 0, errorCode: r.errorCode, members: [] };
  return { throttleTimeMs: 0, errorCode: r.errorCode, members: v >= 3 ? r.members : [] };
}

export default defineHandler({
  apiKey: ApiKey.LeaveGroup,
  versions: [0, 5],
  needsGroups: true,
  handle: leaveGroup,
});
