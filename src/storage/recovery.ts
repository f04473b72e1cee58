// Opening a partition log: clean restart (no scan) or crash recovery from the last checkpoint.
// Unclean: batches from the segment holding the recovery point onward are walked checking length,
// magic, CRC-32C, contiguous offsets and non-decreasing leader epochs. At the first bad batch:
// - a torn tail (past the recovery point, nothing intact after it): ZEROED and synced (so it can
//   never reappear), later segments (none intact) deleted;
// - damage (below the recovery point, i.e. synced; or intact batches after it, in its segment or
//   a later one: a torn write only hits the end of what was written): the damaged segment is
//   copied and the later ones moved to a quarantine folder, never deleted, and quarantine.json
//   keeps their offsets from being reused (quarantine.ts).
// Then indexes are rebuilt and state replayed.
import * as path from "node:path";
import { BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD } from "../protocol/record-batch.ts";
import { LeaderEpochCache } from "./epoch-cache.ts";
import {
  type Checkpoint,
  CHECKPOINT_FILE,
  checkpointSumOk,
  EPOCH_FILE,
  type LogDeps,
  SegmentPartitionLog,
} from "./partition-log.ts";
import {
  acceptedGap,
  copySegment,
  findBatchAfter,
  moveSegment,
  newFolder,
  openEntry,
  QUARANTINE_DIR,
  type QuarantineEntry,
  type QuarantineState,
  readQuarantine,
  validEnd,
  writeQuarantine,
} from "./quarantine.ts";
import { Segment, shownPath } from "./segment.ts";
import type { LogConfig } from "./types.ts";

/** Where the scan stopped: a bad batch in a segment, or a segment not starting where it should. */
type Bad =
  | { gap: false; index: number; offset: number; pos: number; end: number; reason: string | null }
  | { gap: true; index: number; offset: number };

function readCheckpoint(deps: LogDeps, dir: string): Checkpoint | null {
  const b = deps.io.readFile(path.join(dir, CHECKPOINT_FILE));
  if (!b) return null;
  try {
    const c = JSON.parse(new TextDecoder().decode(b)) as Checkpoint;
    const ints = [c.recoveryPoint, c.logStart, c.activeBase, c.activeSize];
    if (
      c.v !== 1 || typeof c.clean !== "boolean" ||
      !ints.every((n) => Number.isSafeInteger(n) && n >= 0) || !checkpointSumOk(c)
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
const NO_WORDS = new Uint32Array(0);

function nonZeroEnd(seg: Segment, from: number, to: number): number {
  let end = from;
  for (let p = from; p < to; p += 1 << 16) {
    const b = seg.bytes(p, Math.min(to, p + (1 << 16)), to);
    const lead = Math.min(b.length, (4 - (b.byteOffset & 3)) & 3);
    let any = false;
    for (let i = 0; i < lead && !any; i++) any = b[i] !== 0;
    // Fewer than 4 bytes past an unaligned start: no word view (its offset would be unaligned,
    // and building one throws, which left the partition unopenable).
    const n = (b.length - lead) >>> 2;
    const words = n > 0 ? new Uint32Array(b.buffer, b.byteOffset + lead, n) : NO_WORDS;
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
  // Damaged data quarantined before, and ranges an operator gave up (quarantine.ts).
  let quarantine: QuarantineState | null = readQuarantine(io, dir);
  /** The log no longer matches a clean checkpoint (a skipped range got its segment). */
  let reshaped = false;
  const bases = segmentBases(deps, dir);
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
    if (
      i > 0 && seg.baseOffset !== segs[i - 1].nextOffset &&
      !acceptedGap(quarantine, segs[i - 1].nextOffset, seg.baseOffset)
    ) {
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
  const scanStartOffset = scanFrom < segs.length
    ? segs[scanFrom].baseOffset
    : Number.POSITIVE_INFINITY;
  const epochs = loadEpochs(log, scanStartOffset);
  // Scan the unverified tail.
  const rp = cp ? cp.recoveryPoint : 0;
  let bad: Bad | null = null;
  for (let i = scanFrom; i < segs.length; i++) {
    const seg = segs[i];
    const expected = i > 0 ? segs[i - 1].nextOffset : seg.baseOffset;
    if (seg.baseOffset !== expected && !acceptedGap(quarantine, expected, seg.baseOffset)) {
      bad = { gap: true, index: i, offset: expected };
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
      bad = { gap: false, index: i, offset: seg.nextOffset, pos: r.end, end, reason: r.reason };
      break;
    }
  }
  const cutSegments: Segment[] = [];
  const damage = bad === null ? null : damageEvidence(segs, bad, rp, quarantine);
  if (bad !== null && damage !== null) {
    quarantine = await quarantineFrom(log, bad, damage, rp, quarantine);
  } else if (bad !== null && bad.gap) {
    cutSegments.push(...segs.splice(bad.index));
  } else if (bad !== null && !bad.gap) {
    const seg = segs[bad.index];
    const dropped = seg.zeroFrom(bad.pos, bad.end);
    log.recovery.truncatedBytes += dropped;
    logger("warn", "recovery cut a bad tail", {
      dir,
      segment: seg.baseOffset,
      position: bad.pos,
      reason: bad.reason,
      bytesDropped: dropped,
    });
    await seg.handle.fdatasync();
    cutSegments.push(...segs.splice(bad.index + 1));
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
  // Synced records missing with nothing left to quarantine (a file cut short, blocks lost).
  if (!clean && log.logEndOffset() < rp && (openEntry(quarantine)?.to ?? -1) < rp) {
    const from = log.logEndOffset();
    quarantine = merge(quarantine, {
      from,
      to: rp,
      status: "quarantined",
      folders: [],
      reason: `the log ends at offset ${from}, below its recovery point ${rp}: synced records ` +
        "are missing",
      detected: new Date(deps.clock.now()).toISOString(),
    });
    await writeQuarantine(io, dir, quarantine);
    logger("error", "synced records are missing: their offsets are kept out of use", {
      partition: `${topic}-${partition}`,
      fromOffset: from,
      toOffset: rp,
    });
  }
  // An operator's decision on quarantined offsets, or a quarantine the log has grown past.
  const pending = openEntry(quarantine);
  if (pending !== null) {
    const end = log.logEndOffset();
    const rest = quarantine!.entries.filter((e) => e !== pending);
    if (end >= pending.to) {
      quarantine = { v: 1, entries: rest };
      await writeQuarantine(io, dir, quarantine);
      logger("warn", "the log holds the quarantined offsets again: writable again", {
        partition: `${topic}-${partition}`,
        fromOffset: pending.from,
        toOffset: pending.to,
      });
    } else if (pending.status === "skip") {
      // The log continues after the quarantined offsets; a read in the gap gets what follows it.
      segs.push(Segment.open(io, dir, pending.to, deps.maps, true));
      reshaped = true;
      await io.syncDir(dir);
      quarantine = { v: 1, entries: [...rest, { ...pending, from: end, status: "skipped" }] };
      await writeQuarantine(io, dir, quarantine);
      logger("warn", "quarantined offsets given up by the operator: the log continues after them", {
        partition: `${topic}-${partition}`,
        fromOffset: end,
        toOffset: pending.to,
      });
    }
  }
  log.quarantine = quarantine;
  // Log start: checkpointed value, bounded by what exists.
  const logEnd = log.logEndOffset();
  log.logStart = Math.min(Math.max(cp ? cp.logStart : 0, segs[0].baseOffset), logEnd);
  while (segs.length > 1 && segs[0].nextOffset <= log.logStart) segs.shift()!.deleteFiles();
  epochs.truncateFromEnd(logEnd);
  epochs.truncateFromStart(log.logStart);
  log.producers = log.loadProducerState();
  // Everything now in the log is verified; make it durable before claiming it in a checkpoint.
  // A log created now has nothing to make durable but its empty segment's directory entry, and
  // gets no checkpoint until its first sync (an absent one means "scan from the start", free for
  // an empty log): a create of 1,000 partitions wrote 3,000 syncs more without this.
  if (!clean && !created) await Promise.all(segs.map((s) => s.handle.fdatasync()));
  if (log.needDirSync && !(created && deps.createdSyncedByCaller)) {
    await io.syncDir(dir);
    log.needDirSync = false;
  }
  log.commit.durableOffset = logEnd;
  for (const s of segs) s.dirty = false;
  // A clean log keeps its clean checkpoint until its first change (see markUnclean).
  if (clean && !reshaped) log.cleanOnDisk = true;
  else if (!created) await log.writeCheckpoint(false);
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

/** The segments' base offsets, ascending; leftover temp files and orphaned indexes removed. */
function segmentBases(deps: LogDeps, dir: string): number[] {
  const io = deps.io;
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
  return bases;
}

/** The persisted epoch cache (or one derived from the headers) below `below`, set on the log. */
function loadEpochs(log: SegmentPartitionLog, below: number): LeaderEpochCache {
  const epochBytes = log.deps.io.readFile(path.join(log.dir, EPOCH_FILE));
  let epochs = epochBytes ? LeaderEpochCache.decode(epochBytes) : null;
  if (!epochs) {
    epochs = new LeaderEpochCache();
    const e = epochs;
    log.forEachHeader(0, (h) => {
      if (h.baseOffset < below) e.assign(h.partitionLeaderEpoch, h.baseOffset);
    });
  }
  epochs.truncateFromEnd(below);
  log.epochs = epochs;
  return epochs;
}

/** What a clean shutdown recorded of a log (clean-manifest.ts), checked when it is first used. */
export interface CleanState {
  logStart: number;
  logEnd: number;
  activeBase: number;
  activeSize: number;
}

/**
 * Opens, synchronously and without a scan, a log a clean shutdown vouched for and nothing has
 * changed since (the first use of a lazily opened log: appends and reads are synchronous). Null
 * when its files are not what that shutdown recorded: the caller opens it the ordinary way.
 */
export function openCleanSync(
  dir: string,
  spec: { topic: string; partition: number; topicId: string },
  config: LogConfig,
  deps: LogDeps,
  want: CleanState,
): SegmentPartitionLog | null {
  const { io, logger } = deps;
  const cp = readCheckpoint(deps, dir);
  if (
    cp === null || !cp.clean || cp.activeBase !== want.activeBase ||
    cp.activeSize !== want.activeSize || cp.logStart !== want.logStart ||
    readQuarantine(io, dir) !== null
  ) {
    return null;
  }
  const bases = segmentBases(deps, dir);
  if (bases.length === 0 || bases[bases.length - 1] !== cp.activeBase) return null;
  const log = new SegmentPartitionLog(
    dir,
    spec.topic,
    spec.partition,
    spec.topicId,
    config,
    deps,
  );
  const segs: Segment[] = [];
  log.segments = segs;
  try {
    for (const b of bases) segs.push(Segment.open(io, dir, b, deps.maps, false));
    const last = segs.length - 1;
    for (let i = 0; i <= last; i++) {
      const seg = segs[i];
      const limit = i === last ? cp.activeSize : seg.fileSize();
      if ((i > 0 && seg.baseOffset !== segs[i - 1].nextOffset) || seg.fileSize() < limit) {
        throw new Error("segments changed");
      }
      if (!seg.loadIndexes(limit, config.indexIntervalBytes)) {
        seg.rebuild(limit, config.indexIntervalBytes, false);
        log.recovery.indexesRebuilt++;
      }
    }
    if (log.logEndOffset() !== want.logEnd) throw new Error("log end changed");
    // Bytes past the clean size were never acknowledged (see openSegmentLog): zeroed now, and
    // again at any later open until this sync lands, since the clean checkpoint stays.
    const active = segs[last];
    const size = active.fileSize();
    const end = size > cp.activeSize ? nonZeroEnd(active, cp.activeSize, size) : 0;
    if (end > cp.activeSize) {
      log.recovery.truncatedBytes += active.zeroFrom(cp.activeSize, end);
      active.handle.fdatasync().catch((e) =>
        logger("warn", "could not sync zeros past a clean checkpoint", { dir, error: String(e) })
      );
    }
  } catch {
    for (const s of segs) s.close();
    return null;
  }
  const epochs = loadEpochs(log, Number.POSITIVE_INFINITY);
  const logEnd = log.logEndOffset();
  log.logStart = Math.min(Math.max(cp.logStart, segs[0].baseOffset), logEnd);
  epochs.truncateFromEnd(logEnd);
  epochs.truncateFromStart(log.logStart);
  log.producers = log.loadProducerState();
  log.commit.durableOffset = logEnd;
  for (const s of segs) s.dirty = false;
  log.recovery.clean = true;
  log.cleanOnDisk = true;
  return log;
}

/** Folds a new quarantined range into the open entry (there is at most one), or adds it. */
function merge(s: QuarantineState | null, add: QuarantineEntry): QuarantineState {
  const prev = openEntry(s);
  const rest = (s?.entries ?? []).filter((e) => e !== prev);
  if (prev === null) return { v: 1, entries: [...rest, add] };
  return {
    v: 1,
    entries: [...rest, {
      from: Math.min(prev.from, add.from),
      to: Math.max(prev.to, add.to),
      status: "quarantined",
      folders: [...prev.folders, ...add.folders],
      reason: prev.reason,
      detected: prev.detected || add.detected,
    }],
  };
}

/**
 * Why the bad spot is damage rather than a torn write, or null for a torn write. A torn write
 * can only lie past the last sync, and only at the end of what was written.
 */
function damageEvidence(
  segs: Segment[],
  bad: Bad,
  rp: number,
  quarantine: QuarantineState | null,
): string | null {
  if (bad.offset < rp) return `offset ${bad.offset} is below the recovery point ${rp} (synced)`;
  const open = openEntry(quarantine);
  if (open !== null && bad.offset < open.to) return "inside offsets quarantined before";
  const later = bad.gap ? segs.slice(bad.index) : segs.slice(bad.index + 1);
  // Data after the bad spot means it is not the end of what was written. (After a process kill
  // the page cache keeps every write, so only the last one can be torn. After a power loss,
  // unsynced pages may reach the disk out of order: such a tail of the last moments before it is
  // then quarantined rather than cut, which keeps it.)
  if (!bad.gap) {
    const seg = segs[bad.index];
    const next = findBatchAfter(seg, bad.pos, bad.end, seg.fileSize(), bad.offset);
    if (next !== null) return `an intact batch follows at byte ${next.pos}`;
  }
  for (const s of later) {
    if (validEnd(s, 0, s.fileSize()) > s.baseOffset) {
      return `segment ${s.baseOffset} after it holds intact batches`;
    }
  }
  return null;
}

/**
 * Keep the log up to the damage; copy the damaged segment and move every later one to a new
 * quarantine folder (nothing is deleted); record the offsets so they are not reused. The marker
 * is durable before any file moves, and the damaged bytes are zeroed last, so a crash in between
 * only makes the next open do it again (into another folder).
 */
async function quarantineFrom(
  log: SegmentPartitionLog,
  bad: Bad,
  why: string,
  rp: number,
  quarantine: QuarantineState | null,
): Promise<QuarantineState> {
  const { io, logger, clock } = log.deps;
  const dir = log.dir;
  const segs = log.segments;
  const seg = segs[bad.index];
  const later = bad.gap ? segs.slice(bad.index) : segs.slice(bad.index + 1);
  // The end of the offsets the quarantined data held, as far as the bytes tell.
  let to = Math.max(bad.offset + 1, rp);
  if (!bad.gap) {
    const size = seg.fileSize();
    const next = findBatchAfter(seg, bad.pos, bad.end, size, bad.offset);
    if (next !== null) to = Math.max(to, validEnd(seg, next.pos, size));
    else if (later.length === 0) {
      // Only the bad batch itself can tell, if its header still reads.
      const h = seg.header(bad.pos, size);
      if (
        h !== null && h.baseOffset === bad.offset && h.lastOffsetDelta >= 0 &&
        h.batchLength >= BATCH_HEADER_SIZE - BATCH_LOG_OVERHEAD &&
        bad.pos + BATCH_LOG_OVERHEAD + h.batchLength <= size
      ) {
        to = Math.max(to, bad.offset + h.lastOffsetDelta + 1);
      }
    }
  }
  for (const s of later) to = Math.max(to, s.baseOffset, validEnd(s, 0, s.fileSize()));
  const folder = newFolder(io, dir, bad.offset, clock.now());
  const shownFolder = shownPath(dir, folder);
  const where = bad.gap
    ? `the next segment starts at ${later[0].baseOffset}`
    : `${bad.reason ?? "bad batch"} at byte ${bad.pos}`;
  const state = merge(quarantine, {
    from: bad.offset,
    to,
    status: "quarantined",
    folders: [shownFolder],
    reason: `${shownPath(dir, seg.file(".log"))}: ${where}, offset ${bad.offset} (${why})`,
    detected: new Date(clock.now()).toISOString(),
  });
  await writeQuarantine(io, dir, state);
  io.mkdirp(folder);
  await io.syncDir(dir);
  await io.syncDir(path.join(dir, QUARANTINE_DIR));
  let bytes = 0;
  if (!bad.gap) {
    bytes += await copySegment(io, seg, path.join(folder, path.basename(seg.file(".log"))));
  }
  for (const s of later) {
    bytes += s.fileSize();
    s.close();
    moveSegment(io, s, folder);
  }
  // The folder first: a file is in one of the two directories whatever the crash.
  await io.syncDir(folder);
  await io.syncDir(dir);
  if (!bad.gap) {
    seg.zeroFrom(bad.pos, bad.end);
    await seg.handle.fdatasync();
  }
  segs.splice(bad.gap ? bad.index : bad.index + 1);
  log.recovery.quarantinedSegments += later.length + (bad.gap ? 0 : 1);
  log.recovery.quarantinedBytes += bytes;
  logger("error", "damaged acknowledged records: quarantined, their offsets kept out of use", {
    partition: `${log.topic}-${log.partition}`,
    fromOffset: bad.offset,
    toOffset: to,
    offsetsAffected: to - bad.offset,
    reason: state.entries.at(-1)!.reason,
    quarantine: shownFolder,
    segmentsMoved: later.length,
    bytes,
    writes: "refused until repaired (docs/storage.md, Damaged data and quarantine)",
  });
  return state;
}
