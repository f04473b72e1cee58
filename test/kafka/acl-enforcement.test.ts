// ACLs enforced on the Kafka listener (--authorizer acl) with an unmodified client (kafkajs),
// unauthenticated, so as User:ANONYMOUS: ACLs are set up through CreateAcls on a broker without
// enforcement, which is then restarted on the same data dir with it. Allowed operations work;
// denied ones get Kafka's error codes (29 topic, 30 group, 31 cluster).
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
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;
let kafka: Kafka;

const client = (port: number) =>
  new Kafka({
    brokers: [`127.0.0.1:${port}`],
    clientId: "acl-matrix",
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });

const anon = (
  resourceType: number,
  resourceName: string,
  operation: number,
  pattern = PT.LITERAL,
) => ({
  resourceType,
  resourceName,
  resourcePatternType: pattern,
  principal: "User:ANONYMOUS",
  host: "*",
  operation,
  permissionType: Perm.ALLOW,
});

beforeAll(async () => {
  const setup = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
  try {
    const admin = client(setup.kafkaPort).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "open" }, { topic: "closed" }] });
    await admin.createAcls({
      acl: [
        anon(RT.TOPIC, "open", Op.WRITE),
        anon(RT.TOPIC, "open", Op.READ),
        anon(RT.GROUP, "g-", Op.READ, PT.PREFIXED),
        anon(RT.TOPIC, "closed", Op.DESCRIBE),
      ],
    });
    await admin.disconnect();
  } finally {
    setup.kill();
    await setup.exited;
  }
  broker = await startBrokerProcess({
    dataDir: setup.dataDir,
    args: [
      "--group-initial-rebalance-delay-ms",
      "0",
      "--authorizer",
      "acl",
      "--super-users",
      "User:root",
    ],
  });
  kafka = client(broker.kafkaPort);
}, 60_000);
afterAll(async () => {
  broker?.kill();
  await broker?.exited;
  if (broker) rmSync(broker.dataDir, { recursive: true, force: true });
});

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "none";
  } catch (e) {
    // kafkajs wraps the broker's error (retries exhausted, or one per topic).
    type E = {
      type?: string;
      errors?: E[];
      originalError?: E;
      groups?: { error?: E }[];
      name?: string;
    };
    let x = e as E;
    while (x.type === undefined && (x.originalError ?? x.errors?.[0] ?? x.groups?.[0]?.error)) {
      x = (x.originalError ?? x.errors?.[0] ?? x.groups?.[0]?.error)!;
    }
    return x.type ?? x.name ?? String(e);
  }
}

test("allowed: produce to and consume from 'open' in group g-1, committing offsets", async () => {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: "open", messages: [{ value: "a" }, { value: "b" }] });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: "g-1", maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: "open", fromBeginning: true });
  const got: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void got.push(String(message.value)) });
  const end = Date.now() + 15_000;
  while (got.length < 2 && Date.now() < end) await Bun.sleep(50);
  await consumer.disconnect();
  expect(got).toEqual(["a", "b"]);
}, 30_000);

test("denied: topic, group and cluster operations get Kafka's error codes", async () => {
  const producer = kafka.producer();
  await producer.connect();
  // DESCRIBE on 'closed' lets the client find it; WRITE is missing.
  expect(await errorOf(producer.send({ topic: "closed", messages: [{ value: "x" }] }))).toBe(
    "TOPIC_AUTHORIZATION_FAILED",
  );
  await producer.disconnect();

  const admin = kafka.admin();
  await admin.connect();
  expect(await errorOf(admin.createTopics({ topics: [{ topic: "new" }] }))).toBe(
    "TOPIC_AUTHORIZATION_FAILED",
  );
  expect(await errorOf(admin.deleteTopics({ topics: ["open"] }))).toBe(
    "TOPIC_AUTHORIZATION_FAILED",
  );
  expect(await errorOf(admin.fetchTopicMetadata({ topics: ["nope"] }))).toBe(
    "TOPIC_AUTHORIZATION_FAILED",
  );
  // All topics: only those it may DESCRIBE ('closed' by its ACL, 'open' by READ/WRITE).
  const all = await admin.fetchTopicMetadata();
  expect(all.topics.map((t) => t.name).sort()).toEqual(["closed", "open"]);
  expect((await admin.listGroups()).groups.map((g) => g.groupId)).toEqual(["g-1"]);
  expect(
    await errorOf(admin.describeAcls({
      resourceType: RT.ANY,
      resourcePatternType: PT.ANY,
      operation: Op.ANY,
      permissionType: Perm.ANY,
    })),
  ).toBe("CLUSTER_AUTHORIZATION_FAILED");
  expect(await errorOf(admin.createAcls({ acl: [anon(RT.TOPIC, "closed", Op.WRITE)] }))).toBe(
    "CLUSTER_AUTHORIZATION_FAILED",
  );
  expect(await errorOf(admin.deleteGroups(["g-1"]))).toBe("GROUP_AUTHORIZATION_FAILED");
  await admin.disconnect();

  // A group outside the ACLs (kafkajs reports a refused FindCoordinator as "coordinator not
  // found", without the code): the raw answers, FindCoordinator v3 and DescribeGroups v5.
  const raw = await RawClient.connect(broker.kafkaPort);
  try {
    const fc = await raw.call(10, 3, { key: "other", keyType: 0 });
    expect(fc.errorCode).toBe(30);
    const dg = await raw.call(15, 5, { groups: ["other"], includeAuthorizedOperations: false });
    expect((dg.groups as { errorCode: number }[]).map((g) => g.errorCode)).toEqual([30]);
    const join = await raw.call(11, 5, {
      groupId: "other",
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: "",
      groupInstanceId: null,
      protocolType: "consumer",
      protocols: [],
    });
    expect(join.errorCode).toBe(30);
    // The allowed group's coordinator is found.
    expect((await raw.call(10, 3, { key: "g-1", keyType: 0 })).errorCode).toBe(0);
  } finally {
    raw.close();
  }
}, 30_000);
