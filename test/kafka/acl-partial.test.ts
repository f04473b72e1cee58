// ACLs refuse per item on the Kafka listener, as Kafka does: a request naming a topic (or group,
// or config resource) the principal may not touch gets TOPIC_AUTHORIZATION_FAILED (or the
// group's, the cluster's code) for that item, and the other items are served. Checked with raw
// frames (each API's answer exactly), kafkajs (admin calls over two topics) and confluent-kafka
// (a consumer assigned an allowed and a refused partition keeps reading the allowed one).
// Unauthenticated, so as User:ANONYMOUS; ACLs are created on a broker without enforcement, which
// is then restarted on the same data dir with it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import {
  AclOperationTypes as Op,
  AclPermissionTypes as Perm,
  AclResourceTypes as RT,
  Kafka,
  logLevel,
  ResourcePatternTypes as PT,
} from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import type { Struct } from "../../src/protocol/kafka/index.ts";
import { RawClient } from "./raw-client.ts";

const PYTHON = "/usr/bin/python3";
let broker: RunningBroker;
let raw: RawClient;
/** 'hidden''s topic id, learnt before enforcement. */
let hiddenId: string;

const client = (port: number) =>
  new Kafka({
    brokers: [`127.0.0.1:${port}`],
    clientId: "acl-partial",
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });

const anon = (type: number, name: string, operation: number, pattern = PT.LITERAL) => ({
  resourceType: type,
  resourceName: name,
  resourcePatternType: pattern,
  principal: "User:ANONYMOUS",
  host: "*",
  operation,
  permissionType: Perm.ALLOW,
});

const batch = (value: string) =>
  encodeRecordBatch({ records: [{ value: new TextEncoder().encode(value) }], baseTimestamp: 1 });

const produce = (topics: string[], value: string) => ({
  transactionalId: null,
  acks: -1,
  timeoutMs: 5000,
  topicData: topics.map((name) => ({
    name,
    partitionData: [{ index: 0, records: batch(value) }],
  })),
});

const commit = (groupId: string, topics: string[]) => ({
  groupId,
  generationIdOrMemberEpoch: -1,
  memberId: "",
  groupInstanceId: null,
  topics: topics.map((name) => ({
    name,
    partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: "" }],
  })),
});

/** name → the error code of each partition of that topic in an answer's list. */
function codes(topics: unknown, nameKey = "name", parts = "partitions"): Record<string, number[]> {
  return Object.fromEntries(
    (topics as Struct[]).map((t) => [
      String(t[nameKey]),
      (t[parts] as Struct[]).map((p) => p.errorCode as number),
    ]),
  );
}

beforeAll(async () => {
  const setup = await startBrokerProcess({});
  try {
    const admin = client(setup.kafkaPort).admin();
    await admin.connect();
    await admin.createTopics({
      topics: ["open", "closed", "hidden", "del-ok-1", "del-no-1"].map((topic) => ({ topic })),
    });
    await admin.createAcls({
      acl: [
        anon(RT.TOPIC, "open", Op.ALL),
        anon(RT.TOPIC, "closed", Op.DESCRIBE),
        anon(RT.TOPIC, "del-", Op.DESCRIBE, PT.PREFIXED),
        anon(RT.TOPIC, "del-ok-", Op.DELETE, PT.PREFIXED),
        anon(RT.TOPIC, "new-", Op.CREATE, PT.PREFIXED),
        anon(RT.TOPIC, "new-", Op.DESCRIBE, PT.PREFIXED),
        anon(RT.TOPIC, "auto-", Op.DESCRIBE, PT.PREFIXED),
        anon(RT.GROUP, "g-", Op.ALL, PT.PREFIXED),
      ],
    });
    await admin.disconnect();
    // A commit on 'hidden' made before enforcement: OffsetFetch must not show it now.
    const r = await RawClient.connect(setup.kafkaPort);
    const c = await r.call(8, 8, commit("g-1", ["hidden"]));
    expect(codes(c.topics)).toEqual({ hidden: [0] });
    const md = await r.call(3, 12, { topics: [{ name: "hidden" }] });
    hiddenId = (md.topics as Struct[])[0].topicId as string;
    r.close();
  } finally {
    setup.kill();
    await setup.exited;
  }
  broker = await startBrokerProcess({
    dataDir: setup.dataDir,
    args: ["--authorizer", "acl", "--super-users", "User:root"],
  });
  raw = await RawClient.connect(broker.kafkaPort);
}, 60_000);
afterAll(async () => {
  raw?.close();
  broker?.kill();
  await broker?.exited;
  if (broker) rmSync(broker.dataDir, { recursive: true, force: true });
});

// 'closed' may be described (so clients send requests naming it), not written or read; 'hidden'
// has no ACL at all.
test("Produce, Fetch and ListOffsets over an allowed and a refused topic", async () => {
  const p = await raw.call(0, 8, produce(["open", "closed"], "a"));
  expect(codes(p.responses, "name", "partitionResponses")).toEqual({ open: [0], closed: [29] });
  const fetched = await raw.call(1, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: ["open", "closed"].map((topic) => ({
      topic,
      partitions: [{
        partition: 0,
        fetchOffset: 0,
        logStartOffset: -1,
        partitionMaxBytes: 1 << 20,
      }],
    })),
    forgottenTopicsData: [],
    rackId: "",
  });
  expect(fetched.errorCode).toBe(0);
  expect(codes(fetched.responses, "topic")).toEqual({ open: [0], closed: [29] });
  const open = (fetched.responses as Struct[]).find((t) => t.topic === "open")!;
  expect(((open.partitions as Struct[])[0].records as Uint8Array).length).toBeGreaterThan(0);
  const lo = await raw.call(2, 5, {
    replicaId: -1,
    isolationLevel: 0,
    topics: ["open", "hidden"].map((name) => ({
      name,
      partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }],
    })),
  });
  expect(codes(lo.topics)).toEqual({ open: [0], hidden: [29] });
  const openEnd = (lo.topics as Struct[]).find((t) => t.name === "open")!;
  expect((openEnd.partitions as Struct[])[0].offset).toBe(1);
});

test("OffsetCommit and OffsetFetch: the refused topic alone; commits of it are not shown", async () => {
  const c = await raw.call(8, 8, commit("g-1", ["open", "closed"]));
  expect(codes(c.topics)).toEqual({ open: [0], closed: [29] });
  const named = await raw.call(9, 7, {
    groupId: "g-1",
    topics: ["open", "hidden"].map((name) => ({ name, partitionIndexes: [0] })),
    requireStable: false,
  });
  expect(named.errorCode).toBe(0);
  expect(codes(named.topics)).toEqual({ open: [0], hidden: [29] });
  const hidden = (named.topics as Struct[]).find((t) => t.name === "hidden")!;
  expect((hidden.partitions as Struct[])[0].committedOffset).toBe(-1);
  // Every topic of the group: 'hidden' (committed before enforcement) is left out.
  const all = await raw.call(9, 7, { groupId: "g-1", topics: null, requireStable: false });
  expect(Object.keys(codes(all.topics))).toEqual(["open"]);
  // v8: per group; a group outside the ACLs is refused alone.
  const v8 = await raw.call(9, 8, {
    groups: [
      { groupId: "g-1", topics: null },
      { groupId: "other", topics: null },
    ],
    requireStable: false,
  });
  const byGroup = Object.fromEntries(
    (v8.groups as Struct[]).map((g) => [g.groupId, [g.errorCode, Object.keys(codes(g.topics))]]),
  );
  expect(byGroup).toEqual({ "g-1": [0, ["open"]], other: [30, []] });
});

test("Metadata and DescribeConfigs: allowed topics described, the rest refused", async () => {
  const md = await raw.call(3, 9, {
    topics: [{ name: "open" }, { name: "secret" }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  expect((md.brokers as Struct[]).length).toBe(1);
  expect(Object.fromEntries((md.topics as Struct[]).map((t) => [t.name, t.errorCode]))).toEqual({
    open: 0,
    secret: 29,
  });
  // Every named topic refused: the brokers are still told (v1+).
  const none = await raw.call(3, 9, {
    topics: [{ name: "secret" }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  expect((none.brokers as Struct[]).length).toBe(1);
  // Auto-creation needs CREATE too: 'new-auto' may be created, 'auto-x' only described.
  const auto = async () =>
    Object.fromEntries(
      ((await raw.call(3, 9, {
        topics: [{ name: "new-auto" }, { name: "auto-x" }],
        allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      })).topics as Struct[]).map((t) => [t.name, t.errorCode]),
    );
  expect((await auto())["auto-x"]).toBe(29);
  expect(await auto()).toEqual({ "new-auto": 0, "auto-x": 29 });
  // Named by id (Metadata v10+, DeleteTopics v6): checked as the topic's name, not told.
  const byId = await raw.call(3, 12, {
    topics: [{ topicId: hiddenId, name: null }, { name: "open" }],
  });
  expect((byId.topics as Struct[]).map((t) => [t.name, t.errorCode])).toEqual([
    [null, 29],
    ["open", 0],
  ]);
  const del = await raw.call(20, 6, {
    topics: [{ topicId: hiddenId, name: null }],
    timeoutMs: 5000,
  });
  expect((del.responses as Struct[]).map((t) => [t.name, t.errorCode])).toEqual([[null, 29]]);
  const dc = await raw.call(32, 4, {
    resources: ["open", "closed"].map((resourceName) => ({
      resourceType: 2,
      resourceName,
      configurationKeys: null,
    })),
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const res = Object.fromEntries((dc.results as Struct[]).map((r) => [r.resourceName, r]));
  expect([res.open.errorCode, res.closed.errorCode]).toEqual([0, 29]);
  expect((res.open.configs as Struct[]).length).toBeGreaterThan(0);
});

test("kafkajs: CreateTopics and DeleteTopics act on the allowed topics of a request", async () => {
  const admin = client(broker.kafkaPort).admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({ topics: [{ topic: "new-1" }, { topic: "other" }] })
      .then(() => "none", (e) => JSON.stringify(e.errors?.map((x: { type: string }) => x.type)));
    expect(created).toBe('["TOPIC_AUTHORIZATION_FAILED"]');
    const deleted = await admin.deleteTopics({ topics: ["del-ok-1", "del-no-1"] })
      .then(() => "none", (e) => e.type ?? e.name);
    expect(deleted).toBe("TOPIC_AUTHORIZATION_FAILED");
    const left = await admin.fetchTopicMetadata({ topics: ["new-1", "del-no-1"] });
    expect(left.topics.map((t) => t.name).sort()).toEqual(["del-no-1", "new-1"]);
    expect(
      (await raw.call(3, 9, {
        topics: [{ name: "del-ok-1" }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      })).topics,
    ).toMatchObject([{ name: "del-ok-1", errorCode: 3 }]);
  } finally {
    await admin.disconnect();
  }
}, 30_000);

test(
  "confluent-kafka: a consumer of an allowed and a refused partition reads the allowed one",
  () => {
    const script = `
import json, sys, time
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "g-py", "enable.auto.commit": False})
c.assign([TopicPartition("open", 0, 0), TopicPartition("closed", 0, 0)])
values, errors, end = [], set(), time.time() + 20
while time.time() < end and not (values and errors):
    m = c.poll(0.2)
    if m is None: continue
    if m.error(): errors.add(m.error().name())
    else: values.append(m.value().decode())
c.close()
print(json.dumps({"values": values, "errors": sorted(errors)}))
`;
    const p = Bun.spawnSync([PYTHON, "-c", script, `127.0.0.1:${broker.kafkaPort}`], {
      timeout: 40_000,
    });
    const out = JSON.parse(p.stdout.toString().trim().split("\n").pop()!);
    expect(out).toEqual({ values: ["a"], errors: ["TOPIC_AUTHORIZATION_FAILED"] });
  },
  45_000,
);
