// Group-commit part of the storage benchmark. Blocks alternate, so every side sees the same disk
// and the same background load:
//  - ours: 8 appenders, each appending one batch of 16 records of 1 KiB with acks=all and
//    awaiting its ack before the next (latency = append call to ack);
//  - bare16: a loop of pwrite(the same 16 KiB batch) + fdatasync, one at a time (the
//    "latency of one fdatasync of the same bytes" and the throughput reference);
//  - bare128: a loop of pwrite(8 batches, 128 KiB) + fdatasync: what one ideal group-commit
//    round costs with no log at all (the floor for our per-append latency);
//  - bare8: 8 concurrent loops of pwrite(16 KiB) + their own fdatasync, no grouping: the
//    fdatasync latency distribution under the same concurrency.
// One unrecorded block of every side first (JIT warm-up; steady state is what is judged). After
// the blocks, "continuous": the same 8 appenders for as many appends again with no pause, so
// our log never gets the idle time it writes its zero-ahead window in (zero-ahead.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import type { SegmentPartitionLog } from "../../src/storage/partition-log.ts";
import { cpuMs, freshDir, makeBatch, MB, median, openLog, pct } from "./storage-util.ts";

export interface Dist {
  p50: number;
  p99: number;
  max: number;
  n: number;
  mibps: number;
  cpuMs: number;
}

export interface GroupCommitResult {
  ours: Dist;
  bare16: Dist;
  bare128: Dist;
  bare8: Dist;
  continuous: Dist;
  syncRounds: number;
  appends: number;
}

class Side {
  lat: number[] = [];
  bytes = 0;
  seconds = 0;
  cpu = 0;
  dist(): Dist {
    return {
      p50: median(this.lat),
      p99: pct(this.lat, 0.99),
      max: pct(this.lat, 1),
      n: this.lat.length,
      mibps: this.bytes / MB / this.seconds,
      cpuMs: this.cpu,
    };
  }
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res())));
}

async function timed(side: Side, body: () => Promise<void>): Promise<void> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await body();
  side.seconds += (performance.now() - t0) / 1000;
  side.cpu += cpuMs(cpu);
}

export async function groupCommitBench(blocks: number, roundsPerBlock: number, zeroAhead = true) {
  const b = makeBatch(16);
  const b8 = new Uint8Array(8 * b.length);
  for (let i = 0; i < 8; i++) b8.set(b, i * b.length);
  const dir = freshDir("gc");
  const { store, log } = await openLog(dir, undefined, zeroAhead);
  const bareFile = path.join(freshDir("bare"), "f");
  const fd = fs.openSync(bareFile, "w");
  let pos = 0;
  const recorded = { ours: new Side(), bare16: new Side(), bare128: new Side(), bare8: new Side() };
  let rounds0 = 0;
  for (let blk = -1; blk < blocks; blk++) {
    const warm = blk < 0;
    const { ours, bare16, bare128, bare8 } = warm
      ? { ours: new Side(), bare16: new Side(), bare128: new Side(), bare8: new Side() }
      : recorded;
    if (blk === 0) rounds0 = (log as SegmentPartitionLog).commit.rounds;
    await timed(ours, async () => {
      await Promise.all(Array.from({ length: 8 }, async () => {
        for (let i = 0; i < roundsPerBlock; i++) {
          const s = performance.now();
          await log.append(b, { leaderEpoch: 0, requireDurable: true }).ack;
          ours.lat.push(performance.now() - s);
          ours.bytes += b.length;
        }
      }));
      // Our log writes zeros ahead of its end once idle (src/storage/zero-ahead.ts): that time
      // and CPU count as ours, and the bare loops start after it, on a quiet disk.
      await new Promise((r) => setTimeout(r, 5));
      await (log as SegmentPartitionLog).zeroing;
    });
    await timed(bare16, async () => {
      for (let i = 0; i < roundsPerBlock; i++) {
        const s = performance.now();
        fs.writeSync(fd, b, 0, b.length, pos);
        pos += b.length;
        await fdatasync(fd);
        bare16.lat.push(performance.now() - s);
        bare16.bytes += b.length;
      }
    });
    await timed(bare128, async () => {
      for (let i = 0; i < roundsPerBlock; i++) {
        const s = performance.now();
        fs.writeSync(fd, b8, 0, b8.length, pos);
        pos += b8.length;
        await fdatasync(fd);
        bare128.lat.push(performance.now() - s);
        bare128.bytes += b8.length;
      }
    });
    await timed(bare8, () =>
      Promise.all(Array.from({ length: 8 }, async () => {
        for (let i = 0; i < roundsPerBlock; i++) {
          const s = performance.now();
          const at = pos;
          pos += b.length;
          fs.writeSync(fd, b, 0, b.length, at);
          await fdatasync(fd);
          bare8.lat.push(performance.now() - s);
          bare8.bytes += b.length;
        }
      })).then(() => {}));
  }
  const syncRounds = (log as SegmentPartitionLog).commit.rounds - rounds0;
  const continuous = new Side();
  await timed(continuous, () =>
    Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = 0; i < blocks * roundsPerBlock; i++) {
        const s = performance.now();
        await log.append(b, { leaderEpoch: 0, requireDurable: true }).ack;
        continuous.lat.push(performance.now() - s);
        continuous.bytes += b.length;
      }
    })).then(() => {}));
  fs.closeSync(fd);
  await store.closeAll();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(path.dirname(bareFile), { recursive: true, force: true });
  return {
    ours: recorded.ours.dist(),
    bare16: recorded.bare16.dist(),
    bare128: recorded.bare128.dist(),
    bare8: recorded.bare8.dist(),
    continuous: continuous.dist(),
    syncRounds,
    appends: recorded.ours.lat.length,
  } satisfies GroupCommitResult;
}
