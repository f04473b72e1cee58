// ElectLeaders (43): request frames written by hand from Kafka's message definition (no client
// this suite runs sends it), and the handler's answers over a controller made of fakes.
import { describe, expect, test } from "bun:test";
import type { ClusterService } from "../../src/cluster/node.ts";
import type { PartitionManager } from "../../src/core/partition-manager.ts";
import { type ControllerView, ReplicationAdmin } from "../../src/core/replication-admin.ts";
import type { KafkaContext, RequestContext } from "../../src/kafka/context.ts";
import { electLeaders } from "../../src/kafka/handlers/elect-leaders.ts";
import type { Logger } from "../../src/log.ts";
import type { MetadataRecord } from "../../src/meta/records.ts";
import type { PartitionInfo, TopicInfo } from "../../src/meta/store.ts";
import {
  decodeRequestFrame,
  type ElectLeadersRequest,
  encodeRequestFrame,
  schemaFor,
  type Struct,
} from "../../src/protocol/kafka/index.ts";
import { defaultStruct } from "../../src/protocol/kafka/codec.ts";
import { SessionTracker } from "../../src/replication/sessions.ts";

const hex = (parts: string[]) =>
  new Uint8Array(Buffer.from(parts.join("").replace(/\s+/g, ""), "hex"));

describe("ElectLeaders request frames (hand-written)", () => {
  const cases: { version: number; hex: string[]; body: Struct }[] = [
    {
      version: 0, // no election type; header v1
      hex: [
        "002b 0000 00000001 0001 63", // api 43 v0, correlation 1, client "c"
        "00000001 0001 74", // 1 topic "t"
        "00000002 00000000 00000001", // partitions [0, 1]
        "0000ea60", // timeout 60000
      ],
      body: { topicPartitions: [{ topic: "t", partitionId: [0, 1] }], timeoutMs: 60000 },
    },
    {
      version: 1, // unclean, every partition (null)
      hex: ["002b 0001 00000002 0001 63", "01", "ffffffff", "00002710"],
      body: { electionType: 1, topicPartitions: null, timeoutMs: 10000 },
    },
    {
      version: 2, // flexible: header v2, compact arrays and strings, tags
      hex: [
        "002b 0002 00000003 0001 63 00",
        "00", // preferred
        "02 02 74 02 00000003 00", // 1 topic "t": partitions [3], tags
        "00002710",
        "00",
      ],
      body: {
        electionType: 0,
        topicPartitions: [{ topic: "t", partitionId: [3] }],
        timeoutMs: 10000,
      },
    },
  ];
  for (const c of cases) {
    test(`v${c.version} decodes and re-encodes byte for byte`, () => {
      const raw = hex(c.hex);
      const { header, body } = decodeRequestFrame(raw);
      expect(header).toMatchObject({ apiKey: 43, apiVersion: c.version, clientId: "c" });
      expect(body).toMatchObject(c.body);
      const again = encodeRequestFrame(header, body);
      expect(Buffer.from(again.subarray(4)).toString("hex")).toBe(Buffer.from(raw).toString("hex"));
    });
  }
});

// ---- the handler ---------------------------------------------------------------------------------

const silent = {
  debug() {},
  info() {},
  warn() {},
  error() {},
} as unknown as Logger;

function part(partition: number, o: Partial<PartitionInfo> = {}): PartitionInfo {
  return {
    partition,
    leader: 1,
    leaderEpoch: 0,
    partitionEpoch: 0,
    replicas: [1, 2],
    isr: [1, 2],
    ...o,
  };
}

function setup(o: { controller?: boolean } = {}) {
  const topics: TopicInfo[] = [{
    topicId: "id",
    name: "t",
    internal: false,
    configs: {},
    createdAt: 0,
    partitions: [part(0), part(1, { leader: 2 }), part(2, { leader: -1, isr: [2] })],
  }];
  const appended: MetadataRecord[] = [];
  const meta = {
    listTopics: () => topics,
    listBrokers: () => [1, 2].map((nodeId) => ({ nodeId, fenced: false })),
  };
  const partitions = { meta, partitions: () => [] } as unknown as PartitionManager;
  const cluster = {
    nodeId: 1,
    controllerId: () => (o.controller === false ? -1 : 1),
    handleCall: () => {},
    link: () => undefined,
    appendAsController: (r: MetadataRecord) => {
      appended.push(r);
      return Promise.resolve(appended.length);
    },
  } as unknown as ClusterService;
  const controller: ControllerView = {
    active: o.controller !== false,
    sessions: new SessionTracker(),
    counters: { elections: 0, fences: 0, unfences: 0, isrChanges: 0 },
  };
  ReplicationAdmin.attach(partitions, cluster, controller, silent);
  const ctx = { partitions, meta } as unknown as KafkaContext;
  // What the decoder hands the handler: every field, defaults where the test gives none.
  const call = (version: number, body: Struct) =>
    electLeaders(ctx, {
      header: { apiKey: 43, apiVersion: version, correlationId: 1, clientId: "c" },
      body: { ...defaultStruct(schemaFor(43, "request")!.fields, version), ...body },
    } as unknown as RequestContext<ElectLeadersRequest>);
  return { call, appended };
}

describe("ElectLeaders handler", () => {
  test("preferred, named partitions: elected, not needed, unknown", async () => {
    const { call, appended } = setup();
    const r = await call(2, {
      electionType: 0,
      topicPartitions: [{ topic: "t", partitionId: [0, 1, 7] }, { topic: "x", partitionId: [0] }],
      timeoutMs: 1000,
    });
    expect(r.errorCode).toBe(0);
    expect(r.replicaElectionResults).toEqual([
      {
        topic: "t",
        partitionResult: [
          { partitionId: 0, errorCode: 84, errorMessage: "1 leads t-0 already" },
          { partitionId: 1, errorCode: 0, errorMessage: null },
          { partitionId: 7, errorCode: 3, errorMessage: "No such partition as t-7" },
        ],
      },
      {
        topic: "x",
        partitionResult: [{ partitionId: 0, errorCode: 3, errorMessage: "No such topic as x" }],
      },
    ]);
    expect(appended).toMatchObject([{ type: "PartitionChanged", partition: 1, leader: 1 }]);
  });

  test("v0 is preferred; null names every partition and leaves out those not needing one", async () => {
    const { call } = setup();
    const r = await call(0, { topicPartitions: null, timeoutMs: 1000 });
    expect(r.replicaElectionResults).toEqual([{
      topic: "t",
      partitionResult: [
        { partitionId: 1, errorCode: 0, errorMessage: null },
        {
          partitionId: 2,
          errorCode: 80,
          errorMessage: "the preferred replica 1 of t-2 is not in the ISR",
        },
      ],
    }]);
  });

  test("unclean: the offline partition gets a leader", async () => {
    const { call, appended } = setup();
    const r = await call(1, {
      electionType: 1,
      topicPartitions: [{ topic: "t", partitionId: [0, 2] }],
      timeoutMs: 1000,
    });
    const codes = r.replicaElectionResults[0]
      .partitionResult.map((p) => p.errorCode);
    expect(codes).toEqual([84, 0]);
    expect(appended).toMatchObject([{ partition: 2, leader: 2, isr: [2], leaderEpoch: 1 }]);
  });

  test("an unknown election type, and no controller, answer every named partition", async () => {
    const { call } = setup();
    const bad = await call(1, {
      electionType: 5,
      topicPartitions: [{ topic: "t", partitionId: [0] }],
      timeoutMs: 1000,
    });
    expect(bad.errorCode).toBe(42);
    expect(bad.replicaElectionResults).toMatchObject([
      { topic: "t", partitionResult: [{ partitionId: 0, errorCode: 42 }] },
    ]);
    const none = setup({ controller: false });
    const r = await none.call(1, {
      electionType: 0,
      topicPartitions: [{ topic: "t", partitionId: [1] }],
      timeoutMs: 1000,
    });
    expect(r.errorCode).toBe(41);
    expect(r.replicaElectionResults).toMatchObject([
      { topic: "t", partitionResult: [{ partitionId: 1, errorCode: 41 }] },
    ]);
    expect(none.appended).toEqual([]);
  });

  test("an empty list elects nothing", async () => {
    const { call, appended } = setup();
    const r = await call(2, { electionType: 0, topicPartitions: [], timeoutMs: 1000 });
    expect(r).toEqual({ throttleTimeMs: 0, errorCode: 0, replicaElectionResults: [] });
    expect(appended).toEqual([]);
  });
});
