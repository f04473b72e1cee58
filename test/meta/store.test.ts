import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import { MetadataStore } from "../../src/meta/store.ts";
import { tempDir } from "./helpers.ts";

const BROKER = { nodeId: 0, host: "localhost", kafkaPort: 9092, httpPort: 8080, clusterPort: 9093 };

async function codeOf(p: Promise<unknown>): Promise<number> {
  const e = await p.then(() => undefined, (x) => x);
  if (!(e instanceof MetaError)) throw new Error(`expected a MetaError, got ${e}`);
  return e.errorCode;
}

let t: { dir: string; cleanup: () => void };
let store: MetadataStore;

beforeEach(async () => {
  t = tempDir();
  store = MetadataStore.open(t.dir, { topicDefaults: { "log.retention.ms": "1000" } });
  await store.registerBroker(BROKER);
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

describe("createTopic", () => {
  test("defaults: -1 partitions and replication factor mean 1 and 1", async () => {
    const topic = await store.createTopic("a");
    expect(topic.topicId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(topic.internal).toBe(false);
    expect(topic.partitions).toEqual([
      { partition: 0, leader: 0, leaderEpoch: 0, partitionEpoch: 0, replicas: [0], isr: [0] },
    ]);
    expect(store.getTopic("a")).toEqual(topic);
    expect(store.getTopicById(topic.topicId)).toEqual(topic);
    expect(store.topicConfig("a").retentionMs).toBe(1000); // the broker-wide default
  });

  test("num.partitions default is configurable", async () => {
    await store.close();
    store = MetadataStore.open(t.dir, { numPartitions: 4 });
    expect((await store.createTopic("b")).partitions.length).toBe(4);
  });

  test("validation errors carry Kafka codes", async () => {
    await store.createTopic("a", 2, 1);
    expect(await codeOf(store.createTopic("a", 1, 1))).toBe(36);
    expect(await codeOf(store.createTopic("b c", 1, 1))).toBe(17);
    expect(await codeOf(store.createTopic("b", 0, 1))).toBe(37);
    expect(await codeOf(store.createTopic("b", -2, 1))).toBe(37);
    expect(await codeOf(store.createTopic("b", 1.5, 1))).toBe(37);
    expect(await codeOf(store.createTopic("b", 10_001, 1))).toBe(37);
    expect(await codeOf(store.createTopic("b", 1, 0))).toBe(38);
    expect(await codeOf(store.createTopic("b", 1, 2))).toBe(38); // only one live broker
    expect(await codeOf(store.createTopic("b", 1, 1, { "cleanup.policy": "compact" }))).toBe(40);
    expect(await codeOf(store.createTopic("b", 1, 1, { "nope": "1" }))).toBe(40);
    expect(store.listTopics().map((x) => x.name)).toEqual(["a"]);
    expect(store.log.appliedIndex()).toBe(2); // registration + one topic: rejections left no record
  });

  test("replication factor counts live (unfenced) brokers and spreads leaders", async () => {
    await store.registerBroker({ ...BROKER, nodeId: 1 });
    await store.registerBroker({ ...BROKER, nodeId: 2 });
    const topic = await store.createTopic("r", 3, 3);
    expect(topic.partitions.map((p) => p.leader).sort()).toEqual([0, 1, 2]);
    for (const p of topic.partitions) expect([...p.replicas].sort()).toEqual([0, 1, 2]);
    await store.fenceBroker(2);
    expect(await codeOf(store.createTopic("s", 1, 3))).toBe(38);
    expect((await store.createTopic("s", 1, 2)).partitions[0].replicas).not.toContain(2);
  });

  test("validateOnly changes nothing", async () => {
    const would = await store.createTopic("v", 3, 1, { "retention.ms": "5" }, {
      validateOnly: true,
    });
    expect(would.partitions.length).toBe(3);
    expect(would.configs).toEqual({ "retention.ms": "5" });
    expect(store.getTopic("v")).toBeUndefined();
    expect(store.log.appliedIndex()).toBe(1);
  });

  test("concurrent creates of one name: exactly one wins", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => store.createTopic("race", 1, 1)),
    );
    expect(results.filter((r) => r.status === "fulfilled").length).toBe(1);
    expect(store.listTopics().length).toBe(1);
  });

  test("internal topics are flagged and cannot be deleted", async () => {
    const t2 = await store.createTopic("__consumer_offsets", 2, 1, {}, { internal: true });
    expect(t2.internal).toBe(true);
    expect(await codeOf(store.deleteTopic("__consumer_offsets"))).toBe(42);
  });
});

test("__consumer_offsets describes cleanup.policy=compact, read-only, and refuses changing it", async () => {
  await store.createTopic("__consumer_offsets", 2, 1, {}, { internal: true });
  const policy = store.describeTopicConfigs("__consumer_offsets").find((d) =>
    d.name === "cleanup.policy"
  )!;
  expect(policy.value).toBe("compact");
  expect(policy.readOnly).toBe(true);
  expect(policy.isDefault).toBe(false);
  expect(
    await codeOf(store.alterTopicConfigs("__consumer_offsets", { "cleanup.policy": "delete" })),
  )
    .toBe(40);
  expect(await codeOf(store.alterTopicConfigs("__consumer_offsets", {}, ["cleanup.policy"])))
    .toBe(40);
  // Other configs of the internal topic stay alterable; user topics keep the default view.
  await store.alterTopicConfigs("__consumer_offsets", { "retention.ms": "86400000" });
  await store.createTopic("plain");
  const plain = store.describeTopicConfigs("plain").find((d) => d.name === "cleanup.policy")!;
  expect(plain.value).toBe("delete");
  expect(plain.readOnly).toBe(false);
});

describe("other admin writes", () => {
  test("deleteTopic removes the topic and its partitions; unknown topic is code 3", async () => {
    await store.createTopic("d", 3, 1);
    await store.deleteTopic("d");
    expect(store.getTopic("d")).toBeUndefined();
    expect(store.db.$client.query("SELECT count(*) AS n FROM partitions").get()).toEqual({ n: 0 });
    expect(await codeOf(store.deleteTopic("d"))).toBe(3);
    const again = await store.createTopic("d", 1, 1);
    expect(again.partitions.length).toBe(1);
  });

  test("createPartitions grows only", async () => {
    await store.createTopic("p", 2, 1);
    expect((await store.createPartitions("p", 5)).partitions.map((x) => x.partition)).toEqual([
      0,
      1,
      2,
      3,
      4,
    ]);
    expect(await codeOf(store.createPartitions("p", 5))).toBe(37);
    expect(await codeOf(store.createPartitions("p", 3))).toBe(37);
    expect(await codeOf(store.createPartitions("p", 20_000))).toBe(37);
    expect(await codeOf(store.createPartitions("nope", 3))).toBe(3);
    const would = await store.createPartitions("p", 6, { validateOnly: true });
    expect(would.partitions.length).toBe(6);
    expect(store.getTopic("p")?.partitions.length).toBe(5);
  });

  test("manual replica assignments are checked like Kafka checks them", async () => {
    await store.registerBroker({ ...BROKER, nodeId: 1, kafkaPort: 9094 });
    const t = await store.createTopic("m", -1, -1, {}, { assignments: [[1, 0], [0, 1], [1, 0]] });
    expect(t.partitions.map((p) => [p.partition, p.leader, p.replicas])).toEqual([
      [0, 1, [1, 0]],
      [1, 0, [0, 1]],
      [2, 1, [1, 0]],
    ]);
    // Counts and assignments together, unknown brokers, duplicates, uneven replication: refused.
    expect(await codeOf(store.createTopic("m2", 2, -1, {}, { assignments: [[0]] }))).toBe(42);
    expect(await codeOf(store.createTopic("m2", -1, -1, {}, { assignments: [[7]] }))).toBe(39);
    expect(await codeOf(store.createTopic("m2", -1, -1, {}, { assignments: [[0, 0]] }))).toBe(39);
    expect(await codeOf(store.createTopic("m2", -1, -1, {}, { assignments: [[0], [0, 1]] })))
      .toBe(39);
    expect(store.getTopic("m2")).toBeUndefined();
    const grown = await store.createPartitions("m", 4, { assignments: [[0, 1]] });
    expect(grown.partitions[3]).toMatchObject({ leader: 0, replicas: [0, 1], isr: [0, 1] });
    expect(await codeOf(store.createPartitions("m", 6, { assignments: [[0, 1]] }))).toBe(39);
    expect(await codeOf(store.createPartitions("m", 5, { assignments: [[0]] }))).toBe(39);
    expect(store.getTopic("m")?.partitions.length).toBe(4);
  });

  test("alterTopicConfigs sets and deletes overrides", async () => {
    await store.createTopic("c", 1, 1, { "retention.ms": "5", "segment.bytes": "4096" });
    const after = await store.alterTopicConfigs("c", { "max.message.bytes": "100" }, [
      "retention.ms",
    ]);
    expect(after.configs).toEqual({ "segment.bytes": "4096", "max.message.bytes": "100" });
    const d = Object.fromEntries(store.describeTopicConfigs("c").map((e) => [e.name, e]));
    expect(d["retention.ms"]).toMatchObject({ value: "1000", source: "STATIC_BROKER_CONFIG" });
    expect(d["max.message.bytes"]).toMatchObject({ value: "100", source: "TOPIC_CONFIG" });
    expect(await codeOf(store.alterTopicConfigs("c", { "segment.bytes": "1" }))).toBe(40);
    expect(await codeOf(store.alterTopicConfigs("c", {}, ["bogus"]))).toBe(40);
    expect(await codeOf(store.alterTopicConfigs("c", { "segment.ms": "5" }, ["segment.ms"]))).toBe(
      42,
    );
    expect(await codeOf(store.alterTopicConfigs("zz", {}))).toBe(3);
    expect(store.getTopic("c")?.configs).toEqual(after.configs);
  });

  test("alterPartition bumps the leader epoch on a leader change only", async () => {
    await store.registerBroker({ ...BROKER, nodeId: 1 });
    await store.createTopic("l", 1, 2);
    const p0 = store.getTopic("l")!.partitions[0];
    const other = p0.replicas.find((r) => r !== p0.leader)!;
    const p1 = await store.alterPartition("l", 0, { isr: [p0.leader] });
    expect(p1).toMatchObject({ leaderEpoch: 0, partitionEpoch: 1, isr: [p0.leader] });
    expect(await codeOf(store.alterPartition("l", 0, { leader: other }))).toBe(39); // not in ISR
    const p2 = await store.alterPartition("l", 0, { isr: [p0.leader, other], leader: other });
    expect(p2).toMatchObject({ leader: other, leaderEpoch: 1, partitionEpoch: 2 });
    expect(await codeOf(store.alterPartition("l", 0, { replicas: [0, 9] }))).toBe(39);
    expect(await codeOf(store.alterPartition("l", 7, {}))).toBe(3);
  });

  test("broker registration: epoch is the record's index, re-registration unfences", async () => {
    const b = store.listBrokers()[0];
    expect(b).toMatchObject({ nodeId: 0, host: "localhost", fenced: false, rack: null, epoch: 1 });
    await store.fenceBroker(0);
    expect(store.listBrokers()[0].fenced).toBe(true);
    const again = await store.registerBroker({ ...BROKER, rack: "r" });
    expect(again).toMatchObject({ fenced: false, rack: "r", epoch: 3 });
    expect(await codeOf(store.fenceBroker(42))).toBe(8);
    expect(await codeOf(store.registerBroker({ ...BROKER, kafkaPort: 70000 }))).toBe(42);
  });
});

describe("group state from __consumer_offsets", () => {
  const off = (p: number, offset: number) => ({
    groupId: "g",
    topic: "t",
    partition: p,
    offset,
    leaderEpoch: -1,
    metadata: "",
    commitTs: 10,
    expireTs: null,
  });

  test("commits upsert, tombstones delete, fetch filters by topic", () => {
    store.applyGroupOffsetCommit([off(0, 5), off(1, 7)]);
    store.applyGroupOffsetCommit([off(0, 6)]);
    expect(store.fetchOffsets("g").map((o) => [o.partition, o.offset])).toEqual([[0, 6], [1, 7]]);
    expect(store.fetchOffsets("g", ["other"])).toEqual([]);
    store.applyGroupOffsetTombstone("g", "t", 1);
    expect(store.fetchOffsets("g", ["t"]).length).toBe(1);
    expect(() => store.applyGroupOffsetCommit([off(-1, 0)])).toThrow(MetaError);
    expect(() => store.applyGroupOffsetCommit([{ ...off(0, 0), offset: 1.5 }])).toThrow(MetaError);
    // One bad entry rejects the whole batch.
    expect(() => store.applyGroupOffsetCommit([off(3, 1), { ...off(4, 1), topic: "" }])).toThrow(
      MetaError,
    );
    expect(store.fetchOffsets("g").length).toBe(1);
  });

  test("group metadata upserts and deletes", () => {
    const g = {
      groupId: "g",
      protocolType: "consumer",
      state: "Stable",
      generation: 3,
      protocol: "range",
      leader: "m-1",
      updatedAt: 5,
    };
    store.applyGroupMetadata(g);
    store.applyGroupMetadata({ ...g, generation: 4 });
    expect(store.listGroups()).toEqual([{ ...g, generation: 4 }]);
    store.applyGroupDeleted("g");
    expect(store.listGroups()).toEqual([]);
  });
});
