// What a restart writes to the metadata log (issue 20): a broker that reopens the logs of its
// single-replica partitions clean leads them again in the same epochs with no record per
// partition; only partitions whose logs were recovered after kill -9 go offline and are elected
// again (their leader epoch moves on). Counted in raft.db, the metadata log itself.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

const running: RunningBroker[] = [];
async function start(dataDir?: string) {
  const b = await startBrokerProcess({ dataDir, timeoutMs: 60_000 });
  running.push(b);
  return b;
}
afterAll(() => {
  for (const b of running) b.kill("SIGKILL");
});

/** The PartitionChanged records in the metadata log after index `from`, and the last index. */
function partitionChanges(dataDir: string, from: number) {
  const db = new Database(join(dataDir, "raft.db"), { readonly: true });
  try {
    const rows = db.query("SELECT idx, body FROM entries WHERE idx > ? ORDER BY idx").all(
      from,
    ) as { idx: number; body: string }[];
    const changes: { topicId: string; partition: number }[] = [];
    for (const r of rows) {
      const e = JSON.parse(r.body) as { kind: string; data?: string };
      if (e.kind !== "normal") continue;
      const rec = JSON.parse(e.data!) as { type: string; topicId: string; partition: number };
      if (rec.type === "PartitionChanged") changes.push(rec);
    }
    return { changes, last: rows.at(-1)?.idx ?? from };
  } finally {
    db.close();
  }
}

async function epochs(url: string): Promise<{ leader: number; leader_epoch: number }[]> {
  const r = await api(url, "GET", "/topics/r");
  expect(r.status).toBe(200);
  return r.json.partitions.map((p: { leader: number; leader_epoch: number }) => ({
    leader: p.leader,
    leader_epoch: p.leader_epoch,
  }));
}

const PARTITIONS = 40;

describe("restart and the metadata log", () => {
  test(
    "a clean restart writes no partition record; after kill -9 only recovered logs move epoch",
    async () => {
      let b = await start();
      const made = await api(b.httpUrl, "POST", "/topics", {
        name: "r",
        partitions: PARTITIONS,
        replication_factor: 1,
      });
      expect(made.status).toBe(201);
      const records = Array.from(
        { length: PARTITIONS },
        (_, p) => ({ partition: p, value: `a${p}` }),
      );
      expect((await api(b.httpUrl, "POST", "/topics/r/records", records)).status).toBe(200);
      const before = await epochs(b.httpUrl);
      const topicId = (await api(b.httpUrl, "GET", "/topics/r")).json.topic_id as string;

      b.kill("SIGTERM");
      expect(await b.exited).toBe(0);
      const mark = partitionChanges(b.dataDir, 0).last;
      b = await start(b.dataDir);
      // Not one record per partition (it was two: offline while fenced, then elected again).
      expect(partitionChanges(b.dataDir, mark).changes).toEqual([]);
      expect(await epochs(b.httpUrl)).toEqual(before);
      expect((await readAll(b.httpUrl, "r", 7)).map((x) => x.value)).toEqual(["a7"]);

      // Writes to five partitions, then kill -9: their logs are recovered at the next start.
      const fresh = [0, 1, 2, 3, 4].map((p) => ({ partition: p, value: `b${p}` }));
      expect((await api(b.httpUrl, "POST", "/topics/r/records?acks=1", fresh)).status).toBe(200);
      b.kill("SIGKILL");
      await b.exited;
      const mark2 = partitionChanges(b.dataDir, 0).last;
      b = await start(b.dataDir);
      const moved = partitionChanges(b.dataDir, mark2).changes;
      expect(moved.every((c) => c.topicId === topicId)).toBe(true);
      expect([...new Set(moved.map((c) => c.partition))].sort((x, y) => x - y)).toEqual([
        0,
        1,
        2,
        3,
        4,
      ]);
      const after = await epochs(b.httpUrl);
      for (let p = 0; p < PARTITIONS; p++) {
        expect(after[p].leader).toBe(0);
        if (p < 5) expect(after[p].leader_epoch).toBeGreaterThan(before[p].leader_epoch);
        else expect(after[p].leader_epoch).toBe(before[p].leader_epoch);
      }
      expect((await readAll(b.httpUrl, "r", 3)).map((x) => x.value)).toEqual(["a3", "b3"]);
    },
    120_000,
  );
});
