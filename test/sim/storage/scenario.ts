// A seeded crash campaign over one partition log on the simulated file system (crash-fs.ts),
// for the mutation suite (scripts/mutate.ts) and its own seed test. One seed: 3-6 rounds of
// appends (acks=all and acks=1), group-commit flushes, recovery checkpoints, follower-style
// truncations (a new leader epoch after each), now and then a clean close and reopen; each round
// ends in a power loss (unsynced writes lost, or a random prefix kept with the last one torn) or
// a kill -9 (the page cache survives); after some power losses one byte of a synced batch is
// flipped on disk. Then the log is reopened (recovery) and checked:
//
//   S1 every acks=all append acknowledged and not cut by a truncation since is served, byte for
//      byte, at its offset; or, only when a byte was flipped at or below it, reported damaged (a
//      read throws CorruptLogError, or the offset lies in the quarantined range);
//   S2 every batch served from the log start to the log end is one that was written at that
//      offset and not cut by a completed truncation; offsets are contiguous;
//   S3 without a flipped byte, every batch reads, and recovery never finds synced data damaged
//      or missing: nothing below the recovery point of the checkpoint on disk (which must never
//      claim more than was synced). Recovery may quarantine a tail past the recovery point that
//      has intact batches after it (unsynced pages of another segment reached the disk, or the
//      power failed in the middle of a truncation): quarantined rather than cut, by design
//      (recovery.ts), counted as tailQuarantines.
//
// Bugs this campaign found in production, all fixed 2026-12-05 (docs/mutation.md), and what
// now exercises each:
// - a sync round that started during a truncation raised the durable offset past the cut, and a
//   checkpoint write queued then claimed cut offsets as synced (GroupCommit.truncating now holds
//   a ceiling until the cut is done): half of the truncations start with acknowledgements,
//   checkpoint writes and a sync round in flight (`concurrentTruncation` forces it on or off);
// - a checkpoint write in flight when a truncation started landed a recovery point above the cut
//   (truncateTo now lowers after any write queued or in flight): the same;
// - a cut inside a batch lowered the checkpoint to the offset asked for, not to the batch's start
//   (the cut's real end): 30 % of the truncations land inside a batch;
// - recovery threw a RangeError when 1-3 bytes lay past the last valid batch at an unaligned
//   position (recovery.ts nonZeroEnd): a throw fails the seed;
// - a flipped bit in a batch's lastOffsetDelta read as "no data yet" below the log end (the read
//   compared the last offset with its upper bound before the CRC): S2 requires every offset below
//   the end to read or to report damage.
//
// Flips hit only batches below the recovery point of an unclean checkpoint, or anywhere under a
// clean one: a flip in the last batch past the recovery point is indistinguishable from a torn
// write and may be cut, by design (docs/storage.md). Everything runs on setTimeout(0) turns and
// a fake clock (no zero-ahead, no timers), so a seed replays exactly.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { Rng } from "../../../src/cluster/sim/index.ts";
import { decodeRecordBatches, encodeRecordBatch } from "../../../src/protocol/record-batch.ts";
import { CrashFileIO } from "../../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../../src/storage/log-store.ts";
import type { SegmentPartitionLog } from "../../../src/storage/partition-log.ts";
import { openEntry } from "../../../src/storage/quarantine.ts";
import { type Clock, CorruptLogError } from "../../../src/storage/types.ts";

const DIR = "/data/logs/t-0";
const TS = 1_700_000_000_000;

class SimClock implements Clock {
  t = TS;
  now(): number {
    return this.t;
  }
}

interface Pending {
  base: number;
  last: number;
  ack: Promise<void>;
  /** Cut by a truncation: no longer required. */
  dropped?: boolean;
}

interface Shape {
  count: number;
  size: number;
}

/** Record i of append `id`: its first 4 bytes are the id, the rest a pattern of (id, i). */
function value(id: number, i: number, size: number): Uint8Array {
  const v = new Uint8Array(size);
  for (let j = 0; j < size; j++) v[j] = (id * 31 + i * 7 + j * 13) & 0xff;
  new DataView(v.buffer).setUint32(0, id);
  return v;
}

function batchOf(id: number, s: Shape): Uint8Array {
  const records = [];
  for (let i = 0; i < s.count; i++) {
    records.push({ key: null, value: value(id, i, s.size), timestamp: TS + id });
  }
  return encodeRecordBatch({ records, baseTimestamp: TS + id });
}

const tick = () => new Promise<void>((r) => setTimeout(r, 0));

/** Batches of a segment file's bytes: position, base offset, size (stops at zeros/garbage). */
function batchesIn(b: Uint8Array): { pos: number; base: number; last: number; size: number }[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = [];
  for (let pos = 0; pos + 61 <= b.length;) {
    const len = v.getInt32(pos + 8);
    if (len < 49 || pos + 12 + len > b.length) break;
    const base = Number(v.getBigInt64(pos));
    out.push({ pos, base, last: base + v.getInt32(pos + 23), size: 12 + len });
    pos += 12 + len;
  }
  return out;
}

export interface StorageRunOptions {
  log?: (line: string) => void;
  /**
   * Every truncation (true) or none (false) starts with acknowledgements and checkpoint writes in
   * flight and a sync asked for right after it starts; unset, half of them at random.
   */
  concurrentTruncation?: boolean;
}

/**
 * Runs one seed. While it runs, a zero-delay setTimeout (the simulated fsync's delay, the
 * scenario's own turns) becomes a setImmediate: the same FIFO order, without the timer's
 * millisecond floor (a seed waits on a few hundred of them).
 */
export async function runStorageSeed(
  seed: number,
  o: StorageRunOptions = {},
): Promise<SeedOutcome> {
  const real = globalThis.setTimeout;
  const fast =
    ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      ms ? real(fn, ms, ...args) : setImmediate(fn, ...args)) as unknown as typeof setTimeout;
  // Deleting a segment asks for a full collection to unmap it (segment.ts
  // releaseMappingsSoon); the simulated files are never mapped, and it was 40 % of a seed.
  const gc = Bun.gc;
  globalThis.setTimeout = fast;
  Bun.gc = () => {};
  try {
    return await runSeed(seed, o);
  } finally {
    globalThis.setTimeout = real;
    Bun.gc = gc;
  }
}

async function runSeed(seed: number, o: StorageRunOptions): Promise<SeedOutcome> {
  const trace = o.log ?? (() => {});
  const rng = new Rng(seed);
  const clock = new SimClock();
  const spec = {
    topic: "t",
    partition: 0,
    topicId: "T",
    config: { segmentBytes: rng.pick([500, 900, 2000]), indexIntervalBytes: 128 },
  };
  const counts: Record<string, number> = {
    appends: 0,
    acked: 0,
    truncations: 0,
    powerLosses: 0,
    kills: 0,
    cleanCloses: 0,
    flips: 0,
    quarantines: 0,
    checkpoints: 0,
    recoveryThrows: 0,
    tailQuarantines: 0,
  };
  let failure: string | undefined;
  const fail = (why: string) => {
    if (failure === undefined) trace(`FAIL ${why}`);
    failure ??= why;
  };

  const shapes = new Map<number, Shape>();
  /** Offset -> ids of appends written there and not cut by a completed truncation. */
  const written = new Map<number, Set<number>>();
  /** Offset -> id: acknowledged acks=all appends no truncation has cut since. */
  const acked = new Map<number, number>();
  /** Base offsets of batches a flipped byte hit. */
  const hits: number[] = [];
  /** acks=all appends whose acknowledgement has not been handled yet. */
  const pending = new Map<number, Pending>();
  let nextId = 1;
  /** The last checkpoint write asked for (see the header). */
  let checkpointing: Promise<void> = Promise.resolve();
  let epoch = 0;

  let io = new CrashFileIO();
  io.mkdirp("/data");
  await io.syncDir("/");

  const open = async () => {
    const store = await SegmentLogStore.open({
      dataDir: "/data",
      io,
      clock,
      flush: { kind: "interval", ms: 0 },
      checkpointIntervalMs: 0,
      zeroAhead: false,
    });
    const log = (await store.openLog(spec)) as SegmentPartitionLog;
    return { store, log };
  };

  const damagedAtOrBelow = (off: number) => hits.some((h) => h <= off);

  /** The batch read at `off` is one written there: same id, same records, byte for byte. */
  const checkBatch = (off: number, b: ReturnType<typeof decodeRecordBatches>[number]) => {
    const recs = b.records ?? [];
    const v0 = recs[0]?.value;
    const id = v0 && v0.length >= 4 ? new DataView(v0.buffer, v0.byteOffset).getUint32(0) : -1;
    const s = shapes.get(id);
    if (!written.get(off)?.has(id) || s === undefined) {
      const was = written.get(off);
      return `offset ${off} serves append ${id}, never written there or cut by a truncation ` +
        `(written there: ${was ? [...was].join(",") : "none"})`;
    }
    if (recs.length !== s.count || b.header.lastOffsetDelta !== s.count - 1) {
      return `offset ${off}: append ${id} comes back with ${recs.length} records, not ${s.count}`;
    }
    for (let i = 0; i < s.count; i++) {
      const want = value(id, i, s.size);
      const got = recs[i].value;
      if (got === null || got.length !== want.length || got.some((x, j) => x !== want[j])) {
        return `offset ${off}: record ${i} of append ${id} differs from what was written`;
      }
    }
    return null;
  };

  /** The invariants after a recovery; returns true when the log is quarantined (seed ends). */
  const verify = (log: SegmentPartitionLog, when: string): boolean => {
    const start = log.logStartOffset();
    const end = log.logEndOffset();
    const dmg = log.damaged();
    const q = openEntry(log.quarantine);
    if (q !== null) counts.quarantines++;
    if (dmg !== null && hits.length === 0) {
      if (/recovery point|synced records are missing/.test(dmg.reason)) {
        fail(
          `S3 ${when}: synced offsets ${dmg.fromOffset}..${dmg.toOffset ?? "?"} damaged or ` +
            `missing with no byte flipped: ${dmg.reason}`,
        );
      } else counts.tailQuarantines++;
    }
    // S2: the whole log, batch by batch.
    for (let off = start; off < end && failure === undefined;) {
      let bs;
      try {
        bs = decodeRecordBatches(log.read(off, 1 << 16).records);
      } catch (e) {
        if (e instanceof CorruptLogError && damagedAtOrBelow(off)) break;
        fail(
          `S${
            e instanceof CorruptLogError ? 3 : 2
          } ${when}: offset ${off} (log ${start}..${end}) ` +
            `does not read: ${(e as Error).message}`,
        );
        break;
      }
      if (bs.length === 0) {
        fail(`S2 ${when}: read at ${off} returns nothing below the log end ${end}`);
        break;
      }
      for (const b of bs) {
        if (b.header.baseOffset !== off) {
          fail(`S2 ${when}: batch at ${b.header.baseOffset} where ${off} was expected`);
          break;
        }
        const why = checkBatch(off, b);
        if (why !== null) {
          fail(`S2 ${when}: ${why}`);
          break;
        }
        off = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      }
    }
    // S1: every acknowledged append.
    for (const [off, id] of [...acked].sort((a, b) => a[0] - b[0])) {
      if (failure !== undefined) break;
      if (off < start) continue;
      if (off >= end) {
        if (q !== null && off >= q.from && off < q.to && damagedAtOrBelow(off)) continue;
        fail(
          `S1 ${when}: acknowledged append ${id} at offset ${off} is gone (log ${start}..${end}` +
            `${q !== null ? `, quarantined ${q.from}..${q.to}` : ""})`,
        );
        break;
      }
      try {
        const b = decodeRecordBatches(log.read(off, 1).records)[0];
        if (b === undefined || b.header.baseOffset !== off) {
          fail(`S1 ${when}: acknowledged offset ${off} reads as ${b?.header.baseOffset}`);
          break;
        }
        const why = checkBatch(off, b);
        if (why !== null) fail(`S1 ${when}: acknowledged ${why}`);
      } catch (e) {
        if (e instanceof CorruptLogError && damagedAtOrBelow(off)) continue;
        fail(`S1 ${when}: acknowledged offset ${off} does not read: ${(e as Error).message}`);
      }
    }
    return q !== null;
  };

  const rounds = rng.int(3, 7);
  let { store, log } = await open();
  try {
    for (let round = 0; round < rounds && failure === undefined; round++) {
      epoch = Math.max(epoch, log.latestEpoch());
      const ops = rng.int(5, 45);
      let truncating: Promise<void> | null = null;
      for (let i = 0; i < ops && failure === undefined; i++) {
        const r = rng.next();
        if (r < 0.72) {
          const id = nextId++;
          const s: Shape = { count: rng.int(1, 4), size: rng.int(8, 120) };
          shapes.set(id, s);
          const durable = rng.chance(0.7);
          let res;
          try {
            res = log.append(batchOf(id, s), { leaderEpoch: epoch, requireDurable: durable });
          } catch (e) {
            fail(`append refused: ${(e as Error).message}`);
            break;
          }
          counts.appends++;
          clock.t += 1;
          trace(`round ${round}: append ${id} at ${res.baseOffset}${durable ? " (acks=all)" : ""}`);
          const base = res.baseOffset;
          let set = written.get(base);
          if (!set) written.set(base, set = new Set());
          set.add(id);
          if (durable) {
            const p: Pending = { base, last: base + s.count - 1, ack: res.ack };
            pending.set(id, p);
            res.ack.then(() => {
              pending.delete(id);
              trace(`ack ${id}`);
              counts.acked++;
              if (!p.dropped) acked.set(base, id);
            }, () => pending.delete(id));
          }
        } else if (r < 0.8) {
          log.flush().catch(() => {});
        } else if (r < 0.88) {
          counts.checkpoints++;
          const p = log.checkpoint().catch(() => {});
          checkpointing = p;
          if (rng.chance(0.5)) await p;
        } else if (r < 0.96) {
          const end = log.logEndOffset();
          let to = end - rng.int(0, Math.min(end - log.logStartOffset(), 25) + 1);
          if (to >= end) continue;
          // Mostly at a batch boundary, as a follower truncates (to an epoch's end offset); now
          // and then inside a batch, which the API accepts (the whole batch goes).
          if (rng.chance(0.7)) {
            try {
              to = log.read(to, 1).firstOffset;
            } catch {
              continue;
            }
          }
          // Half the time with acknowledgements, checkpoint writes and a sync round in flight.
          const concurrent = o.concurrentTruncation ?? rng.chance(0.5);
          if (!concurrent) {
            await Promise.allSettled([...pending.values()].map((p) => p.ack));
            await checkpointing;
            if (log.logEndOffset() !== end) continue;
          }
          counts.truncations++;
          // A cut takes the whole batch holding `to`.
          const reaches = (base: number, id: number) => base + shapes.get(id)!.count - 1 >= to;
          for (const [off, id] of [...acked]) if (reaches(off, id)) acked.delete(off);
          for (const p of pending.values()) {
            if (p.last < to) continue;
            // Cut: no longer required, whether its acknowledgement comes before the cut is done
            // (it was durable) or not at all.
            p.dropped = true;
          }
          trace(`round ${round}: truncate to ${to} (end ${end})`);
          const done = log.truncateTo(to).then(() => {
            // The cut is durable: nothing written at or past it before may come back.
            for (const [off, ids] of [...written]) {
              for (const id of [...ids]) if (reaches(off, id)) ids.delete(id);
              if (ids.size === 0) written.delete(off);
            }
          });
          done.catch(() => {});
          if (concurrent) log.flush().catch(() => {});
          epoch++;
          if (rng.chance(0.15)) {
            // Power loss during the truncation.
            truncating = done;
            break;
          }
          try {
            await done;
          } catch (e) {
            fail(`truncation failed: ${(e as Error).message}`);
          }
        } else {
          // Clean shutdown and restart.
          counts.cleanCloses++;
          trace(`round ${round}: clean restart`);
          await tick();
          await store.closeAll();
          ({ store, log } = await open());
          if (verify(log, `round ${round}, after a clean restart`)) return outcome();
          epoch = Math.max(epoch, log.latestEpoch());
        }
        for (let k = rng.int(0, 3); k > 0; k--) await tick();
      }
      if (failure !== undefined) break;
      if (truncating === null) { for (let k = rng.int(0, 4); k > 0; k--) await tick(); }
      // The crash.
      const kill = rng.chance(0.2);
      const before = io;
      if (kill) {
        counts.kills++;
        io = before.clone();
      } else {
        counts.powerLosses++;
        io = before.crash({ seed: rng.int(1, 1 << 30), keepUnsyncedProb: 0.6 });
      }
      log.abandon();
      trace(`round ${round}: ${kill ? "kill -9" : "power loss"} at log end ${log.logEndOffset()}`);
      if (kill) before.crash(); // the old instance fails every later call
      await tick();
      if (!kill && rng.chance(0.25)) await flip(io, rng, hits, counts, trace);
      ({ store, log } = await open());
      const what = `round ${round}, after the ${kill ? "kill" : "power loss"}` +
        (truncating !== null ? " during a truncation" : "");
      if (verify(log, what)) {
        return outcome();
      }
    }
    await store.closeAll();
  } catch (e) {
    fail(`exception: ${(e as Error).stack?.split("\n").slice(0, 3).join(" | ")}`);
  }
  return outcome();

  function outcome(): SeedOutcome {
    return { failure, counts, simulatedMs: 0 };
  }
}

/** Flip one byte of a batch the checkpoint on disk says is synced (see the header). */
async function flip(
  io: CrashFileIO,
  rng: Rng,
  hits: number[],
  counts: Record<string, number>,
  trace: (l: string) => void,
): Promise<void> {
  const cpBytes = io.readFile(`${DIR}/recovery-checkpoint.json`);
  if (cpBytes === null) return;
  let cp: { clean: boolean; recoveryPoint: number };
  try {
    cp = JSON.parse(new TextDecoder().decode(cpBytes));
  } catch {
    return;
  }
  const below = cp.clean ? Infinity : cp.recoveryPoint;
  const targets: { file: string; pos: number; base: number; size: number }[] = [];
  for (const name of io.readdir(DIR)) {
    if (!name.endsWith(".log")) continue;
    const file = `${DIR}/${name}`;
    for (const b of batchesIn(io.readFile(file)!)) {
      if (b.last < below) targets.push({ file, ...b });
    }
  }
  if (targets.length === 0) return;
  const t = rng.pick(targets);
  // Bytes 12..15 (partitionLeaderEpoch) are outside the CRC, as in Kafka: not damage it can see.
  const at = t.pos + rng.int(16, t.size);
  const h = io.open(t.file, false);
  const byte = new Uint8Array(1);
  h.pread(byte, at);
  byte[0] ^= 1 << rng.int(0, 8);
  h.pwrite(byte, at);
  await h.fdatasync();
  h.close();
  hits.push(t.base);
  counts.flips++;
  trace(`flipped a byte of the batch at offset ${t.base} (${t.file} byte ${at})`);
}
