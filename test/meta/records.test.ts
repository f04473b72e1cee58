import { describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import { encodeRecord, type MetadataRecord, parseRecord } from "../../src/meta/records.ts";

const ID = "0b0c8a4e-2f7d-4c3e-9a55-1d2e3f4a5b6c";
const GOOD: MetadataRecord[] = [
  { type: "NoOp" },
  {
    type: "BrokerRegistered",
    nodeId: 1,
    host: "h",
    kafkaPort: 1,
    httpPort: 2,
    clusterPort: 3,
    rack: null,
    timestamp: 4,
  },
  { type: "BrokerFenced", nodeId: 1, fenced: true },
  {
    type: "TopicCreated",
    topicId: ID,
    name: "t",
    internal: false,
    partitions: [{ partition: 0, replicas: [1], leader: 1, leaderEpoch: 0, isr: [1] }],
    configs: { "retention.ms": "1" },
    timestamp: 5,
  },
  { type: "TopicDeleted", topicId: ID, name: "t" },
  {
    type: "PartitionsCreated",
    topicId: ID,
    partitions: [{ partition: 1, replicas: [1], leader: -1, leaderEpoch: 0, isr: [] }],
  },
  { type: "PartitionChanged", topicId: ID, partition: 0, leader: 2, leaderEpoch: 1, isr: [2] },
  { type: "TopicConfigChanged", topicId: ID, set: {}, delete: ["retention.ms"] },
];

describe("metadata records", () => {
  test("every record type round-trips through its JSON encoding", () => {
    for (const r of GOOD) expect(parseRecord(encodeRecord(r))).toEqual(r);
  });

  const BAD: unknown[] = [
    "not json",
    "null",
    "[]",
    { type: "Nope" },
    { type: "BrokerFenced", nodeId: -1, fenced: true },
    { type: "BrokerFenced", nodeId: 1, fenced: "yes" },
    { type: "TopicDeleted", topicId: "not-a-uuid", name: "t" },
    { type: "TopicDeleted", topicId: ID.toUpperCase(), name: "t" },
    { ...GOOD[3], partitions: [] },
    {
      ...GOOD[3],
      partitions: [{ partition: 0, replicas: [1, 1], leader: 1, leaderEpoch: 0, isr: [1] }],
    },
    { ...GOOD[3], configs: { "retention.ms": 1 } },
    { ...GOOD[1], kafkaPort: 65536 },
    { ...GOOD[1], host: 5 },
    { ...GOOD[7], delete: [1] },
    { type: "PartitionChanged", topicId: ID, partition: 0, leaderEpoch: -1 },
  ];
  BAD.forEach((b, i) => {
    test(`malformed record ${i} is refused with INVALID_REQUEST`, () => {
      let err: unknown;
      try {
        parseRecord(b);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(MetaError);
      expect((err as MetaError).errorCode).toBe(42);
    });
  });
});
