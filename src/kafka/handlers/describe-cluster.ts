// DescribeCluster: the brokers and the controller, for admin clients.
import {
  ApiKey,
  type DescribeClusterRequest,
  type DescribeClusterResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { brokersOf } from "./shared/brokers.ts";

export function describeCluster(
  ctx: KafkaContext,
  req: RequestContext<DescribeClusterRequest>,
): DescribeClusterResponse {
  const endpointType = req.body.endpointType;
  const base = {
    throttleTimeMs: 0,
    endpointType,
    clusterId: ctx.meta.clusterId,
    controllerId: ctx.controllerId(),
    clusterAuthorizedOperations: -2147483648,
  };
  if (endpointType !== 1) {
    return {
      ...base,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "only broker endpoints (type 1) are served",
      brokers: [],
    };
  }
  return {
    ...base,
    errorCode: 0,
    errorMessage: null,
    brokers: brokersOf(ctx).map((b) => ({
      brokerId: b.nodeId,
      host: b.host,
      port: b.port,
      rack: b.rack,
    })),
  };
}

export default defineHandler({
  apiKey: ApiKey.DescribeCluster,
  versions: [0, 1],
  handle: describeCluster,
});
