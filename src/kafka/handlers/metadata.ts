// Metadata: the brokers, the controller (the metadata quorum's leader) and the topics, creating
// unknown ones when the client and the broker allow it.
import {
  ApiKey,
  ErrorCode,
  type MetadataRequest,
  type MetadataResponse,
} from "../../protocol/kafka/index.ts";
import { errorCodeOf, errorMessageOf, type KafkaContext, type RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import type { TopicInfo } from "../../meta/index.ts";
import { brokersOf, wireUuid } from "./shared/brokers.ts";

type TopicAnswer = MetadataResponse["topics"][number];

function describeTopic(t: TopicInfo, fenced: ReadonlySet<number>): TopicAnswer {
  return {
    errorCode: 0,
    name: t.name,
    topicId: wireUuid(t.topicId),
    isInternal: t.internal,
    partitions: t.partitions.map((p) => ({
      // An offline partition (no live ISR member to lead it): LEADER_NOT_AVAILABLE, as Kafka.
      errorCode: p.leader === -1 ? ErrorCode.LEADER_NOT_AVAILABLE : 0,
      partitionIndex: p.partition,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: p.replicas,
      isrNodes: p.isr,
      offlineReplicas: p.replicas.filter((id) => fenced.has(id)),
    })),
    topicAuthorizedOperations: -2147483648,
  };
}

function topicError(name: string, errorCode: number): TopicAnswer {
  return { errorCode, name, partitions: [], isInternal: false };
}

export async function metadata(
  ctx: KafkaContext,
  req: RequestContext<MetadataRequest>,
): Promise<MetadataResponse> {
  const v = req.header.apiVersion;
  const requested = req.body.topics;
  // v0: [] means every topic; v1+: null means every topic and [] none.
  const all = requested === null || (v === 0 && requested.length === 0);
  // v0-3 have no flag: creation then follows the broker setting alone.
  const allowCreate = ctx.autoCreateTopics && (v < 4 || req.body.allowAutoTopicCreation);
  const topics: TopicAnswer[] = [];
  const fenced = new Set(ctx.meta.listBrokers().filter((b) => b.fenced).map((b) => b.nodeId));
  if (all) {
    for (const t of ctx.meta.listTopics()) topics.push(describeTopic(t, fenced));
  } else {
    const seen = new Set<string>();
    for (const rt of requested) {
      const name = rt.name;
      if (name === null) {
        // Lookup by topic id (v10+): answer from the id when known.
        const t = findById(ctx, rt.topicId);
        topics.push(
          t
            ? describeTopic(t, fenced)
            : { ...topicError("", ErrorCode.UNKNOWN_TOPIC_ID), name: null },
        );
        continue;
      }
      if (seen.has(name)) continue;
      seen.add(name);
      let t = ctx.meta.getTopic(name);
      if (!t && allowCreate) {
        try {
          t = await ctx.partitions.createTopic(name, -1, -1, {});
          ctx.log.info("topic auto-created", { topic: name, partitions: t.partitions.length });
        } catch (e) {
          const code = errorCodeOf(e);
          // Lost a race with another creator: fine, describe it.
          t = ctx.meta.getTopic(name);
          if (!t) {
            ctx.log.debug("auto-create refused", { topic: name, error: errorMessageOf(e) });
            topics.push(
              topicError(
                name,
                code === ErrorCode.INVALID_TOPIC_EXCEPTION
                  ? code
                  : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              ),
            );
            continue;
          }
        }
      }
      topics.push(
        t ? describeTopic(t, fenced) : topicError(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
      );
    }
  }
  return {
    throttleTimeMs: 0,
    brokers: brokersOf(ctx),
    clusterId: ctx.meta.clusterId,
    controllerId: ctx.controllerId(),
    topics,
  };
}

function findById(ctx: KafkaContext, hex: string): TopicInfo | undefined {
  for (const t of ctx.meta.listTopics()) if (wireUuid(t.topicId) === hex) return t;
  return undefined;
}

export default defineHandler({
  apiKey: ApiKey.Metadata,
  versions: [0, 12],
  handle: metadata,
});
