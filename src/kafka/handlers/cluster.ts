// ApiVersions, Metadata, DescribeCluster and FindCoordinator: how clients find the brokers,
// the topics, the controller (the metadata quorum's leader) and a group's coordinator (the
// leader of its __consumer_offsets partition).
import { ErrorCode } from "../../protocol/kafka/index.ts";
import { ADVERTISED } from "../../protocol/kafka/index.ts";
import type { TopicInfo } from "../../meta/index.ts";
import { groupCoordinator } from "../../core/group-service.ts";
import {
  arr,
  bool,
  errorCodeOf,
  errorMessageOf,
  type KafkaContext,
  num,
  type RequestContext,
  str,
} from "../context.ts";
import type { Struct } from "../../protocol/kafka/index.ts";

/** Topic ids are stored as UUID strings; the wire wants 32 hex digits. */
export const wireUuid = (id: string) => id.replaceAll("-", "");

export function apiVersions(_ctx: KafkaContext, req: RequestContext): Struct {
  const apiKeys = [...ADVERTISED].sort((a, b) => a[0] - b[0]).map(([apiKey, [min, max]]) => ({
    apiKey,
    minVersion: min,
    maxVersion: max,
  }));
  void req;
  return { errorCode: 0, apiKeys, throttleTimeMs: 0 };
}

function brokersOf(ctx: KafkaContext) {
  // This broker always answers with the address the client can reach it on.
  const self = ctx.advertised();
  const out: { nodeId: number; host: string; port: number; rack: string | null }[] = [
    { nodeId: ctx.meta.nodeId, host: self.host, port: self.port, rack: null },
  ];
  for (const b of ctx.meta.listBrokers()) {
    if (b.nodeId === ctx.meta.nodeId || b.fenced) continue;
    out.push({ nodeId: b.nodeId, host: b.host, port: b.kafkaPort, rack: b.rack ?? null });
  }
  return out;
}

function describeTopic(t: TopicInfo, fenced: ReadonlySet<number>): Struct {
  return {
    errorCode: 0,
    name: t.name,
    topicId: wireUuid(t.topicId),
    isInternal: t.internal,
    partitions: t.partitions.map((p) => ({
      // An offline partition (no live ISR member to lead it): LEADER_NOT_AVAILABLE, as Kafka.
      errorCode: p.leader === -1 ? 5 : 0,
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

function topicError(name: string, errorCode: number): Struct {
  return { errorCode, name, partitions: [], isInternal: false };
}

export async function metadata(ctx: KafkaContext, req: RequestContext): Promise<Struct> {
  const v = req.header.apiVersion;
  const requested = req.body.topics;
  // v0: [] means every topic; v1+: null means every topic and [] none.
  const all = requested === null || (v === 0 && arr(requested).length === 0);
  // v0-3 have no flag: creation then follows the broker setting alone.
  const allowCreate = ctx.autoCreateTopics && (v < 4 || bool(req.body.allowAutoTopicCreation));
  const topics: Struct[] = [];
  const fenced = new Set(ctx.meta.listBrokers().filter((b) => b.fenced).map((b) => b.nodeId));
  if (all) {
    for (const t of ctx.meta.listTopics()) topics.push(describeTopic(t, fenced));
  } else {
    const seen = new Set<string>();
    for (const rt of arr(requested)) {
      const name = rt.name;
      if (typeof name !== "string") {
        // Lookup by topic id (v10+): answer from the id when known.
        const t = typeof rt.topicId === "string" ? findById(ctx, rt.topicId) : undefined;
        topics.push(t ? describeTopic(t, fenced) : { ...topicError("", 100), name: null });
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

export function describeCluster(ctx: KafkaContext, req: RequestContext): Struct {
  const endpointType = num(req.body.endpointType, 1);
  const base = {
    throttleTimeMs: 0,
    endpointType,
    clusterId: ctx.meta.clusterId,
    controllerId: ctx.controllerId(),
    clusterAuthorizedOperations: -2147483648,
  };
  if (endpointType !== 1) {
    return {
      ...base,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "only broker endpoints (type 1) are served",
      brokers: [],
    };
  }
  return {
    ...base,
    errorCode: 0,
    errorMessage: null,
    brokers: brokersOf(ctx).map((b) => ({
      brokerId: b.nodeId,
      host: b.host,
      port: b.port,
      rack: b.rack,
    })),
  };
}

const KEY_GROUP = 0;
const KEY_TRANSACTION = 1;
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53;

export function findCoordinator(ctx: KafkaContext, req: RequestContext): Struct {
  const v = req.header.apiVersion;
  const keyType = num(req.body.keyType, 0);
  const answer = (key: string) => {
    if (keyType === KEY_TRANSACTION) {
      // Not retriable, so transactional producers stop with a clear error instead of looping.
      return {
        errorCode: TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        errorMessage: "transactions are not supported yet by this broker",
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    if (keyType !== KEY_GROUP) {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `coordinator key type ${keyType} is not supported`,
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    if (key === "") {
      return {
        errorCode: ErrorCode.INVALID_GROUP_ID,
        errorMessage: "the group id is empty",
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    // The leader of the group's __consumer_offsets partition coordinates it (as in Kafka).
    const id = groupCoordinator(ctx.meta, key);
    const at = brokersOf(ctx).find((b) => b.nodeId === id);
    if (at === undefined) {
      return {
        errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        errorMessage: `the coordinator of group ${key} (broker ${id}) is not available`,
        nodeId: -1,
        host: "",
        port: -1,
      };
    }
    return { errorCode: 0, errorMessage: null, nodeId: at.nodeId, host: at.host, port: at.port };
  };
  if (v >= 4) {
    const keys = Array.isArray(req.body.coordinatorKeys)
      ? req.body.coordinatorKeys as unknown[]
      : [];
    return {
      throttleTimeMs: 0,
      coordinators: keys.map((k) => ({ key: str(k), ...answer(str(k)) })),
    };
  }
  return { throttleTimeMs: 0, ...answer(str(req.body.key)) };
}
