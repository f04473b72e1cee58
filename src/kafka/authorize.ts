// Enforcement of ACLs on the Kafka listener (--authorizer acl): before a handler acts, the
// request's needs (src/acl/kafka-rules.ts) are checked with the connection's principal and host.
// As Kafka does, items (topics, groups, config resources) the principal may not touch are
// answered with the error and the others served by the handler, the two answers merged; a
// request missing a permission of its own (its group, its transactional id, the cluster), or
// every item, is refused whole. Kafka's codes: TOPIC_AUTHORIZATION_FAILED 29,
// GROUP_AUTHORIZATION_FAILED 30, CLUSTER_AUTHORIZATION_FAILED 31,
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED 53. Fields left out are encoded with the schema's defaults.
import {
  AclOperation,
  type Authorizer,
  CLUSTER_RESOURCE,
  type Requester,
  ResourceType,
} from "../acl/authorizer.ts";
import type { LiveAuthorizer } from "../acl/live.ts";
import { aclHost, allowed, API_RULES, deniedNeeds, type Need } from "../acl/kafka-rules.ts";
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
export function codeOf(n: Need): number {
  const types = n.anyOf.filter((c) => !c.any).map((c) => c.type);
  if (types.includes(ResourceType.GROUP)) return GROUP;
  if (types.includes(ResourceType.TRANSACTIONAL_ID)) return TXN;
  if (types.includes(ResourceType.TOPIC)) return TOPIC;
  return CLUSTER;
}

/** What to do with a request: serve it, refuse it whole, or serve part of it. */
export type Verdict =
  | { kind: "allow" }
  | { kind: "refuse"; answer: Struct }
  /** Serve `body` (the allowed items), then `merge` the refused items' answers into the result. */
  | { kind: "split"; body: Struct; merge: (served: Struct) => Struct };

const requester = (principal: Principal | undefined, clientHost: string) => ({
  principal: principalString(principal ?? ANONYMOUS),
  host: aclHost(clientHost),
});

/** What the decision needs to know of the topics. */
export interface TopicLookup {
  /** A topic's name from its id (DeleteTopics v6 names topics by id). */
  nameOf(id: string): string | undefined;
  exists(name: string): boolean;
  /** auto.create.topics.enable: Metadata may create the topics it names. */
  autoCreate: boolean;
}

/**
 * Decides a request. A topic named by id is checked as its topic's name; a Metadata request that
 * would auto-create a topic needs CREATE on the cluster or the topic too, as in Kafka.
 */
export function authorizeRequest(
  live: LiveAuthorizer,
  principal: Principal | undefined,
  clientHost: string,
  apiKey: number,
  apiVersion: number,
  body: Struct,
  topics: TopicLookup,
): Verdict {
  const authz = live.get();
  const who = requester(principal, clientHost);
  if (apiKey === 20) body = namedTopics(body, (id) => topics.nameOf(id));
  const denied = deniedNeeds(authz, who, apiKey, body);
  if (apiKey === 3) denied.push(...autoCreateNeeds(authz, who, apiVersion, body, topics, denied));
  if (denied.length === 0) return ALLOW;
  // The most specific error: a group or transactional id over a topic over the cluster.
  const code = denied.map(codeOf).find((c) => c !== CLUSTER) ?? CLUSTER;
  const rule = API_RULES.get(apiKey);
  const items = rule?.kind === "checks" ? rule.items : undefined;
  const whole = { kind: "refuse", answer: refusedAnswer(apiKey, body, code) } as const;
  if (items === undefined || denied.some((n) => n.item === undefined)) return whole;
  const refused = new Set(denied.map((n) => n.item!));
  const servedBody: Struct = { ...body };
  const refusedBody: Struct = { ...body };
  let left = 0;
  for (const list of items.request) {
    if (!Array.isArray(body[list])) continue;
    const all = body[list] as unknown[];
    const no = (i: unknown) => refused.has(items.key(i) ?? "");
    servedBody[list] = all.filter((i) => !no(i));
    refusedBody[list] = all.filter(no);
    left += (servedBody[list] as unknown[]).length;
  }
  if (left === 0 && !items.servesEmpty?.(apiVersion)) return whole;
  const answers = arr(refusedAnswer(apiKey, refusedBody, code)[items.response]);
  return {
    kind: "split",
    body: servedBody,
    merge: (served) => ({
      ...served,
      [items.response]: [...arr(served[items.response]), ...answers],
    }),
  };
}

const ALLOW: Verdict = { kind: "allow" };

/** The CREATE a Metadata request's auto-creation of unknown topics lacks (none: not creating). */
function autoCreateNeeds(
  authz: Authorizer,
  who: Requester,
  apiVersion: number,
  body: Struct,
  topics: TopicLookup,
  denied: Need[],
): Need[] {
  // v0-3 have no flag: creation follows the broker setting alone.
  const creating = topics.autoCreate && (apiVersion < 4 || body.allowAutoTopicCreation === true);
  if (!creating) return [];
  const refused = new Set(denied.map((n) => n.item));
  return [...new Set(arr(body.topics).map((t) => nstr(t.name)))]
    .filter((n): n is string => n !== null && !refused.has(n) && !topics.exists(n))
    .map((n): Need => ({
      anyOf: [
        { op: AclOperation.CREATE, type: ResourceType.CLUSTER, name: CLUSTER_RESOURCE },
        { op: AclOperation.CREATE, type: ResourceType.TOPIC, name: n },
      ],
      item: n,
    }))
    .filter((n) => !allowed(authz, who, n));
}

/** DeleteTopics v6 names topics by id: the name of each known id, for the check and handler. */
function namedTopics(body: Struct, topicName: (id: string) => string | undefined): Struct {
  const ts = arr(body.topics);
  if (!ts.some((t) => t.name === null)) return body;
  return {
    ...body,
    topics: ts.map((t) =>
      t.name === null && typeof t.topicId === "string"
        ? { ...t, name: topicName(t.topicId) ?? null, byId: true }
        : t
    ),
  };
}

/**
 * The answer refusing every item of `body` with `code`, mirroring the request's topics
 * (partitions) or groups where the response lists them.
 */
export function refusedAnswer(apiKey: number, body: Struct, code: number): Struct {
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
            lastStableOffset: -1,
            logStartOffset: -1,
            // Empty, not null: librdkafka refuses a null record set ("invalid MessageSetSize -1").
            records: new Uint8Array(0),
          })),
        })),
      };
    case 2: // ListOffsets
    case 21: // DeleteRecords
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
            lowWatermark: -1,
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
    case 20: // DeleteTopics (a topic named by id keeps its name to itself)
      return {
        responses: [
          ...(Array.isArray(body.topicNames) ? body.topicNames.map(String) : [])
            .map((name) => ({ name, errorCode: topicCode })),
          ...arr(body.topics).map((t) => ({
            name: t.byId === true ? null : nstr(t.name),
            topicId: t.topicId,
            errorCode: topicCode,
            errorMessage: msg,
          })),
        ],
      };
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
 * of an all-topics Metadata request and the groups of ListGroups (unless DESCRIBE on the cluster);
 * topics a Metadata request named by id, and the commits OffsetFetch finds for topics, are
 * refused per topic when named and left out when all were asked for.
 */
export function filterAnswer(
  live: LiveAuthorizer,
  principal: Principal | undefined,
  clientHost: string,
  apiKey: number,
  apiVersion: number,
  body: Struct,
  result: Struct,
): Struct {
  const authz = live.get();
  const who = requester(principal, clientHost);
  const may = (type: ResourceType, name: string) =>
    authz.authorize(who, AclOperation.DESCRIBE, type, name).allowed;
  const mayTopic = (t: Struct) => t.errorCode === TOPIC || may(ResourceType.TOPIC, str(t.name));
  if (apiKey === 3 && Array.isArray(result.topics)) {
    // v0: an empty list asks for every topic.
    const all = body.topics === null || (apiVersion === 0 && arr(body.topics).length === 0);
    return {
      ...result,
      topics: all
        ? arr(result.topics).filter(mayTopic)
        : arr(result.topics).map((t) =>
          mayTopic(t) || t.errorCode === ErrorCode.UNKNOWN_TOPIC_ID ? t : {
            errorCode: TOPIC,
            name: null,
            topicId: t.topicId,
            partitions: [],
            isInternal: false,
          }
        ),
    };
  }
  if (apiKey === 9) {
    if (apiVersion >= 8) {
      const asked = new Map(arr(body.groups).map((g) => [str(g.groupId), g.topics]));
      return {
        ...result,
        groups: arr(result.groups).map((g) => ({
          ...g,
          topics: offsetTopics(arr(g.topics), asked.get(str(g.groupId)) === null, mayTopic),
        })),
      };
    }
    return { ...result, topics: offsetTopics(arr(result.topics), body.topics === null, mayTopic) };
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

/** OffsetFetch's topics: unauthorised ones left out (all asked for) or refused per partition. */
function offsetTopics(topics: Struct[], all: boolean, may: (t: Struct) => boolean): Struct[] {
  if (all) return topics.filter(may);
  return topics.map((t) =>
    may(t) ? t : {
      name: t.name,
      partitions: arr(t.partitions).map((p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: -1,
        committedLeaderEpoch: -1,
        metadata: null,
        errorCode: TOPIC,
      })),
    }
  );
}
