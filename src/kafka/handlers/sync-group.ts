// SyncGroup: waits for the leader's assignment; a connection that closes drops its waiting
// requests.
import { ApiKey, type Struct } from "../../protocol/kafka/index.ts";
import { arr, type KafkaContext, nstr, num, type RequestContext, str } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask, expect } from "./shared/group-coordinator.ts";

export async function syncGroup(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const b = req.body;
  const r = expect(
    await ask(ctx, req, {
      type: "sync",
      groupId: str(b.groupId),
      generationId: num(b.generationId),
      memberId: str(b.memberId),
      groupInstanceId: nstr(b.groupInstanceId),
      protocolType: nstr(b.protocolType),
      protocolName: nstr(b.protocolName),
      assignments: arr(b.assignments).map((a) => ({
        memberId: str(a.memberId),
        assignment: a.assignment instanceof Uint8Array ? a.assignment : new Uint8Array(0),
      })),
    }),
    "sync",
  );
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
