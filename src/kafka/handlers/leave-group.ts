// LeaveGroup: one member (v0-2) or a batch of members (v3+) leave.
import { ApiKey, type Struct } from "../../protocol/kafka/index.ts";
import { arr, type KafkaContext, nstr, type RequestContext, str } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, expect } from "./shared/group-coordinator.ts";

export async function leaveGroup(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const v = req.header.apiVersion;
  const members = v >= 3
    ? arr(b.members).map((m) => ({
      memberId: str(m.memberId),
      groupInstanceId: nstr(m.groupInstanceId),
    }))
    : [{ memberId: str(b.memberId), groupInstanceId: null }];
  const r = expect(
    await ask(ctx, req, { type: "leave", groupId: str(b.groupId), members }),
    "leave",
  );
  if (r.kind === "error") return { throttleTimeMs: 0, errorCode: r.errorCode, members: [] };
  return { throttleTimeMs: 0, errorCode: r.errorCode, members: v >= 3 ? r.members : [] };
}

export default defineHandler({
  apiKey: ApiKey.LeaveGroup,
  versions: [0, 5],
  needsGroups: true,
  handle: leaveGroup,
});
