// An unmodified client (kafkajs) against a real broker process: produce/consume, idempotence,
// a group whose members come and go, commit and resume, admin, configs, and the HTTP door.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Consumer, Kafka, logLevel } from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

let broker: RunningBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
  kafka = new Kafka({
    brokers: [`127.0.0.1:${broker.kafkaPort}`],
    clientId: "kafkajs-test",
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

/** Resolve when `pred` holds, polling every 50 ms, or fail after `ms`. */
async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await Bun.sleep(50);
  }
}

test(
  "produce keyed records with headers (acks 1 and all, idempotent) and consume them back",
  async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "pc", numPartitions: 3 }] });
    // The idempotent producer needs acks=all; acks=1 goes through a plain producer.
    const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 5 });
    const plain = kafka.producer();
    await idempotent.connect();
    await plain.connect();
    const sent = new Map<string, string>();
    for (let b = 0; b < 10; b++) {
      const messages = Array.from({ length: 50 }, (_, i) => {
        const key = `k${b}-${i}`;
        sent.set(key, `value-${b}-${i}`);
        return { key, value: `value-${b}-${i}`, headers: { h: `hv${i}` } };
      });
      if (b % 2) await plain.send({ topic: "pc", acks: 1, messages });
      else await idempotent.send({ topic: "pc", acks: -1, messages });
    }
    await idempotent.disconnect();
    await plain.disconnect();
    const consumer = kafka.consumer({ groupId: "pc-g", maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic: "pc", fromBeginning: true });
    const got = new Map<string, string>();
    let badHeader = 0;
    await consumer.run({
      eachMessage: async ({ message }) => {
        got.set(String(message.key), String(message.value));
        if (String(message.headers?.h ?? "").slice(0, 2) !== "hv") badHeader++;
      },
    });
    await until(() => got.size >= sent.size, 20_000, "all records consumed");
    await consumer.disconnect();
    expect(got).toEqual(sent);
    expect(badHeader).toBe(0);
    const offsets = await admin.fetchTopicOffsets("pc");
    expect(offsets.reduce((n, o) => n + Number(o.high), 0)).toBe(500);
    await admin.disconnect();
  },
  40_000,
);

test(
  "a group of three: one leaves mid-stream, another joins; every record processed once after commit",
  async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "grp", numPartitions: 6 }] });
    const producer = kafka.producer();
    await producer.connect();
    const total = 600;
    const seen = new Map<string, number>();
    const mk = async (name: string) => {
      const c = kafka.consumer({
        groupId: "grp-g",
        maxWaitTimeInMs: 200,
        sessionTimeout: 10_000,
        heartbeatInterval: 500,
        rebalanceTimeout: 10_000,
      });
      await c.connect();
      await c.subscribe({ topic: "grp", fromBeginning: true });
      await c.run({
        eachMessage: async ({ message }) => {
          const k = String(message.value);
          seen.set(k, (seen.get(k) ?? 0) + 1);
          void name;
        },
      });
      return c;
    };
    const members: Consumer[] = [await mk("a"), await mk("b"), await mk("c")];
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i += 50) {
        await producer.send({
          topic: "grp",
          messages: Array.from({ length: 50 }, (_, j) => ({ key: `${i + j}`, value: `r${i + j}` })),
        });
      }
    };
    await send(0, 200);
    await until(() => seen.size >= 200, 20_000, "first third consumed");
    await members[0].disconnect(); // leaves (LeaveGroup) mid-stream
    await send(200, 400);
    members.push(await mk("d"));
    await send(400, total);
    await until(() => seen.size >= total, 30_000, "all consumed after membership changes");
    const desc = await admin.describeGroups(["grp-g"]);
    expect(desc.groups[0].members.length).toBe(3);
    for (const m of members.slice(1)) await m.disconnect();
    expect(seen.size).toBe(total);
    // kafkajs commits after each batch: a record is only redelivered when its batch was in
    // flight at a rebalance, never after its offset was committed. Duplicates stay rare.
    const dups = [...seen.values()].filter((n) => n > 1).length;
    expect(dups).toBeLessThan(total / 4);
    const committed = await admin.fetchOffsets({ groupId: "grp-g", topics: ["grp"] });
    const sum = committed[0].partitions.reduce((n, p) => n + Number(p.offset), 0);
    expect(sum).toBe(total);
    await producer.disconnect();
    await admin.disconnect();
  },
  90_000,
);

test("commit, stop, resume from the committed offset", async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: "resume", numPartitions: 1 }] });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: "resume",
    messages: Array.from({ length: 10 }, (_, i) => ({ value: `a${i}` })),
  });
  const c1 = kafka.consumer({ groupId: "resume-g", maxWaitTimeInMs: 200 });
  await c1.connect();
  await c1.subscribe({ topic: "resume", fromBeginning: true });
  const first: string[] = [];
  await c1.run({ eachMessage: async ({ message }) => void first.push(String(message.value)) });
  await until(() => first.length >= 10, 15_000, "first run");
  await c1.disconnect();
  await producer.send({
    topic: "resume",
    messages: Array.from({ length: 5 }, (_, i) => ({ value: `b${i}` })),
  });
  const c2 = kafka.consumer({ groupId: "resume-g", maxWaitTimeInMs: 200 });
  await c2.connect();
  await c2.subscribe({ topic: "resume", fromBeginning: true });
  const second: string[] = [];
  await c2.run({ eachMessage: async ({ message }) => void second.push(String(message.value)) });
  await until(() => second.length >= 5, 15_000, "second run");
  await Bun.sleep(300);
  await c2.disconnect();
  expect(second).toEqual(["b0", "b1", "b2", "b3", "b4"]);
  const groups = await admin.listGroups();
  expect(groups.groups.map((g) => g.groupId)).toContain("resume-g");
  await admin.deleteGroups(["resume-g"]);
  expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain("resume-g");
  await producer.disconnect();
  await admin.disconnect();
}, 40_000);

test(
  "admin: create, list, metadata, configs, partitions, delete records, delete topics",
  async () => {
    const admin = kafka.admin();
    await admin.connect();
    expect(
      await admin.createTopics({
        topics: [{
          topic: "adm",
          numPartitions: 2,
          configEntries: [{ name: "retention.ms", value: "3600000" }],
        }],
      }),
    ).toBe(true);
    await expect(admin.createTopics({ topics: [{ topic: "bad name!" }] })).rejects.toThrow();
    // Manual replica assignments name registered brokers; the first replica leads.
    const self = (await admin.describeCluster()).brokers[0].nodeId;
    expect(
      await admin.createTopics({
        topics: [{
          topic: "adm-manual",
          replicaAssignment: [{ partition: 1, replicas: [self] }, {
            partition: 0,
            replicas: [self],
          }],
        }],
      }),
    ).toBe(true);
    await admin.createPartitions({
      topicPartitions: [{ topic: "adm-manual", count: 3, assignments: [[self]] }],
    });
    const manual = await admin.fetchTopicMetadata({ topics: ["adm-manual"] });
    expect(manual.topics[0].partitions.map((p) => p.leader).sort()).toEqual([self, self, self]);
    await expect(admin.createTopics({
      topics: [{ topic: "adm-bad", replicaAssignment: [{ partition: 0, replicas: [self + 42] }] }],
    })).rejects.toMatchObject({ errors: [{ type: "INVALID_REPLICA_ASSIGNMENT" }] });
    await expect(admin.createPartitions({
      topicPartitions: [{ topic: "adm-manual", count: 4, assignments: [[self + 42]] }],
    })).rejects.toMatchObject({ type: "INVALID_REPLICA_ASSIGNMENT" });
    expect(await admin.listTopics()).toContain("adm");
    const md = await admin.fetchTopicMetadata({ topics: ["adm"] });
    expect(md.topics[0].partitions.length).toBe(2);
    const cfg = await admin.describeConfigs({
      resources: [{ type: 2, name: "adm" }],
      includeSynonyms: true,
    });
    const entries = cfg.resources[0].configEntries;
    const ret = entries.find((e) => e.configName === "retention.ms")!;
    expect(ret.configValue).toBe("3600000");
    expect(ret.configSource).toBe(1);
    expect(entries.find((e) => e.configName === "segment.bytes")!.configSource).toBe(5);
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{
        type: 2,
        name: "adm",
        configEntries: [{ name: "retention.ms", value: "7200000" }],
      }],
    });
    const after = await admin.describeConfigs({
      resources: [{ type: 2, name: "adm", configNames: ["retention.ms"] }],
      includeSynonyms: false,
    });
    expect(after.resources[0].configEntries[0].configValue).toBe("7200000");
    const brokerCfg = await admin.describeConfigs({
      resources: [{ type: 4, name: "0" }],
      includeSynonyms: false,
    });
    expect(brokerCfg.resources[0].configEntries.map((e) => e.configName)).toContain(
      "log.retention.ms",
    );
    await admin.createPartitions({ topicPartitions: [{ topic: "adm", count: 4 }] });
    expect((await admin.fetchTopicMetadata({ topics: ["adm"] })).topics[0].partitions.length).toBe(
      4,
    );
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: "adm",
      messages: Array.from({ length: 10 }, (_, i) => ({ value: `${i}`, partition: 0 })),
    });
    await producer.disconnect();
    await admin.deleteTopicRecords({ topic: "adm", partitions: [{ partition: 0, offset: "4" }] });
    const offs = await admin.fetchTopicOffsets("adm");
    expect(offs.find((o) => o.partition === 0)!.low).toBe("4");
    await admin.deleteTopics({ topics: ["adm"] });
    expect(await admin.listTopics()).not.toContain("adm");
    await admin.disconnect();
  },
  40_000,
);

test(
  "one broker, two front doors: a topic created over HTTP takes Kafka records and gives them to HTTP",
  async () => {
    const created = await api(broker.httpUrl, "POST", "/topics", { name: "doors", partitions: 1 });
    expect(created.status).toBeLessThan(300);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: "doors",
      messages: [{ key: "a", value: "from-kafka-1" }, { key: "b", value: "from-kafka-2" }],
    });
    await producer.disconnect();
    const records = await readAll(broker.httpUrl, "doors", 0);
    expect(records.map((r) => r.value)).toEqual(["from-kafka-1", "from-kafka-2"]);
  },
  20_000,
);
