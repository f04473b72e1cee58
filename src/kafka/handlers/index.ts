// The registry of served APIs: one declaration per file in this folder (see docs/kafka.md, "How
// to add an API"). The dispatch table, ApiVersions and the advertised ranges are all built from
// this list; a test checks that every handler file in this folder is listed here.
import type { KafkaApi } from "../api.ts";
import { apiVersionsApi } from "./api-versions.ts";
import alterConfigs from "./alter-configs.ts";
import alterPartitionReassignments from "./alter-partition-reassignments.ts";
import alterUserScramCredentials from "./alter-user-scram-credentials.ts";
import createAcls from "./create-acls.ts";
import createPartitions from "./create-partitions.ts";
import createTopics from "./create-topics.ts";
import deleteAcls from "./delete-acls.ts";
import deleteGroups from "./delete-groups.ts";
import deleteRecords from "./delete-records.ts";
import deleteTopics from "./delete-topics.ts";
import describeAcls from "./describe-acls.ts";
import describeCluster from "./describe-cluster.ts";
import describeConfigs from "./describe-configs.ts";
import describeGroups from "./describe-groups.ts";
import describeLogDirs from "./describe-log-dirs.ts";
import describeUserScramCredentials from "./describe-user-scram-credentials.ts";
import electLeaders from "./elect-leaders.ts";
import fetch from "./fetch.ts";
import findCoordinator from "./find-coordinator.ts";
import heartbeat from "./heartbeat.ts";
import incrementalAlterConfigs from "./incremental-alter-configs.ts";
import initProducerId from "./init-producer-id.ts";
import joinGroup from "./join-group.ts";
import leaveGroup from "./leave-group.ts";
import listGroups from "./list-groups.ts";
import listOffsets from "./list-offsets.ts";
import listPartitionReassignments from "./list-partition-reassignments.ts";
import metadata from "./metadata.ts";
import offsetCommit from "./offset-commit.ts";
import offsetFetch from "./offset-fetch.ts";
import offsetForLeaderEpoch from "./offset-for-leader-epoch.ts";
import produce from "./produce.ts";
import saslAuthenticate from "./sasl-authenticate.ts";
import saslHandshake from "./sasl-handshake.ts";
import syncGroup from "./sync-group.ts";

const SERVED: readonly KafkaApi[] = [
  alterConfigs,
  alterPartitionReassignments,
  alterUserScramCredentials,
  createAcls,
  createPartitions,
  createTopics,
  deleteAcls,
  deleteGroups,
  deleteRecords,
  deleteTopics,
  describeAcls,
  describeCluster,
  describeConfigs,
  describeGroups,
  describeLogDirs,
  describeUserScramCredentials,
  electLeaders,
  fetch,
  findCoordinator,
  heartbeat,
  incrementalAlterConfigs,
  initProducerId,
  joinGroup,
  leaveGroup,
  listGroups,
  listOffsets,
  listPartitionReassignments,
  metadata,
  offsetCommit,
  offsetFetch,
  offsetForLeaderEpoch,
  produce,
  saslAuthenticate,
  saslHandshake,
  syncGroup,
];

/** Every served API, ApiVersions included, by ascending key. */
export const KAFKA_APIS: readonly KafkaApi[] = [...SERVED, apiVersionsApi(SERVED)].sort((a, b) =>
  a.apiKey - b.apiKey
);

/** The dispatch table: API key to its declaration. Two declarations of one key are a bug. */
export const API_TABLE: ReadonlyMap<number, KafkaApi> = new Map(
  KAFKA_APIS.map((a, i, all) => {
    if (i > 0 && all[i - 1].apiKey === a.apiKey) throw new Error(`API ${a.apiKey} declared twice`);
    return [a.apiKey, a];
  }),
);

/** What ApiVersions lists: API key to the inclusive range of versions served. */
export const ADVERTISED: ReadonlyMap<number, readonly [number, number]> = new Map(
  KAFKA_APIS.map((a) => [a.apiKey, a.versions]),
);
