// DeleteTopics, by name or (v6+) by topic id.
import {
  ApiKey,
  type DeleteTopicsRequest,
  type DeleteTopicsResponse,
  ErrorCode,
  ZERO_UUID,
} from "../../protocol/kafka/index.ts";
import {
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  refuseRepeated,
  type RequestContext,
} from "../context.ts";
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
  const keyOf = (w: { name: string | null; topicId: string }) =>
    w.name !== null ? `name:${w.name}` : `id:${w.topicId}`;
  const repeatedTopic = refuseRepeated(wanted.map(keyOf));
  const responses = [];
  for (const w of wanted) {
    const dup = repeatedTopic(keyOf(w));
    if (dup !== null) {
      if (dup === "answer") {
        responses.push({
          name: w.name,
          topicId: w.topicId,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: w.name !== null ? DUPLICATE_NAME : "Duplicate topic id.",
        });
      }
      continue;
    }
    let name = w.name;
    if (name === null) {
      name = ctx.meta.listTopics().find((t) => wireUuid(t.topicId) === w.topicId)?.name ?? null;
      if (name === null) {
        responses.push({
          name: null,
          topicId: w.topicId,
          errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
          errorMessage: "unknown topic id",
        });
        continue;
      }
    }
    const t = ctx.meta.getTopic(name);
    if (!t) {
      responses.push({
        name,
        topicId: w.topicId,
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: `unknown topic ${name}`,
      });
      continue;
    }
    try {
      await ctx.partitions.deleteTopic(name);
      ctx.log.info("topic deleted", { topic: name, via: "kafka" });
      responses.push({ name, topicId: wireUuid(t.topicId), errorCode: 0, errorMessage: null });
    } catch (e) {
      responses.push({
        name,
        topicId: wireUuid(t.topicId),
        errorCode: errorCodeOf(e),
        errorMessage: errorMessageOf(e),
      });
    }
  }
  return { throttleTimeMs: 0, responses };
}

export default defineHandler({
  apiKey: ApiKey.DeleteTopics,
  versions: [0, 6],
  handle: deleteTopics,
});
