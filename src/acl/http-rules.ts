// What each HTTP route needs from the authorizer, said as the Kafka request(s) it stands for, so
// the decisions are those of the Kafka rule table (kafka-rules.ts) and never a second copy:
// producing is Produce on the topic, reading is Fetch, GET /topics/{t} is Metadata, a group's
// page is DescribeGroups, and so on. Pure: the HTTP front door (src/http/acl.ts) applies it.
import { API_RULES, deniedNeeds, type Need } from "./kafka-rules.ts";
import type { Authorizer, Requester } from "./authorizer.ts";
import { parseCursor } from "../http/cursor.ts";

type Body = Record<string, unknown>;

/** One Kafka request an HTTP request stands for: the API and the fields its rule reads. */
export interface KafkaEquivalent {
  apiKey: number;
  body: Body;
}

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

const produce = ({ params }: RouteInput): KafkaEquivalent[] => [{
  apiKey: 0,
  body: { transactionalId: null, topicData: [{ name: params.topic }] },
}];
const fetch = ({ params }: RouteInput): KafkaEquivalent[] => [{
  apiKey: 1,
  body: { replicaId: -1, topics: [{ topic: params.topic }] },
}];
const metadataOf = (topics: string[] | null): KafkaEquivalent => ({
  apiKey: 3,
  body: { topics: topics === null ? null : topics.map((name) => ({ name })) },
});
const groupApi = (apiKey: number) => ({ params }: RouteInput): KafkaEquivalent[] => [{
  apiKey,
  body: { groupId: params.group, groups: [params.group], groupsNames: [params.group] },
}];
/** OffsetCommit: READ on the group and on each topic. */
const commit = (group: string, topics: string[]): KafkaEquivalent => ({
  apiKey: 8,
  body: { groupId: group, topics: uniq(topics).map((name) => ({ name })) },
});
const cluster = (apiKey: number) => (): KafkaEquivalent[] => [{ apiKey, body: {} }];
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
  ["GET /cluster", { as: cluster(60) }],
  // Every topic's and group's numbers: as DescribeLogDirs, DESCRIBE on the cluster.
  ["GET /metrics", { as: cluster(35) }],
  ["POST /cluster/elect-leaders", { as: cluster(43) }],
  // Kafka's UnregisterBroker: ALTER on the cluster.
  ["DELETE /cluster/members/{node_id}", { as: cluster(64) }],

  // Topics: the list is filtered to what the caller may DESCRIBE (as all-topics Metadata).
  ["GET /topics", { as: () => [metadataOf(null)] }],
  [
    "POST /topics",
    {
      as: ({ body }) => [{ apiKey: 19, body: { topics: [{ name: obj(body).name }] } }],
      readsBody: true,
    },
  ],
  ["GET /topics/{topic}", { as: ({ params }) => [metadataOf([params.topic])] }],
  ["DELETE /topics/{topic}", {
    as: ({ params }) => [{ apiKey: 20, body: { topicNames: [params.topic] } }],
  }],
  ["GET /topics/{topic}/configs", {
    as: ({ params }) => [{
      apiKey: 32,
      body: { resources: [{ resourceType: 2, resourceName: params.topic }] },
    }],
  }],
  ["PATCH /topics/{topic}/configs", {
    as: ({ params }) => [{
      apiKey: 44,
      body: { resources: [{ resourceType: 2, resourceName: params.topic }] },
    }],
  }],
  // Giving up a damaged copy's records is deleting them: DeleteRecords, DELETE on the topic.
  ["POST /topics/{topic}/partitions/{partition}/repair", {
    as: ({ params }) => [{ apiKey: 21, body: { topics: [{ name: params.topic }] } }],
  }],
  ["POST /topics/{topic}/partitions", {
    as: ({ params }) => [{ apiKey: 37, body: { topics: [{ name: params.topic }] } }],
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
  ["GET /groups", { as: cluster(16) }],
  ["GET /groups/{group}", { as: groupApi(15) }],
  ["DELETE /groups/{group}", { as: groupApi(42) }],
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
        { apiKey: 11, body: { groupId: params.group } },
        {
          apiKey: 1,
          body: { replicaId: -1, topics: strings(obj(body).topics).map((topic) => ({ topic })) },
        },
      ],
      readsBody: true,
    },
  ],
  ["GET /groups/{group}/records", { as: groupApi(12) }],
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
  ["POST /groups/{group}/members/{member}/heartbeat", { as: groupApi(12) }],
  ["DELETE /groups/{group}/members/{member}", { as: groupApi(13) }],

  // Reassignments: Alter/ListPartitionReassignments (a generated plan changes nothing).
  ["POST /reassignments", { as: cluster(45) }],
  ["DELETE /reassignments", { as: cluster(45) }],
  ["PUT /reassignments/throttle", { as: cluster(45) }],
  ["GET /reassignments", { as: cluster(46) }],
  ["POST /reassignments/generate", { as: cluster(46) }],

  // Users: Describe/AlterUserScramCredentials.
  ["GET /users", { as: cluster(50) }],
  ["GET /users/{user}", { as: cluster(50) }],
  ["POST /users", { as: cluster(51) }],
  ["DELETE /users/{user}", { as: cluster(51) }],

  // ACLs: Describe/Create/DeleteAcls.
  ["GET /acls", { as: cluster(29) }],
  ["POST /acls", { as: cluster(30) }],
  ["DELETE /acls", { as: cluster(31) }],
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
