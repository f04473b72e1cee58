// CreatePartitions. Every change goes through the PartitionManager (metadata log, then the open logs), with
// validateOnly honoured.
import {
  ApiKey,
  type CreatePartitionsRequest,
  type CreatePartitionsResponse,
  type CreatePartitionsResponseResults,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { answerOnce, errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { DUPLICATE_NAME } from "./shared/topics.ts";

export async function createPartitions(
  ctx: KafkaContext,
  req: RequestContext<CreatePartitionsRequest>,
): Promise<CreatePartitionsResponse> {
  const validateOnly = req.body.validateOnly;
  const results = await answerOnce(
    req.body.topics,
    (t) => t.name,
    ({ name }): CreatePartitionsResponseResults => ({
      name,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: DUPLICATE_NAME,
    }),
    async ({ name, count, assignments }) => {
      try {
        // null = place the new partitions automatically.
        const brokers = assignments?.map((a) => a.brokerIds);
        await ctx.partitions.createPartitions(name, count, validateOnly, brokers);
        return { name, errorCode: 0, errorMessage: null };
      } catch (e) {
        return { name, ...errorOf(e) };
      }
    },
  );
  return { throttleTimeMs: 0, results };
}

export default defineHandler({
  apiKey: ApiKey.CreatePartitions,
  versions: [0, 3],
  handle: createPartitions,
});
