// JoinGroup: wire bodies become GroupService inputs and coordinator answers become wire bodies.
// It waits for the rebalance; a connection that closes drops its waiting requests.
import {
  ApiKey,
  type JoinGroupRequest,
  type JoinGroupResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { ask } from "./shared/group-coordinator.ts";

export async function joinGroup(
  ctx: KafkaContext,
  req: RequestContext<JoinGroupRequest>,
): Promise<JoinGroupResponse> {
  const b = req.body;
  const v = req.header.apiVersion;
  const session = b.sessionTimeoutMs;
  const r = await ask(ctx, req, {
    type: "join",
    groupId: b.groupId,
    memberId: b.memberId,
    groupInstanceId: b.groupInstanceId,
    clientId: req.header.clientId ?? "",
    clientHost: req.clientHost,
    sessionTimeoutMs: session,
    rebalanceTimeoutMs: v >= 1 ? b.rebalanceTimeoutMs : -1,
    protocolType: b.protocolType,
    protocols: b.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
    requireKnownMemberId: v >= 4,
    brokerAssigns: false,
  });
  if (r.kind === "error") {
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: -1,
      protocolName: v >= 7 ? null : "",
      leader: "",
      memberId: b.memberId,
      members: [],
    };
  }
  return {
    throttleTimeMs: 0,
    errorCode: r.errorCode,
    generationId: r.generationId,
    protocolType: r.protocolType,
    // Before v7 the name is not nullable.
    protocolName: v >= 7 ? r.protocolName : r.protocolName ?? "",
    leader: r.leader,
    skipAssignment: v >= 9 && r.skipAssignment,
    memberId: r.memberId,
    members: r.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata,
    })),
  };
}

export default defineHandler({
  apiKey: ApiKey.JoinGroup,
  versions: [0, 9],
  needsGroups: true,
  handle: joinGroup,
});
