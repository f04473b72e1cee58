import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { embeddedMigrations, openMetaDb, runMigrations } from "../../src/meta/migrate.ts";
import * as s from "../../src/meta/schema.ts";
import { dump, tableNames, tempDir } from "./helpers.ts";

const REPO = join(import.meta.dir, "..", "..");
const EXPECTED_TABLES = [
  "__drizzle_migrations",
  "acls",
  "brokers",
  "cluster",
  "group_offsets",
  "groups",
  "meta_state",
  "metadata_log",
  "partitions",
  "scram_credentials",
  "topics",
];

describe("migrations", () => {
  test("embedded migrations are exactly the files drizzle-kit wrote to migrations/", () => {
    const journal = JSON.parse(readFileSync(join(REPO, "migrations/meta/_journal.json"), "utf8"));
    const embedded = embeddedMigrations();
    expect(embedded.map((m) => m.tag)).toEqual(journal.entries.map((e: { tag: string }) => e.tag));
    for (const m of embedded) {
      expect(m.sql).toBe(readFileSync(join(REPO, "migrations", `${m.tag}.sql`), "utf8"));
    }
    expect(embedded.length).toBeGreaterThan(0);
  });

  test("apply on a fresh db, then nothing on restart; WAL mode", () => {
    const t = tempDir();
    try {
      const path = join(t.dir, "meta.db");
      const a = openMetaDb(path);
      expect(tableNames(a.sqlite)).toEqual(EXPECTED_TABLES);
      expect((a.sqlite.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode)
        .toBe("wal");
      expect((a.sqlite.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys)
        .toBe(1);
      const rows = dump(a.sqlite, "__drizzle_migrations");
      expect(rows.length).toBe(embeddedMigrations().length);
      expect(runMigrations(a.sqlite).applied).toEqual([]);
      a.sqlite.close();
      const b = openMetaDb(path);
      expect(dump(b.sqlite, "__drizzle_migrations")).toEqual(rows);
      expect(runMigrations(b.sqlite).applied).toEqual([]);
      b.sqlite.close();
    } finally {
      t.cleanup();
    }
  });

  test("the bookkeeping is drizzle's: sha256 hash and created_at = journal when", () => {
    const sqlite = new Database(":memory:");
    const res = runMigrations(sqlite);
    expect(res.applied).toEqual(embeddedMigrations().map((m) => m.tag));
    const rows = sqlite.query("SELECT hash, created_at FROM __drizzle_migrations").all() as {
      hash: string;
      created_at: number;
    }[];
    const m0 = embeddedMigrations()[0];
    const hasher = new Bun.CryptoHasher("sha256");
    hasher.update(readFileSync(join(REPO, "migrations", `${m0.tag}.sql`), "utf8"));
    expect(rows[0].hash).toBe(hasher.digest("hex"));
    expect(Number(rows[0].created_at)).toBe(m0.when);
    sqlite.close();
  });

  test("drizzle's own migrate() and ours agree on what is applied, both ways", () => {
    const folder = join(REPO, "migrations");
    const a = new Database(":memory:");
    runMigrations(a);
    const before = dump(a, "__drizzle_migrations");
    migrate(drizzle({ client: a }), { migrationsFolder: folder });
    expect(dump(a, "__drizzle_migrations")).toEqual(before);
    const b = new Database(":memory:");
    migrate(drizzle({ client: b }), { migrationsFolder: folder });
    expect(runMigrations(b).applied).toEqual([]);
    expect(dump(b, "__drizzle_migrations")).toEqual(before);
    a.close();
    b.close();
  });

  test("a db migrated by a newer build is refused", () => {
    const sqlite = new Database(":memory:");
    runMigrations(sqlite);
    sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('x', ?)", [
      embeddedMigrations().at(-1)!.when + 1,
    ]);
    expect(() => runMigrations(sqlite)).toThrow(/newer broker version/);
    sqlite.close();
  });

  test("an applied migration whose text changed is refused", () => {
    const sqlite = new Database(":memory:");
    runMigrations(sqlite);
    const ms = embeddedMigrations().map((m, i) => i === 0 ? { ...m, hash: "0".repeat(64) } : m);
    expect(() => runMigrations(sqlite, ms)).toThrow(/differs/);
    sqlite.close();
  });

  test("a later migration applies on top, atomically", () => {
    const sqlite = new Database(":memory:");
    runMigrations(sqlite);
    const base = embeddedMigrations();
    const bad = {
      tag: "9999_bad",
      when: base.at(-1)!.when + 10,
      sql: "CREATE TABLE extra (x int);\n--> statement-breakpoint\nSYNTAX ERROR;",
      hash: "h",
    };
    expect(() => runMigrations(sqlite, [...base, bad])).toThrow();
    expect(tableNames(sqlite)).not.toContain("extra");
    const good = { ...bad, sql: "CREATE TABLE extra (x int);" };
    expect(runMigrations(sqlite, [...base, good]).applied).toEqual(["9999_bad"]);
    expect(tableNames(sqlite)).toContain("extra");
    sqlite.close();
  });

  test("schema round-trip: every table reads back what was written, JSON columns included", () => {
    const { sqlite, db } = openMetaDb(":memory:");
    db.insert(s.cluster).values({ id: 1, clusterId: "c", nodeId: 3, createdAt: 5 }).run();
    expect(() =>
      db.insert(s.cluster).values({ id: 2, clusterId: "c", nodeId: 3, createdAt: 5 }).run()
    )
      .toThrow();
    const broker = {
      nodeId: 1,
      host: "h",
      kafkaPort: 9092,
      httpPort: 8080,
      clusterPort: 9093,
      rack: null,
      fenced: true,
      epoch: 7,
      registeredAt: 9,
    };
    db.insert(s.brokers).values(broker).run();
    expect(db.select().from(s.brokers).all()).toEqual([broker]);
    const topic = {
      topicId: "t1",
      name: "a",
      internal: false,
      configs: { "retention.ms": "5" },
      createdAt: 1,
    };
    db.insert(s.topics).values(topic).run();
    const part = {
      topicId: "t1",
      partition: 0,
      leader: 1,
      leaderEpoch: 2,
      partitionEpoch: 3,
      replicas: [1, 2],
      isr: [2],
    };
    db.insert(s.partitions).values(part).run();
    expect(db.select().from(s.topics).all()).toEqual([topic]);
    expect(db.select().from(s.partitions).all()).toEqual([{ ...part, reassignment: null }]);
    expect(() => db.insert(s.topics).values({ ...topic, topicId: "t2" }).run()).toThrow(); // name unique
    expect(() => db.insert(s.partitions).values({ ...part, topicId: "nope" }).run()).toThrow(); // FK
    db.delete(s.topics).where(eq(s.topics.topicId, "t1")).run();
    expect(db.select().from(s.partitions).all()).toEqual([]); // cascade
    const off = {
      groupId: "g",
      topic: "a",
      partition: 0,
      offset: 2 ** 53 - 1,
      leaderEpoch: -1,
      metadata: "",
      commitTs: 1,
      expireTs: null,
    };
    db.insert(s.groupOffsets).values(off).run();
    expect(db.select().from(s.groupOffsets).all()).toEqual([off]);
    sqlite.close();
  });
});
