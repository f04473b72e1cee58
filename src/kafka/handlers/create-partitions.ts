// CreatePartitions. Every change goes through the PartitionManager (metadata log, then the open logs), with
// validateOnly honoured.
import {
  ApiKey,
  type CreatePartitionsRequest,
  type CreatePartitionsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import {
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  refuseRepeated,
  type RequestContext,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { DUPLICATE_NAME } from "./shared/topics.ts";

export async function createPartitions(
  ctx: KafkaContext,
  req: RequestContext<CreatePartitionsRequest>,
): Promise<CreatePartitionsResponse> {
  const validateOnly = req.body.validateOnly;
  const results = [];
  const repeatedName = refuseRepeated(req.body.topics.map((t) => t.name));
  for (const t of req.body.topics) {
    const name = t.name;
    const dup = repeatedName(name);
    if (dup !== null) {
      if (dup === "answer") {
        results.push({ name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: DUPLICATE_NAME });
      }
      continue;
    }
    // null = place the new partitions automatically.
    const assignments = t.assignments?.map((a) => a.brokerIds);
    try {
      await ctx.partitions.createPartitions(name, t.count, validateOnly, assignments);
      results.push({ name, errorCode: 0, errorMessage: null });
    } catch (e) {
      results.push({ name, errorCode: errorCodeOf(e), errorMessage: errorMessageOf(e) });
    }
  }
  return { throttleTimeMs: 0, results };
}

export default defineHandler({
  apiKey: ApiKey.CreatePartitions,
  versions: [0, 3],
  handle: createPartitions,
});
