/** Registry of declared APIs, the advertised version table and API key names. */
import * as admin from "./messages/admin.ts";
import * as dataPlane from "./messages/data-plane.ts";
import * as groups from "./messages/groups.ts";
import { inRange, type MessageSchema } from "./schema.ts";

export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  SaslHandshake: 17,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  OffsetForLeaderEpoch: 23,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  DeleteGroups: 42,
  ElectLeaders: 43,
  IncrementalAlterConfigs: 44,
  DescribeCluster: 60,
} as const;

export type ApiKeyName = keyof typeof ApiKey;

/**
 * What the broker lists in ApiVersions: the kafka-protocol.md §4.1 "advertise" column plus
 * AlterConfigs (33), ElectLeaders (43, answered by the controller; other brokers pass it on) and
 * IncrementalAlterConfigs (44), without the SASL APIs (17, 36): only what
 * the listener implements (src/kafka/handlers/index.ts; a test keeps the two in step).
 * OffsetCommit starts at v0, below that column's 2: sarama 1.22 commits with v1 at its default
 * retention and kafka-python pinned below 0.9 with v0/v1 (Kafka 3.x served them; 4.0 did not).
 * OffsetFetch v0 (kafka-python pinned to 0.8.1 reads its commits back with it) is answered like v1:
 * Kafka 0.8 read v0 from ZooKeeper, but here every commit lives in __consumer_offsets.
 * Produce starts at v0 as in Kafka 3.x (v0-v2 messages are up-converted, legacy-messages.ts):
 * librdkafka before 2.10 sends gzip, snappy and lz4 uncompressed unless Produce v0 is listed.
 */
export const ADVERTISED: ReadonlyMap<number, readonly [number, number]> = new Map<
  number,
  readonly [number, number]
>([
  [ApiKey.Produce, [0, 11]],
  [ApiKey.Fetch, [4, 12]],
  [ApiKey.ListOffsets, [1, 7]],
  [ApiKey.Metadata, [0, 12]],
  [ApiKey.OffsetCommit, [0, 9]],
  [ApiKey.OffsetFetch, [0, 9]],
  [ApiKey.FindCoordinator, [0, 6]],
  [ApiKey.JoinGroup, [0, 9]],
  [ApiKey.Heartbeat, [0, 4]],
  [ApiKey.LeaveGroup, [0, 5]],
  [ApiKey.SyncGroup, [0, 5]],
  [ApiKey.DescribeGroups, [0, 5]],
  [ApiKey.ListGroups, [0, 5]],
  [ApiKey.ApiVersions, [0, 4]],
  [ApiKey.CreateTopics, [0, 7]],
  [ApiKey.DeleteTopics, [0, 6]],
  [ApiKey.DeleteRecords, [0, 2]],
  [ApiKey.InitProducerId, [0, 5]],
  [ApiKey.OffsetForLeaderEpoch, [2, 4]],
  [ApiKey.DescribeConfigs, [0, 4]],
  [ApiKey.AlterConfigs, [0, 2]],
  [ApiKey.CreatePartitions, [0, 3]],
  [ApiKey.DeleteGroups, [0, 2]],
  [ApiKey.ElectLeaders, [0, 2]],
  [ApiKey.IncrementalAlterConfigs, [0, 1]],
  [ApiKey.DescribeCluster, [0, 1]],
]);

const PAIRS: readonly (readonly [MessageSchema, MessageSchema])[] = [
  ...Object.values(dataPlane),
  ...Object.values(groups),
  ...Object.values(admin),
];

const REQUESTS = new Map<number, MessageSchema>();
const RESPONSES = new Map<number, MessageSchema>();
for (const [req, resp] of PAIRS) {
  if (REQUESTS.has(req.apiKey)) throw new Error(`duplicate schema for api ${req.apiKey}`);
  REQUESTS.set(req.apiKey, req);
  RESPONSES.set(resp.apiKey, resp);
}

export type Direction = "request" | "response";

/** The schema for an API key, or undefined when the key has none. */
export function schemaFor(apiKey: number, direction: Direction): MessageSchema | undefined {
  return (direction === "request" ? REQUESTS : RESPONSES).get(apiKey);
}

/** All API keys with a schema (decodable), ascending. */
export function declaredApiKeys(): number[] {
  return [...REQUESTS.keys()].sort((a, b) => a - b);
}

/** Versions the codec can decode and encode for an API: Kafka's full valid range for it. */
export function codecVersions(apiKey: number): readonly [number, number] | undefined {
  const s = REQUESTS.get(apiKey);
  return s ? [s.valid.min, s.valid.max] : undefined;
}

export function hasVersion(apiKey: number, version: number): boolean {
  const s = REQUESTS.get(apiKey);
  return s !== undefined && inRange(s.valid, version);
}

/** Whether (apiKey, version) uses the flexible (compact + tagged fields) body encoding. */
export function isFlexible(apiKey: number, version: number): boolean {
  const s = REQUESTS.get(apiKey);
  return s !== undefined && inRange(s.flexible, version);
}

const NAMES = new Map<number, string>(
  (Object.entries(ApiKey) as [string, number][]).map(([k, v]) => [v, k]),
);

export function apiName(apiKey: number): string {
  return NAMES.get(apiKey) ?? `Api${apiKey}`;
}
