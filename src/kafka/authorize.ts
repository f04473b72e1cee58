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
import {
  ApiKey,
  type DeleteTopicsRequest,
  type DeleteTopicsRequestTopics,
  ErrorCode,
  type ListGroupsResponse,
  type MetadataRequest,
  type MetadataResponse,
  type MetadataResponseTopics,
  type OffsetFetchRequest,
  type OffsetFetchResponse,
  type OffsetFetchResponseTopics,
  type Struct,
} from "../protocol/kafka/index.ts";
import type { RequestOf, ResponseOf, SchemaKey } from "./api.ts";
import { ANONYMOUS, type Principal, principalString } from "./principal.ts";

const TOPIC = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const CLUSTER = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
const TXN = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;

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

/** A request to decide: the ACLs as they stand, who sends it, and its API and version. */
export interface Asking {
  readonly authz: Authorizer;
  readonly who: Requester;
  readonly apiKey: number;
  readonly apiVersion: number;
}

/** One request's decision (and the filtering of its answer) reads the ACLs once. */
export function asking(
  live: LiveAuthorizer,
  principal: Principal | undefined,
  clientHost: string,
  apiKey: number,
  apiVersion: number,
): Asking {
  return {
    authz: live.get(),
    who: { principal: principalString(principal ?? ANONYMOUS), host: aclHost(clientHost) },
    apiKey,
    apiVersion,
  };
}

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
  { authz, who, apiKey, apiVersion }: Asking,
  body: Struct,
  topics: TopicLookup,
): Verdict {
  if (apiKey === ApiKey.DeleteTopics) {
    body = namedTopics(body as DeleteTopicsRequest, (id) => topics.nameOf(id));
  }
  const denied = deniedNeeds(authz, who, apiKey, body);
  if (apiKey === ApiKey.Metadata) {
    denied.push(
      ...autoCreateNeeds(authz, who, apiVersion, body as MetadataRequest, topics, denied),
    );
  }
  if (denied.length === 0) return ALLOW;
  // The most specific error: a group or transactional id over a topic over the cluster.
  const code = denied.map(codeOf).find((c) => c !== CLUSTER) ?? CLUSTER;
  const rule = API_RULES.get(apiKey);
  const items = rule?.kind === "checks" ? rule.items : undefined;
  const whole = { kind: "refuse", answer: refusedAnswer(apiKey, apiVersion, body, code) } as const;
  if (items === undefined || denied.some((n) => n.item === undefined)) return whole;
  const refused = new Set(denied.map((n) => n.item!));
  const servedBody: Struct = { ...body };
  const refusedBody: Struct = { ...body };
  let left = 0;
  // The rule names the request's lists of items and the response's list of answers.
  const listAt = (s: Struct, field: string): unknown[] => {
    const v = s[field];
    return Array.isArray(v) ? v : [];
  };
  for (const list of items.request) {
    if (!Array.isArray(body[list])) continue;
    const no = (i: unknown) => refused.has(items.key(i) ?? "");
    const served = listAt(body, list).filter((i) => !no(i));
    servedBody[list] = served;
    refusedBody[list] = listAt(body, list).filter(no);
    left += served.length;
  }
  if (left === 0 && !items.servesEmpty?.(apiVersion)) return whole;
  const answers = listAt(refusedAnswer(apiKey, apiVersion, refusedBody, code), items.response);
  return {
    kind: "split",
    body: servedBody,
    merge: (served) => ({
      ...served,
      [items.response]: [...listAt(served, items.response), ...answers],
    }),
  };
}

const ALLOW: Verdict = { kind: "allow" };

/** The CREATE a Metadata request's auto-creation of unknown topics lacks (none: not creating). */
function autoCreateNeeds(
  authz: Authorizer,
  who: Requester,
  apiVersion: number,
  body: MetadataRequest,
  topics: TopicLookup,
  denied: Need[],
): Need[] {
  // v0-3 have no flag: creation follows the broker setting alone.
  const creating = topics.autoCreate && (apiVersion < 4 || body.allowAutoTopicCreation);
  if (!creating) return [];
  const refused = new Set(denied.map((n) => n.item));
  return [...new Set((body.topics ?? []).map((t) => t.name))]
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

/** A DeleteTopics topic, marked when the request named it by id (its refusal keeps the name). */
type NamedTopic = DeleteTopicsRequestTopics & { byId?: true };

/** DeleteTopics v6 names topics by id: the name of each known id, for the check and handler. */
function namedTopics(
  body: DeleteTopicsRequest,
  topicName: (id: string) => string | undefined,
): DeleteTopicsRequest {
  if (!body.topics.some((t) => t.name === null)) return body;
  return {
    ...body,
    topics: body.topics.map((t): NamedTopic =>
      t.name === null ? { ...t, name: topicName(t.topicId) ?? null, byId: true } : t
    ),
  };
}

type Refusal<K extends SchemaKey> = (
  body: RequestOf<K>,
  code: number,
  version: number,
) => ResponseOf<K>;

const MSG = "Not authorized";

/** A config resource refused: a topic with the topic's code, a broker or logger the cluster's. */
const refusedResource = (r: { resourceType: number; resourceName: string }, code: number) => ({
  errorCode: r.resourceType === 2 ? code : CLUSTER,
  errorMessage: MSG,
  resourceType: r.resourceType,
  resourceName: r.resourceName,
});

/** Each topic's partitions (as `partitionIndex`), every one answered with `answer`. */
const eachPartition = <A>(
  topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[],
  answer: A,
) =>
  topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, ...answer })),
  }));

/**
 * The answer refusing every item of a request with `code`, per API, mirroring the request's
 * topics (partitions) or groups where the response lists them.
 */
const REFUSALS: { [K in SchemaKey]?: Refusal<K> } = {
  [ApiKey.Produce]: (b, code) => ({
    responses: b.topicData.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p) => ({
        index: p.index,
        errorCode: code,
        baseOffset: -1,
      })),
    })),
  }),
  [ApiKey.Fetch]: (b, code) => ({
    errorCode: code === TOPIC ? 0 : code,
    responses: b.topics.map((t) => ({
      topic: t.topic,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partition,
        errorCode: code,
        highWatermark: -1,
        lastStableOffset: -1,
        logStartOffset: -1,
        // Empty, not null: librdkafka refuses a null record set ("invalid MessageSetSize -1").
        records: new Uint8Array(0),
      })),
    })),
  }),
  [ApiKey.ListOffsets]: (b, code) => ({
    topics: eachPartition(b.topics, {
      errorCode: code,
      offset: -1,
      timestamp: -1,
      leaderEpoch: -1,
    }),
  }),
  [ApiKey.DeleteRecords]: (b, code) => ({
    throttleTimeMs: 0,
    topics: eachPartition(b.topics, { errorCode: code, lowWatermark: -1 }),
  }),
  [ApiKey.OffsetForLeaderEpoch]: (b, code) => ({
    topics: b.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => ({
        partition: p.partition,
        errorCode: code,
        leaderEpoch: -1,
        endOffset: -1,
      })),
    })),
  }),
  // Named topics only: an all-topics request asks nothing.
  [ApiKey.Metadata]: (b, code) => ({
    brokers: [],
    controllerId: -1,
    topics: (b.topics ?? []).map((t) => ({ errorCode: code, name: t.name, partitions: [] })),
  }),
  [ApiKey.CreateTopics]: (b, code) => ({
    topics: b.topics.map((t) => ({
      name: t.name,
      errorCode: code,
      errorMessage: MSG,
      numPartitions: -1,
      replicationFactor: -1,
    })),
  }),
  // A topic named by id keeps its name to itself.
  [ApiKey.DeleteTopics]: (b, code) => ({
    responses: [
      ...b.topicNames.map((name) => ({ name, errorCode: code })),
      ...(b.topics as NamedTopic[]).map((t) => ({
        name: t.byId === true ? null : t.name,
        topicId: t.topicId,
        errorCode: code,
        errorMessage: MSG,
      })),
    ],
  }),
  [ApiKey.OffsetCommit]: (b, code) => ({ topics: eachPartition(b.topics, { errorCode: code }) }),
  [ApiKey.DescribeGroups]: (b, code) => ({
    groups: b.groups.map((groupId) => ({
      errorCode: code,
      groupId,
      groupState: "",
      protocolType: "",
      protocolData: "",
      members: [],
    })),
  }),
  [ApiKey.DeleteGroups]: (b, code) => ({
    throttleTimeMs: 0,
    results: b.groupsNames.map((groupId) => ({ groupId, errorCode: code })),
  }),
  [ApiKey.CreateAcls]: (b, code) => ({
    throttleTimeMs: 0,
    results: b.creations.map(() => ({ errorCode: code, errorMessage: MSG })),
  }),
  [ApiKey.DeleteAcls]: (b, code) => ({
    throttleTimeMs: 0,
    filterResults: b.filters.map(() => ({ errorCode: code, errorMessage: MSG, matchingAcls: [] })),
  }),
  [ApiKey.DescribeConfigs]: (b, code) => ({
    throttleTimeMs: 0,
    results: b.resources.map((r) => ({ ...refusedResource(r, code), configs: [] })),
  }),
  [ApiKey.AlterConfigs]: (b, code) => ({
    throttleTimeMs: 0,
    responses: b.resources.map((r) => refusedResource(r, code)),
  }),
  [ApiKey.IncrementalAlterConfigs]: (b, code) => ({
    throttleTimeMs: 0,
    responses: b.resources.map((r) => refusedResource(r, code)),
  }),
  [ApiKey.CreatePartitions]: (b, code) => ({
    throttleTimeMs: 0,
    results: b.topics.map((t) => ({ name: t.name, errorCode: code, errorMessage: MSG })),
  }),
  // v1+ also refuse the whole request at the top; v0 only per partition.
  [ApiKey.ElectLeaders]: (b, code, version) => ({
    throttleTimeMs: 0,
    ...(version >= 1 ? { errorCode: code } : {}),
    replicaElectionResults: (b.topicPartitions ?? []).map((t) => ({
      topic: t.topic,
      partitionResult: t.partitionId.map((partitionId) => ({
        partitionId,
        errorCode: code,
        errorMessage: MSG,
      })),
    })),
  }),
  // v0-2 have no field for the error: the answer lists no directories.
  [ApiKey.DescribeLogDirs]: (_b, code, version) => ({
    throttleTimeMs: 0,
    ...(version >= 3 ? { errorCode: code } : {}),
    results: [],
  }),
  // One answer per user named, as the handler gives.
  [ApiKey.AlterUserScramCredentials]: (b, code) => ({
    throttleTimeMs: 0,
    results: [...new Set([...b.deletions, ...b.upsertions].map((c) => c.name))]
      .map((user) => ({ user, errorCode: code, errorMessage: MSG })),
  }),
  // v4+: one answer per key (the single coordinator's fields are gone, not merely ignored).
  [ApiKey.FindCoordinator]: (b, code, version) =>
    version >= 4
      ? {
        coordinators: b.coordinatorKeys.map((key) => ({
          key,
          nodeId: -1,
          host: "",
          port: -1,
          errorCode: code,
          errorMessage: MSG,
        })),
      }
      : { errorCode: code, errorMessage: MSG, nodeId: -1, host: "", port: -1 },
  // v8+: per group; v0-1 have no top-level error, so each partition asked for carries it.
  [ApiKey.OffsetFetch]: (b, code, version) => ({
    errorCode: code,
    topics: version >= 2 ? [] : (b.topics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: -1,
        metadata: null,
        errorCode: code,
      })),
    })),
    groups: b.groups.map((g) => ({ groupId: g.groupId, topics: [], errorCode: code })),
  }),
};

/** The answer refusing every item of `body` with `code`. */
export function refusedAnswer(
  apiKey: number,
  apiVersion: number,
  body: Struct,
  code: number,
): Struct {
  // The dispatcher decoded `body` with this API's schema, as it does for the API's handler.
  const refusal = REFUSALS[apiKey as SchemaKey] as
    | ((body: Struct, code: number, version: number) => Struct)
    | undefined;
  // APIs answered with one top-level error (groups, InitProducerId, DescribeAcls, cluster).
  return refusal?.(body, code, apiVersion) ??
    { errorCode: code, errorMessage: MSG, memberId: "", generationId: -1 };
}

/**
 * Leaves out of a served answer what the requester may not DESCRIBE, as Kafka does: the topics
 * of an all-topics Metadata request and the groups of ListGroups (unless DESCRIBE on the cluster);
 * topics a Metadata request named by id, and the commits OffsetFetch finds for topics, are
 * refused per topic when named and left out when all were asked for.
 */
export function filterAnswer(
  { authz, who, apiKey, apiVersion }: Asking,
  body: Struct,
  result: Struct,
): Struct {
  const may = (type: ResourceType, name: string) =>
    authz.authorize(who, AclOperation.DESCRIBE, type, name).allowed;
  const mayTopic = (t: { errorCode?: number; name?: string | null }) =>
    t.errorCode === TOPIC || may(ResourceType.TOPIC, t.name ?? "");
  // The dispatcher hands over the body decoded, and the answer built, for this API.
  if (apiKey === ApiKey.Metadata) {
    const req = body as MetadataRequest;
    const res = result as MetadataResponse;
    // v0: an empty list asks for every topic.
    const all = req.topics === null || (apiVersion === 0 && req.topics.length === 0);
    const answer: MetadataResponse = {
      ...res,
      topics: all
        ? res.topics.filter(mayTopic)
        : res.topics.map((t): MetadataResponseTopics =>
          mayTopic(t) || t.errorCode === ErrorCode.UNKNOWN_TOPIC_ID ? t : {
            errorCode: TOPIC,
            name: null,
            topicId: t.topicId,
            partitions: [],
            isInternal: false,
          }
        ),
    };
    return answer;
  }
  if (apiKey === ApiKey.OffsetFetch) {
    const req = body as OffsetFetchRequest;
    const res = result as OffsetFetchResponse;
    if (apiVersion >= 8) {
      const asked = new Map(req.groups.map((g) => [g.groupId, g.topics]));
      const answer: OffsetFetchResponse = {
        ...res,
        groups: (res.groups ?? []).map((g) => ({
          ...g,
          topics: offsetTopics(g.topics ?? [], asked.get(g.groupId ?? "") === null, mayTopic),
        })),
      };
      return answer;
    }
    const answer: OffsetFetchResponse = {
      ...res,
      topics: offsetTopics(res.topics ?? [], req.topics === null, mayTopic),
    };
    return answer;
  }
  if (apiKey === ApiKey.ListGroups) {
    const res = result as ListGroupsResponse;
    if (may(ResourceType.CLUSTER, CLUSTER_RESOURCE)) return result;
    const answer: ListGroupsResponse = {
      ...res,
      groups: res.groups.filter((g) => may(ResourceType.GROUP, g.groupId)),
    };
    return answer;
  }
  return result;
}

/** OffsetFetch's topics: unauthorised ones left out (all asked for) or refused per partition. */
function offsetTopics(
  topics: readonly OffsetFetchResponseTopics[],
  all: boolean,
  may: (t: OffsetFetchResponseTopics) => boolean,
): OffsetFetchResponseTopics[] {
  if (all) return topics.filter(may);
  return topics.map((t) =>
    may(t) ? t : {
      name: t.name,
      partitions: (t.partitions ?? []).map((p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: -1,
        committedLeaderEpoch: -1,
        metadata: null,
        errorCode: TOPIC,
      })),
    }
  );
}
