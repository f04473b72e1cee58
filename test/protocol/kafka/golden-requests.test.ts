/**
 * Golden request frames captured from real clients (scripts/capture/, checked in as hex in
 * golden/requests.json; never produced by this codec). Every frame must decode and re-encode to
 * the identical bytes; selected frames are checked against hand-written expectations.
 */
import { describe, expect, test } from "bun:test";
import {
  apiName,
  decodeRequestFrame,
  encodeRequestFrame,
  type Struct,
} from "../../../src/protocol/kafka/index.ts";
import GOLDEN from "./golden/requests.json";

export interface GoldenFrame {
  client: string;
  apiKey: number;
  apiVersion: number;
  hex: string;
}

const frames = GOLDEN as GoldenFrame[];

function bytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

function all(client: string, apiKey: number, apiVersion: number): Uint8Array[] {
  const fs = frames.filter((x) =>
    x.client === client && x.apiKey === apiKey && x.apiVersion === apiVersion
  );
  if (fs.length === 0) throw new Error(`no golden frame ${client} ${apiKey} v${apiVersion}`);
  return fs.map((f) => bytes(f.hex));
}

function first(client: string, apiKey: number, apiVersion: number): Uint8Array {
  return all(client, apiKey, apiVersion)[0];
}

describe("every captured frame decodes and re-encodes byte for byte", () => {
  for (const f of frames) {
    test(`${f.client} ${apiName(f.apiKey)} v${f.apiVersion} (${f.hex.length / 2} bytes)`, () => {
      const raw = bytes(f.hex);
      const { header, body } = decodeRequestFrame(raw);
      expect(header.apiKey).toBe(f.apiKey);
      expect(header.apiVersion).toBe(f.apiVersion);
      const again = encodeRequestFrame(header, body);
      expect(Buffer.from(again.subarray(4)).toString("hex")).toBe(f.hex);
      expect(new DataView(again.buffer, again.byteOffset).getInt32(0)).toBe(raw.length);
    });
  }
});

describe("hand-written expectations for captured frames", () => {
  test("librdkafka ApiVersions v3: header v2, software name and version", () => {
    const { header, body } = decodeRequestFrame(first("kcat", 18, 3));
    expect(header).toMatchObject({ headerVersion: 2, clientId: "rdkafka" });
    expect(body).toEqual({ clientSoftwareName: "librdkafka", clientSoftwareVersion: "2.0.2" });
  });
  test("kafka-python Metadata v0 probe: empty topic list", () => {
    const { header, body } = decodeRequestFrame(first("kafka-python", 3, 0));
    expect(header.clientId).toMatch(/^kafka-python/);
    expect(body.topics).toEqual([]);
  });
  test("kafkajs Produce v7: acks -1, default 30 s timeout, one partition of records", () => {
    const { header, body } = decodeRequestFrame(first("kafkajs", 0, 7));
    expect(header.clientId).toBe("kjs-capture");
    expect(body).toMatchObject({ transactionalId: null, acks: -1, timeoutMs: 30000 });
    const td = body.topicData as {
      name: string;
      partitionData: { index: number; records: Uint8Array }[];
    }[];
    expect(td[0].name).toBe("kj-a");
    const records = td[0].partitionData[0].records;
    expect(records).toBeInstanceOf(Uint8Array);
    expect(records[16]).toBe(2); // RecordBatch magic 2
  });
  test("librdkafka Fetch v11: consumer replica id, read_committed, sessionless, 500 ms wait", () => {
    const { body } = decodeRequestFrame(first("kcat", 1, 11));
    expect(body).toMatchObject({
      replicaId: -1,
      maxWaitMs: 500,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      rackId: "",
    });
    const t = (body.topics as { topic: string; partitions: Record<string, number>[] }[])[0];
    expect(t.topic).toBe("kc-a");
    expect(t.partitions[0]).toMatchObject({
      partition: 0,
      currentLeaderEpoch: -1,
      logStartOffset: -1,
    });
  });
  test("kafka-python Fetch v4: read_uncommitted, 500 ms wait", () => {
    const { body } = decodeRequestFrame(first("kafka-python", 1, 4));
    expect(body).toMatchObject({ replicaId: -1, maxWaitMs: 500, isolationLevel: 0 });
  });
  test("kafka-python JoinGroup v2: 10 s session, 300 s rebalance, range and roundrobin", () => {
    const { body } = decodeRequestFrame(first("kafka-python", 11, 2));
    expect(body).toMatchObject({
      groupId: "kp-group",
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: 300000,
      memberId: "",
      protocolType: "consumer",
    });
    expect((body.protocols as { name: string }[]).map((p) => p.name)).toEqual([
      "range",
      "roundrobin",
    ]);
  });
  test("confluent-kafka OffsetFetch v7: flexible, RequireStable true", () => {
    const { header, body } = decodeRequestFrame(first("confluent", 9, 7));
    expect(header.headerVersion).toBe(2);
    expect(body).toMatchObject({ groupId: "cf-group", requireStable: true });
    expect(body.topics).toEqual([{ name: "cf-a", partitionIndexes: [0] }]);
  });
  test("librdkafka InitProducerId v4: idempotent producer asks for a new pid", () => {
    const { header, body } = decodeRequestFrame(first("kcat", 22, 4));
    expect(header.headerVersion).toBe(2);
    expect(body).toMatchObject({ transactionalId: null, producerId: -1, producerEpoch: -1 });
  });
  test("kafkajs CreateTopics v3: replication factor -1, config entries", () => {
    const { body } = decodeRequestFrame(first("kafkajs", 19, 3));
    expect(body.topics).toEqual([{
      name: "kj-t",
      numPartitions: 2,
      replicationFactor: -1,
      assignments: [],
      configs: [{ name: "retention.ms", value: "1000" }],
    }]);
  });
  test("kafkajs LeaveGroup v3: batch member list", () => {
    const { body } = decodeRequestFrame(first("kafkajs", 13, 3));
    expect(body.groupId).toBe("kj-group");
    expect((body.members as { memberId: string }[]).length).toBe(1);
  });
  test("librdkafka OffsetCommit v7: generation and member from the join", () => {
    const { body } = decodeRequestFrame(first("confluent", 8, 7));
    expect(body).toMatchObject({ groupId: "cf-group", groupInstanceId: null });
    expect(body.generationIdOrMemberEpoch).toBeGreaterThan(0);
    expect(body.memberId).toMatch(/^member-/);
  });
  test("kafka-python OffsetCommit v0 and v1 (api_version 0.8.1 / 0.8.2): simple commits", () => {
    const v0 = decodeRequestFrame(first("kafka-python", 8, 0));
    expect(v0.header.clientId).toBe("kafka-python-2.0.2");
    // v0 has no generation or member on the wire: the decoder fills the simple-commit defaults.
    expect(v0.body).toMatchObject({
      groupId: "kp-old",
      generationIdOrMemberEpoch: -1,
      memberId: "",
    });
    const v1 = decodeRequestFrame(first("kafka-python", 8, 1)).body;
    expect(v1).toMatchObject({ groupId: "kp-old", generationIdOrMemberEpoch: -1, memberId: "" });
    for (const b of [v0.body, v1]) {
      expect(b.topics).toEqual([{
        name: "kp-a",
        partitions: [{
          partitionIndex: 0,
          committedOffset: 2,
          committedLeaderEpoch: -1,
          commitTimestamp: -1,
          committedMetadata: "kp-meta",
        }],
      }]);
    }
  });
  test("sarama 1.22 OffsetCommit v1 (Retention 0): member, generation, timestamp -1", () => {
    for (const f of all("sarama", 8, 1)) {
      const { header, body } = decodeRequestFrame(f);
      expect(header.clientId).toBe("go-compat-a");
      expect(body.generationIdOrMemberEpoch).toBeGreaterThan(0);
      expect(body.memberId).toMatch(/^go-compat-a-/);
      const parts = (body.topics as { partitions: Struct[] }[])[0].partitions;
      expect(parts.map((p) => p.commitTimestamp)).toEqual(parts.map(() => -1));
    }
  });
  test("platformatic Produce v11: idempotent batch carries the producer id it was given", () => {
    const [idem, plain] = all("platformatic", 0, 11).map((f) => decodeRequestFrame(f));
    expect(idem.header).toMatchObject({ headerVersion: 2, clientId: "plt-producer" });
    expect(idem.body).toMatchObject({ transactionalId: null, acks: -1, timeoutMs: 4000 });
    expect(plain.body).toMatchObject({ acks: 1 });
    const td = idem.body.topicData as { partitionData: { records: Uint8Array }[] }[];
    const batch = td[0].partitionData[0].records;
    const dv = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
    expect(batch[16]).toBe(2); // magic
    expect(dv.getBigInt64(43)).toBe(4000n); // producer id from the fake broker's InitProducerId
    expect(dv.getInt32(53)).toBe(0); // first sequence
  });
  test("platformatic JoinGroup v9: empty member id, then the one the broker required", () => {
    const joins = all("platformatic", 11, 9).map((f) => decodeRequestFrame(f).body);
    expect(joins.map((b) => b.memberId)).toEqual(["", "member-1"]);
    expect(joins[0]).toMatchObject({
      groupId: "pl-group",
      sessionTimeoutMs: 6000,
      groupInstanceId: null,
      protocolType: "consumer",
      reason: "",
    });
    expect((joins[0].protocols as { name: string }[]).map((p) => p.name)).toEqual(["roundrobin"]);
  });
  test("platformatic OffsetFetch v9: admin asks for all topics of a group, requireStable", () => {
    const bodies = all("platformatic", 9, 9).map((f) => decodeRequestFrame(f).body);
    const admin = bodies.find((b) => b.requireStable === true)!;
    expect(admin.groups).toEqual([{
      groupId: "pl-group",
      memberId: null,
      memberEpoch: -1,
      topics: null,
    }]);
  });
  test("platformatic IncrementalAlterConfigs v1: SET and DELETE (null value)", () => {
    const { body } = decodeRequestFrame(first("platformatic", 44, 1));
    expect(body).toEqual({
      resources: [{
        resourceType: 2,
        resourceName: "pl-t",
        configs: [
          { name: "retention.ms", configOperation: 0, value: "3000" },
          { name: "cleanup.policy", configOperation: 1, value: null },
        ],
      }],
      validateOnly: false,
    });
  });
  test("platformatic LeaveGroup v5: member list with a reason", () => {
    const bodies = all("platformatic", 13, 5).map((f) => decodeRequestFrame(f).body);
    const members = bodies.map((b) => (b.members as { reason: string | null }[])[0].reason);
    expect(members.sort()).toEqual(["capture", null].sort());
  });
  test("platformatic API functions: ApiVersions v4, DescribeCluster v1, OffsetForLeaderEpoch v4", () => {
    const av = decodeRequestFrame(first("platformatic-api", 18, 4));
    expect(av.header).toMatchObject({ headerVersion: 2, clientId: "plt-api" });
    expect(av.body).toEqual({
      clientSoftwareName: "platformatic-kafka",
      clientSoftwareVersion: "2.12.1",
    });
    expect(decodeRequestFrame(first("platformatic-api", 60, 1)).body).toEqual({
      includeClusterAuthorizedOperations: true,
      endpointType: 1,
    });
    const { body } = decodeRequestFrame(first("platformatic-api", 23, 4));
    expect(body).toEqual({
      replicaId: -1,
      topics: [{
        topic: "pl-a",
        partitions: [
          { partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 },
          { partition: 1, currentLeaderEpoch: -1, leaderEpoch: 0 },
        ],
      }],
    });
  });
});
