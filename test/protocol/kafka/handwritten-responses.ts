/**
 * Response frames written by hand from the spec, byte by byte, independently of the encoder.
 * Each hex string is a whole frame: i32 size, response header, body.
 */
import type { Struct } from "../../../src/protocol/kafka/index.ts";

export interface HandwrittenResponse {
  apiKey: number;
  version: number;
  correlationId: number;
  body: Struct;
  hex: string[];
}

export const HANDWRITTEN_RESPONSES: HandwrittenResponse[] = [
  {
    // ApiVersions v0, the UNSUPPORTED_VERSION fallback shape (§1.5).
    apiKey: 18,
    version: 0,
    correlationId: 9,
    body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] },
    hex: [
      "00000010", // size 16
      "00000009", // correlation id (header v0)
      "0023", // error 35
      "00000001", // api_keys: 1 entry (i32 count)
      "0012 0000 0004", // key 18, min 0, max 4
    ],
  },
  {
    // ApiVersions v3: flexible body but response header v0 (no header tag byte).
    apiKey: 18,
    version: 3,
    correlationId: 7,
    body: {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }],
      throttleTimeMs: 0,
    },
    hex: [
      "00000013", // size 19
      "00000007", // correlation id, header v0
      "0000", // error
      "02", // compact array: 1 entry
      "0012 0000 0004 00", // entry + its empty tag section
      "00000000", // throttle
      "00", // body tags
    ],
  },
  {
    apiKey: 3,
    version: 1,
    correlationId: 3,
    body: {
      brokers: [{ nodeId: 1, host: "h", port: 9092, rack: null }],
      controllerId: 1,
      topics: [{
        errorCode: 0,
        name: "t",
        isInternal: false,
        partitions: [{
          errorCode: 0,
          partitionIndex: 0,
          leaderId: 1,
          replicaNodes: [1],
          isrNodes: [1],
        }],
      }],
    },
    hex: [
      "00000041", // size 65
      "00000003",
      "00000001", // brokers: 1
      "00000001 0001 68 00002384 ffff", // node 1, "h", 9092, rack null
      "00000001", // controller
      "00000001", // topics: 1
      "0000 0001 74 00", // error, "t", not internal
      "00000001", // partitions: 1
      "0000 00000000 00000001", // error, index 0, leader 1
      "00000001 00000001", // replicas [1]
      "00000001 00000001", // isr [1]
    ],
  },
  {
    // Produce v7: throttle time comes last.
    apiKey: 0,
    version: 7,
    correlationId: 1,
    body: {
      responses: [{
        name: "t",
        partitionResponses: [{
          index: 0,
          errorCode: 0,
          baseOffset: 5,
          logAppendTimeMs: -1,
          logStartOffset: 0,
        }],
      }],
      throttleTimeMs: 0,
    },
    hex: [
      "00000031", // size 49
      "00000001",
      "00000001 0001 74", // 1 topic "t"
      "00000001", // 1 partition
      "00000000 0000", // index 0, no error
      "0000000000000005", // base offset 5
      "ffffffffffffffff", // log append time -1
      "0000000000000000", // log start 0
      "00000000", // throttle
    ],
  },
  {
    // Produce v9: flexible, response header v1.
    apiKey: 0,
    version: 9,
    correlationId: 1,
    body: {
      responses: [{
        name: "t",
        partitionResponses: [{
          index: 0,
          errorCode: 0,
          baseOffset: 5,
          logAppendTimeMs: -1,
          logStartOffset: 0,
          recordErrors: [],
          errorMessage: null,
        }],
      }],
      throttleTimeMs: 0,
    },
    hex: [
      "00000030", // size 48
      "00000001 00", // correlation id + header tags
      "02 02 74", // 1 topic, "t"
      "02", // 1 partition
      "00000000 0000 0000000000000005 ffffffffffffffff 0000000000000000",
      "01", // record errors: empty compact array
      "00", // error message null
      "00", // partition tags
      "00", // topic tags
      "00000000", // throttle
      "00", // body tags
    ],
  },
  {
    // Fetch v12 with a tagged CurrentLeader and 3 record bytes.
    apiKey: 1,
    version: 12,
    correlationId: 2,
    body: {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [{
        topic: "t",
        partitions: [{
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 3,
          lastStableOffset: 3,
          logStartOffset: 0,
          currentLeader: { leaderId: 1, leaderEpoch: 2 },
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: new Uint8Array([0xaa, 0xbb, 0xcc]),
        }],
      }],
    },
    hex: [
      "00000048", // size 72
      "00000002 00",
      "00000000 0000 00000000", // throttle, error, session
      "02 02 74 02", // 1 topic "t", 1 partition
      "00000000 0000", // index, error
      "0000000000000003 0000000000000003 0000000000000000", // hw, lso, log start
      "00", // aborted transactions: null
      "ffffffff", // preferred read replica -1
      "04 aabbcc", // records, compact length 3
      "01 01 09 00000001 00000002 00", // 1 tag: tag 1, 9 bytes: leader 1, epoch 2, no tags
      "00", // topic tags
      "00", // body tags
    ],
  },
  {
    apiKey: 10,
    version: 0,
    correlationId: 6,
    body: { errorCode: 0, nodeId: 1, host: "h", port: 9092 },
    hex: ["00000011", "00000006", "0000 00000001 0001 68 00002384"],
  },
  {
    apiKey: 10,
    version: 4,
    correlationId: 5,
    body: {
      throttleTimeMs: 0,
      coordinators: [{
        key: "g",
        nodeId: 1,
        host: "h",
        port: 9092,
        errorCode: 0,
        errorMessage: null,
      }],
    },
    hex: [
      "0000001b", // size 27
      "00000005 00",
      "00000000", // throttle
      "02 02 67 00000001 02 68 00002384 0000 00 00", // 1 coordinator: "g", node 1, "h", 9092, ok, null msg, tags
      "00",
    ],
  },
  {
    // OffsetFetch v0: no throttle time, no top-level error code, no leader epoch.
    apiKey: 9,
    version: 0,
    correlationId: 3,
    body: {
      topics: [{
        name: "t",
        partitions: [{ partitionIndex: 1, committedOffset: 42, metadata: "m", errorCode: 0 }],
      }],
    },
    hex: [
      "00000020", // size 32
      "00000003", // correlation id (header v0)
      "00000001 0001 74", // 1 topic, "t"
      "00000001", // 1 partition
      "00000001 000000000000002a 0001 6d 0000", // index 1, offset 42, "m", ok
    ],
  },
  {
    // OffsetFetch v7: the top-level error code comes after the topics.
    apiKey: 9,
    version: 7,
    correlationId: 4,
    body: {
      throttleTimeMs: 0,
      topics: [{
        name: "t",
        partitions: [{
          partitionIndex: 0,
          committedOffset: 10,
          committedLeaderEpoch: -1,
          metadata: "",
          errorCode: 0,
        }],
      }],
      errorCode: 0,
    },
    hex: [
      "00000025", // size 37
      "00000004 00",
      "00000000",
      "02 02 74 02", // 1 topic "t", 1 partition
      "00000000 000000000000000a ffffffff 01 0000 00", // index, offset 10, epoch -1, "", ok, tags
      "00", // topic tags
      "0000", // error code
      "00",
    ],
  },
  {
    apiKey: 60,
    version: 0,
    correlationId: 8,
    body: {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      clusterId: "c",
      controllerId: 1,
      brokers: [{ brokerId: 1, host: "h", port: 9092, rack: null }],
      clusterAuthorizedOperations: -2147483648,
    },
    hex: [
      "00000024", // size 36
      "00000008 00",
      "00000000 0000 00", // throttle, error, null message
      "02 63", // cluster id "c"
      "00000001", // controller
      "02 00000001 02 68 00002384 00 00", // 1 broker: id 1, "h", 9092, null rack, tags
      "80000000", // authorized operations INT32_MIN
      "00",
    ],
  },
  {
    apiKey: 22,
    version: 4,
    correlationId: 10,
    body: { throttleTimeMs: 0, errorCode: 0, producerId: 4000, producerEpoch: 0 },
    hex: ["00000016", "0000000a 00", "00000000 0000 0000000000000fa0 0000 00"],
  },
  {
    apiKey: 11,
    version: 5,
    correlationId: 11,
    body: {
      throttleTimeMs: 0,
      errorCode: 0,
      generationId: 1,
      protocolName: "r",
      leader: "m",
      memberId: "m",
      members: [{ memberId: "m", groupInstanceId: null, metadata: new Uint8Array([1, 2]) }],
    },
    hex: [
      "00000026", // size 38
      "0000000b",
      "00000000 0000 00000001", // throttle, error, generation 1
      "0001 72 0001 6d 0001 6d", // protocol "r", leader "m", member "m"
      "00000001 0001 6d ffff 00000002 0102", // 1 member: "m", null instance id, 2 metadata bytes
    ],
  },
  {
    // OffsetCommit v0: no throttle time (v3+); per-partition error codes.
    apiKey: 8,
    version: 0,
    correlationId: 12,
    body: {
      topics: [{
        name: "t",
        partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 25 }],
      }],
    },
    hex: [
      "0000001b", // size 27
      "0000000c",
      "00000001 0001 74", // 1 topic "t"
      "00000002", // 2 partitions
      "00000000 0000", // 0: ok
      "00000001 0019", // 1: UNKNOWN_MEMBER_ID
    ],
  },
  {
    // OffsetCommit v1: the v0 layout (the request gained generation, member and timestamp).
    apiKey: 8,
    version: 1,
    correlationId: 13,
    body: {
      topics: [{ name: "t", partitions: [{ partitionIndex: 2, errorCode: 22 }] }],
    },
    hex: [
      "00000015", // size 21
      "0000000d",
      "00000001 0001 74", // 1 topic "t"
      "00000001 00000002 0016", // 1 partition: 2, ILLEGAL_GENERATION
    ],
  },
  {
    // ElectLeaders v0: no top-level error code; a null message.
    apiKey: 43,
    version: 0,
    correlationId: 5,
    body: {
      throttleTimeMs: 0,
      replicaElectionResults: [{
        topic: "t",
        partitionResult: [{ partitionId: 0, errorCode: 84, errorMessage: null }],
      }],
    },
    hex: [
      "0000001b", // size 27
      "00000005",
      "00000000", // throttle
      "00000001 0001 74", // 1 topic "t"
      "00000001", // 1 partition
      "00000000 0054 ffff", // 0: ELECTION_NOT_NEEDED, null message
    ],
  },
  {
    // ElectLeaders v1: the top-level error code follows the throttle time.
    apiKey: 43,
    version: 1,
    correlationId: 6,
    body: {
      throttleTimeMs: 0,
      errorCode: 0,
      replicaElectionResults: [{
        topic: "t",
        partitionResult: [{ partitionId: 1, errorCode: 80, errorMessage: "m" }],
      }],
    },
    hex: [
      "0000001e", // size 30
      "00000006",
      "00000000 0000", // throttle, error
      "00000001 0001 74", // 1 topic "t"
      "00000001", // 1 partition
      "00000001 0050 0001 6d", // 1: PREFERRED_LEADER_NOT_AVAILABLE, "m"
    ],
  },
  {
    // ElectLeaders v2: flexible (response header v1, compact arrays and strings, tags).
    apiKey: 43,
    version: 2,
    correlationId: 7,
    body: {
      throttleTimeMs: 0,
      errorCode: 0,
      replicaElectionResults: [{
        topic: "t",
        partitionResult: [{ partitionId: 0, errorCode: 0, errorMessage: null }],
      }],
    },
    hex: [
      "00000019", // size 25
      "00000007 00", // correlation id, header tags
      "00000000 0000", // throttle, error
      "02 02 74", // 1 topic "t"
      "02 00000000 0000 00 00", // 1 partition: 0, no error, null message, tags
      "00", // topic tags
      "00", // body tags
    ],
  },
];
