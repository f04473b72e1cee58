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
import { ApiKey, type KafkaMessages } from "../protocol/kafka/index.ts";

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

/** A generated message with every field optional, at any depth. */
export type Sparse<T> = T extends Uint8Array ? T
  : T extends readonly (infer E)[] ? Sparse<E>[]
  : T extends object ? { [F in keyof T]?: Sparse<T[F]> }
  : T;

/** Kafka's UnregisterBroker: not served (no schema); the HTTP API's remove-node stands for it. */
export const UNREGISTER_BROKER = 64;
/** The APIs the table has a rule for. */
export type RuleKey = keyof KafkaMessages | typeof UNREGISTER_BROKER;
/**
 * The request a rule reads: the generated type with every field optional, since the HTTP front
 * door (http-rules.ts) asks with just the fields a rule reads; a decoded request has them all.
 */
export type RuleBody<K extends RuleKey> = K extends keyof KafkaMessages
  ? Sparse<KafkaMessages[K]["request"]>
  : Record<string, never>;

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
  | { kind: "checks"; needs: (body: object) => Need[]; items?: Items };

/** The fields of `T` that hold lists, and the elements of those lists. */
type ListField<T> =
  & { [F in keyof T]-?: NonNullable<T[F]> extends readonly unknown[] ? F : never }[keyof T]
  & string;
type ElementOf<T, F extends keyof T> = NonNullable<T[F]> extends readonly (infer E)[] ? E : never;

/** `Items` of one API, its fields named as the generated types name them. */
interface ItemsOf<K extends keyof KafkaMessages, L extends ListField<RuleBody<K>>> {
  request: readonly L[];
  key: (item: ElementOf<RuleBody<K>, L>) => string | null | undefined;
  response: ListField<KafkaMessages[K]["response"]>;
  servesEmpty?: (version: number) => boolean;
}

/** A rule of `apiKey`, typed against its request; the table keeps it erased. */
function checks<K extends RuleKey, L extends ListField<RuleBody<K>> = never>(
  apiKey: K,
  needs: (b: RuleBody<K>) => Need[],
  items?: K extends keyof KafkaMessages ? ItemsOf<K, L> : never,
): [number, ApiRule] {
  // The front door hands a rule the body decoded with its own API's schema (or, from the HTTP
  // API, one built as that API's RuleBody): the erasure is sound for every caller.
  const erased = needs as (b: object) => Need[];
  if (items === undefined) return [apiKey, { kind: "checks", needs: erased }];
  const key = items.key as (item: unknown) => string | null | undefined;
  return [apiKey, {
    kind: "checks",
    needs: erased,
    items: { ...items, key: (item) => key(item) ?? null },
  }];
}
const none = (apiKey: keyof KafkaMessages): [number, ApiRule] => [apiKey, { kind: "none" }];

const one = (op: Op, type: RT, name: string, item?: string): Need => ({
  anyOf: [{ op, type, name }],
  ...(item === undefined ? {} : { item }),
});
const cluster = (op: Op): Need[] => [one(op, RT.CLUSTER, CLUSTER_RESOURCE)];
const isName = (n: string | null | undefined): n is string => typeof n === "string";
type Named = { name?: string | null };
const names = (items: readonly Named[] = []) => items.map((t) => t.name);
/** Items listed in the request's `topics`, by name (most topic APIs). */
const TOPICS = { request: ["topics"], key: (t: Named) => t.name } as const;
/** One need per topic named (once each), each refusing its topic alone. */
const topics = (op: Op, names: readonly (string | null | undefined)[] = []): Need[] =>
  [...new Set(names.filter(isName))].map((n) => one(op, RT.TOPIC, n, n));
/** One need per group named, each refusing its group alone. */
const groups = (op: Op, names: readonly (string | null | undefined)[] = []): Need[] =>
  names.filter(isName).map((g) => one(op, RT.GROUP, g, g));
/** A replica's request (replicaId >= 0) is the cluster talking to itself. */
const replica = (b: { replicaId?: number }) => (b.replicaId ?? -1) >= 0;
/** The request's own group (not an item: refused, the whole request is). */
const group = (op: Op, groupId: string | undefined): Need[] =>
  groupId === undefined ? [] : [one(op, RT.GROUP, groupId)];
type ConfigResource = { resourceType?: number; resourceName?: string };
/** A config resource as an item: its type and name (a broker "0" is not a topic "0"). */
const resourceKey = (r: ConfigResource): string => `${r.resourceType}:${r.resourceName ?? ""}`;
const configResources = (op: Op, resources: readonly ConfigResource[] = []): Need[] =>
  resources.map((r) =>
    // Kafka's config resource types: 2 topic, 4 broker, 8 broker logger.
    r.resourceType === 2
      ? one(op, RT.TOPIC, r.resourceName ?? "", resourceKey(r))
      : one(op, RT.CLUSTER, CLUSTER_RESOURCE, resourceKey(r))
  );
const CREATE_TOPIC = (n: string): Need => ({
  anyOf: [
    { op: Op.CREATE, type: RT.CLUSTER, name: CLUSTER_RESOURCE },
    { op: Op.CREATE, type: RT.TOPIC, name: n },
  ],
  item: n,
});

/** Keyed by API key. A test checks every served API has an entry. */
export const API_RULES: ReadonlyMap<number, ApiRule> = new Map<number, ApiRule>([
  checks(ApiKey.Produce, (b) => [
    ...(isName(b.transactionalId) ? [one(Op.WRITE, RT.TRANSACTIONAL_ID, b.transactionalId)] : []),
    ...topics(Op.WRITE, names(b.topicData)),
  ], { request: ["topicData"], key: (t) => t.name, response: "responses" }),
  checks(
    ApiKey.Fetch,
    (b) => replica(b) ? cluster(Op.CLUSTER_ACTION) : topics(Op.READ, b.topics?.map((t) => t.topic)),
    { request: ["topics"], key: (t) => t.topic, response: "responses" },
  ),
  checks(ApiKey.ListOffsets, (b) => topics(Op.DESCRIBE, names(b.topics)), {
    ...TOPICS,
    response: "topics",
  }),
  // Metadata: unauthorised topics are left out of an all-topics answer.
  checks(
    ApiKey.Metadata,
    (b) => (b.topics === null ? [] : topics(Op.DESCRIBE, names(b.topics))),
    // v0: an empty list asks for every topic.
    { ...TOPICS, response: "topics", servesEmpty: (v) => v >= 1 },
  ),
  checks(ApiKey.OffsetCommit, (b) => [
    ...group(Op.READ, b.groupId),
    ...topics(Op.READ, names(b.topics)),
  ], { ...TOPICS, response: "topics" }),
  // OffsetFetch v8+: several groups (the topics of each are filtered in the answer).
  checks(
    ApiKey.OffsetFetch,
    (b) =>
      b.groups !== undefined && b.groups.length > 0
        ? groups(Op.DESCRIBE, b.groups.map((g) => g.groupId))
        : [one(Op.DESCRIBE, RT.GROUP, b.groupId ?? "")],
    { request: ["groups"], key: (g) => g.groupId, response: "groups" },
  ),
  // FindCoordinator: key type 0 group, 1 transactional id.
  checks(ApiKey.FindCoordinator, (b) => {
    const keys = b.coordinatorKeys !== undefined && b.coordinatorKeys.length > 0
      ? b.coordinatorKeys
      : [b.key ?? ""];
    const type = b.keyType === 1 ? RT.TRANSACTIONAL_ID : RT.GROUP;
    return keys.map((k) => one(Op.DESCRIBE, type, k, k));
  }, { request: ["coordinatorKeys"], key: (k) => k, response: "coordinators" }),
  checks(ApiKey.JoinGroup, (b) => group(Op.READ, b.groupId)),
  checks(ApiKey.Heartbeat, (b) => group(Op.READ, b.groupId)),
  checks(ApiKey.LeaveGroup, (b) => group(Op.READ, b.groupId)),
  checks(ApiKey.SyncGroup, (b) => group(Op.READ, b.groupId)),
  checks(
    ApiKey.DescribeGroups,
    (b) => groups(Op.DESCRIBE, b.groups),
    { request: ["groups"], key: (g) => g, response: "groups" },
  ),
  // ListGroups: every group the requester may DESCRIBE (the front door filters the answer).
  checks(ApiKey.ListGroups, () => []),
  none(ApiKey.SaslHandshake),
  none(ApiKey.ApiVersions),
  checks(
    ApiKey.CreateTopics,
    (b) => [...new Set(names(b.topics).filter(isName))].map(CREATE_TOPIC),
    { ...TOPICS, response: "topics" },
  ),
  // DeleteTopics: names before v6, topics after.
  checks(ApiKey.DeleteTopics, (b) => [
    ...topics(Op.DELETE, b.topicNames),
    ...topics(Op.DELETE, names(b.topics)),
  ], {
    request: ["topicNames", "topics"],
    key: (t) => typeof t === "string" ? t : t.name,
    response: "responses",
  }),
  checks(
    ApiKey.DeleteRecords,
    (b) => topics(Op.DELETE, names(b.topics)),
    { ...TOPICS, response: "topics" },
  ),
  checks(ApiKey.InitProducerId, (b) => {
    if (isName(b.transactionalId)) return [one(Op.WRITE, RT.TRANSACTIONAL_ID, b.transactionalId)];
    return [{
      anyOf: [
        { op: Op.IDEMPOTENT_WRITE, type: RT.CLUSTER, name: CLUSTER_RESOURCE },
        { op: Op.WRITE, type: RT.TOPIC, name: "", any: true },
      ],
    }];
  }),
  checks(
    ApiKey.OffsetForLeaderEpoch,
    (b) =>
      replica(b) ? cluster(Op.CLUSTER_ACTION) : topics(Op.DESCRIBE, b.topics?.map((t) => t.topic)),
    { request: ["topics"], key: (t) => t.topic, response: "topics" },
  ),
  checks(ApiKey.DescribeAcls, () => cluster(Op.DESCRIBE)),
  checks(ApiKey.CreateAcls, () => cluster(Op.ALTER)),
  checks(ApiKey.DeleteAcls, () => cluster(Op.ALTER)),
  checks(
    ApiKey.DescribeConfigs,
    (b) => configResources(Op.DESCRIBE_CONFIGS, b.resources),
    { request: ["resources"], key: resourceKey, response: "results" },
  ),
  checks(
    ApiKey.AlterConfigs,
    (b) => configResources(Op.ALTER_CONFIGS, b.resources),
    { request: ["resources"], key: resourceKey, response: "responses" },
  ),
  checks(ApiKey.DescribeLogDirs, () => cluster(Op.DESCRIBE)),
  none(ApiKey.SaslAuthenticate),
  checks(
    ApiKey.CreatePartitions,
    (b) => topics(Op.ALTER, names(b.topics)),
    { ...TOPICS, response: "results" },
  ),
  checks(
    ApiKey.DeleteGroups,
    (b) => groups(Op.DELETE, b.groupsNames),
    { request: ["groupsNames"], key: (g) => g, response: "results" },
  ),
  checks(ApiKey.ElectLeaders, () => cluster(Op.ALTER)),
  checks(
    ApiKey.IncrementalAlterConfigs,
    (b) => configResources(Op.ALTER_CONFIGS, b.resources),
    { request: ["resources"], key: resourceKey, response: "responses" },
  ),
  checks(ApiKey.AlterPartitionReassignments, () => cluster(Op.ALTER)),
  checks(ApiKey.ListPartitionReassignments, () => cluster(Op.DESCRIBE)),
  checks(ApiKey.DescribeUserScramCredentials, () => cluster(Op.DESCRIBE)),
  checks(ApiKey.AlterUserScramCredentials, () => cluster(Op.ALTER)),
  none(ApiKey.DescribeCluster), // what Metadata tells anyone
  checks(UNREGISTER_BROKER, () => cluster(Op.ALTER)),
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
  body: object,
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
