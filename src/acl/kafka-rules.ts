// What each Kafka API needs from the authorizer, as Kafka's own authorisation decides it
// (KafkaApis / the KIPs), in one table: for a decoded request body, the checks to make. A check
// is one (operation, resource type, name), or alternatives of which one allowed suffices
// (CreateTopics: CREATE on the cluster or on the topic; an idempotent producer: IDEMPOTENT_WRITE
// on the cluster or WRITE on some topic). Pure: the Kafka front door applies the answers with
// each API's error codes (TOPIC/GROUP/CLUSTER/TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
import {
  AclOperation as Op,
  type Authorizer,
  CLUSTER_RESOURCE,
  type Requester,
  ResourceType as RT,
} from "./authorizer.ts";

export interface Check {
  op: Op;
  type: RT;
  name: string;
  /** Checked with authorizeAny (the resource's name does not matter, KIP-679). */
  any?: boolean;
}

/** Allowed when any of `anyOf` is allowed. `item`: the request item it decides (topic, group). */
export interface Need {
  anyOf: Check[];
  item?: string;
}

type Body = Record<string, unknown>;

/**
 * Where the items of a request a client may name several of (topics, groups, config resources)
 * are, and where their answers go: a need whose `item` is one of them refuses that item alone
 * (answered with the error, the others served), as Kafka does; a need without `item` (the
 * request's own group, its transactional id, the cluster) refuses the request whole.
 */
export interface Items {
  /** The request's lists of items (DeleteTopics: names before v6, topics after). */
  request: readonly string[];
  /** The item's name as its need's `item` gives it (an item is a string or an object). */
  key: (item: unknown) => string | null;
  /** The response's list the answers go to. */
  response: string;
  /** The API is served with none of its items left (Metadata v1+: the brokers are still told). */
  servesEmpty?: (version: number) => boolean;
}

export type ApiRule =
  /** No authorisation (ApiVersions, SASL, DescribeCluster's brokers as Metadata's). */
  | { kind: "none" }
  /** Items missing a permission are answered with the error, the rest served (or left out). */
  | { kind: "checks"; needs: (body: Body) => Need[]; items?: Items };

const one = (op: Op, type: RT, name: string, item?: string): Need => ({
  anyOf: [{ op, type, name }],
  ...(item === undefined ? {} : { item }),
});
const cluster = (op: Op) => (): Need[] => [one(op, RT.CLUSTER, CLUSTER_RESOURCE)];
const list = (
  v: unknown,
): Body[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === "object") : []);
const s = (v: unknown): string | null => (typeof v === "string" ? v : null);
const names = (items: Body[], key: string): string[] =>
  items.map((t) => s(t[key])).filter((n): n is string => n !== null);
const topics = (op: Op, items: Body[], key = "name"): Need[] =>
  [...new Set(names(items, key))].map((n) => one(op, RT.TOPIC, n, n));
/** A replica's request (replicaId >= 0) is the cluster talking to itself. */
const replica = (b: Body) => typeof b.replicaId === "number" && b.replicaId >= 0;
/** The request's own group (not an item: refused, the whole request is). */
const group = (op: Op) => (b: Body): Need[] => {
  const g = s(b.groupId);
  return g === null ? [] : [one(op, RT.GROUP, g)];
};
/** A config resource as an item: its type and name (a broker "0" is not a topic "0"). */
const resourceKey = (r: unknown): string | null =>
  r && typeof r === "object"
    ? `${(r as Body).resourceType}:${s((r as Body).resourceName) ?? ""}`
    : null;
const configResources = (op: Op) => (b: Body): Need[] =>
  list(b.resources).flatMap((r) => {
    const name = s(r.resourceName) ?? "";
    // Kafka's config resource types: 2 topic, 4 broker, 8 broker logger.
    if (r.resourceType === 2) return [one(op, RT.TOPIC, name, resourceKey(r)!)];
    return [one(op, RT.CLUSTER, CLUSTER_RESOURCE, resourceKey(r)!)];
  });
/** Items that are names, or objects named by `key`. */
const items = (request: string | string[], key: string, response: string): Items => ({
  request: typeof request === "string" ? [request] : request,
  key: (item) =>
    typeof item === "string"
      ? item
      : item && typeof item === "object"
      ? s((item as Body)[key])
      : null,
  response,
});

/** Keyed by API key. A test checks every served API has an entry. */
export const API_RULES: ReadonlyMap<number, ApiRule> = new Map<number, ApiRule>([
  [0, { // Produce
    kind: "checks",
    needs: (b) => [
      ...(s(b.transactionalId) !== null
        ? [one(Op.WRITE, RT.TRANSACTIONAL_ID, s(b.transactionalId)!)]
        : []),
      ...topics(Op.WRITE, list(b.topicData)),
    ],
    items: items("topicData", "name", "responses"),
  }],
  [1, { // Fetch
    kind: "checks",
    needs: (b) =>
      replica(b) ? cluster(Op.CLUSTER_ACTION)() : topics(Op.READ, list(b.topics), "topic"),
    items: items("topics", "topic", "responses"),
  }],
  [2, { // ListOffsets
    kind: "checks",
    needs: (b) => topics(Op.DESCRIBE, list(b.topics)),
    items: items("topics", "name", "topics"),
  }],
  [3, { // Metadata: unauthorised topics are left out of an all-topics answer
    kind: "checks",
    needs: (b) => (b.topics === null ? [] : topics(Op.DESCRIBE, list(b.topics))),
    // v0: an empty list asks for every topic.
    items: { ...items("topics", "name", "topics"), servesEmpty: (v) => v >= 1 },
  }],
  [8, { // OffsetCommit
    kind: "checks",
    needs: (b) => [...group(Op.READ)(b), ...topics(Op.READ, list(b.topics))],
    items: items("topics", "name", "topics"),
  }],
  [9, { // OffsetFetch (v8+: several groups; the topics of each are filtered in the answer)
    kind: "checks",
    needs: (b) => {
      const gs = list(b.groups);
      if (gs.length > 0) return names(gs, "groupId").map((g) => one(Op.DESCRIBE, RT.GROUP, g, g));
      return [one(Op.DESCRIBE, RT.GROUP, s(b.groupId) ?? "")];
    },
    items: items("groups", "groupId", "groups"),
  }],
  [10, { // FindCoordinator: key type 0 group, 1 transactional id
    kind: "checks",
    needs: (b) => {
      const keys = Array.isArray(b.coordinatorKeys) && b.coordinatorKeys.length > 0
        ? b.coordinatorKeys.filter((k): k is string => typeof k === "string")
        : [s(b.key) ?? ""];
      const type = b.keyType === 1 ? RT.TRANSACTIONAL_ID : RT.GROUP;
      return keys.map((k) => one(Op.DESCRIBE, type, k, k));
    },
    items: items("coordinatorKeys", "", "coordinators"),
  }],
  [11, { kind: "checks", needs: group(Op.READ) }], // JoinGroup
  [12, { kind: "checks", needs: group(Op.READ) }], // Heartbeat
  [13, { kind: "checks", needs: group(Op.READ) }], // LeaveGroup
  [14, { kind: "checks", needs: group(Op.READ) }], // SyncGroup
  [15, { // DescribeGroups
    kind: "checks",
    needs: (b) =>
      (Array.isArray(b.groups) ? b.groups : []).filter((g): g is string => typeof g === "string")
        .map((g) => one(Op.DESCRIBE, RT.GROUP, g, g)),
    items: items("groups", "", "groups"),
  }],
  // ListGroups: every group the requester may DESCRIBE (the front door filters the answer).
  [16, { kind: "checks", needs: () => [] }],
  [17, { kind: "none" }], // SaslHandshake
  [18, { kind: "none" }], // ApiVersions
  [19, { // CreateTopics
    kind: "checks",
    needs: (b) =>
      [...new Set(names(list(b.topics), "name"))].map((n) => ({
        anyOf: [
          { op: Op.CREATE, type: RT.CLUSTER, name: CLUSTER_RESOURCE },
          { op: Op.CREATE, type: RT.TOPIC, name: n },
        ],
        item: n,
      })),
    items: items("topics", "name", "topics"),
  }],
  [20, { // DeleteTopics (names before v6, topics after)
    kind: "checks",
    needs: (b) => [
      ...topics(
        Op.DELETE,
        (Array.isArray(b.topicNames) ? b.topicNames : []).map((name) => ({ name })),
      ),
      ...topics(Op.DELETE, list(b.topics)),
    ],
    items: items(["topicNames", "topics"], "name", "responses"),
  }],
  [21, { // DeleteRecords
    kind: "checks",
    needs: (b) => topics(Op.DELETE, list(b.topics)),
    items: items("topics", "name", "topics"),
  }],
  [22, { // InitProducerId
    kind: "checks",
    needs: (b) => {
      const txn = s(b.transactionalId);
      if (txn !== null) return [one(Op.WRITE, RT.TRANSACTIONAL_ID, txn)];
      return [{
        anyOf: [
          { op: Op.IDEMPOTENT_WRITE, type: RT.CLUSTER, name: CLUSTER_RESOURCE },
          { op: Op.WRITE, type: RT.TOPIC, name: "", any: true },
        ],
      }];
    },
  }],
  [23, { // OffsetForLeaderEpoch
    kind: "checks",
    needs: (b) =>
      replica(b) ? cluster(Op.CLUSTER_ACTION)() : topics(Op.DESCRIBE, list(b.topics), "topic"),
    items: items("topics", "topic", "topics"),
  }],
  [29, { kind: "checks", needs: cluster(Op.DESCRIBE) }], // DescribeAcls
  [30, { kind: "checks", needs: cluster(Op.ALTER) }], // CreateAcls
  [31, { kind: "checks", needs: cluster(Op.ALTER) }], // DeleteAcls
  [32, { // DescribeConfigs
    kind: "checks",
    needs: configResources(Op.DESCRIBE_CONFIGS),
    items: { request: ["resources"], key: resourceKey, response: "results" },
  }],
  [33, { // AlterConfigs
    kind: "checks",
    needs: configResources(Op.ALTER_CONFIGS),
    items: { request: ["resources"], key: resourceKey, response: "responses" },
  }],
  [35, { kind: "checks", needs: cluster(Op.DESCRIBE) }], // DescribeLogDirs
  [36, { kind: "none" }], // SaslAuthenticate
  [37, { // CreatePartitions
    kind: "checks",
    needs: (b) => topics(Op.ALTER, list(b.topics)),
    items: items("topics", "name", "results"),
  }],
  [42, { // DeleteGroups
    kind: "checks",
    needs: (b) =>
      (Array.isArray(b.groupsNames) ? b.groupsNames : [])
        .filter((g): g is string => typeof g === "string")
        .map((g) => one(Op.DELETE, RT.GROUP, g, g)),
    items: items("groupsNames", "", "results"),
  }],
  [43, { kind: "checks", needs: cluster(Op.ALTER) }], // ElectLeaders
  [44, { // IncrementalAlterConfigs
    kind: "checks",
    needs: configResources(Op.ALTER_CONFIGS),
    items: { request: ["resources"], key: resourceKey, response: "responses" },
  }],
  [45, { kind: "checks", needs: cluster(Op.ALTER) }], // AlterPartitionReassignments
  [46, { kind: "checks", needs: cluster(Op.DESCRIBE) }], // ListPartitionReassignments
  [50, { kind: "checks", needs: cluster(Op.DESCRIBE) }], // DescribeUserScramCredentials
  [51, { kind: "checks", needs: cluster(Op.ALTER) }], // AlterUserScramCredentials
  [60, { kind: "none" }], // DescribeCluster (what Metadata tells anyone)
  // UnregisterBroker: not served on the Kafka listener; the HTTP API's remove-node stands for it.
  [64, { kind: "checks", needs: cluster(Op.ALTER) }],
]);

export function allowed(authz: Authorizer, who: Requester, need: Need): boolean {
  return need.anyOf.some((c) =>
    c.any
      ? authz.authorizeAny(who, c.op, c.type)
      : authz.authorize(who, c.op, c.type, c.name).allowed
  );
}

/** The needs of a request that `who` lacks (empty: everything it names is allowed). */
export function deniedNeeds(
  authz: Authorizer,
  who: Requester,
  apiKey: number,
  body: Body,
): Need[] {
  const rule = API_RULES.get(apiKey);
  // An API without a rule is refused whole: a new API must be given one (a test checks).
  if (rule === undefined) return [{ anyOf: [] }];
  if (rule.kind === "none") return [];
  return rule.needs(body).filter((n) => !allowed(authz, who, n));
}

/** A connection's host as ACLs name it: the address without Kafka's leading "/". */
export function aclHost(clientHost: string): string {
  return clientHost.startsWith("/") ? clientHost.slice(1) : clientHost;
}
