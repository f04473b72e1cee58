// Zeros written ahead of the active segment's end while acks=all rounds are small and frequent
// (src/storage/zero-ahead.ts): the policy, and that the window never costs a record.
import { describe, expect, test } from "bun:test";
import {
  MAX_ROUND_BYTES,
  MAX_ROUND_GAP_MS,
  MAX_WINDOW,
  MIN_WINDOW,
  STEP,
  windowFor,
  ZeroAheadPolicy,
} from "../../src/storage/zero-ahead.ts";
import type { PartitionLog } from "../../src/storage/types.ts";
import type { SegmentPartitionLog } from "../../src/storage/partition-log.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { batch, simulatedStore, storeOn } from "./helpers.ts";

const KIB = 1024;
const SEG = "/data/logs/t-0/00000000000000000000.log";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` every 5 ms for up to 5 s (timers run late on a loaded machine). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await sleep(5);
}

/** Feed `n` rounds of `bytes` each, `gap` ms apart; returns the time and size reached. */
function feed(p: ZeroAheadPolicy, n: number, bytes: number, gap: number, t0 = 0, size0 = 0) {
  let t = t0;
  let size = size0;
  for (let i = 0; i < n; i++) {
    size += bytes;
    t += gap;
    p.noteRound(t, 0, size);
  }
  return { t, size };
}

describe("policy", () => {
  test("no window before a pattern of small, frequent rounds", () => {
    const p = new ZeroAheadPolicy();
    const a = feed(p, 7, 128 * KIB, 1);
    expect(p.step(a.t, a.size, a.size, 1 << 30, false)).toBeNull(); // warming up
    const b = feed(p, 1, 128 * KIB, 1, a.t, a.size);
    const s = p.step(b.t, b.size, b.size, 1 << 30, false);
    expect(s).not.toBeNull();
    expect(s!.to).toBe(b.size + Math.min(STEP, b.size)); // no more zeros than records (1 MiB)
  });

  test("bulk rounds and rare rounds get no window", () => {
    const big = new ZeroAheadPolicy();
    const a = feed(big, 50, MAX_ROUND_BYTES * 2, 1);
    expect(big.step(a.t, a.size, a.size, 1 << 30, false)).toBeNull();
    const rare = new ZeroAheadPolicy();
    const b = feed(rare, 50, 16 * KIB, MAX_ROUND_GAP_MS * 3);
    expect(rare.step(b.t, b.size, b.size, 1 << 30, false)).toBeNull();
  });

  test("the window is about 256 rounds, refilled from half, capped by the segment limit", () => {
    expect(windowFor(1)).toBe(MIN_WINDOW);
    expect(windowFor(16 * KIB)).toBe(4 << 20);
    expect(windowFor(128 * KIB)).toBe(MAX_WINDOW);
    const p = new ZeroAheadPolicy();
    const { t, size } = feed(p, 20, 16 * KIB, 1, 0, 64 << 20);
    const w = windowFor(16 * KIB);
    // More than half the window left: nothing to start, but a refill goes on to the full size.
    expect(p.step(t, size, size + w / 2, 1 << 30, false)).toBeNull();
    expect(p.step(t, size, size + w / 2, 1 << 30, true)!.to).toBe(size + w);
    expect(p.step(t, size, size + w, 1 << 30, true)).toBeNull();
    // Never past segment.bytes.
    expect(p.step(t, size, size, size + 1000, false)!.to).toBe(size + 1000);
    expect(p.step(t, size, size + 1000, size + 1000, false)).toBeNull();
  });

  test("a small segment gets no more zeros than it holds records", () => {
    const p = new ZeroAheadPolicy();
    const a = feed(p, 20, 128 * KIB, 1); // 2.5 MiB of records: window 32 MiB by rate alone
    expect(p.step(a.t, a.size, a.size + a.size, 1 << 30, true)).toBeNull();
    expect(p.step(a.t, a.size, a.size, 1 << 30, true)!.to).toBe(a.size + a.size);
    const small = new ZeroAheadPolicy();
    const b = feed(small, 20, 8 * KIB, 1); // 160 KiB of records: the 1 MiB minimum
    expect(small.step(b.t, b.size, b.size, 1 << 30, false)!.to).toBe(b.size + MIN_WINDOW);
  });

  test("a failed zero write pauses the window", () => {
    const p = new ZeroAheadPolicy();
    const { t, size } = feed(p, 20, 16 * KIB, 1);
    p.failed(t);
    expect(p.step(t + 1000, size, size, 1 << 30, false)).toBeNull();
    expect(p.step(t + 61_000, size, size, 1 << 30, false)).not.toBeNull();
  });
});

/** `rounds` rounds of `perRound` acks=all appends of ~`size` bytes; returns the batches. */
async function durableRounds(log: PartitionLog, rounds: number, perRound: number, size = 4000) {
  const all: Uint8Array[] = [];
  for (let r = 0; r < rounds; r++) {
    const acks: Promise<void>[] = [];
    for (let i = 0; i < perRound; i++) {
      const b = batch({ count: 4, valueSize: size / 4, tag: all.length });
      all.push(b);
      acks.push(log.append(b, { leaderEpoch: 0, requireDurable: true }).ack);
    }
    await Promise.all(acks);
  }
  return all;
}

/** Read the whole log (every batch served is CRC-checked); returns the offsets read. */
function readAll(log: PartitionLog): number {
  let off = 0;
  while (off < log.logEndOffset()) {
    const r = log.read(off, 1 << 20);
    expect(r.records.length).toBeGreaterThan(0);
    expect(r.firstOffset).toBe(off);
    off = r.nextOffset;
  }
  return off;
}

/**
 * A log past the synchronous head (1 MiB, and two of its largest batches: 64 KiB here), so part of
 * each step of zeros is written in the background.
 */
async function bigLog(store: SegmentLogStore): Promise<PartitionLog> {
  const log = await store.openLog({
    topic: "t",
    partition: 0,
    topicId: "X",
    config: { maxMessageBytes: 64 * KIB },
  });
  await durableRounds(log, 40, 4, 16_000);
  return log;
}

/** The store and log "t-0" on `io` again, as after a restart. */
async function reopen(io: CrashFileIO) {
  const store = await storeOn(io);
  return { store, log: await store.openLog({ topic: "t", partition: 0, topicId: "X" }) };
}

async function windowed(io: CrashFileIO, log: PartitionLog): Promise<SegmentPartitionLog> {
  const seg = log as SegmentPartitionLog;
  // A pause: the idle refill starts, then finishes.
  await until(() => seg.zeroing !== null || seg.active.prepared > seg.active.size);
  await until(() => seg.zeroing === null);
  expect(seg.active.prepared).toBeGreaterThan(seg.active.size);
  expect(io.durableSize(SEG)).toBe(seg.active.prepared);
  return seg;
}

describe("log", () => {
  test("acks=all rounds get a synced window of zeros; bulk appends do not", async () => {
    const { io, store } = await simulatedStore();
    const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
    await durableRounds(log, 12, 4);
    const seg = await windowed(io, log);
    expect(seg.active.prepared - seg.active.size).toBeGreaterThanOrEqual(MIN_WINDOW / 2);
    // Appends after it overwrite zeros in place: the file does not grow.
    const before = seg.active.prepared;
    await durableRounds(log, 5, 4);
    expect(seg.active.prepared).toBe(before);
    expect(seg.active.handle.size()).toBe(before);
    await store.closeAll();

    const bulk = await simulatedStore();
    const b = await bulk.store.openLog({ topic: "t", partition: 0, topicId: "X" });
    for (let i = 0; i < 200; i++) {
      b.append(batch({ count: 4, valueSize: 1000 }), { leaderEpoch: 0 });
    }
    await b.flush();
    await sleep(50);
    const bs = b as SegmentPartitionLog;
    expect(bs.zeroing).toBeNull();
    expect(bs.active.handle.size()).toBe(bs.active.size);
    await bulk.store.closeAll();
  });

  test("power loss with a window: every acknowledged record is recovered, the zeros cost nothing", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { io, store } = await simulatedStore();
      await io.syncDir("/"); // /data itself survives the power loss
      const log = await store.openLog({ topic: "t", partition: 0, topicId: "X" });
      await durableRounds(log, 12, 4);
      const seg = await windowed(io, log);
      const acked = await durableRounds(log, 3 + seed, 4);
      expect(acked.length).toBeGreaterThan(0);
      const end = log.logEndOffset();
      // Unsynced acks=1 appends on top, some of which may survive torn.
      for (let i = 0; i < 3; i++) {
        log.append(batch({ count: 4, valueSize: 900 }), { leaderEpoch: 0 });
      }
      expect(seg.active.size).toBeLessThan(seg.active.prepared);
      const after = io.crash({ seed, keepUnsyncedProb: 0.7 });
      const { store: store2, log: log2 } = await reopen(after);
      expect(log2.logEndOffset()).toBeGreaterThanOrEqual(end);
      expect(readAll(log2)).toBe(log2.logEndOffset());
      // The window is zeros, not a bad tail: nothing was cut for it.
      const r2 = (log2 as SegmentPartitionLog).recovery;
      expect(r2.truncatedBytes).toBeLessThan(3 * 4000);
      // Appends go on over the zeros and survive a clean restart.
      await durableRounds(log2, 3, 2);
      const end2 = log2.logEndOffset();
      await store2.closeAll();
      const { store: store3, log: log3 } = await reopen(after);
      expect((log3 as SegmentPartitionLog).recovery.clean).toBe(true);
      expect(log3.logEndOffset()).toBe(end2);
      await store3.closeAll();
    }
  });

  test("appends that outrun a zero write in flight roll the segment instead of landing under it", async () => {
    const { io, store } = await simulatedStore();
    const log = await bigLog(store);
    const seg = log as SegmentPartitionLog;
    io.writeDelayMs = 100; // the background zero write is slow
    await until(() => seg.active.zeroingFrom >= 0);
    expect(seg.zeroing).not.toBeNull();
    const from = seg.active.zeroingFrom;
    expect(from).toBeGreaterThan(seg.active.size);
    const first = seg.active;
    // Enough acks=1 bytes to pass where the zeros are being written.
    let n = 0;
    while (first.size < from && n < 2000) {
      log.append(batch({ count: 4, valueSize: 4000, tag: n++ }), { leaderEpoch: 0 });
      if (seg.active !== first) break;
    }
    expect(seg.segments.length).toBe(2);
    expect(first.size).toBeLessThanOrEqual(from);
    await seg.zeroing;
    io.writeDelayMs = 0;
    await log.flush();
    // Every batch reads back whole (a CRC check on every read), across both segments.
    expect(readAll(log)).toBe(log.logEndOffset());
    expect(log.logEndOffset()).toBe(40 * 4 * 4 + n * 4);
    await store.closeAll();
  });

  test("close waits for a zero write in flight; a failed zero write is logged and costs no append", async () => {
    const { io, store } = await simulatedStore();
    const log = await bigLog(store);
    io.writeDelayMs = 30;
    const seg = log as SegmentPartitionLog;
    await until(() => seg.active.zeroingFrom >= 0);
    expect(seg.zeroing).not.toBeNull();
    // Close stops the zeros after the piece in flight instead of writing the whole step.
    const t0 = performance.now();
    await store.closeAll();
    expect(seg.zeroing).toBeNull();
    expect(performance.now() - t0).toBeLessThan(16 * 30);

    const warnings: string[] = [];
    const full = await simulatedStore({
      logger: (level, msg) => void (level === "warn" && warnings.push(msg)),
    });
    const log2 = await full.store.openLog({ topic: "t", partition: 0, topicId: "X" });
    await durableRounds(log2, 12, 4);
    // Room for the data below, not for a window of zeros.
    full.io.capacity = full.io.usedBytes() + 200 * KIB;
    await until(() => warnings.some((w) => w.includes("zeros ahead")));
    expect(warnings.some((w) => w.includes("zeros ahead"))).toBe(true);
    // The space the zeros took is still usable by appends (it is allocated to the segment).
    const more = await durableRounds(log2, 5, 4);
    expect(more.length).toBe(20);
    await full.store.closeAll();
  });
});
