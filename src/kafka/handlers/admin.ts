// Topic administration: CreateTopics, DeleteTopics, CreatePartitions. Every change goes
// through the PartitionManager (metadata log, then the open logs), with validateOnly honoured.
import { ErrorCode } from "../../protocol/kafka/index.ts";
import type { Struct } from "../../protocol/kafka/index.ts";
import { describeTopicConfig } from "../../meta/index.ts";
import {
  arr,
  bool,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  nstr,
  num,
  refuseRepeated,
  type RequestContext,
  str,
} from "../context.ts";
import { wireUuid } from "./cluster.ts";

/** Kafka's words for a topic given twice in one request. */
const DUPLICATE_NAME = "Duplicate topic name.";

export async function createTopics(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const v = req.header.apiVersion;
  const validateOnly = bool(req.body.validateOnly);
  const requested = arr(req.body.topics);
  // A name given twice is refused (and not created), answered once, as Kafka's controller does.
  const repeatedName = refuseRepeated(requested.map((t) => str(t.name)));
  const topics = [];
  for (const t of requested) {
    const name = str(t.name);
    const base = {
      name,
      topicId: "00000000000000000000000000000000",
      numPartitions: -1,
      replicationFactor: -1,
      configs: null,
    };
    const fail = (errorCode: number, errorMessage: string) => ({
      ...base,
      errorCode,
      errorMessage,
    });
    const dup = repeatedName(name);
    if (dup !== null) {
      if (dup === "answer") topics.push(fail(ErrorCode.INVALID_REQUEST, DUPLICATE_NAME));
      continue;
    }
    let assignments: number[][] | undefined;
    if (arr(t.assignments).length > 0) {
      const byIndex = [...arr(t.assignments)].sort((a, b) =>
        num(a.partitionIndex) - num(b.partitionIndex)
      );
      if (byIndex.some((a, i) => num(a.partitionIndex) !== i)) {
        topics.push(
          fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "partitions in the assignment must be numbered 0, 1, 2, … with none repeated",
          ),
        );
        continue;
      }
      assignments = byIndex.map((a) => brokerIds(a.brokerIds));
    }
    const configs: Record<string, string> = {};
    for (const c of arr(t.configs)) {
      const value = nstr(c.value);
      if (value !== null) configs[str(c.name)] = value;
    }
    try {
      const info = await ctx.partitions.createTopic(
        name,
        num(t.numPartitions, -1),
        num(t.replicationFactor, -1),
        configs,
        validateOnly,
        false,
        assignments,
      );
      const described = v >= 5
        ? describeTopicConfig(
          info.configs,
          ctx.meta.topicDefaults,
          info.internal,
          info.partitions[0]?.replicas.length,
        ).map((d) => ({
          name: d.name,
          value: d.sensitive ? null : d.value,
          readOnly: d.readOnly,
          configSource: d.sourceCode,
          isSensitive: d.sensitive,
        }))
        : null;
      topics.push({
        ...base,
        topicId: wireUuid(info.topicId),
        errorCode: 0,
        errorMessage: null,
        numPartitions: info.partitions.length,
        replicationFactor: info.partitions[0]?.replicas.length ?? -1,
        configs: described,
      });
      if (!validateOnly) {
        ctx.log.info("topic created", {
          topic: name,
          partitions: info.partitions.length,
          via: "kafka",
        });
      }
    } catch (e) {
      topics.push(fail(errorCodeOf(e), errorMessageOf(e)));
    }
  }
  return { throttleTimeMs: 0, topics };
}

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

function brokerIds(v: unknown): number[] {
  return Array.isArray(v) ? v.map((b) => num(b)) : [];
}
