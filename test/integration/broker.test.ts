// One broker process driven over HTTP: retention on disk, clean restarts, refusals, disk full.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess, tempDir } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

const running: RunningBroker[] = [];
async function start(opts: Parameters<typeof startBrokerProcess>[0] = {}) {
  const b = await startBrokerProcess(opts);
  running.push(b);
  return b;
}
afterAll(() => {
  for (const b of running) b.kill("SIGKILL");
});

function duBytes(path: string): number {
  const r = spawnSync("du", ["-s", "-B1", path], { encoding: "utf8" });
  return Number(r.stdout.split(/\s/)[0]);
}

describe("broker process", () => {
  test(
    "retention.ms=2000: the log start advances and the bytes on disk shrink within 5 s",
    async () => {
      const b = await start();
      const r = await api(b.httpUrl, "POST", "/topics", {
        name: "short",
        partitions: 1,
        configs: { "retention.ms": "2000", "segment.bytes": "65536" },
      });
      expect(r.status).toBe(201);
      const value = "x".repeat(8000);
      for (let i = 0; i < 60; i++) {
        const p = await api(
          b.httpUrl,
          "POST",
          "/topics/short/records?acks=1",
          Array.from({ length: 4 }, () => ({ value })),
        );
        expect(p.status).toBe(200);
      }
      const dir = join(b.dataDir, "logs", "short-0");
      const before = duBytes(dir);
      expect(before).toBeGreaterThan(1_500_000);
      const producedAt = Date.now();
      let logStart = 0;
      let after = before;
      while (Date.now() - producedAt < 5000) {
        await Bun.sleep(200);
        const d = await api(b.httpUrl, "GET", "/topics/short");
        logStart = d.json.partitions[0].log_start_offset;
        after = duBytes(dir);
        if (logStart > 0 && after < before / 4) break;
      }
      expect(logStart).toBeGreaterThan(0);
      expect(after).toBeLessThan(before / 4);
      // Reading below the new log start answers an error that gives the log start.
      const old = await api(b.httpUrl, "GET", "/topics/short/partitions/0/records?offset=0");
      expect(old.status).toBe(416);
      expect(old.json.log_start_offset).toBe(logStart);
    },
    30_000,
  );

  test("SIGTERM stops within 5 s; the restart after a clean shutdown scans nothing", async () => {
    const b = await start({ args: ["--log-level", "debug"] });
    await api(b.httpUrl, "POST", "/topics", { name: "t", partitions: 2 });
    for (let i = 0; i < 20; i++) {
      await api(b.httpUrl, "POST", "/topics/t/records", { value: `v${i}`, partition: i % 2 });
    }
    const t0 = Date.now();
    b.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);

    const again = await start({ dataDir: b.dataDir, args: ["--log-level", "debug"] });
    // Logs left clean open on first use (the clean-shutdown manifest): the reads open t's two.
    const recs = [...await readAll(again.httpUrl, "t", 0), ...await readAll(again.httpUrl, "t", 1)];
    expect(recs.length).toBe(20);
    expect(again.logs.some((l) => l.includes("open on first use"))).toBe(true);
    const opened = again.logs.map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    }).filter((l) => l.msg === "partition log opened");
    // Topic t's two partitions (and any other log used since the start), none scanned.
    expect(opened.filter((o) => /\/t-\d+$/.test(o.dir)).length).toBe(2);
    for (const o of opened) {
      expect(o.clean).toBe(true);
      expect(o.scannedBytes).toBe(0);
    }
  }, 30_000);

  const dropMeta = (dir: string, files: string[]) => {
    for (const f of files) {
      for (const ext of ["", "-wal", "-shm"]) rmSync(join(dir, f + ext), { force: true });
    }
  };
  test("on SIGTERM a waiting long-poll is answered and a live tail ends cleanly", async () => {
    const b = await start();
    await api(b.httpUrl, "POST", "/topics", { name: "lp", partitions: 1 });
    const poll = fetch(
      `${b.httpUrl}/topics/lp/partitions/0/records?offset=latest&max_wait_ms=30000`,
    );
    const tail = fetch(`${b.httpUrl}/topics/lp/records`, {
      headers: { accept: "text/event-stream" },
    }).then((r) => r.text());
    await Bun.sleep(300);
    const t0 = Date.now();
    b.kill("SIGTERM");
    const answered = await poll;
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { records: unknown[] }).records).toEqual([]);
    expect(await tail).toContain(": connected");
    expect(await b.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
  }, 30_000);

  /** A broker that wrote topic `keep` with one record, then stopped cleanly. */
  const keptAndStopped = async () => {
    const b = await start();
    await api(b.httpUrl, "POST", "/topics", { name: "keep", partitions: 1 });
    await api(b.httpUrl, "POST", "/topics/keep/records", { value: "precious" });
    const topic = (await api(b.httpUrl, "GET", "/topics/keep")).json as { topic_id: string };
    b.kill("SIGTERM");
    await b.exited;
    return { dataDir: b.dataDir, topicId: topic.topic_id };
  };
  const warnings = (b: RunningBroker) =>
    b.logs.flatMap((l) => {
      try {
        const j = JSON.parse(l);
        return j.level === "warn" ? [j.msg as string] : [];
      } catch {
        return [];
      }
    });

  test(
    "a deleted meta.db is rebuilt from the metadata log; topics and records are back",
    async () => {
      const b = await keptAndStopped();
      dropMeta(b.dataDir, ["meta.db"]);
      const again = await start({ dataDir: b.dataDir });
      expect(warnings(again)).toContain("meta.db is missing: rebuilding it from the metadata log");
      const after = (await api(again.httpUrl, "GET", "/topics/keep")).json as { topic_id: string };
      expect(after.topic_id).toBe(b.topicId);
      const recs = await readAll(again.httpUrl, "keep", 0);
      expect(recs.map((r) => r.value)).toEqual(["precious"]);
    },
    30_000,
  );

  test("a damaged meta.db is kept aside and rebuilt from the metadata log", async () => {
    const b = await keptAndStopped();
    // Overwrite the SQLite header: "file is not a database".
    const fd = openSync(join(b.dataDir, "meta.db"), "r+");
    writeSync(fd, new Uint8Array(100).fill(0x5a), 0, 100, 0);
    closeSync(fd);
    const again = await start({ dataDir: b.dataDir });
    expect(warnings(again)).toContain(
      "meta.db is damaged: kept aside, rebuilding it from the metadata log",
    );
    expect(readdirSync(b.dataDir).some((f) => /^meta\.db\.damaged-/.test(f))).toBe(true);
    const recs = await readAll(again.httpUrl, "keep", 0);
    expect(recs.map((r) => r.value)).toEqual(["precious"]);
  }, 30_000);

  test(
    "a damaged raft.db is refused with what to do; moved aside, it is rebuilt from meta.db",
    async () => {
      const b = await keptAndStopped();
      const raft = join(b.dataDir, "raft.db");
      const fd = openSync(raft, "r+");
      writeSync(fd, new Uint8Array(100).fill(0x5a), 0, 100, 0);
      closeSync(fd);
      await expect(startBrokerProcess({ dataDir: b.dataDir })).rejects.toThrow(
        /raft\.db is damaged or unreadable .*moving it aside rebuilds it/,
      );
      dropMeta(b.dataDir, ["raft.db"]);
      const again = await start({ dataDir: b.dataDir });
      const recs = await readAll(again.httpUrl, "keep", 0);
      expect(recs.map((r) => r.value)).toEqual(["precious"]);
    },
    30_000,
  );

  test(
    "a data dir whose metadata and metadata log were deleted is refused; segments are kept",
    async () => {
      const b = await keptAndStopped();
      dropMeta(b.dataDir, ["meta.db", "raft.db"]);
      await expect(startBrokerProcess({ dataDir: b.dataDir })).rejects.toThrow(
        /meta.db is missing/,
      );
      expect(duBytes(join(b.dataDir, "logs", "keep-0"))).toBeGreaterThan(0);
      expect(spawnSync("ls", [join(b.dataDir, "logs", "keep-0")], { encoding: "utf8" }).stdout)
        .toContain(".log");
    },
    30_000,
  );

  test(
    "bytes damaged on disk after a clean shutdown are never served: earlier records are, then an error",
    async () => {
      const b = await start();
      await api(b.httpUrl, "POST", "/topics", { name: "dmg", partitions: 1 });
      await api(b.httpUrl, "POST", "/topics/dmg/records", { value: "first" });
      await api(b.httpUrl, "POST", "/topics/dmg/records", { value: "second" });
      b.kill("SIGTERM");
      await b.exited;
      // The second batch starts where the first ends; flip a byte in its value.
      const dir = join(b.dataDir, "logs", "dmg-0");
      const seg = join(dir, readdirSync(dir).find((f) => f.endsWith(".log"))!);
      const data = readFileSync(seg);
      const second = 12 + data.readInt32BE(8);
      const fd = openSync(seg, "r+");
      writeSync(fd, new Uint8Array([0x21]), 0, 1, data.length - 2);
      closeSync(fd);
      expect(second).toBeLessThan(data.length - 2);
      const again = await start({ dataDir: b.dataDir });
      const recs = await api(again.httpUrl, "GET", "/topics/dmg/partitions/0/records?offset=0");
      expect(recs.status).toBe(200);
      expect(recs.json.records.map((r: { value: string }) => r.value)).toEqual(["first"]);
      expect(recs.json.next_offset).toBe(1);
      const bad = await api(again.httpUrl, "GET", "/topics/dmg/partitions/0/records?offset=1");
      expect(bad.status).toBe(500);
      expect(bad.json.kafka_error_code).toBe(56);
      expect(bad.json.message).toContain("damaged");
      // A live tail delivers the good record, then an error event, and ends (no busy retry).
      const tail = await fetch(`${again.httpUrl}/topics/dmg/records?from=earliest`, {
        headers: { accept: "text/event-stream" },
        signal: AbortSignal.timeout(5000),
      });
      const text = await tail.text();
      expect(text).toContain('"value":"first"');
      expect(text).toMatch(/event: error\ndata: \{"error_code":50056/);
      expect(again.logs.some((l) => l.includes("damaged log bytes"))).toBe(true);
    },
    30_000,
  );

  test(
    "disk full: produce fails with a storage error, reads and admin keep working, the broker stays up",
    async () => {
      const mnt = tempDir("broker-full-");
      const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt]);
      // Root in CI and here; a machine that cannot mount fails loudly rather than skipping.
      expect(m.status).toBe(0);
      try {
        const dataDir = join(mnt, "data");
        mkdirSync(dataDir);
        const b = await start({ dataDir, args: ["--topic-default", "segment.bytes=1048576"] });
        expect((await api(b.httpUrl, "POST", "/topics", { name: "fill", partitions: 1 })).status)
          .toBe(201);
        const value = "y".repeat(60_000);
        let full:
          | { status: number; json: { error_code: number; kafka_error_code: number } }
          | undefined;
        let ok = 0;
        for (let i = 0; i < 400; i++) {
          const r = await api(
            b.httpUrl,
            "POST",
            "/topics/fill/records?acks=all",
            Array.from({ length: 4 }, () => ({ value })),
          );
          if (r.status !== 200) {
            full = r;
            break;
          }
          ok++;
        }
        expect(ok).toBeGreaterThan(5);
        expect(full?.status).toBe(507);
        expect(full?.json.kafka_error_code).toBe(56);
        expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);
        const first = await api(
          b.httpUrl,
          "GET",
          "/topics/fill/partitions/0/records?offset=0&limit=1",
        );
        expect(first.status).toBe(200);
        expect(first.json.records[0].value.length).toBe(60_000);
        expect((await api(b.httpUrl, "GET", "/topics/fill")).status).toBe(200);
        // Freeing space (lower retention.bytes: closed segments go) lets produce resume without a restart.
        const alter = await api(b.httpUrl, "PATCH", "/topics/fill/configs", {
          "retention.bytes": "1048576",
        });
        expect(alter.status).toBe(200);
        let resumed = false;
        for (let i = 0; i < 40 && !resumed; i++) {
          await Bun.sleep(250);
          resumed =
            (await api(b.httpUrl, "POST", "/topics/fill/records", { value: "after" })).status ===
              200;
        }
        expect(resumed).toBe(true);
        b.kill("SIGKILL");
        await b.exited;
      } finally {
        spawnSync("umount", ["-l", mnt]);
      }
    },
    60_000,
  );
});
