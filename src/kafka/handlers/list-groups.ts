// ListGroups: the groups this broker coordinates, optionally filtered by state (v4+).
import {
  ApiKey,
  type ListGroupsRequest,
  type ListGroupsResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import type { GroupState } from "../../groups/index.ts";

const STATES: readonly GroupState[] = [
  "Empty",
  "PreparingRebalance",
  "CompletingRebalance",
  "Stable",
  "Dead",
];

export function listGroups(
  ctx: KafkaContext,
  req: RequestContext<ListGroupsRequest>,
): ListGroupsResponse {
  const wanted = req.body.statesFilter;
  const states = wanted.filter((s): s is GroupState => (STATES as string[]).includes(s));
  // A filter naming only unknown states matches nothing.
  const groups = wanted.length > 0 && states.length === 0
    ? []
    : ctx.groups.coordinator.listGroups(states);
  const types = req.body.typesFilter;
  const classic = types.length === 0 || types.some((t) => t.toLowerCase() === "classic");
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    groups: classic
      ? groups.map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: g.state,
        groupType: "classic",
      }))
      : [],
  };
}

export default defineHandler({
  apiKey: ApiKey.ListGroups,
  versions: [0, 5],
  needsGroups: true,
  handle: listGroups,
});
