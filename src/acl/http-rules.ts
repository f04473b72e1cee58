// What each HTTP route needs from the authorizer, said as the Kafka request(s) it stands for, so
// the decisions are those of the Kafka rule table (kafka-rules.ts) and never a second copy:
// producing is Produce on the topic, reading is Fetch, GET /topics/{t} is Metadata, a group's
// page is DescribeGroups, and so on. Pure: the HTTP front door (src/http/acl.ts) applies it.
import {
  API_RULES,
  deniedNeeds,
  type Need,
  type RuleBody,
  type RuleKey,
  UNREGISTER_BROKER,
} from "./kafka-rules.ts";
import type { Authorizer, Requester } from "./authorizer.ts";
import { parseCursor } from "../http/cursor.ts";
import { ApiKey } from "../protocol/kafka/index.ts";

type Body = Record<string, unknown>;

/** One Kafka request an HTTP request stands for: the API and the fields its rule reads. */
export interface KafkaEquivalent {
  apiKey: number;
  body: object;
}

/** The Kafka request `apiKey` with the fields its rule reads, named as its generated type does. */
const ask = <K extends RuleKey>(apiKey: K, body: RuleBody<K>): KafkaEquivalent => ({
  apiKey,
  body,
});

/** The route's path parameters and JSON body (undefined when the route has none or is not read). */
export interface RouteInput {
  params: Record<string, string>;
  body?: unknown;
}

export interface HttpRule {
  /** The Kafka requests the route stands for; every one must be allowed. */
  as: (r: RouteInput) => KafkaEquivalent[];
  /** The rule reads the JSON body (the front door parses it first). */
  readsBody?: boolean;
}

const obj = (v: unknown): Body => (v && typeof v === "object" ? v as Body : {});
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
/** The topics named by a body's `offsets` (or `records`) items. */
const topicsOf = (items: unknown): string[] =>
  Array.isArray(items)
    ? items.map((x) => obj(x).topic).filter((t): t is string => typeof t === "string")
    : [];
const uniq = (xs: string[]) => [...new Set(xs)];

const produce = ({ params }: RouteInput): KafkaEquivalent[] => [
  ask(ApiKey.Produce, { transactionalId: null, topicData: [{ name: params.topic }] }),
];
const fetch = ({ params }: RouteInput): KafkaEquivalent[] => [
  ask(ApiKey.Fetch, { replicaId: -1, topics: [{ topic: params.topic }] }),
];
const metadataOf = (topics: string[] | null): KafkaEquivalent =>
  ask(ApiKey.Metadata, { topics: topics === null ? null : topics.map((name) => ({ name })) });
/** A group member's own request (Heartbeat, LeaveGroup): READ on the group. */
const ofGroup =
  (apiKey: typeof ApiKey.Heartbeat | typeof ApiKey.LeaveGroup) =>
  ({ params }: RouteInput): KafkaEquivalent[] => [ask(apiKey, { groupId: params.group })];
/** OffsetCommit: READ on the group and on each topic. */
const commit = (group: string, topics: string[]): KafkaEquivalent =>
  ask(ApiKey.OffsetCommit, { groupId: group, topics: uniq(topics).map((name) => ({ name })) });
const cluster = (apiKey: RuleKey) => (): KafkaEquivalent[] => [ask(apiKey, {})];
const open = (): KafkaEquivalent[] => [];

/**
 * Keyed by "METHOD /path" as the OpenAPI document names routes. A test checks every declared
 * route has an entry; a route without one is refused (src/http/acl.ts).
 */
export const HTTP_RULES: ReadonlyMap<string, HttpRule> = new Map<string, HttpRule>([
  // Probes and the API's own description: what an unauthenticated caller may see anyway.
  ["GET /healthz", { as: open }],
  ["GET /readyz", { as: open }],
  ["GET /openapi.json", { as: open }],
  ["GET /docs", { as: open }],
  // Brokers and controller, as Metadata and DescribeCluster tell any client.
  ["GET /cluster", { as: cluster(ApiKey.DescribeCluster) }],
  // Every topic's and group's numbers: as DescribeLogDirs, DESCRIBE on the cluster.
  ["GET /metrics", { as: cluster(ApiKey.DescribeLogDirs) }],
  ["POST /cluster/elect-leaders", { as: cluster(ApiKey.ElectLeaders) }],
  // Kafka's UnregisterBroker: ALTER on the cluster.
  ["DELETE /cluster/members/{node_id}", { as: cluster(UNREGISTER_BROKER) }],

  // Topics: the list is filtered to what the caller may DESCRIBE (as all-topics Metadata).
  ["GET /topics", { as: () => [metadataOf(null)] }],
  [
    "POST /topics",
    {
      as: ({ body }) => {
        // A name that is not a string asks nothing: the handler refuses the body (400).
        const name = obj(body).name;
        return [ask(ApiKey.CreateTopics, { topics: typeof name === "string" ? [{ name }] : [] })];
      },
      readsBody: true,
    },
  ],
  ["GET /topics/{topic}", { as: ({ params }) => [metadataOf([params.topic])] }],
  ["DELETE /topics/{topic}", {
    as: ({ params }) => [ask(ApiKey.DeleteTopics, { topicNames: [params.topic] })],
  }],
  ["GET /topics/{topic}/configs", {
    as: ({ params }) => [
      ask(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: params.topic }] }),
    ],
  }],
  ["PATCH /topics/{topic}/configs", {
    as: ({ params }) => [
      ask(ApiKey.IncrementalAlterConfigs, {
        resources: [{ resourceType: 2, resourceName: params.topic }],
      }),
    ],
  }],
  // Giving up a damaged copy's records is deleting them: DeleteRecords, DELETE on the topic.
  ["POST /topics/{topic}/partitions/{partition}/repair", {
    as: ({ params }) => [ask(ApiKey.DeleteRecords, { topics: [{ name: params.topic }] })],
  }],
  ["POST /topics/{topic}/partitions", {
    as: ({ params }) => [ask(ApiKey.CreatePartitions, { topics: [{ name: params.topic }] })],
  }],

  // Produce and read.
  ["POST /topics/{topic}", { as: produce }],
  ["POST /topics/{topic}/records", { as: produce }],
  ["POST /topics/{topic}/partitions/{partition}", { as: produce }],
  ["POST /topics/{topic}/partitions/{partition}/records", { as: produce }],
  ["GET /topics/{topic}/records", { as: fetch }],
  ["GET /topics/{topic}/partitions/{partition}/records", { as: fetch }],
  ["GET /topics/{topic}/partitions/{partition}/batches", { as: fetch }],

  // Groups: the list is filtered to what the caller may DESCRIBE (as ListGroups).
  ["GET /groups", { as: cluster(ApiKey.ListGroups) }],
  ["GET /groups/{group}", {
    as: ({ params }) => [ask(ApiKey.DescribeGroups, { groups: [params.group] })],
  }],
  ["DELETE /groups/{group}", {
    as: ({ params }) => [ask(ApiKey.DeleteGroups, { groupsNames: [params.group] })],
  }],
  [
    "POST /groups/{group}/offsets/reset",
    {
      // Without a list of topics every topic the group has offsets for is reset: READ on every
      // topic ("*", a LITERAL "*" or PREFIXED "" ALLOW).
      as: ({ params, body }) => {
        const b = obj(body);
        const named = [...strings(b.topics), ...topicsOf(b.offsets)];
        return [commit(params.group, named.length > 0 ? named : ["*"])];
      },
      readsBody: true,
    },
  ],
  // An HTTP consumer: joining is JoinGroup, and reading its topics Fetch on each (checked at
  // join, and again on each fetch for the topics assigned then: src/http/members.ts).
  [
    "POST /groups/{group}/members",
    {
      as: ({ params, body }) => [
        ask(ApiKey.JoinGroup, { groupId: params.group }),
        ask(ApiKey.Fetch, {
          replicaId: -1,
          topics: strings(obj(body).topics).map((topic) => ({ topic })),
        }),
      ],
      readsBody: true,
    },
  ],
  ["GET /groups/{group}/records", { as: ofGroup(ApiKey.Heartbeat) }],
  [
    "POST /groups/{group}/offsets",
    {
      // READ on every topic committed, those of the cursor too: the client holds the cursor
      // and may have put any topic in it (read with the handler's own parser).
      as: ({ params, body }) => {
        const b = obj(body);
        const cursor = typeof b.cursor === "string" ? parseCursor(b.cursor) : undefined;
        return [commit(params.group, [...topicsOf(b.offsets), ...(cursor?.keys() ?? [])])];
      },
      readsBody: true,
    },
  ],
  ["POST /groups/{group}/members/{member}/heartbeat", { as: ofGroup(ApiKey.Heartbeat) }],
  ["DELETE /groups/{group}/members/{member}", { as: ofGroup(ApiKey.LeaveGroup) }],

  // Reassignments: Alter/ListPartitionReassignments (a generated plan changes nothing).
  ["POST /reassignments", { as: cluster(ApiKey.AlterPartitionReassignments) }],
  ["DELETE /reassignments", { as: cluster(ApiKey.AlterPartitionReassignments) }],
  ["PUT /reassignments/throttle", { as: cluster(ApiKey.AlterPartitionReassignments) }],
  ["GET /reassignments", { as: cluster(ApiKey.ListPartitionReassignments) }],
  ["POST /reassignments/generate", { as: cluster(ApiKey.ListPartitionReassignments) }],

  // Users: Describe/AlterUserScramCredentials.
  ["GET /users", { as: cluster(ApiKey.DescribeUserScramCredentials) }],
  ["GET /users/{user}", { as: cluster(ApiKey.DescribeUserScramCredentials) }],
  ["POST /users", { as: cluster(ApiKey.AlterUserScramCredentials) }],
  ["DELETE /users/{user}", { as: cluster(ApiKey.AlterUserScramCredentials) }],

  // ACLs: Describe/Create/DeleteAcls.
  ["GET /acls", { as: cluster(ApiKey.DescribeAcls) }],
  ["POST /acls", { as: cluster(ApiKey.CreateAcls) }],
  ["DELETE /acls", { as: cluster(ApiKey.DeleteAcls) }],
]);

/** A need `who` lacks for the route, or null when every need is met. Unknown routes are refused. */
export function httpDenied(
  authz: Authorizer,
  who: Requester,
  route: string,
  input: RouteInput,
): Need | null {
  const rule = HTTP_RULES.get(route);
  if (rule === undefined) return { anyOf: [] };
  for (const k of rule.as(input)) {
    // An API the Kafka table has no rule for is refused by deniedNeeds (never let through).
    if (!API_RULES.has(k.apiKey)) return { anyOf: [] };
    const [first] = deniedNeeds(authz, who, k.apiKey, k.body);
    if (first !== undefined) return first;
  }
  return null;
}
