// @platformatic/kafka 2.12.1 flows against the fake broker at argv[2]. Run with bun: the package
// needs Promise.withResolvers, which Node 20 lacks. argv[3]: "flows", "direct" or "all".
//
// The high-level clients negotiate: each picks the highest version it implements within the
// broker's advertised range, so capture-all.sh runs this once per cap to make it send every
// version. A few requests the high-level clients never send (OffsetForLeaderEpoch,
// DescribeCluster, ApiVersions v4) go out through the package's own exported per-version API
// functions over its own Connection, under the label "platformatic-api", at the highest version
// the broker advertises; the bytes are still written by platformatic onto a real socket.
import {
  Admin,
  apiVersionsV1,
  apiVersionsV3,
  apiVersionsV4,
  Connection,
  Consumer,
  describeClusterV0,
  describeClusterV1,
  describeLogDirsV0,
  describeLogDirsV1,
  describeLogDirsV2,
  describeLogDirsV3,
  describeLogDirsV4,
  offsetForLeaderEpochV2,
  offsetForLeaderEpochV3,
  offsetForLeaderEpochV4,
  Producer,
  stringDeserializers,
  stringSerializers,
} from "@platformatic/kafka";

const B = process.argv[2];
const [HOST, PORT] = B.split(":");
const only = process.argv[3] ?? "all";
const base = {
  bootstrapBrokers: [B],
  retries: 1,
  retryDelay: 100,
  timeout: 4000,
  autocreateTopics: true,
};

const step = async (name, fn) => {
  try {
    await Promise.race([
      fn(),
      new Promise((_, rej) => setTimeout(() => rej(new Error("timeout")), 10000)),
    ]);
  } catch (e) {
    console.error(`platformatic step ${name}: ${e.message}`);
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function flows() {
  const admin = new Admin({ ...base, clientId: "plt-admin" });
  await step("create topics", () =>
    admin.createTopics({
      topics: ["pl-t", "pl-a"],
      partitions: 2,
      replicas: 1,
      configs: [{ name: "retention.ms", value: "1000" }, { name: "cleanup.policy", value: null }],
    }));
  await step(
    "create partitions",
    () => admin.createPartitions({ topics: [{ name: "pl-t", count: 3, assignments: [] }] }),
  );
  await step("describe configs", () =>
    admin.describeConfigs({
      resources: [{ resourceType: 2, resourceName: "pl-t", configurationKeys: ["retention.ms"] }],
      includeSynonyms: true,
      includeDocumentation: true,
    }));
  await step("alter configs", () =>
    admin.alterConfigs({
      resources: [{
        resourceType: 2,
        resourceName: "pl-t",
        configs: [{ name: "retention.ms", value: "2000" }],
      }],
    }));
  await step("incremental alter configs", () =>
    admin.incrementalAlterConfigs({
      resources: [{
        resourceType: 2,
        resourceName: "pl-t",
        configs: [
          { name: "retention.ms", configOperation: 0, value: "3000" },
          { name: "cleanup.policy", configOperation: 1, value: null },
        ],
      }],
    }));
  await step("list topics", () => admin.listTopics({ includeInternals: true }));
  await step("find coordinator", () => admin.findCoordinator({ keyType: 0, keys: ["pl-group"] }));

  // Idempotent producer: InitProducerId, then Produce with producer id and sequence.
  const producer = new Producer({
    ...base,
    clientId: "plt-producer",
    idempotent: true,
    serializers: stringSerializers,
  });
  await step("produce idempotent", () =>
    producer.send({
      messages: [
        {
          topic: "pl-a",
          key: "k1",
          value: "hello",
          headers: { h: "x" },
          timestamp: 1700000000000n,
        },
        { topic: "pl-a", value: "world", timestamp: 1700000000001n },
      ],
    }));
  await step("producer close", () => producer.close());
  const plain = new Producer({
    ...base,
    clientId: "plt-producer-acks1",
    acks: 1,
    serializers: stringSerializers,
  });
  await step(
    "produce acks=1",
    () => plain.send({ messages: [{ topic: "pl-a", key: "k2", value: "again" }] }),
  );
  await step("plain producer close", () => plain.close());

  // Consumer group: find coordinator, join (twice: member id required), sync, heartbeat,
  // fetch, offset commit and fetch, list offsets, leave.
  const consumer = new Consumer({
    ...base,
    clientId: "plt-consumer",
    groupId: "pl-group",
    sessionTimeout: 6000,
    heartbeatInterval: 300,
    maxWaitTime: 200,
    deserializers: stringDeserializers,
  });
  await step("consume", async () => {
    const stream = await consumer.consume({
      topics: ["pl-a"],
      mode: "earliest",
      autocommit: 200,
      maxWaitTime: 200,
    });
    // Below Fetch v4 the stream fails ("no usable implementation"); keep the group flow going.
    stream.on("error", (e) => console.error(`platformatic stream: ${e.message}`));
    await new Promise((resolve) => {
      stream.once("data", resolve);
      setTimeout(resolve, 3000);
    });
    await sleep(900); // let heartbeats and an autocommit go out
    await stream.close();
  });
  await step(
    "commit",
    () =>
      consumer.commit({ offsets: [{ topic: "pl-a", partition: 0, offset: 2n, leaderEpoch: 0 }] }),
  );
  await step(
    "committed",
    () => consumer.listCommittedOffsets({ topics: [{ topic: "pl-a", partitions: [0] }] }),
  );
  await step("list offsets", () => consumer.listOffsets({ topics: ["pl-a"] }));
  await step(
    "list offsets by time",
    () => consumer.listOffsetsWithTimestamps({ topics: ["pl-a"], timestamp: 1700000000000n }),
  );
  await step("consumer close", () => consumer.close(true));

  await step("admin list offsets", () =>
    admin.listOffsets({
      topics: [{ name: "pl-a", partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      isolationLevel: 1,
    }));
  await step("list groups", () => admin.listGroups());
  await step(
    "list groups by state",
    () => admin.listGroups({ states: ["STABLE", "EMPTY"], types: ["classic"] }),
  );
  await step(
    "describe groups",
    () => admin.describeGroups({ groups: ["pl-group"], includeAuthorizedOperations: true }),
  );
  await step(
    "group offsets",
    () => admin.listConsumerGroupOffsets({ groups: ["pl-group"], requireStable: true }),
  );
  await step("alter group offsets", () =>
    admin.alterConsumerGroupOffsets({
      groupId: "pl-group",
      topics: [{ name: "pl-a", partitionOffsets: [{ partition: 0, offset: 1n }] }],
    }));
  await step("remove members", () =>
    admin.removeMembersFromConsumerGroup({
      groupId: "pl-group",
      members: [{ memberId: "member-1", reason: "capture" }],
    }));
  await step(
    "delete records",
    () =>
      admin.deleteRecords({
        topics: [{ name: "pl-a", partitions: [{ partition: 0, offset: 1n }] }],
      }),
  );
  await step("delete groups", () => admin.deleteGroups({ groups: ["pl-group"] }));
  await step("delete topics", () => admin.deleteTopics({ topics: ["pl-t"] }));
  await step("admin close", () => admin.close());
}

// Requests with no high-level caller, sent with the package's per-version API functions.
async function direct() {
  const conn = new Connection("plt-api", {});
  const call = (api, ...args) => api.async(conn, ...args);
  await step("direct", async () => {
    await conn.connect(HOST, Number(PORT));
    // The same negotiation the clients do: v3, or v1 when the broker rejects v3.
    const apis = (await call(apiVersionsV3.api, "platformatic-kafka", "2.12.1").catch(() =>
      call(apiVersionsV1.api)
    )).apiKeys;
    const max = (key) =>
      apis.find((a) => a.apiKey === key)?.maxVersion ?? -1;
    if (max(18) >= 4) {
      await step("api versions v4", () => call(apiVersionsV4.api, "platformatic-kafka", "2.12.1"));
    }
    const epochs = [offsetForLeaderEpochV2, offsetForLeaderEpochV3, offsetForLeaderEpochV4];
    const epoch = epochs[Math.min(max(23), 4) - 2];
    if (epoch) {
      await step("offset for leader epoch", () =>
        call(epoch.api, -1, [{
          name: "pl-a",
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: 0, leaderEpoch: 0 }, {
            partitionIndex: 1,
            currentLeaderEpoch: -1,
            leaderEpoch: 0,
          }],
        }]));
    }
    const cluster = [describeClusterV0, describeClusterV1][Math.min(max(60), 1)];
    if (cluster) await step("describe cluster", () => call(cluster.api, true, 1));
    // Its admin client sends only the highest: every version the broker advertises, here.
    const logDirs = [
      describeLogDirsV0,
      describeLogDirsV1,
      describeLogDirsV2,
      describeLogDirsV3,
      describeLogDirsV4,
    ];
    for (const m of logDirs.slice(0, max(35) + 1)) {
      await step(
        "describe log dirs",
        () =>
          call(m.api, [{ name: "pl-a", partitions: [0, 1] }, { name: "pl-b", partitions: [2] }]),
      );
    }
  });
  await conn.close().catch(() => {});
}

if (only !== "direct") await flows();
if (only !== "flows") await direct();
process.exit(0);
