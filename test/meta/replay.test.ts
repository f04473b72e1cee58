// Every metadata write goes through the log: replaying the log into a FRESH database must
// give the very same tables (what a Raft follower will do later).
import { describe, expect, test } from "bun:test";
import { openMetaDb } from "../../src/meta/migrate.ts";
import { appliedIndex, applyOrSkip, applyRecord } from "../../src/meta/apply.ts";
import { MetaError } from "../../src/meta/errors.ts";
import { MetadataStore } from "../../src/meta/store.ts";
import { dump, tempDir } from "./helpers.ts";

const LOG_TABLES = ["brokers", "topics", "partitions", "meta_state"];
const BROKER = { nodeId: 0, host: "localhost", kafkaPort: 9092, httpPort: 8080, clusterPort: 9093 };

async function busyStore(dir: string): Promise<MetadataStore> {
  let clock = 1_000;
  const store = MetadataStore.open(dir, { now: () => clock++ });
  await store.registerBroker(BROKER);
  await store.registerBroker({ ...BROKER, nodeId: 1, host: "b1", rack: "r1" });
  await store.createTopic("orders", 3, 2, { "retention.ms": "3600000" });
  await store.createTopic("logs", -1, -1);
  await store.createTopic("gone", 2, 1);
  await store.createPartitions("orders", 5);
  await store.alterTopicConfigs("orders", { "segment.bytes": "1048576" }, ["retention.ms"]);
  await store.alterPartition("orders", 1, { leader: 1, isr: [1] });
  await store.deleteTopic("gone");
  await store.fenceBroker(1, true);
  await store.registerBroker({ ...BROKER, nodeId: 0, host: "moved" });
  // Rejected writes must leave no trace in the log.
  await expect(store.createTopic("orders", 1, 1)).rejects.toThrow(MetaError);
  await expect(store.createPartitions("logs", 1)).rejects.toThrow(MetaError);
  return store;
}

describe("metadata log replay", () => {
  test("replaying the local log into a fresh db yields identical tables", async () => {
    const t = tempDir();
    try {
      const store = await busyStore(t.dir);
      const entries = store.log.read(1, 10_000);
      expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i + 1));
      expect(entries.length).toBe(11);
      const fresh = openMetaDb(":memory:");
      for (const e of entries) expect(applyRecord(fresh.db, e.record, e.index, e.term)).toBe(true);
      for (const table of LOG_TABLES) {
        expect(dump(fresh.sqlite, table)).toEqual(dump(store.db.$client, table));
      }
      // Sanity: the replica really has content, and re-applying is a no-op.
      expect(dump(fresh.sqlite, "partitions").length).toBe(6);
      expect(applyRecord(fresh.db, entries[2].record, entries[2].index)).toBe(false);
      fresh.sqlite.close();
      await store.close();
    } finally {
      t.cleanup();
    }
  });

  test("state and log survive a restart, and appends continue the index", async () => {
    const t = tempDir();
    try {
      const store = await busyStore(t.dir);
      const before = LOG_TABLES.map((x) => dump(store.db.$client, x));
      const applied = store.log.appliedIndex();
      await store.close();
      const again = MetadataStore.open(t.dir);
      expect(LOG_TABLES.map((x) => dump(again.db.$client, x))).toEqual(before);
      expect(again.log.appliedIndex()).toBe(applied);
      await again.createTopic("later", 1, 1);
      expect(again.log.appliedIndex()).toBe(applied + 1);
      expect(again.log.read(applied + 1, 10)[0].record.type).toBe("TopicCreated");
      await again.close();
    } finally {
      t.cleanup();
    }
  });

  test("log entries not yet applied (e.g. a restored copy) are applied at open", async () => {
    const t = tempDir();
    try {
      const store = await busyStore(t.dir);
      const want = LOG_TABLES.map((x) => dump(store.db.$client, x));
      const sqlite = store.db.$client;
      sqlite.run("DELETE FROM partitions");
      sqlite.run("DELETE FROM topics");
      sqlite.run("DELETE FROM brokers");
      sqlite.run("DELETE FROM meta_state");
      await store.close();
      const again = MetadataStore.open(t.dir);
      expect(LOG_TABLES.map((x) => dump(again.db.$client, x))).toEqual(want);
      await again.close();
    } finally {
      t.cleanup();
    }
  });

  test("applyOrSkip consumes the index of a record that does not fit, changing nothing", () => {
    const { sqlite, db } = openMetaDb(":memory:");
    const err = applyOrSkip(
      db,
      {
        type: "TopicDeleted",
        topicId: "00000000-0000-4000-8000-000000000000",
        name: "x",
      },
      1,
      2,
    );
    expect(err?.codeName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
    expect(appliedIndex(db)).toEqual({ index: 1, term: 2 });
    expect(dump(sqlite, "topics")).toEqual([]);
    sqlite.close();
  });

  test("a record that does not apply changes nothing at all", () => {
    const { sqlite, db } = openMetaDb(":memory:");
    applyRecord(db, {
      type: "BrokerRegistered",
      nodeId: 0,
      host: "h",
      kafkaPort: 1,
      httpPort: 2,
      clusterPort: 3,
      rack: null,
      timestamp: 0,
    }, 1);
    // Second partition names an unregistered broker: the whole topic must be rolled back.
    expect(() =>
      applyRecord(db, {
        type: "TopicCreated",
        topicId: "00000000-0000-4000-8000-000000000001",
        name: "t",
        internal: false,
        configs: {},
        timestamp: 0,
        partitions: [
          { partition: 0, replicas: [0], leader: 0, leaderEpoch: 0, isr: [0] },
          { partition: 1, replicas: [5], leader: 5, leaderEpoch: 0, isr: [5] },
        ],
      }, 2)
    ).toThrow(/not registered/);
    expect(dump(sqlite, "topics")).toEqual([]);
    expect(dump(sqlite, "partitions")).toEqual([]);
    expect(appliedIndex(db).index).toBe(1);
    sqlite.close();
  });
});
