/** Registry of declared message schemas and API key names. (What the listener serves and
 * advertises is declared with each handler, src/kafka/handlers/.) */
import * as acls from "./messages/acls.ts";
import * as admin from "./messages/admin.ts";
import * as dataPlane from "./messages/data-plane.ts";
import * as groups from "./messages/groups.ts";
import * as logDirs from "./messages/log-dirs.ts";
import * as reassignments from "./messages/reassignments.ts";
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
  DescribeAcls: 29,
  CreateAcls: 30,
  DeleteAcls: 31,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  DescribeLogDirs: 35,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  DeleteGroups: 42,
  ElectLeaders: 43,
  IncrementalAlterConfigs: 44,
  AlterPartitionReassignments: 45,
  ListPartitionReassignments: 46,
  DescribeUserScramCredentials: 50,
  AlterUserScramCredentials: 51,
  DescribeCluster: 60,
} as const;

export type ApiKeyName = keyof typeof ApiKey;

const PAIRS: readonly (readonly [MessageSchema, MessageSchema])[] = [
  ...Object.values(dataPlane),
  ...Object.values(groups),
  ...Object.values(admin),
  ...Object.values(logDirs),
  ...Object.values(reassignments),
  ...Object.values(acls),
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
