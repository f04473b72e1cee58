// Damage to acknowledged data is not a torn write: recovery keeps the log up to it, moves the
// damaged segment and every later one to a quarantine folder (never deletes them), reports it and
// reuses none of its offsets; a genuine torn tail is still cut. The recovery checkpoint follows
// syncs within about a second, and messages name paths relative to the data dir.
import { describe, expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO, seededRandom } from "../../src/storage/crash-fs.ts";
import type { SegmentPartitionLog } from "../../src/storage/partition-log.ts";
import { QUARANTINE_FILE, type QuarantineState } from "../../src/storage/quarantine.ts";
import { CorruptLogError, StorageError } from "../../src/storage/types.ts";
import { batch, storeOn } from "./helpers.ts";

const DIR = "/data/logs/t-0";
const spec = {
  topic: "t",
  partition: 0,
  topicId: "X",
  config: { segmentBytes: 4000, indexIntervalBytes: 256 },
};

interface Opened {
  store: Awaited<ReturnType<typeof storeOn>>;
  log: SegmentPartitionLog;
  logs: { level: string; msg: string; fields: Record<string, unknown> }[];
}

async function open(io: CrashFileIO, checkpointIntervalMs = 0): Promise<Opened> {
  const logs: Opened["logs"] = [];
  const store = await storeOn(io, {
    checkpointIntervalMs,
    logger: (level, msg, fields) => logs.push({ level, msg, fields: fields ?? {} }),
  });
  const log = (await store.openLog(spec)) as SegmentPartitionLog;
  return { store, log, logs };
}

/** `n` batches of 3 records (tag = batch index), each acknowledged under acks=all. */
async function writeAcked(log: SegmentPartitionLog, n: number, tags: Map<number, number>) {
  for (let i = 0; i < n; i++) {
    const tag = tags.size;
    const r = log.append(batch({ count: 3, valueSize: 100, tag }), {
      leaderEpoch: 1,
      requireDurable: true,
    });
    await r.ack;
    tags.set(r.baseOffset, tag);
  }
}

function segmentFiles(io: CrashFileIO, dir = DIR): string[] {
  return io.readdir(dir).filter((n) => n.endsWith(".log"));
}

/** The batches of a segment file: position, base offset, size. */
function batchesOf(bytes: Uint8Array): { pos: number; base: number; size: number }[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [];
  for (let pos = 0; pos + 12 <= bytes.length && v.getInt32(pos + 8) > 0;) {
    const size = 12 + v.getInt32(pos + 8);
    out.push({ pos, base: Number(v.getBigInt64(pos)), size });
    pos += size;
  }
  return out;
}

/** Every record from the log start to `end` is served and is what was appended there. */
function expectServed(log: SegmentPartitionLog, tags: Map<number, number>, end: number) {
  let off = log.logStartOffset();
  while (off < end) {
    const r = log.read(off, 1 << 20);
    for (const b of decodeRecordBatches(r.records)) {
      expect(b.records![0].value![0]).toBe(tags.get(b.header.baseOffset)! & 0xff);
      off = b.header.baseOffset + b.header.lastOffsetDelta + 1;
    }
  }
  expect(off).toBe(end);
}

function readJson<T>(io: CrashFileIO, p: string): T {
  return JSON.parse(new TextDecoder().decode(io.readFile(p)!)) as T;
}

/** The recovery checkpoint; recovery point -1 while there is none (a new log's first sync writes it). */
function checkpointOrNone(io: CrashFileIO): { recoveryPoint: number } {
  const p = `${DIR}/recovery-checkpoint.json`;
  return io.exists(p) ? readJson<{ recoveryPoint: number }>(io, p) : { recoveryPoint: -1 };
}

async function until(cond: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - t0;
}

/**
 * The attack: acknowledged records in 5 segments, kill -9 with the recovery checkpoint still at
 * 0, one byte flipped in the middle of segment 0.
 */
async function attack() {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  await io.syncDir("/");
  const a = await open(io);
  const tags = new Map<number, number>();
  await writeAcked(a.log, 45, tags);
  const fullEnd = a.log.logEndOffset();
  // kill -9: the page cache (all written bytes) survives, nothing else runs.
  const io2 = io.clone();
  a.log.abandon();
  const files = segmentFiles(io2);
  expect(files.length).toBeGreaterThanOrEqual(5);
  const original = new Map(files.map((f) => [f, io2.readFile(`${DIR}/${f}`)!]));
  const seg0 = original.get(files[0])!;
  const bs = batchesOf(seg0);
  const hit = bs[Math.floor(bs.length / 2)];
  const damaged = seg0.slice();
  damaged[hit.pos + hit.size - 40] ^= 0x10; // a record byte: the CRC no longer matches
  io2.writeFile(`${DIR}/${files[0]}`, damaged);
  return { io: io2, tags, fullEnd, files, original, damaged, hit };
}

describe("damage to acknowledged data", () => {
  test("a flipped byte in segment 0: the log is kept up to it, the rest quarantined, no offset reused", async () => {
    const { io, tags, fullEnd, files, original, damaged, hit } = await attack();
    const { store, log, logs } = await open(io);
    const d = hit.base;
    expect(log.logEndOffset()).toBe(d);
    expectServed(log, tags, d);
    // Reported, with the offsets affected.
    const damage = log.damaged()!;
    expect(damage).toMatchObject({ state: "quarantined", fromOffset: d, toOffset: fullEnd });
    expect(damage.files.length).toBe(1);
    expect(damage.files[0]).toMatch(/^logs\/t-0\/quarantine\//);
    const err = logs.find((l) => l.level === "error")!;
    expect(err.fields).toMatchObject({ fromOffset: d, toOffset: fullEnd, segmentsMoved: 4 });
    expect(log.recovery.quarantinedSegments).toBe(files.length);
    // No later segment lost: all in quarantine, byte-identical; the damaged one copied whole.
    const folder = `/data/${damage.files[0]}`;
    expect(segmentFiles(io, folder)).toEqual(files);
    expect(io.readFile(`${folder}/${files[0]}`)).toEqual(damaged);
    for (const f of files.slice(1)) expect(io.readFile(`${folder}/${f}`)).toEqual(original.get(f)!);
    expect(segmentFiles(io)).toEqual([files[0]]);
    expect(io.readFile(`${DIR}/${files[0]}`)!.subarray(0, hit.pos)).toEqual(
      original.get(files[0])!.subarray(0, hit.pos),
    );
    // No offset reused: client writes are refused; reads of quarantined offsets are storage errors.
    let refused: unknown;
    try {
      log.append(batch({ tag: 99 }), { leaderEpoch: 1 });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(StorageError);
    expect((refused as StorageError).errorCode).toBe(56);
    expect((refused as Error).message).toContain(`offsets ${d} to ${fullEnd - 1}`);
    expect(() => log.read(d + 1, 1 << 20)).toThrow(CorruptLogError);
    expect(log.read(d, 1 << 20).records.length).toBe(0);
    expect(() => log.read(fullEnd + 1, 1 << 20)).toThrow("outside");
    // Another crash changes nothing: the marker outlives it, no second folder.
    const again = await open(io.clone());
    expect(again.log.logEndOffset()).toBe(d);
    expect(again.log.damaged()).toEqual(damage);
    expect(() => again.log.append(batch({ tag: 99 }), { leaderEpoch: 1 })).toThrow(StorageError);
    expect(io.readdir(`${DIR}/quarantine`).length).toBe(1);
    again.log.abandon();
    await store.closeAll();
  });

  test("the operator restores the files: the log is whole and writable again", async () => {
    const { io, tags, fullEnd, files, original } = await attack();
    const a = await open(io);
    const folder = `/data/${a.log.damaged()!.files[0]}`;
    await a.store.closeAll();
    // A good copy of segment 0 (a backup), the later segments moved back from the quarantine.
    io.writeFile(`${DIR}/${files[0]}`, original.get(files[0])!);
    for (const f of files.slice(1)) io.rename(`${folder}/${f}`, `${DIR}/${f}`);
    const b = await open(io);
    expect(b.log.damaged()).toBeNull();
    expect(b.log.logEndOffset()).toBe(fullEnd);
    expectServed(b.log, tags, fullEnd);
    expect(readJson<QuarantineState>(io, `${DIR}/${QUARANTINE_FILE}`).entries).toEqual([]);
    const r = b.log.append(batch({ tag: 7 }), { leaderEpoch: 1 });
    expect(r.baseOffset).toBe(fullEnd);
    await b.store.closeAll();
  });

  test("the operator gives the records up: the log continues after them, no offset reused", async () => {
    const { io, tags, fullEnd, hit } = await attack();
    const a = await open(io);
    await a.store.closeAll();
    const marker = readJson<QuarantineState>(io, `${DIR}/${QUARANTINE_FILE}`);
    marker.entries[0].status = "skip";
    io.writeFile(`${DIR}/${QUARANTINE_FILE}`, new TextEncoder().encode(JSON.stringify(marker)));
    const b = await open(io);
    expect(b.log.damaged()).toBeNull();
    expect(b.log.logEndOffset()).toBe(fullEnd);
    const r = b.log.append(batch({ tag: 200 }), { leaderEpoch: 1, requireDurable: true });
    await r.ack;
    expect(r.baseOffset).toBe(fullEnd);
    tags.set(fullEnd, 200);
    // A read starting in the gap gets the records after it (as after compaction).
    expect(b.log.read(hit.base, 1 << 20).firstOffset).toBe(fullEnd);
    // The gap survives a crash: not taken for damage again.
    const c = await open(io.clone());
    expect(c.log.damaged()).toBeNull();
    expect(c.log.logEndOffset()).toBe(fullEnd + 1);
    expect(c.log.read(fullEnd, 1 << 20).firstOffset).toBe(fullEnd);
    expectServed(c.log, new Map([...tags].filter(([o]) => o < hit.base)), hit.base);
    c.log.abandon();
    await b.store.closeAll();
  });

  test("a follower refetching the quarantined offsets from its leader heals the partition", async () => {
    const { io, fullEnd, files, original, hit } = await attack();
    const { store, log } = await open(io);
    // The leader's copy of everything from the damaged batch on.
    const seg0 = original.get(files[0])!;
    const copy = [
      seg0.subarray(hit.pos, batchesOf(seg0).at(-1)!.pos + batchesOf(seg0).at(-1)!.size),
    ];
    for (const f of files.slice(1)) copy.push(original.get(f)!);
    for (const bytes of copy) log.append(bytes.slice(), { leaderEpoch: 1, origin: "replication" });
    expect(log.logEndOffset()).toBe(fullEnd);
    await log.flush();
    await until(() => log.damaged() === null, 2000);
    expect(readJson<QuarantineState>(io, `${DIR}/${QUARANTINE_FILE}`).entries).toEqual([]);
    expect(log.append(batch({ tag: 1 }), { leaderEpoch: 1 }).baseOffset).toBe(fullEnd);
    await store.closeAll();
  });

  test("damage below the recovery point is quarantined even with nothing intact after it", async () => {
    const io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    const a = await open(io, 20);
    const tags = new Map<number, number>();
    await writeAcked(a.log, 12, tags);
    const end = a.log.logEndOffset();
    // The checkpoint follows the syncs: it says everything is synced.
    const cp = () => checkpointOrNone(io);
    await until(() => cp().recoveryPoint === end, 2000);
    const io2 = io.clone();
    a.log.abandon();
    // Flip a byte in the very last batch: alone, that looks like a torn write.
    const files = segmentFiles(io2);
    const p = `${DIR}/${files.at(-1)}`;
    const bytes = io2.readFile(p)!.slice();
    const last = batchesOf(bytes).at(-1)!;
    bytes[last.pos + last.size - 20] ^= 1;
    io2.writeFile(p, bytes);
    const b = await open(io2);
    expect(b.log.logEndOffset()).toBe(last.base);
    expect(b.log.damaged()).toMatchObject({
      state: "quarantined",
      fromOffset: last.base,
      toOffset: end,
    });
    expect(() => b.log.append(batch({ tag: 1 }), { leaderEpoch: 1 })).toThrow(StorageError);
    b.log.abandon();
  });

  test("a genuine torn tail past the last sync is still cut, not quarantined", async () => {
    for (const interval of [0, 20]) {
      const io = new CrashFileIO();
      io.mkdirp("/data");
      await io.syncDir("/");
      const a = await open(io, interval);
      const tags = new Map<number, number>();
      await writeAcked(a.log, 12, tags);
      const acked = a.log.logEndOffset();
      if (interval > 0) {
        const cp = () => checkpointOrNone(io);
        await until(() => cp().recoveryPoint === acked, 2000);
      }
      // acks=1: written, never synced; the crash tears it half way.
      const r = a.log.append(batch({ count: 3, valueSize: 100, tag: 50 }), { leaderEpoch: 1 });
      const io2 = io.clone();
      a.log.abandon();
      const p = `${DIR}/${segmentFiles(io2).at(-1)}`;
      const bytes = io2.readFile(p)!;
      const torn = batchesOf(bytes).find((x) => x.base === r.baseOffset)!;
      io2.writeFile(p, bytes.subarray(0, torn.pos + Math.floor(torn.size / 2)));
      const b = await open(io2, interval);
      expect(b.log.damaged()).toBeNull();
      expect(b.log.logEndOffset()).toBe(acked);
      expect(b.log.recovery.truncatedBytes).toBeGreaterThan(0);
      expect(b.log.recovery.quarantinedSegments).toBe(0);
      expect(io2.exists(`${DIR}/${QUARANTINE_FILE}`)).toBe(false);
      expectServed(b.log, tags, acked);
      expect(b.log.append(batch({ tag: 51 }), { leaderEpoch: 1 }).baseOffset).toBe(acked);
      await b.store.closeAll();
    }
  });
});

describe("recovery checkpoint", () => {
  test("follows a sync within about a second, at most about once a second", async () => {
    const io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    let writes = 0;
    io.fault = (op, p) => {
      if (op === "write" && p.endsWith("recovery-checkpoint.json.tmp")) writes++;
      return null;
    };
    const { store, log } = await open(io, 1000);
    const cp = () => checkpointOrNone(io);
    const tags = new Map<number, number>();
    await writeAcked(log, 1, tags);
    const took = await until(() => cp().recoveryPoint === log.logEndOffset(), 1500);
    expect(took).toBeLessThan(1500);
    // Syncs every ~10 ms for 1.5 s: the checkpoint keeps up, but is written at most once a second.
    const before = writes;
    const t0 = performance.now();
    while (performance.now() - t0 < 1500) {
      await writeAcked(log, 1, tags);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(writes - before).toBeLessThanOrEqual(3);
    expect(writes - before).toBeGreaterThanOrEqual(1);
    const end = log.logEndOffset();
    expect(await until(() => cp().recoveryPoint === end, 2000)).toBeLessThan(2000);
    await store.closeAll();
  });

  test("a truncation lowers the recovery point first", async () => {
    const io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    const { store, log } = await open(io);
    await writeAcked(log, 12, new Map());
    await log.checkpoint();
    const cp = () => checkpointOrNone(io);
    expect(cp().recoveryPoint).toBe(log.logEndOffset());
    await log.truncateTo(10);
    expect(cp().recoveryPoint).toBeLessThanOrEqual(10);
    await store.closeAll();
  });

  test("a cut inside a batch lowers the recovery point to the batch's start", async () => {
    const io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    const { log } = await open(io);
    await writeAcked(log, 5, new Map()); // batches at 0, 3, 6, 9, 12
    await log.checkpoint();
    await log.truncateTo(7); // takes the batch 6..8 whole
    expect(log.logEndOffset()).toBe(6);
    const cp = readJson<{ recoveryPoint: number }>(io, `${DIR}/recovery-checkpoint.json`);
    expect(cp.recoveryPoint).toBeLessThanOrEqual(6);
    // An unsynced append, then power loss: not "synced records are missing", no quarantine.
    log.append(batch({ count: 3, valueSize: 100, tag: 99 }), { leaderEpoch: 2 });
    const after = await open(io.crash());
    expect(after.log.logEndOffset()).toBeGreaterThanOrEqual(6);
    expect(after.logs.filter((l) => l.level === "error")).toEqual([]);
    await after.store.closeAll();
  });

  test("a checkpoint write in flight when a cut starts cannot land above the cut", async () => {
    const io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    io.syncDelayMs = 5; // checkpoint writes take a while: one is in flight below
    const { log } = await open(io);
    await writeAcked(log, 5, new Map());
    const inFlight = log.checkpoint(); // computes a recovery point of 15 before the cut
    await new Promise((r) => setTimeout(r, 1)); // ... and is writing it, its sync not done
    const cut = log.truncateTo(6);
    await Promise.all([inFlight, cut]);
    const cp = readJson<{ recoveryPoint: number }>(io, `${DIR}/recovery-checkpoint.json`);
    expect(cp.recoveryPoint).toBeLessThanOrEqual(6);
    log.append(batch({ count: 3, valueSize: 100, tag: 99 }), { leaderEpoch: 2 });
    const after = await open(io.crash());
    expect(after.logs.filter((l) => l.level === "error")).toEqual([]);
    await after.store.closeAll();
  });
});

test("messages name paths relative to the data dir (damaged data, full disk)", async () => {
  const { io, hit } = await attack();
  const { store, log } = await open(io);
  for (
    const f of [
      () => log.append(batch({ tag: 1 }), { leaderEpoch: 1 }),
      () => log.read(hit.base + 1, 1 << 20),
    ]
  ) {
    expect(f).toThrow(/logs\/t-0\//);
    expect(f).not.toThrow(/\/data\//);
  }
  await store.closeAll();
  // Damage met by a read after a clean shutdown.
  const io2 = new CrashFileIO();
  io2.mkdirp("/data");
  const a = await open(io2);
  await writeAcked(a.log, 3, new Map());
  await a.store.closeAll();
  const p = `${DIR}/${segmentFiles(io2)[0]}`;
  const bytes = io2.readFile(p)!.slice();
  bytes[100] ^= 1;
  io2.writeFile(p, bytes);
  const b = await open(io2);
  expect(() => b.log.read(0, 1 << 20)).toThrow(/^logs\/t-0\/0+\.log is damaged/);
  expect(b.log.damaged()).toMatchObject({ state: "unreadable", fromOffset: 0 });
  // A full disk.
  io2.capacity = io2.usedBytes() + 1000;
  let full: unknown;
  try {
    for (let i = 0; i < 10; i++) {
      b.log.append(batch({ count: 3, valueSize: 300 }), { leaderEpoch: 1 });
    }
  } catch (e) {
    full = e;
  }
  expect(full).toBeInstanceOf(StorageError);
  expect((full as Error).message).toContain("logs/t-0/");
  expect((full as Error).message).toContain("ENOSPC");
  expect((full as Error).message).not.toContain("/data/");
  await b.store.closeAll().catch(() => {});
});

test(
  "power loss at 30 seeded points with the checkpoint following syncs: no false quarantine",
  async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rnd = seededRandom(seed);
      let io = new CrashFileIO();
      io.mkdirp("/data");
      await io.syncDir("/");
      const acked = new Map<number, number>();
      for (let round = 0; round < 2; round++) {
        const { log } = await open(io, 1);
        expect(log.damaged()).toBeNull();
        for (const [off, tag] of acked) {
          expect(decodeRecordBatches(log.read(off, 1).records)[0].records![0].value![0]).toBe(
            tag & 0xff,
          );
        }
        for (const off of [...acked.keys()]) if (off >= log.logEndOffset()) acked.delete(off);
        const steps = 5 + Math.floor(rnd() * 40);
        for (let i = 0; i < steps; i++) {
          const tag = seed * 1000 + round * 100 + i;
          const r = log.append(batch({ count: 1 + (i % 3), valueSize: 60, tag }), {
            leaderEpoch: round,
            requireDurable: rnd() < 0.7,
          });
          r.ack.then(() => {
            if (r.ack === r.durable) acked.set(r.baseOffset, tag);
          }, () => {});
          const pause = rnd();
          // Now and then long enough for the checkpoint to follow (its shortest delay is 50 ms).
          if (pause < 0.05) await new Promise((res) => setTimeout(res, 60));
          else if (pause < 0.3) await new Promise((res) => setTimeout(res, 0));
        }
        io = io.crash({ seed: seed * 7 + round, keepUnsyncedProb: 0.5 });
      }
    }
  },
  60000,
);
