// DeleteGroups: empty groups and their commits, through the coordinator.
import {
  ApiKey,
  type DeleteGroupsRequest,
  type DeleteGroupsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask } from "./shared/group-coordinator.ts";

export async function deleteGroups(
  ctx: KafkaContext,
  req: RequestContext<DeleteGroupsRequest>,
): Promise<DeleteGroupsResponse> {
  const ids = req.body.groupsNames;
  const here = ids.filter((id) => ctx.groups.coordinates(id));
  const elsewhere = ids.filter((id) => !here.includes(id))
    .map((groupId) => ({ groupId, errorCode: ErrorCode.NOT_COORDINATOR }));
  if (here.length === 0) return { throttleTimeMs: 0, results: elsewhere };
  const r = await ask(ctx, req, { type: "deleteGroups", groupIds: here });
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      results: [...here.map((groupId) => ({ groupId, errorCode: r.errorCode })), ...elsewhere],
    };
  }
  return { throttleTimeMs: 0, results: [...r.results, ...elsewhere] };
}

export default defineHandler({
  apiKey: ApiKey.DeleteGroups,
  versions: [0, 2],
  needsGroups: true,
  handle: deleteGroups,
});
