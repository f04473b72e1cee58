// OffsetForLeaderEpoch: where a leader epoch ends in a partition's log (KIP-101/279).
import {
  ApiKey,
  type OffsetForLeaderEpochRequest,
  type OffsetForLeaderEpochResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { leaderEpochError } from "./shared/leader-epoch.ts";

export function offsetForLeaderEpoch(
  ctx: KafkaContext,
  req: RequestContext<OffsetForLeaderEpochRequest>,
): OffsetForLeaderEpochResponse {
  const topics = req.body.topics.map((t) => {
    const topic = t.topic;
    return {
      topic,
      partitions: t.partitions.map((p) => {
        const partition = p.partition;
        const out = { errorCode: 0, partition, leaderEpoch: -1, endOffset: -1 };
        const where = ctx.partitions.leaderError(topic, partition);
        if (where !== 0) return { ...out, errorCode: where };
        const st = ctx.partitions.partition(topic, partition);
        const epochErr = leaderEpochError(p.currentLeaderEpoch, st.leaderEpoch);
        if (epochErr) return { ...out, errorCode: epochErr };
        const r = st.log.endOffsetForEpoch(p.leaderEpoch);
        return { ...out, leaderEpoch: r.leaderEpoch, endOffset: r.endOffset };
      }),
    };
  });
  return { throttleTimeMs: 0, topics };
}

export default defineHandler({
  apiKey: ApiKey.OffsetForLeaderEpoch,
  versions: [2, 4],
  handle: offsetForLeaderEpoch,
});
