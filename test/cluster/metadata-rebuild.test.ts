// meta.db lost after the Raft log was compacted: the tables are rebuilt from the log's snapshot
// plus the entries after it (ClusterService.metadataLog), with the same topic ids.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ClusterService } from "../../src/cluster/node.ts";
import { META_DB_FILE, MetadataStore } from "../../src/meta/index.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../meta/helpers.ts";

const quiet = createLogger("error", {}, () => {});

async function open(dir: string) {
  const cluster = await ClusterService.start({
    dataDir: dir,
    listen: { host: "127.0.0.1", port: 0 },
    voters: 1,
    log: quiet,
    // A snapshot (and compaction) every few entries, so the log no longer starts at index 1.
    raft: { snapshotThreshold: 4 },
  });
  const meta = MetadataStore.open(dir, {
    nodeId: cluster.nodeId,
    expectedClusterId: cluster.clusterId,
    log: (db) => cluster.metadataLog(db),
  });
  await cluster.registerBroker({
    nodeId: meta.nodeId,
    host: "127.0.0.1",
    kafkaPort: 9092,
    httpPort: 8080,
  });
  return { cluster, meta };
}

async function close(o: Awaited<ReturnType<typeof open>>) {
  await o.meta.close();
  o.cluster.close();
}

function raftSnapshotIndex(dir: string): number {
  const db = new Database(join(dir, "raft.db"), { readonly: true });
  try {
    const row = db.query("SELECT idx FROM snapshot WHERE id = 1").get() as { idx: number } | null;
    return row?.idx ?? 0;
  } finally {
    db.close();
  }
}

test("a lost meta.db is rebuilt from the Raft snapshot and the entries after it", async () => {
  const t = tempDir("meta-rebuild-");
  try {
    const first = await open(t.dir);
    const ids: Record<string, string> = {};
    for (const name of ["a", "b", "c", "d", "e", "f"]) {
      ids[name] = (await first.meta.createTopic(name, 2, 1, { "retention.ms": "60000" })).topicId;
    }
    await close(first);
    // The test means nothing unless the log was compacted past the first topics.
    const snap = raftSnapshotIndex(t.dir);
    expect(snap).toBeGreaterThan(4);

    for (const f of [META_DB_FILE, `${META_DB_FILE}-wal`, `${META_DB_FILE}-shm`]) {
      rmSync(join(t.dir, f), { force: true });
    }
    const again = await open(t.dir);
    try {
      for (const [name, id] of Object.entries(ids)) {
        const topic = again.meta.getTopic(name);
        expect(topic?.topicId).toBe(id);
        expect(topic?.partitions.length).toBe(2);
        expect(topic?.configs["retention.ms"]).toBe("60000");
      }
      // Still writable: the rebuilt tables carry on from the log.
      await again.meta.createTopic("g", 1, 1);
      expect(again.meta.getTopic("g")).toBeDefined();
    } finally {
      await close(again);
    }
  } finally {
    t.cleanup();
  }
}, 30_000);
