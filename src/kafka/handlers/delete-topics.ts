// DeleteTopics, by name or (v6+) by topic id.
import { ApiKey, ErrorCode, type Struct } from "../../protocol/kafka/index.ts";
import {
  arr,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  nstr,
  refuseRepeated,
  type RequestContext,
  str,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { wireUuid } from "./shared/brokers.ts";
import { DUPLICATE_NAME } from "./shared/topics.ts";

export async function deleteTopics(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const v = req.header.apiVersion;
  const wanted: { name: string | null; topicId: string }[] = v >= 6
    ? arr(req.body.topics).map((t) => ({ name: nstr(t.name), topicId: str(t.topicId) }))
    : (Array.isArray(req.body.topicNames) ? req.body.topicNames as unknown[] : []).map((n) => ({
      name: str(n),
      topicId: "00000000000000000000000000000000",
    }));
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
