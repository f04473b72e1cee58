// CreatePartitions. Every change goes through the PartitionManager (metadata log, then the open logs), with
// validateOnly honoured.
import { ApiKey, ErrorCode, type Struct } from "../../protocol/kafka/index.ts";
import {
  arr,
  bool,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  num,
  refuseRepeated,
  type RequestContext,
  str,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { brokerIds, DUPLICATE_NAME } from "./shared/topics.ts";

export async function createPartitions(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const validateOnly = bool(req.body.validateOnly);
  const results = [];
  const repeatedName = refuseRepeated(arr(req.body.topics).map((t) => str(t.name)));
  for (const t of arr(req.body.topics)) {
    const name = str(t.name);
    const dup = repeatedName(name);
    if (dup !== null) {
      if (dup === "answer") {
        results.push({ name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: DUPLICATE_NAME });
      }
      continue;
    }
    // null = place the new partitions automatically.
    const assignments = Array.isArray(t.assignments)
      ? arr(t.assignments).map((a) => brokerIds(a.brokerIds))
      : undefined;
    try {
      await ctx.partitions.createPartitions(name, num(t.count), validateOnly, assignments);
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
