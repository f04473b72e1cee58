// Enforcement of ACLs on the Kafka listener (--authorizer acl): before a handler acts, the
// request's needs (src/acl/kafka-rules.ts) are checked with the connection's principal and host;
// a request missing any of them is refused whole, answered with Kafka's error code in each item
// it names (TOPIC_AUTHORIZATION_FAILED 29 per topic, GROUP_AUTHORIZATION_FAILED 30,
// CLUSTER_AUTHORIZATION_FAILED 31, TRANSACTIONAL_ID_AUTHORIZATION_FAILED 53). Fields left out are
// encoded with the schema's defaults.
import { AclOperation, CLUSTER_RESOURCE, ResourceType } from "../acl/authorizer.ts";
import type { LiveAuthorizer } from "../acl/live.ts";
import { aclHost, deniedNeeds, type Need } from "../acl/kafka-rules.ts";
import { ErrorCode, type Struct } from "../protocol/kafka/index.ts";
import { arr, nstr, num, str } from "./context.ts";
import { ANONYMOUS, type Principal, principalString } from "./principal.ts";

const TOPIC = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const CLUSTER = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
const TXN = 53; // TRANSACTIONAL_ID_AUTHORIZATION_FAILED

/**
 * The error a denied need stands for: its group, transactional id or named topic (CreateTopics
 * refuses per topic though CREATE on the cluster would do); else the cluster (an idempotent
 * producer's IDEMPOTENT_WRITE, whatever topic it could write).
 */
function codeOf(n: Need): number {
  const types = n.anyOf.filter((c) => !c.any).map((c) => c.type);
  if (types.includes(ResourceType.GROUP)) return GROUP;
  if (types.includes(ResourceType.TRANSACTIONAL_ID)) return TXN;
  if (types.includes(ResourceType.TOPIC)) return TOPIC;
  return CLUSTER;
}

/**
 * The refusal of a request `who` may not make, or null when it is allowed. The answer mirrors
 * the request's topics (partitions) or groups where the response lists them.
 */
export function refusal(
  live: LiveAuthorizer,
  principal: Principal | undefined,
  clientHost: string,
  apiKey: number,
  body: Struct,
): Struct | null {
  const who = { principal: principalString(principal ?? ANONYMOUS), host: aclHost(clientHost) };
  const denied = deniedNeeds(live.get(), who, apiKey, body);
  if (denied.length === 0) return null;
  // The most specific error: a group or transactional id over a topic over the cluster.
  const code = denied.map(codeOf).find((c) => c !== CLUSTER) ?? CLUSTER;
  const msg = "Not authorized";
  const topicCode = code === TOPIC ? TOPIC : code;
  switch (apiKey) {
    case 0: // Produce
      return {
        responses: arr(body.topicData).map((t) => ({
          name: str(t.name),
          partitionResponses: arr(t.partitionData).map((p) => ({
            index: num(p.index),
            errorCode: topicCode,
            baseOffset: -1,
          })),
        })),
      };
    case 1: // Fetch
      return {
        errorCode: code === TOPIC ? 0 : code,
        responses: arr(body.topics).map((t) => ({
          topic: str(t.topic),
          topicId: t.topicId,
          partitions: arr(t.partitions).map((p) => ({
            partitionIndex: num(p.partition),
            errorCode: topicCode,
            highWatermark: -1,
          })),
        })),
      };
    case 2: // ListOffsets
    case 23: // OffsetForLeaderEpoch
      return {
        topics: arr(body.topics).map((t) => ({
          name: str(t.name),
          topic: str(t.topic),
          partitions: arr(t.partitions).map((p) => ({
            partitionIndex: num(p.partitionIndex),
            partition: num(p.partition),
            errorCode: topicCode,
            offset: -1,
            timestamp: -1,
            endOffset: -1,
            leaderEpoch: -1,
          })),
        })),
      };
    case 3: // Metadata (named topics only; an all-topics request asks nothing)
      return {
        brokers: [],
        controllerId: -1,
        topics: arr(body.topics).map((t) => ({
          errorCode: topicCode,
          name: nstr(t.name),
          partitions: [],
        })),
      };
    case 19: // CreateTopics
      return {
        topics: arr(body.topics).map((t) => ({
          name: str(t.name),
          errorCode: topicCode,
          errorMessage: msg,
          numPartitions: -1,
          replicationFactor: -1,
        })),
      };
    case 20: { // DeleteTopics
      const names = [
        ...(Array.isArray(body.topicNames) ? body.topicNames.map(String) : []),
        ...arr(body.topics).map((t) => str(t.name)),
      ];
      return { responses: names.map((name) => ({ name, errorCode: topicCode })) };
    }
    case 8: // OffsetCommit
      return {
        topics: arr(body.topics).map((t) => ({
          name: str(t.name),
          partitions: arr(t.partitions).map((p) => ({
            partitionIndex: num(p.partitionIndex),
            errorCode: code,
          })),
        })),
      };
    case 15: // DescribeGroups
      return {
        groups: (Array.isArray(body.groups) ? body.groups : []).map((g) => ({
          errorCode: code,
          groupId: String(g),
        })),
      };
    case 42: // DeleteGroups
      return {
        results: (Array.isArray(body.groupsNames) ? body.groupsNames : []).map((g) => ({
          groupId: String(g),
          errorCode: code,
        })),
      };
    case 30: // CreateAcls
      return {
        results: arr(body.creations).map(() => ({ errorCode: code, errorMessage: msg })),
      };
    case 31: // DeleteAcls
      return {
        filterResults: arr(body.filters).map(() => ({ errorCode: code, errorMessage: msg })),
      };
    case 32: // DescribeConfigs
    case 33: // AlterConfigs
    case 44: { // IncrementalAlterConfigs
      const items = arr(body.resources).map((r) => ({
        errorCode: num(r.resourceType) === 2 ? topicCode : CLUSTER,
        errorMessage: msg,
        resourceType: num(r.resourceType),
        resourceName: str(r.resourceName),
        configs: [],
      }));
      return apiKey === 32 ? { results: items } : { responses: items };
    }
    case 37: // CreatePartitions
      return {
        results: arr(body.topics).map((t) => ({
          name: str(t.name),
          errorCode: topicCode,
          errorMessage: msg,
        })),
      };
    case 10: { // FindCoordinator (v4+: one answer per key)
      const keys = Array.isArray(body.coordinatorKeys) ? body.coordinatorKeys.map(String) : [];
      return {
        errorCode: code,
        errorMessage: msg,
        nodeId: -1,
        host: "",
        port: -1,
        coordinators: keys.map((key) => ({
          key,
          nodeId: -1,
          host: "",
          port: -1,
          errorCode: code,
          errorMessage: msg,
        })),
      };
    }
    case 9: // OffsetFetch (v8+: per group)
      return {
        errorCode: code,
        topics: [],
        groups: arr(body.groups).map((g) => ({
          groupId: str(g.groupId),
          topics: [],
          errorCode: code,
        })),
      };
    default:
      // APIs answered with one top-level error (groups, InitProducerId, DescribeAcls, cluster).
      return { errorCode: code, errorMessage: msg, memberId: "", generationId: -1 };
  }
}

/**
 * Leaves out of a served answer what the requester may not DESCRIBE, as Kafka does: the topics
 * of an all-topics Metadata request and the groups of ListGroups (unless DESCRIBE on the cluster).
 */
export function filterAnswer(
  live: LiveAuthorizer,
  principal: Principal | undefined,
  clientHost: string,
  apiKey: number,
  body: Struct,
  result: Struct,
): Struct {
  const authz = live.get();
  const who = { principal: principalString(principal ?? ANONYMOUS), host: aclHost(clientHost) };
  const may = (type: ResourceType, name: string) =>
    authz.authorize(who, AclOperation.DESCRIBE, type, name).allowed;
  if (apiKey === 3 && body.topics === null && Array.isArray(result.topics)) {
    return {
      ...result,
      topics: arr(result.topics).filter((t) => may(ResourceType.TOPIC, str(t.name))),
    };
  }
  if (apiKey === 16 && Array.isArray(result.groups)) {
    if (may(ResourceType.CLUSTER, CLUSTER_RESOURCE)) return result;
    return {
      ...result,
      groups: arr(result.groups).filter((g) => may(ResourceType.GROUP, str(g.groupId))),
    };
  }
  return result;
}
