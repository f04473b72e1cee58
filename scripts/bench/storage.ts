// Storage benchmark (not a test): `bun scripts/bench/storage.ts [--quick]`.
// Alternates our log and dd on the same disk, fresh files each run, and prints a table:
//  - appends with validation (1 KiB records in 16 KiB and 1 MiB batches) + one fdatasync
//    vs `dd conv=fdatasync` of the same byte count;
//  - reads delivered to a file descriptor (/dev/null) vs dd reading the segment back (warm);
//  - group commit: 8 appenders x 16 records of 1 KiB with acks=all: p99 vs 2x one fdatasync of
//    the same bytes, throughput vs a bare write+fdatasync loop.
// CPU of both sides: process.cpuUsage for ours, getrusage of the dd child for dd.
import * as fs from "node:fs";
import * as path from "node:path";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { PartitionLog } from "../../src/storage/types.ts";

const quick = process.argv.includes("--quick");
const TOTAL = (quick ? 256 : 1024) * 1024 * 1024;
const PAIRS = 3;
const ROOT = path.resolve(import.meta.dir, "../../.bench-storage");
const MB = 1024 * 1024;

function makeBatch(records: number): Uint8Array {
  const value = new Uint8Array(1024 - 20).fill(7);
  const now = Date.now();
  return encodeRecordBatch({
    records: Array.from({ length: records }, (_, i) => ({ key: null, value, timestamp: now + i })),
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

function freshDir(name: string): string {
  const d = path.join(ROOT, `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

function cpuMs(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

async function openLog(
  dir: string,
  stats?: { walkNs: number },
): Promise<{ store: SegmentLogStore; log: PartitionLog }> {
  const store = await SegmentLogStore.open({
    dataDir: dir,
    checkpointIntervalMs: 0,
    flush: { kind: "interval", ms: 0 },
    stats,
  });
  const log = await store.openLog({
    topic: "bench",
    partition: 0,
    topicId: "b",
    config: { segmentBytes: 1024 * MB, maxMessageBytes: 4 * MB },
  });
  return { store, log };
}

interface Run {
  seconds: number;
  cpuMs: number;
}

async function oursAppend(
  b: Uint8Array,
  stats: { walkNs: number },
): Promise<Run & { dir: string }> {
  const dir = freshDir("ours");
  const { store, log } = await openLog(dir, stats);
  const n = Math.floor(TOTAL / b.length);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) log.append(b, { leaderEpoch: 0 });
  await log.flush();
  const seconds = (performance.now() - t0) / 1000;
  const c = cpuMs(cpu);
  await store.closeAll();
  return { seconds, cpuMs: c, dir };
}

function dd(args: string[]): Run {
  const t0 = performance.now();
  const r = Bun.spawnSync(["dd", ...args], { stderr: "pipe" });
  const seconds = (performance.now() - t0) / 1000;
  if (r.exitCode !== 0) throw new Error(`dd failed: ${r.stderr.toString()}`);
  const cpu = r.resourceUsage?.cpuTime;
  return { seconds, cpuMs: cpu ? Number(cpu.user + cpu.system) / 1000 : NaN };
}

function ddWrite(bytes: number): Run {
  const dir = freshDir("dd");
  const r = dd([
    "if=/dev/zero",
    `of=${path.join(dir, "out")}`,
    "bs=1M",
    "iflag=count_bytes",
    `count=${bytes}`,
    "conv=fdatasync",
  ]);
  fs.rmSync(dir, { recursive: true, force: true });
  return r;
}

/** Reads the whole log to /dev/null twice on one open store: first pass maps (cold map), second is warm. */
async function oursRead(dir: string): Promise<{ cold: Run; warm: Run }> {
  const { store, log } = await openLog(dir);
  const nullFd = fs.openSync("/dev/null", "w");
  const pass = (): Run => {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    let off = log.logStartOffset();
    let bytes = 0;
    while (off < log.logEndOffset()) {
      const r = log.read(off, MB);
      fs.writeSync(nullFd, r.records);
      bytes += r.records.length;
      off = r.nextOffset;
    }
    if (bytes < TOTAL * 0.9) throw new Error(`read only ${bytes} bytes`);
    return { seconds: (performance.now() - t0) / 1000, cpuMs: cpuMs(cpu) };
  };
  const cold = pass();
  const warm = pass();
  fs.closeSync(nullFd);
  await store.closeAll();
  return { cold, warm };
}

function ddRead(dir: string): Run {
  const seg = path.join(dir, "logs", "bench-0", "00000000000000000000.log");
  return dd([`if=${seg}`, "of=/dev/null", "bs=1M"]);
}

async function groupCommit(): Promise<
  {
    p50: number;
    p99: number;
    mbps: number;
    syncMs: number;
    syncP99: number;
    bareMbps: number;
    cpuMs: number;
  }
> {
  const dir = freshDir("gc");
  const { store, log } = await openLog(dir);
  const b = makeBatch(16);
  const lat: number[] = [];
  const rounds = quick ? 150 : 400;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = 0; i < rounds; i++) {
      const s = performance.now();
      await log.append(b, { leaderEpoch: 0, requireDurable: true }).ack;
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const c = cpuMs(cpu);
  await store.closeAll();
  // Bare loop over the same bytes: pwrite 16 KiB then fdatasync, one at a time.
  const f = path.join(freshDir("bare"), "f");
  const fd = fs.openSync(f, "w");
  const syncLat: number[] = [];
  const n = Math.min(8 * rounds, 1000);
  const tb = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    fs.writeSync(fd, b, 0, b.length, i * b.length);
    await new Promise<void>((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res())));
    syncLat.push(performance.now() - s);
  }
  const bareSecs = (performance.now() - tb) / 1000;
  fs.closeSync(fd);
  return {
    p50: pct(lat, 0.5),
    p99: pct(lat, 0.99),
    mbps: (8 * rounds * b.length) / MB / secs,
    syncMs: median(syncLat),
    syncP99: pct(syncLat, 0.99),
    bareMbps: (n * b.length) / MB / bareSecs,
    cpuMs: c,
  };
}

async function main(): Promise<void> {
  fs.mkdirSync(ROOT, { recursive: true });
  const rows: string[][] = [];
  for (const [label, records] of [["16 KiB batches", 16], ["1 MiB batches", 1024]] as const) {
    const b = makeBatch(records);
    const ratios: number[] = [];
    const readRatios: number[] = [];
    const coldRatios: number[] = [];
    const details: string[] = [];
    let walk = 0;
    for (let i = 0; i < PAIRS; i++) {
      const stats = { walkNs: 0 };
      const ours = await oursAppend(b, stats);
      const theirs = ddWrite(Math.floor(TOTAL / b.length) * b.length);
      const bytes = Math.floor(TOTAL / b.length) * b.length;
      ratios.push(theirs.seconds / ours.seconds);
      walk = stats.walkNs / 1e9 / ours.seconds;
      details.push(
        `append ours ${(bytes / MB / ours.seconds).toFixed(0)} MiB/s cpu ${
          ours.cpuMs.toFixed(0)
        } ms | ` +
          `dd ${(bytes / MB / theirs.seconds).toFixed(0)} MiB/s cpu ${
            theirs.cpuMs.toFixed(0)
          } ms | ` +
          `timestamp walk ${(walk * 100).toFixed(1)}% of append time`,
      );
      // warm both, then alternate reads
      ddRead(ours.dir);
      const { cold, warm: r1 } = await oursRead(ours.dir);
      const r2 = ddRead(ours.dir);
      readRatios.push(r2.seconds / r1.seconds);
      coldRatios.push(r2.seconds / cold.seconds);
      details.push(
        `read ours warm ${(bytes / MB / r1.seconds).toFixed(0)} MiB/s cpu ${
          r1.cpuMs.toFixed(0)
        } ms ` +
          `(first pass over a fresh map ${(bytes / MB / cold.seconds).toFixed(0)} MiB/s) | ` +
          `dd ${(bytes / MB / r2.seconds).toFixed(0)} MiB/s cpu ${r2.cpuMs.toFixed(0)} ms`,
      );
      fs.rmSync(ours.dir, { recursive: true, force: true });
    }
    for (const d of details) console.log(`  ${label}: ${d}`);
    rows.push([
      `append+fdatasync ${label}`,
      `${(median(ratios) * 100).toFixed(0)}% of dd`,
      ">= 70%",
    ]);
    rows.push([
      `read to fd ${label} (warm map)`,
      `${(median(readRatios) * 100).toFixed(0)}% of dd`,
      ">= 50%",
    ]);
    rows.push([
      `read to fd ${label} (fresh map)`,
      `${(median(coldRatios) * 100).toFixed(0)}% of dd`,
      "info",
    ]);
  }
  const gc = await groupCommit();
  console.log(
    `  group commit: p50 ${gc.p50.toFixed(2)} ms p99 ${gc.p99.toFixed(2)} ms, ${
      gc.mbps.toFixed(1)
    } MiB/s, cpu ${gc.cpuMs.toFixed(0)} ms; one 16 KiB write+fdatasync median ${
      gc.syncMs.toFixed(2)
    } ms p99 ${gc.syncP99.toFixed(2)} ms, bare loop ${gc.bareMbps.toFixed(1)} MiB/s`,
  );
  rows.push([
    "group commit p99 (8 x 16 KiB, acks=all)",
    `${gc.p99.toFixed(2)} ms vs 2x sync ${(2 * gc.syncMs).toFixed(2)} ms`,
    "p99 <= 2x",
  ]);
  rows.push([
    "group commit throughput",
    `${((gc.mbps / gc.bareMbps) * 100).toFixed(0)}% of bare loop`,
    ">= 80%",
  ]);
  fs.rmSync(ROOT, { recursive: true, force: true });
  const w = [44, 36, 10];
  console.log(`\n${"measure".padEnd(w[0])}${"result".padEnd(w[1])}target`);
  for (const r of rows) console.log(`${r[0].padEnd(w[0])}${r[1].padEnd(w[1])}${r[2]}`);
  console.log(
    `(${
      quick ? "--quick: 256 MiB" : "1 GiB"
    } per run, ${PAIRS} alternating pairs, median of pairwise ratios)`,
  );
}

await main();
