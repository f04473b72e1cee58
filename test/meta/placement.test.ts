// Replication factor and placement in one store: the automatic default replication factor,
// replicas and leaders spread evenly over the live brokers, never two replicas of a partition on
// one broker, manual assignments checked, and min.insync.replicas following the topic's factor.
import { afterEach, describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import { MetadataStore, type PartitionInfo, type StoreOptions } from "../../src/meta/store.ts";
import { tempDir } from "./helpers.ts";

const BROKER = { host: "localhost", kafkaPort: 9092, httpPort: 8080, clusterPort: 9093 };

let open: { store: MetadataStore; cleanup: () => void }[] = [];
afterEach(async () => {
  for (const o of open) {
    await o.store.close();
    o.cleanup();
  }
  open = [];
});

/** A store with brokers 0..brokers-1 registered. */
async function storeWith(brokers: number, opts: StoreOptions = {}): Promise<MetadataStore> {
  const t = tempDir();
  const store = MetadataStore.open(t.dir, opts);
  open.push({ store, cleanup: t.cleanup });
  for (let id = 0; id < brokers; id++) await store.registerBroker({ ...BROKER, nodeId: id });
  return store;
}

/** Opening a store with these options throws a MetaError. */
function refusedAtOpen(opts: StoreOptions): void {
  const t = tempDir();
  try {
    expect(() => MetadataStore.open(t.dir, opts)).toThrow(MetaError);
  } finally {
    t.cleanup();
  }
}

async function codeOf(p: Promise<unknown>): Promise<number> {
  const e = await p.then(() => undefined, (x) => x);
  if (!(e instanceof MetaError)) throw new Error(`expected a MetaError, got ${e}`);
  return e.errorCode;
}

function count(values: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/** Leaders and replicas per broker; fails on a partition with a broker twice. */
function spread(ps: PartitionInfo[]) {
  for (const p of ps) {
    expect(new Set(p.replicas).size).toBe(p.replicas.length);
    expect(p.leader).toBe(p.replicas[0]);
    expect(p.isr).toEqual(p.replicas);
  }
  return {
    leaders: count(ps.map((p) => p.leader)),
    replicas: count(ps.flatMap((p) => p.replicas)),
  };
}

describe("placement", () => {
  test("3 brokers, 12 partitions, RF 3: each broker leads 4 and holds 12", async () => {
    const store = await storeWith(3);
    const t = await store.createTopic("t", 12, 3);
    const { leaders, replicas } = spread(t.partitions);
    expect([...leaders.entries()].sort()).toEqual([[0, 4], [1, 4], [2, 4]]);
    expect([...replicas.entries()].sort()).toEqual([[0, 12], [1, 12], [2, 12]]);
  });

  test("5 brokers, 20 partitions, RF 3: even leaders and replicas, followers spread", async () => {
    const store = await storeWith(5);
    const t = await store.createTopic("t", 20, 3);
    const { leaders, replicas } = spread(t.partitions);
    for (let b = 0; b < 5; b++) {
      expect(leaders.get(b)).toBe(4);
      expect(replicas.get(b)).toBe(12);
      // The followers of one broker's partitions are every other broker, not one fixed pair.
      const followers = new Set(
        t.partitions.filter((p) => p.leader === b).flatMap((p) => p.replicas.slice(1)),
      );
      expect(followers.size).toBe(4);
      expect(followers.has(b)).toBe(false);
    }
  });

  test("uneven counts stay within one of even; RF above the live brokers is refused", async () => {
    const store = await storeWith(5);
    const t = await store.createTopic("t", 7, 2);
    const { leaders, replicas } = spread(t.partitions);
    expect(Math.max(...leaders.values()) - Math.min(...leaders.values())).toBeLessThanOrEqual(1);
    expect(Math.max(...replicas.values()) - Math.min(...replicas.values())).toBeLessThanOrEqual(1);
    expect(await codeOf(store.createTopic("u", 1, 6))).toBe(38);
  });

  test("leaders of one-partition topics rotate over the brokers", async () => {
    const store = await storeWith(3);
    const leaders = [];
    for (let i = 0; i < 6; i++) {
      leaders.push((await store.createTopic(`t${i}`, 1, -1)).partitions[0].leader);
    }
    expect([...count(leaders).values()]).toEqual([2, 2, 2]);
  });

  test("fenced brokers get nothing; CreatePartitions keeps the RF and the pattern", async () => {
    const store = await storeWith(4);
    await store.fenceBroker(3);
    const t = await store.createTopic("t", 3, 3);
    expect(t.partitions.every((p) => !p.replicas.includes(3))).toBe(true);
    const grown = await store.createPartitions("t", 9);
    const { leaders, replicas } = spread(grown.partitions);
    expect(grown.partitions.every((p) => p.replicas.length === 3)).toBe(true);
    expect([...leaders.values()]).toEqual([3, 3, 3]);
    expect([...replicas.values()]).toEqual([9, 9, 9]);
    // Grown after the fourth broker came back: still RF 3, now over four brokers.
    await store.fenceBroker(3, false);
    const more = await store.createPartitions("t", 13);
    const added = more.partitions.slice(9);
    expect(spread(added).leaders.size).toBe(4);
    expect(added.every((p) => p.replicas.length === 3)).toBe(true);
  });
});

describe("default replication factor", () => {
  test("automatic: min(3, live brokers)", async () => {
    for (const [brokers, rf] of [[1, 1], [2, 2], [3, 3], [5, 3]]) {
      const store = await storeWith(brokers);
      expect(store.defaultReplicationFactor()).toBe(rf);
      const t = await store.createTopic("t", 4, -1);
      expect(t.partitions.every((p) => p.replicas.length === rf)).toBe(true);
    }
  });

  test("automatic counts only live brokers", async () => {
    let down = new Set<number>();
    const store = await storeWith(4, { isDown: (id) => down.has(id) });
    await store.fenceBroker(0);
    down = new Set([1, 2]);
    expect(store.defaultReplicationFactor()).toBe(1);
    expect((await store.createTopic("t", 2, -1)).partitions.map((p) => p.replicas)).toEqual([
      [3],
      [3],
    ]);
  });

  test("a configured default is used, and refused when fewer brokers are live", async () => {
    const store = await storeWith(2, { defaultReplicationFactor: 2 });
    expect((await store.createTopic("a", 1, -1)).partitions[0].replicas.length).toBe(2);
    const one = await storeWith(1, { defaultReplicationFactor: 2 });
    const e = await one.createTopic("a", 1, -1).catch((x) => x);
    expect(e).toBeInstanceOf(MetaError);
    expect(e.errorCode).toBe(38);
    expect(e.message).toContain("default.replication.factor");
    // An explicit factor still wins over the default.
    expect((await one.createTopic("b", 1, 1)).partitions[0].replicas).toEqual([0]);
    refusedAtOpen({ defaultReplicationFactor: 0 });
  });
});

describe("min.insync.replicas", () => {
  const minIsr = (store: MetadataStore, topic: string) =>
    store.describeTopicConfigs(topic).find((d) => d.name === "min.insync.replicas")!;

  test("defaults to 2 from RF 3 up, else 1", async () => {
    const store = await storeWith(3);
    await store.createTopic("rf3", 1, 3);
    await store.createTopic("rf2", 1, 2);
    await store.createTopic("rf1", 1, 1);
    expect(store.topicConfig("rf3").minInsyncReplicas).toBe(2);
    expect(store.topicConfig("rf2").minInsyncReplicas).toBe(1);
    expect(store.topicConfig("rf1").minInsyncReplicas).toBe(1);
    expect(minIsr(store, "rf3")).toMatchObject({
      value: "2",
      source: "DEFAULT_CONFIG",
      isDefault: true,
    });
    expect(minIsr(store, "rf1")).toMatchObject({ value: "1", source: "DEFAULT_CONFIG" });
  });

  test("a topic override and --topic-default win over the automatic value", async () => {
    const store = await storeWith(3, { topicDefaults: { "min.insync.replicas": "3" } });
    await store.createTopic("d", 1, 3);
    await store.createTopic("o", 1, 3, { "min.insync.replicas": "1" });
    await store.createTopic("small", 1, 1);
    expect(store.topicConfig("d").minInsyncReplicas).toBe(3);
    expect(minIsr(store, "d")).toMatchObject({ value: "3", source: "STATIC_BROKER_CONFIG" });
    expect(minIsr(store, "d").synonyms.at(-1)).toEqual({
      name: "min.insync.replicas",
      value: "2",
      source: "DEFAULT_CONFIG",
    });
    expect(store.topicConfig("o").minInsyncReplicas).toBe(1);
    expect(minIsr(store, "o")).toMatchObject({ value: "1", source: "TOPIC_CONFIG" });
    expect(store.topicConfig("small").minInsyncReplicas).toBe(3);
    await store.alterTopicConfigs("o", {}, ["min.insync.replicas"]);
    expect(store.topicConfig("o").minInsyncReplicas).toBe(3);
  });

  test("must be at least 1", async () => {
    const store = await storeWith(1);
    expect(await codeOf(store.createTopic("t", 1, 1, { "min.insync.replicas": "0" }))).toBe(40);
    refusedAtOpen({ topicDefaults: { "min.insync.replicas": "0" } });
  });
});

describe("manual assignments", () => {
  test("duplicates, unknown, fenced and down brokers are refused", async () => {
    let down = new Set<number>();
    const store = await storeWith(4, { isDown: (id) => down.has(id) });
    expect(await codeOf(store.createTopic("m", -1, -1, {}, { assignments: [[0, 1, 0]] })))
      .toBe(39);
    expect(await codeOf(store.createTopic("m", -1, -1, {}, { assignments: [[0, 9]] }))).toBe(39);
    await store.fenceBroker(2);
    const fenced = await store.createTopic("m", -1, -1, {}, { assignments: [[0, 2]] })
      .catch((x) => x);
    expect(fenced.errorCode).toBe(39);
    expect(fenced.message).toContain("fenced");
    down = new Set([3]);
    expect(await codeOf(store.createTopic("m", -1, -1, {}, { assignments: [[3, 0]] }))).toBe(39);
    const ok = await store.createTopic("m", -1, -1, {}, { assignments: [[1, 0], [0, 1]] });
    expect(ok.partitions.map((p) => p.replicas)).toEqual([[1, 0], [0, 1]]);
    expect(await codeOf(store.createPartitions("m", 3, { assignments: [[1, 1]] }))).toBe(39);
    expect(store.getTopic("m")!.partitions.length).toBe(2);
  });
});
