// DeleteRecords: moves a partition's log start offset forward.
import {
  ApiKey,
  type DeleteRecordsRequest,
  type DeleteRecordsResponse,
  ErrorCode,
} from "../../protocol/kafka/index.ts";
import { errorCodeOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";

export async function deleteRecords(
  ctx: KafkaContext,
  req: RequestContext<DeleteRecordsRequest>,
): Promise<DeleteRecordsResponse> {
  const topics = [];
  for (const t of req.body.topics) {
    const name = t.name;
    const internal = ctx.partitions.isInternal(name);
    const partitions = [];
    for (const p of t.partitions) {
      const partitionIndex = p.partitionIndex;
      const out = { partitionIndex, lowWatermark: -1, errorCode: 0 };
      if (internal) {
        partitions.push({ ...out, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION });
        continue;
      }
      const where = ctx.partitions.leaderError(name, partitionIndex);
      if (where !== 0) {
        partitions.push({ ...out, errorCode: where });
        continue;
      }
      const hw = ctx.partitions.highWatermark(name, partitionIndex);
      const requested = p.offset;
      const offset = requested === -1 ? hw : requested;
      if (offset < 0 || offset > hw) {
        partitions.push({ ...out, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE });
        continue;
      }
      try {
        const log = ctx.partitions.partition(name, partitionIndex).log;
        const low = await log.deleteRecords(offset);
        partitions.push({ ...out, lowWatermark: low });
      } catch (e) {
        partitions.push({ ...out, errorCode: errorCodeOf(e) });
      }
    }
    topics.push({ name, partitions });
  }
  return { throttleTimeMs: 0, topics };
}

export default defineHandler({
  apiKey: ApiKey.DeleteRecords,
  versions: [0, 2],
  handle: deleteRecords,
});
