// Opening a partition log: clean restart (no scan) or crash recovery from the last checkpoint.
// Unclean: batches from the segment holding the recovery point onward are walked checking length,
// magic, CRC-32C, contiguous offsets and non-decreasing leader epochs; a bad tail is ZEROED and
// synced (so it can never reappear), later segments are deleted, indexes rebuilt, state replayed.
import * as path from "node:path";
import { LeaderEpochCache } from "./epoch-cache.ts";
import {
  type Checkpoint,
  CHECKPOINT_FILE,
  EPOCH_FILE,
  type LogDeps,
  SegmentPartitionLog,
} from "./partition-log.ts";
import { Segment } from "./segment.ts";
import type { LogConfig } from "./types.ts";

function readCheckpoint(deps: LogDeps, dir: string): Checkpoint | null {
  const b = deps.io.readFile(path.join(dir, CHECKPOINT_FILE));
  if (!b) return null;
  try {
    const c = JSON.parse(new TextDecoder().decode(b)) as Checkpoint;
    const ints = [c.recoveryPoint, c.logStart, c.activeBase, c.activeSize];
    if (
      c.v !== 1 || typeof c.clean !== "boolean" ||
      !ints.every((n) => Number.isSafeInteger(n) && n >= 0)
    ) {
      return null;
    }
    return c;
  } catch {
    return null;
  }
}

/**
 * End of the last non-zero byte in [from, to), or `from` when all are zero. A tail of zeros is
 * not damage: a cut leaves one, and so does the window written ahead of the end (zero-ahead.ts),
 * which can be tens of MiB, hence the 32-bit words.
 */
function nonZeroEnd(seg: Segment, from: number, to: number): number {
  let end = from;
  for (let p = from; p < to; p += 1 << 16) {
    const b = seg.bytes(p, Math.min(to, p + (1 << 16)), to);
    const lead = Math.min(b.length, (4 - (b.byteOffset & 3)) & 3);
    let any = false;
    for (let i = 0; i < lead && !any; i++) any = b[i] !== 0;
    const words = new Uint32Array(b.buffer, b.byteOffset + lead, (b.length - lead) >>> 2);
    for (let k = 0; k < words.length && !any; k++) any = words[k] !== 0;
    for (let i = lead + words.length * 4; i < b.length && !any; i++) any = b[i] !== 0;
    if (!any) continue;
    let i = b.length - 1;
    while (b[i] === 0) i--;
    end = p + i + 1;
  }
  return end;
}

export async function openSegmentLog(
  dir: string,
  topic: string,
  partition: number,
  topicId: string,
  config: LogConfig,
  deps: LogDeps,
): Promise<SegmentPartitionLog> {
  const { io, logger } = deps;
  const log = new SegmentPartitionLog(dir, topic, partition, topicId, config, deps);
  const interval = config.indexIntervalBytes;
  const cp = readCheckpoint(deps, dir);
  if (io.exists(path.join(dir, CHECKPOINT_FILE)) && !cp) {
    logger("warn", "recovery checkpoint unreadable: scanning the whole log", { dir });
  }
  const names = io.readdir(dir);
  for (const n of names) if (n.endsWith(".tmp")) io.unlink(path.join(dir, n));
  const bases = names.flatMap((n) => {
    const m = /^(\d{20})\.log$/.exec(n);
    return m ? [Number(m[1])] : [];
  }).sort((a, b) => a - b);
  for (const n of names) {
    const m = /^(\d{20})\.(index|timeindex)$/.exec(n);
    if (m && !bases.includes(Number(m[1]))) io.unlink(path.join(dir, n));
  }
  // No segment and no checkpoint: a partition created now, with nothing to recover.
  const created = bases.length === 0 && cp === null;
  if (bases.length === 0) {
    bases.push(cp ? cp.logStart : 0);
    log.needDirSync = true;
  }
  log.segments = bases.map((b) => Segment.open(io, dir, b, deps.maps, true));
  const segs = log.segments;
  const last = segs.length - 1;
  const clean = cp !== null && cp.clean && cp.activeBase === segs[last].baseOffset &&
    segs[last].fileSize() >= cp.activeSize;
  log.recovery.clean = clean;
  let scanFrom = segs.length;
  if (!clean) {
    const rp = cp ? cp.recoveryPoint : 0;
    scanFrom = 0;
    for (let i = 0; i < segs.length; i++) if (segs[i].baseOffset <= rp) scanFrom = i;
  }
  // Trusted prefix: load indexes (rebuild from headers if missing or inconsistent).
  for (let i = 0; i < scanFrom; i++) {
    const seg = segs[i];
    const limit = clean && i === last ? cp!.activeSize : seg.fileSize();
    if (i > 0 && seg.baseOffset !== segs[i - 1].nextOffset) {
      logger("warn", "segments not contiguous: scanning from here", { dir, base: seg.baseOffset });
      scanFrom = i;
      log.recovery.clean = false;
      break;
    }
    if (!seg.loadIndexes(limit, interval)) {
      seg.rebuild(limit, interval, false);
      log.recovery.indexesRebuilt++;
    }
  }
  // Bytes past a clean checkpoint's active size were written after it and never acknowledged
  // (the first change after a clean open waits for an unclean checkpoint): zero them, so no later
  // scan can take them for batches.
  if (log.recovery.clean && scanFrom === segs.length) {
    const seg = segs[last];
    const fileSize = seg.fileSize();
    const end = fileSize > cp!.activeSize ? nonZeroEnd(seg, cp!.activeSize, fileSize) : 0;
    if (end > cp!.activeSize) {
      const dropped = seg.zeroFrom(cp!.activeSize, end);
      await seg.handle.fdatasync();
      log.recovery.truncatedBytes += dropped;
      logger("warn", "dropped unacknowledged bytes written after a clean checkpoint", {
        dir,
        segment: seg.baseOffset,
        position: cp!.activeSize,
        bytesDropped: dropped,
      });
    }
  }
  // Epoch cache: the persisted one below the scan start, re-derived above it.
  const epochBytes = io.readFile(path.join(dir, EPOCH_FILE));
  let epochs = epochBytes ? LeaderEpochCache.decode(epochBytes) : null;
  const scanStartOffset = scanFrom < segs.length
    ? segs[scanFrom].baseOffset
    : Number.POSITIVE_INFINITY;
  if (!epochs) {
    epochs = new LeaderEpochCache();
    const e = epochs;
    log.forEachHeader(0, (h) => {
      if (h.baseOffset < scanStartOffset) e.assign(h.partitionLeaderEpoch, h.baseOffset);
    });
  }
  epochs.truncateFromEnd(scanStartOffset);
  log.epochs = epochs;
  // Scan the unverified tail.
  const cutSegments: Segment[] = [];
  for (let i = scanFrom; i < segs.length; i++) {
    const seg = segs[i];
    const expected = i > 0 ? segs[i - 1].nextOffset : seg.baseOffset;
    if (seg.baseOffset !== expected) {
      cutSegments.push(...segs.splice(i));
      break;
    }
    const fileSize = seg.fileSize();
    let lastEpoch = epochs.latestEpoch();
    const r = seg.rebuild(fileSize, interval, true, (h) => {
      if (h.partitionLeaderEpoch < lastEpoch) {
        return `leader epoch went back to ${h.partitionLeaderEpoch}`;
      }
      lastEpoch = h.partitionLeaderEpoch;
      epochs!.assign(h.partitionLeaderEpoch, h.baseOffset);
      return null;
    });
    log.recovery.scannedSegments++;
    log.recovery.scannedBytes += r.end;
    log.recovery.indexesRebuilt++;
    const end = r.end < fileSize ? nonZeroEnd(seg, r.end, fileSize) : 0;
    if (end > r.end) {
      const dropped = seg.zeroFrom(r.end, end);
      log.recovery.truncatedBytes += dropped;
      logger("warn", "recovery cut a bad tail", {
        dir,
        segment: seg.baseOffset,
        position: r.end,
        reason: r.reason,
        bytesDropped: dropped,
      });
      await seg.handle.fdatasync();
      cutSegments.push(...segs.splice(i + 1));
      break;
    }
  }
  if (cutSegments.length > 0) {
    let bytes = 0;
    for (const s of cutSegments) {
      bytes += s.fileSize();
      s.deleteFiles();
    }
    log.recovery.truncatedBytes += bytes;
    logger("warn", "recovery deleted segments after a cut", {
      dir,
      segments: cutSegments.length,
      bytesDropped: bytes,
    });
    await io.syncDir(dir);
  }
  // Log start: checkpointed value, bounded by what exists.
  const logEnd = log.logEndOffset();
  log.logStart = Math.min(Math.max(cp ? cp.logStart : 0, segs[0].baseOffset), logEnd);
  while (segs.length > 1 && segs[0].nextOffset <= log.logStart) segs.shift()!.deleteFiles();
  epochs.truncateFromEnd(logEnd);
  epochs.truncateFromStart(log.logStart);
  log.producers = log.loadProducerState();
  // Everything now in the log is verified; make it durable before claiming it in a checkpoint.
  if (!clean) await Promise.all(segs.map((s) => s.handle.fdatasync()));
  if (log.needDirSync) {
    await io.syncDir(dir);
    log.needDirSync = false;
  }
  log.commit.durableOffset = logEnd;
  for (const s of segs) s.dirty = false;
  // A clean log keeps its clean checkpoint until its first change (see markUnclean).
  if (clean) log.cleanOnDisk = true;
  else await log.writeCheckpoint(false);
  logger(
    clean || created ? "debug" : "info",
    created ? "partition log created" : "partition log opened",
    {
      dir,
      logStart: log.logStart,
      logEnd,
      ...log.recovery,
    },
  );
  return log;
}
