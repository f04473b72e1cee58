// FindCoordinator: a group's coordinator is the leader of its __consumer_offsets partition.
import {
  ApiKey,
  ErrorCode,
  type FindCoordinatorRequest,
  type FindCoordinatorResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { groupCoordinator } from "../../core/group-service.ts";
import { brokersOf } from "./shared/brokers.ts";

const KEY_GROUP = 0;
const KEY_TRANSACTION = 1;

export function findCoordinator(
  ctx: KafkaContext,
  req: RequestContext<FindCoordinatorRequest>,
): FindCoordinatorResponse {
  const v = req.header.apiVersion;
  const keyType = req.body.keyType;
  const answer = (key: string) => {
    if (keyType === KEY_TRANSACTION) {
      // Transactions are not supported, and InitProducerId says so with an error clients treat
      // as fatal. That answer has to be reached: an error here is swallowed by kafkajs, which
      // asks every broker in turn and then reports only "Failed to find group coordinator". So
      // this broker names itself the transaction coordinator.
      const self = brokersOf(ctx)[0];
      return {
        errorCode: 0,
        errorMessage: null,
        nodeId: self.nodeId,
        host: self.host,
        port: self.port,
      };
    }
    if (keyType !== KEY_GROUP) {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `coordinator key type ${keyType} is not supported`,
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    if (key === "") {
      return {
        errorCode: ErrorCode.INVALID_GROUP_ID,
        errorMessage: "the group id is empty",
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    // The leader of the group's __consumer_offsets partition coordinates it (as in Kafka).
    const id = groupCoordinator(ctx.meta, key);
    const at = brokersOf(ctx).find((b) => b.nodeId === id);
    if (at === undefined) {
      return {
        errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        errorMessage: `the coordinator of group ${key} (broker ${id}) is not available`,
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    return { errorCode: 0, errorMessage: null, nodeId: at.nodeId, host: at.host, port: at.port };
  };
  if (v >= 4) {
    return {
      throttleTimeMs: 0,
      coordinators: req.body.coordinatorKeys.map((key) => ({ key, ...answer(key) })),
    };
  }
  return { throttleTimeMs: 0, ...answer(req.body.key) };
}

export default defineHandler({
  apiKey: ApiKey.FindCoordinator,
  versions: [0, 6],
  handle: findCoordinator,
});
