// DeleteTopics, by name or (v6+) by topic id.
import {
  ApiKey,
  type DeleteTopicsRequest,
  type DeleteTopicsResponse,
  type DeleteTopicsResponseResponses,
  ErrorCode,
  ZERO_UUID,
} from "../../protocol/kafka/index.ts";
import { answerOnce, errorOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import { wireUuid } from "./shared/brokers.ts";
import { DUPLICATE_NAME } from "./shared/topics.ts";

export async function deleteTopics(
  ctx: KafkaContext,
  req: RequestContext<DeleteTopicsRequest>,
): Promise<DeleteTopicsResponse> {
  const v = req.header.apiVersion;
  const wanted: { name: string | null; topicId: string }[] = v >= 6
    ? req.body.topics.map((t) => ({ name: t.name, topicId: t.topicId }))
    : req.body.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  // The same topic named (or identified) twice: refused and not deleted, answered once.
  const responses = await answerOnce(
    wanted,
    (w) => (w.name !== null ? `name:${w.name}` : `id:${w.topicId}`),
    (w): DeleteTopicsResponseResponses => ({
      name: w.name,
      topicId: w.topicId,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: w.name !== null ? DUPLICATE_NAME : "Duplicate topic id.",
    }),
    (w) => deleteTopic(ctx, w),
  );
  return { throttleTimeMs: 0, responses };
}

async function deleteTopic(
  ctx: KafkaContext,
  w: { name: string | null; topicId: string },
): Promise<DeleteTopicsResponseResponses> {
  let name = w.name;
  if (name === null) {
    name = ctx.meta.listTopics().find((t) => wireUuid(t.topicId) === w.topicId)?.name ?? null;
    if (name === null) {
      return {
        name: null,
        topicId: w.topicId,
        errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
        errorMessage: "unknown topic id",
      };
    }
  }
  const t = ctx.meta.getTopic(name);
  if (!t) {
    return {
      name,
      topicId: w.topicId,
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: `unknown topic ${name}`,
    };
  }
  try {
    await ctx.partitions.deleteTopic(name);
    ctx.log.info("topic deleted", { topic: name, via: "kafka" });
    return { name, topicId: wireUuid(t.topicId), errorCode: 0, errorMessage: null };
  } catch (e) {
    return { name, topicId: wireUuid(t.topicId), ...errorOf(e) };
  }
}

export default defineHandler({
  apiKey: ApiKey.DeleteTopics,
  versions: [0, 6],
  handle: deleteTopics,
});
