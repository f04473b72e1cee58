// DescribeGroups: state, protocol and members of the groups this broker coordinates.
import {
  ApiKey,
  type DescribeGroupsRequest,
  type DescribeGroupsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";

export function describeGroups(
  ctx: KafkaContext,
  req: RequestContext<DescribeGroupsRequest>,
): DescribeGroupsResponse {
  const ids = req.body.groups;
  return {
    throttleTimeMs: 0,
    groups: ids.map((id) => {
      if (!ctx.groups.coordinates(id)) {
        return {
          errorCode: ErrorCode.NOT_COORDINATOR,
          groupId: id,
          groupState: "",
          protocolType: "",
          protocolData: "",
          members: [],
          authorizedOperations: -2147483648,
        };
      }
      const g = ctx.groups.coordinator.describeGroup(id);
      return {
        errorCode: g.errorCode,
        groupId: g.groupId,
        groupState: g.state,
        protocolType: g.protocolType,
        protocolData: g.protocolData,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
        authorizedOperations: req.body.includeAuthorizedOperations ? 0 : -2147483648,
      };
    }),
  };
}

export default defineHandler({
  apiKey: ApiKey.DescribeGroups,
  versions: [0, 5],
  needsGroups: true,
  handle: describeGroups,
});
