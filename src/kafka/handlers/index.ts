// The handler of every API the listener serves. ADVERTISED (src/protocol/kafka/apis.ts) lists
// exactly these keys; a test keeps the two in step.
import { ApiKey } from "../../protocol/kafka/index.ts";
import type { Handler } from "../context.ts";
import { createPartitions, createTopics, deleteTopics } from "./admin.ts";
import { apiVersions, describeCluster, findCoordinator, metadata } from "./cluster.ts";
import { alterConfigs, describeConfigs, incrementalAlterConfigs } from "./configs.ts";
import { electLeaders } from "./elect-leaders.ts";
import { fetch } from "./fetch.ts";
import {
  deleteGroups,
  describeGroups,
  heartbeat,
  joinGroup,
  leaveGroup,
  listGroups,
  offsetCommit,
  offsetFetch,
  syncGroup,
} from "./groups.ts";
import { deleteRecords, listOffsets, offsetForLeaderEpoch } from "./offsets.ts";
import { produce } from "./produce.ts";
import { initProducerId } from "./producer-id.ts";

export const HANDLERS: ReadonlyMap<number, Handler> = new Map<number, Handler>([
  [ApiKey.Produce, produce],
  [ApiKey.Fetch, fetch],
  [ApiKey.ListOffsets, listOffsets],
  [ApiKey.Metadata, metadata],
  [ApiKey.OffsetCommit, offsetCommit],
  [ApiKey.OffsetFetch, offsetFetch],
  [ApiKey.FindCoordinator, findCoordinator],
  [ApiKey.JoinGroup, joinGroup],
  [ApiKey.Heartbeat, heartbeat],
  [ApiKey.LeaveGroup, leaveGroup],
  [ApiKey.SyncGroup, syncGroup],
  [ApiKey.DescribeGroups, describeGroups],
  [ApiKey.ListGroups, listGroups],
  [ApiKey.ApiVersions, apiVersions],
  [ApiKey.CreateTopics, createTopics],
  [ApiKey.DeleteTopics, deleteTopics],
  [ApiKey.DeleteRecords, deleteRecords],
  [ApiKey.InitProducerId, initProducerId],
  [ApiKey.OffsetForLeaderEpoch, offsetForLeaderEpoch],
  [ApiKey.DescribeConfigs, describeConfigs],
  [ApiKey.AlterConfigs, alterConfigs],
  [ApiKey.CreatePartitions, createPartitions],
  [ApiKey.DeleteGroups, deleteGroups],
  [ApiKey.ElectLeaders, electLeaders],
  [ApiKey.IncrementalAlterConfigs, incrementalAlterConfigs],
  [ApiKey.DescribeCluster, describeCluster],
]);
