// OffsetForLeaderEpoch: where a leader epoch ends in a partition's log (KIP-101/279).
import { ApiKey, type Struct } from "../../protocol/kafka/index.ts";
import { arr, type KafkaContext, num, type RequestContext, str } from "../context.ts";
import { defineHandler } from "../api.ts";
import { leaderEpochError } from "./shared/leader-epoch.ts";

export function offsetForLeaderEpoch(ctx: KafkaContext, req: RequestContext): Struct {
  const topics = arr(req.body.topics).map((t) => {
    const topic = str(t.topic);
    return {
      topic,
      partitions: arr(t.partitions).map((p) => {
        const partition = num(p.partition);
        const out = { errorCode: 0, partition, leaderEpoch: -1, endOffset: -1 };
        const where = ctx.partitions.leaderError(topic, partition);
        if (where !== 0) return { ...out, errorCode: where };
        const st = ctx.partitions.partition(topic, partition);
        const epochErr = leaderEpochError(num(p.currentLeaderEpoch, -1), st.leaderEpoch);
        if (epochErr) return { ...out, errorCode: epochErr };
        const r = st.log.endOffsetForEpoch(num(p.leaderEpoch));
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
