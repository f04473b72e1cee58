// Damaged acknowledged data found by recovery: how it is told from a torn tail, moved aside (never
// deleted) and remembered, so its offsets are not reused until an operator decides (see
// docs/storage.md, "Damaged data and quarantine").
//
// `<partition dir>/quarantine.json` records the quarantined offset range and where its files went
// (`<partition dir>/quarantine/<first offset>-<time>/`). Its entries' `status`:
// - "quarantined": the log ends at `from`; client appends are refused (replication appends are
//   taken: a follower refetching the range from its leader heals the partition once its log end
//   reaches `to`).
// - "skip": set by an operator who gives the records up; the next open continues the log at `to`.
// - "skipped": the offsets [from, to) are a gap in the log; reads starting in it return the records
//   after it, as offsets removed by compaction.
import * as path from "node:path";
import {
  BATCH_HEADER_SIZE,
  BATCH_LOG_OVERHEAD,
  computeBatchCrc,
  OFF_BATCH_LENGTH,
  OFF_MAGIC,
  readBatchHeader,
} from "../protocol/record-batch.ts";
import { type FileIO, writeFileDurable } from "./file-io.ts";
import { type Segment, segmentName, shownPath } from "./segment.ts";

export { shownPath };

export const QUARANTINE_FILE = "quarantine.json";
export const QUARANTINE_DIR = "quarantine";

export interface QuarantineEntry {
  /** First offset not in the log (the damaged batch, or the first missing offset). */
  from: number;
  /** End (exclusive) of the offsets the quarantined data held, as far as recovery could tell. */
  to: number;
  status: "quarantined" | "skip" | "skipped";
  /** Folders holding the files, relative to the data dir ([] when the bytes were gone). */
  folders: string[];
  reason: string;
  /** ISO time of detection. */
  detected: string;
}

export interface QuarantineState {
  v: 1;
  entries: QuarantineEntry[];
}

/**
 * The marker, or null when absent. A marker that does not parse is not ignored (that could reuse
 * quarantined offsets): it reads as a quarantine of unknown extent, which only an operator lifts.
 */
export function readQuarantine(io: FileIO, dir: string): QuarantineState | null {
  const b = io.readFile(path.join(dir, QUARANTINE_FILE));
  if (!b) return null;
  try {
    const s = JSON.parse(new TextDecoder().decode(b)) as QuarantineState;
    if (s.v !== 1 || !Array.isArray(s.entries)) throw new Error("bad version");
    for (const e of s.entries) {
      if (
        !Number.isSafeInteger(e.from) || !Number.isSafeInteger(e.to) || e.from < 0 ||
        e.to < e.from || !["quarantined", "skip", "skipped"].includes(e.status) ||
        !Array.isArray(e.folders)
      ) {
        throw new Error("bad entry");
      }
    }
    return s;
  } catch {
    return {
      v: 1,
      entries: [{
        from: 0,
        to: Number.MAX_SAFE_INTEGER,
        status: "quarantined",
        folders: [],
        reason: `${QUARANTINE_FILE} does not parse: fix or remove it while the broker is stopped`,
        detected: "",
      }],
    };
  }
}

export function writeQuarantine(io: FileIO, dir: string, s: QuarantineState): Promise<void> {
  const p = path.join(dir, QUARANTINE_FILE);
  return writeFileDurable(io, p, new TextEncoder().encode(JSON.stringify(s, null, 2) + "\n"));
}

/** The entry whose status is not "skipped" (at most one: new damage merges into it). */
export function openEntry(s: QuarantineState | null): QuarantineEntry | null {
  return s?.entries.find((e) => e.status !== "skipped") ?? null;
}

/** Whether segments ending at `end` then starting at `base` skip a range an operator gave up. */
export function acceptedGap(s: QuarantineState | null, end: number, base: number): boolean {
  return s !== null &&
    s.entries.some((e) => e.status === "skipped" && e.from === end && e.to === base);
}

/**
 * The first CRC-valid batch starting in (from, startsBefore) and ending by `limit`, with a base
 * offset above `after`; null if none. Recovery asks this past a bad batch: a torn write only
 * damages the end of what was written, so an intact batch after the bad one means the bad one
 * was damaged in place, not torn. The base offset bound keeps record batches nested in record
 * values (base offset 0 as producers encode them) from counting.
 */
export function findBatchAfter(
  seg: Segment,
  from: number,
  startsBefore: number,
  limit: number,
  after: number,
): { pos: number; size: number } | null {
  const CHUNK = 1 << 20;
  for (let start = from + 1; start < startsBefore; start += CHUNK) {
    if (start + BATCH_HEADER_SIZE > limit) break;
    const stop = Math.min(startsBefore, start + CHUNK);
    // Each view reaches one header past its chunk, so a header straddling chunks is seen.
    const b = seg.bytes(start, Math.min(limit, stop + BATCH_HEADER_SIZE), limit);
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; start + i < stop && i + BATCH_HEADER_SIZE <= b.length; i++) {
      if (b[i + OFF_MAGIC] !== 2) continue;
      const pos = start + i;
      const size = BATCH_LOG_OVERHEAD + v.getInt32(i + OFF_BATCH_LENGTH);
      if (size < BATCH_HEADER_SIZE || pos + size > limit) continue;
      const h = readBatchHeader(b, i, v);
      if (!(h.baseOffset > after) || h.lastOffsetDelta < 0 || h.recordsCount < 0) continue;
      if (computeBatchCrc(seg.bytes(pos, pos + size, limit), 0, size) === h.crc) {
        return { pos, size };
      }
    }
  }
  return null;
}

/** End (exclusive) of the last offset of the CRC-valid batches walked from `pos`, or -1. */
export function validEnd(seg: Segment, pos: number, limit: number): number {
  let end = -1;
  seg.walk(pos, limit, true, (h) => {
    end = Math.max(end, h.baseOffset + h.lastOffsetDelta + 1);
    return null;
  });
  return end;
}

/** A folder name under `quarantine/` that does not exist yet. */
export function newFolder(io: FileIO, dir: string, from: number, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
  const base = `${segmentName(from, "")}-${stamp}`;
  let name = base;
  for (let n = 2; io.exists(path.join(dir, QUARANTINE_DIR, name)); n++) name = `${base}-${n}`;
  return path.join(dir, QUARANTINE_DIR, name);
}

/** Copy a whole segment file, byte for byte, to `dest`, and sync the copy. */
export async function copySegment(io: FileIO, seg: Segment, dest: string): Promise<number> {
  const size = seg.fileSize();
  const h = io.open(dest, true);
  try {
    for (let p = 0; p < size; p += 1 << 20) {
      const q = Math.min(size, p + (1 << 20));
      h.pwrite(seg.bytes(p, q, size), p);
    }
    await h.fdatasync();
  } finally {
    h.close();
  }
  return size;
}

/** Move a segment's files (log and indexes) into `folder`; the segment must be closed. */
export function moveSegment(io: FileIO, seg: Segment, folder: string): void {
  for (const ext of [".log", ".index", ".timeindex"]) {
    const f = seg.file(ext);
    if (io.exists(f)) io.rename(f, path.join(folder, path.basename(f)));
  }
}
