// Group commit with an injected 50 ms fdatasync.
import { expect, test } from "bun:test";
import { GroupCommit, TruncatedError } from "../../src/storage/group-commit.ts";
import { batch, simulatedStore } from "./helpers.ts";

test("no ack precedes the sync covering its bytes; N appends share few syncs", async () => {
  const { io, store } = await simulatedStore();
  const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
  await log.flush();
  io.syncDelayMs = 50;
  const segPath = "/data/logs/t-0/00000000000000000000.log";
  const syncs0 = io.syncCount;
  const N = 40;
  const acks: Promise<void>[] = [];
  let violations = 0;
  let bytes = 0;
  for (let i = 0; i < N; i++) {
    const b = batch({ count: 2, valueSize: 100, tag: i });
    const r = log.append(b, { leaderEpoch: 0, requireDurable: true });
    bytes += b.length;
    const end = bytes;
    acks.push(r.ack.then(() => {
      if (io.durableSize(segPath) < end) violations++;
    }));
    if (i % 4 === 3 && i < N - 1) await new Promise((res) => setTimeout(res, 10));
  }
  const t0 = performance.now();
  await Promise.all(acks);
  expect(violations).toBe(0);
  const syncs = io.syncCount - syncs0;
  expect(syncs).toBeGreaterThan(0);
  expect(syncs).toBeLessThanOrEqual(N / 5);
  expect(performance.now() - t0).toBeGreaterThanOrEqual(40);
  // acks=1 under interval flush neither waits nor issues a sync
  const before = io.syncCount;
  const r = log.append(batch(), { leaderEpoch: 0 });
  await r.ack;
  expect(io.syncCount).toBe(before);
  await store.closeAll();
});

test("flush=always syncs every append before the ack; failed syncs reject without unhandled errors", async () => {
  const { io, store } = await simulatedStore({ flush: { kind: "always" } });
  const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
  const r = log.append(batch({ valueSize: 50 }), { leaderEpoch: 0 });
  await r.ack;
  expect(io.durableSize("/data/logs/t-0/00000000000000000000.log")).toBeGreaterThan(50);
  io.fault = (op) => (op === "fdatasync" ? "EIO" : null);
  const bad = log.append(batch(), { leaderEpoch: 0 });
  await expect(bad.ack).rejects.toThrow();
  log.append(batch(), { leaderEpoch: 0 }); // nobody awaits this one's durable promise
  await new Promise((res) => setTimeout(res, 5));
  io.fault = null;
  await log.flush();
  await store.closeAll();
});

test("the interval flusher syncs without anyone waiting", async () => {
  const { io, store } = await simulatedStore({ flush: { kind: "interval", ms: 10 } });
  const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
  log.append(batch({ valueSize: 50 }), { leaderEpoch: 0 });
  expect(io.durableSize("/data/logs/t-0/00000000000000000000.log")).toBe(0);
  await new Promise((res) => setTimeout(res, 60));
  expect(io.durableSize("/data/logs/t-0/00000000000000000000.log")).toBeGreaterThan(50);
  await store.closeAll();
});

test("appenders resumed by one round are all covered by the next; a sync starts in the same turn", async () => {
  const { io, store } = await simulatedStore();
  const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
  await log.flush();
  const segPath = "/data/logs/t-0/00000000000000000000.log";
  // The first append also persists the leader epoch cache (its own syncs): get it out of the way.
  await log.append(batch(), { leaderEpoch: 0, requireDurable: true }).ack;
  await new Promise((res) => setTimeout(res, 20));
  io.syncDelayMs = 20;
  // Requested with none running: issued before any timer or I/O callback, only microtasks.
  const before = io.syncCount;
  let bytes = io.durableSize(segPath);
  const first = log.append(batch({ valueSize: 40 }), { leaderEpoch: 0, requireDurable: true });
  for (let i = 0; i < 5; i++) await Promise.resolve();
  expect(io.syncCount).toBe(before + 1);
  await first.ack;
  bytes = io.durableSize(segPath);
  // 8 appenders in lockstep, 5 rounds each: one sync per round, never the first appender alone.
  const ROUNDS = 5;
  const s0 = io.syncCount;
  let violations = 0;
  await Promise.all(Array.from({ length: 8 }, async (_, a) => {
    for (let i = 0; i < ROUNDS; i++) {
      const b = batch({ count: 2, valueSize: 100, tag: a * 10 + i });
      const r = log.append(b, { leaderEpoch: 0, requireDurable: true });
      bytes += b.length;
      const end = bytes;
      await r.ack;
      if (io.durableSize(segPath) < end) violations++;
    }
  }));
  expect(violations).toBe(0);
  expect(io.syncCount - s0).toBe(ROUNDS);
  await store.closeAll();
});

test("a truncation fails the waits for cut bytes and a sync in flight does not vouch past the cut", async () => {
  let written = 0;
  const pending: (() => void)[] = [];
  const gc = new GroupCommit({
    writtenOffset: () => written,
    syncAll: () => new Promise<void>((res) => pending.push(res)),
  }, 0);
  written = 100;
  const first = gc.waitDurable(100);
  await Promise.resolve(); // the round starts at the end of the microtask burst
  expect(pending.length).toBe(1);
  expect(gc.rounds).toBe(1);
  // Bytes 100..150 are written while the first sync runs: they wait for the next round.
  written = 150;
  const second = gc.waitDurable(150);
  // A follower truncates to 80 before either sync finishes.
  written = 80;
  gc.truncated(80);
  pending.shift()!();
  const [a] = await Promise.allSettled([first]);
  expect(a.status).toBe("rejected");
  expect((a as PromiseRejectedResult).reason).toBeInstanceOf(TruncatedError);
  expect((a as PromiseRejectedResult).reason.errorCode).toBe(6);
  // The finished sync covered only what survived the cut.
  expect(gc.durableOffset).toBe(80);
  // The second round starts after the first settled, and cannot cover offset 150 either.
  await Promise.resolve();
  expect(pending.length).toBe(1);
  pending.shift()!();
  const [b] = await Promise.allSettled([second]);
  expect(b.status).toBe("rejected");
  // New bytes written at the cut offsets are not taken as durable without a sync of their own.
  written = 120;
  let done = false;
  const third = gc.waitDurable(120).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 5));
  expect(done).toBe(false);
  expect(pending.length).toBe(1);
  pending.shift()!();
  await third;
  expect(gc.durableOffset).toBe(120);
});

test("waiters of one round share one promise; a later write waits for the next round", async () => {
  let written = 10;
  const pending: (() => void)[] = [];
  const gc = new GroupCommit({
    writtenOffset: () => written,
    syncAll: () => new Promise<void>((res) => pending.push(res)),
  }, 0);
  const a = gc.waitDurable(5);
  const b = gc.waitDurable(10);
  expect(a).toBe(b);
  await Promise.resolve();
  written = 20;
  const c = gc.waitDurable(20);
  expect(c).not.toBe(a);
  expect(gc.waitDurable(8)).toBe(a); // covered by the running round
  pending.shift()!();
  await a;
  expect(gc.durableOffset).toBe(10);
  await Promise.resolve();
  pending.shift()!();
  await c;
  expect(gc.durableOffset).toBe(20);
  expect(gc.rounds).toBe(2);
});
