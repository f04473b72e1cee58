// kafkajs 2.2.4 flows against the fake broker at argv[2].
import kafkajs from "kafkajs";
const { Kafka, logLevel } = kafkajs;
const B = process.argv[2];
const kafka = new Kafka({
  clientId: "kjs-capture",
  brokers: [B],
  logLevel: logLevel.NOTHING,
  retry: { retries: 1 },
});
const step = async (name, fn) => {
  try {
    await Promise.race([
      fn(),
      new Promise((_, rej) => setTimeout(() => rej(new Error("timeout")), 8000)),
    ]);
  } catch (e) {
    console.error(`kafkajs step ${name}: ${e.message}`);
  }
};
const admin = kafka.admin();
await step("admin", async () => {
  await admin.connect();
  await admin.createTopics({
    topics: [{
      topic: "kj-t",
      numPartitions: 2,
      configEntries: [{ name: "retention.ms", value: "1000" }],
    }],
  });
  await admin.createPartitions({ topicPartitions: [{ topic: "kj-t", count: 3 }] });
  await admin.describeConfigs({ resources: [{ type: 2, name: "kj-t" }], includeSynonyms: true });
  await admin.alterConfigs({
    resources: [{
      type: 2,
      name: "kj-t",
      configEntries: [{ name: "retention.ms", value: "2000" }],
    }],
  });
  await admin.fetchTopicMetadata({ topics: ["kj-t"] });
  await admin.describeCluster();
});
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await step("produce", async () => {
  await producer.connect();
  await producer.send({
    topic: "kj-a",
    messages: [{ key: "k", value: "hello", headers: { h: "x" }, timestamp: "1700000000000" }, {
      value: "world",
      timestamp: "1700000000001",
    }],
  });
  await producer.disconnect();
});
const consumer = kafka.consumer({
  groupId: "kj-group",
  maxWaitTimeInMs: 200,
  sessionTimeout: 6000,
  heartbeatInterval: 300,
});
await step("consume", async () => {
  await consumer.connect();
  await consumer.subscribe({ topic: "kj-a", fromBeginning: true });
  let resolve;
  const got = new Promise((r) => (resolve = r));
  await consumer.run({ autoCommit: true, eachMessage: async () => resolve() });
  await got;
  await new Promise((r) => setTimeout(r, 700));
  await consumer.disconnect();
});
await step("admin2", async () => {
  await admin.fetchTopicOffsets("kj-a");
  await admin.fetchTopicOffsetsByTimestamp("kj-a", 1700000000000);
  await admin.fetchOffsets({ groupId: "kj-group", topics: ["kj-a"] });
  await admin.listGroups();
  await admin.describeGroups(["kj-group"]);
  await admin.deleteTopicRecords({ topic: "kj-a", partitions: [{ partition: 0, offset: "1" }] });
  await admin.deleteGroups(["kj-group"]);
  await admin.deleteTopics({ topics: ["kj-t"] });
  await admin.disconnect();
});
const sasl = new Kafka({
  clientId: "kjs-sasl",
  brokers: [B],
  logLevel: logLevel.NOTHING,
  retry: { retries: 0 },
  sasl: { mechanism: "plain", username: "alice", password: "secret" },
});
await step("sasl", async () => {
  const a = sasl.admin();
  await a.connect();
  await a.listTopics();
  await a.disconnect();
});
process.exit(0);
