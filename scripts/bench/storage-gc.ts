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
// Unrecorded blocks of every side first; steady state is what is judged. Ours warms up until the
// JIT is quiet: JavaScriptCore compiles a hot function's top tier (FTL) only after thousands of
// calls, on a background thread that takes 2-40 ms of one of this machine's two CPUs per function
// (PartitionLog.append: ~40 ms, after ~9000 appends). A broker does that once in its first seconds;
// landing inside the recorded blocks it set their p99. The warm-up's own p99 is returned too. After
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
  /** The unrecorded warm-up of our log: appends, their p99, JIT compile time it took. */
  warmup: { appends: number; p99: number; jitMs: number };
  /** JIT compile and GC helper thread time during the recorded blocks (ThreadClock). */
  recordedJitMs: number;
  recordedGcMs: number;
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

/**
 * CPU time of this process's threads whose name starts with `prefix`, in ms since `start()`
 * (Linux; NaN elsewhere). Per thread id, so a helper thread that exits in between (JSC retires
 * idle JIT workers) does not make the figure go down; its time after the start is lost, so this
 * is a lower bound.
 */
export class ThreadClock {
  private base = new Map<string, number>();
  constructor(private readonly prefix: string) {
    this.start();
  }
  start(): void {
    this.base = this.sample() ?? new Map();
  }
  elapsedMs(): number {
    const now = this.sample();
    if (now === null) return NaN;
    let ns = 0;
    for (const [tid, v] of now) ns += v - (this.base.get(tid) ?? 0);
    return ns / 1e6;
  }
  private sample(): Map<string, number> | null {
    try {
      const m = new Map<string, number>();
      for (const t of fs.readdirSync("/proc/self/task")) {
        try {
          if (!fs.readFileSync(`/proc/self/task/${t}/comm`, "utf8").startsWith(this.prefix)) {
            continue;
          }
          m.set(t, Number(fs.readFileSync(`/proc/self/task/${t}/schedstat`, "utf8").split(" ")[0]));
        } catch {
          // the thread exited while being read
        }
      }
      return m;
    } catch {
      return null;
    }
  }
}

/**
 * Warm-up blocks of ours: at least 50 (20 000 appends: JSC's top tier is reached by call counts,
 * so a quiet stretch early on says nothing), then until 3 in a row cost the JIT under 1 ms.
 */
const WARM_MIN = 50;
/** Warm-up blocks of the bare loops (their code is small; Bun's fs wrappers still tier up). */
const BARE_WARM = 5;
const WARM_MAX = 200;

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
  const oursBlock = (ours: Side) =>
    timed(ours, async () => {
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
  const warmOurs = new Side();
  const jit = new ThreadClock("JITWorker");
  const gcHelpers = new ThreadClock("HeapHelper");
  const jitBlock = new ThreadClock("JITWorker");
  for (let blk = 0, quiet = 0; blk < WARM_MAX && (blk < WARM_MIN || quiet < 3); blk++) {
    jitBlock.start();
    await oursBlock(warmOurs);
    quiet = jitBlock.elapsedMs() < 1 ? quiet + 1 : 0;
  }
  const warmup = {
    appends: warmOurs.lat.length,
    p99: pct(warmOurs.lat, 0.99),
    jitMs: jit.elapsedMs(),
  };
  let rounds0 = 0;
  for (let blk = -BARE_WARM; blk < blocks; blk++) {
    const warm = blk < 0;
    const { ours, bare16, bare128, bare8 } = warm
      ? { ours: new Side(), bare16: new Side(), bare128: new Side(), bare8: new Side() }
      : recorded;
    if (blk === 0) {
      rounds0 = (log as SegmentPartitionLog).commit.rounds;
      jit.start();
      gcHelpers.start();
    }
    if (!warm) await oursBlock(ours);
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
  const recordedJitMs = jit.elapsedMs();
  const recordedGcMs = gcHelpers.elapsedMs();
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
    warmup,
    recordedJitMs,
    recordedGcMs,
    ours: recorded.ours.dist(),
    bare16: recorded.bare16.dist(),
    bare128: recorded.bare128.dist(),
    bare8: recorded.bare8.dist(),
    continuous: continuous.dist(),
    syncRounds,
    appends: recorded.ours.lat.length,
  } satisfies GroupCommitResult;
}
