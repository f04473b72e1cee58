// The segmented partition log: appends (pwrite), reads (mmap slices), lookups, retention,
// group-committed durability and clean shutdown. Recovery lives in recovery.ts.
import * as path from "node:path";
import { crc32c } from "../protocol/crc32c.ts";
import type { BatchHeader, DecompressFn } from "../protocol/record-batch.ts";
import { LeaderEpochCache } from "./epoch-cache.ts";
import { errnoCode, type FileIO, writeFileDurable, writeFileReplacing } from "./file-io.ts";
import { GroupCommit, handled } from "./group-commit.ts";
import { MIN_MARGIN, ZeroAheadPolicy } from "./zero-ahead.ts";
import { checkAppendProducers, ProducerStateManager } from "./producer-state.ts";
import { MapCache, Segment, segmentName, shownPath } from "./segment.ts";
import {
  openEntry,
  QUARANTINE_FILE,
  type QuarantineEntry,
  type QuarantineState,
  writeQuarantine,
} from "./quarantine.ts";
import {
  type AppendOptions,
  type AppendResult,
  type Clock,
  CorruptLogError,
  type EpochEndOffset,
  type FlushPolicy,
  InvalidRecordError,
  type LogConfig,
  type LogDamage,
  type Logger,
  OffsetOutOfRangeError,
  type PartitionLog,
  type ProducerEntry,
  QuarantinedLogError,
  type ReadResult,
  type RetentionResult,
  StorageError,
} from "./types.ts";
import { prepareBatches, type PrepareContext } from "./validate.ts";
import { StagingPool } from "./staging.ts";

export interface LogDeps {
  io: FileIO;
  clock: Clock;
  logger: Logger;
  flush: FlushPolicy;
  maps: MapCache;
  staging: StagingPool;
  decompress?: DecompressFn;
  /** Benchmark hook: time spent walking records for timestamps. */
  stats?: { walkNs: number };
  /** Keep a zeroed window ahead of the end while acks=all rounds are small (zero-ahead.ts). */
  zeroAhead?: boolean;
  /**
   * Write the recovery checkpoint shortly after a sync advanced the durable offset, at most once
   * per this many ms (so a crash rescans about that much). 0 or absent: only when asked.
   */
  checkpointAfterSyncMs?: number;
  /** A log created now: its directory is made durable by the caller (a shared file-system sync). */
  createdSyncedByCaller?: boolean;
}

/** Shortest wait between a sync and the checkpoint it triggers (coalesces a burst of rounds). */
const CHECKPOINT_DELAY_MS = 50;

/** A pause this long with no sync round lets zeros be written ahead of the end (zero-ahead.ts). */
const IDLE_MS = 2;

export const CHECKPOINT_FILE = "recovery-checkpoint.json";
export const EPOCH_FILE = "leader-epoch-checkpoint";

export interface Checkpoint {
  v: 1;
  clean: boolean;
  /** Offsets below this were synced: damage below it is damage, never a torn write. */
  recoveryPoint: number;
  logStart: number;
  activeBase: number;
  activeSize: number;
  /** CRC-32C of the JSON without this field (absent in files written before it existed). */
  sum?: number;
}

/** The checkpoint's bytes: its JSON with a CRC-32C of that JSON, so bit rot reads as unreadable. */
export function encodeCheckpoint(c: Checkpoint): string {
  const { sum: _, ...data } = c;
  const json = JSON.stringify(data);
  return JSON.stringify({ ...data, sum: crc32c(new TextEncoder().encode(json)) });
}

/** Whether a parsed checkpoint's sum (when present) matches its other fields. */
export function checkpointSumOk(c: Checkpoint): boolean {
  if (c.sum === undefined) return true;
  const { sum, ...data } = c;
  return crc32c(new TextEncoder().encode(JSON.stringify(data))) === sum;
}

export interface RecoveryInfo {
  clean: boolean;
  scannedSegments: number;
  scannedBytes: number;
  truncatedBytes: number;
  indexesRebuilt: number;
  /** Segments moved to quarantine (damaged acknowledged data) and their bytes. */
  quarantinedSegments: number;
  quarantinedBytes: number;
}

const RESOLVED = Promise.resolve();
const INT32_MAX = 0x7fffffff;

export class SegmentPartitionLog implements PartitionLog {
  segments: Segment[] = [];
  logStart = 0;
  producers = new ProducerStateManager();
  epochs = new LeaderEpochCache();
  commit: GroupCommit;
  needDirSync = false;
  recovery: RecoveryInfo = {
    clean: false,
    scannedSegments: 0,
    scannedBytes: 0,
    truncatedBytes: 0,
    indexesRebuilt: 0,
    quarantinedSegments: 0,
    quarantinedBytes: 0,
  };
  /** quarantine.json as it stands (quarantine.ts); an open entry refuses client appends. */
  quarantine: QuarantineState | null = null;
  /** The lowest damaged batch a read met (not quarantined: bytes damaged in place). */
  private readDamage: LogDamage | null = null;
  private healing = false;
  /**
   * The checkpoint on disk says "clean" and still describes the log exactly (nothing changed
   * since a clean open). Until the first change nothing is written, so idle partitions cost no
   * I/O at start, at checkpoints or at shutdown.
   */
  cleanOnDisk = false;
  /**
   * Set while this log is vouched for by the clean-shutdown manifest (clean-manifest.ts): the
   * first change after a start waits for it (the log named in the journal) before it is on disk.
   */
  beforeFirstChange: (() => Promise<void>) | null = null;
  /** The "unclean" checkpoint being written before the first change's acknowledgement. */
  private uncleanMark: Promise<void> | null = null;
  private lastCheckpoint = "";
  /** Checkpoint writes, one at a time (they share a temp file), in the order asked. */
  private checkpointChain: Promise<void> = RESOLVED;
  /** Checkpoint writes queued or in flight (their data is computed when their turn comes). */
  private checkpointWrites = 0;
  /** The recovery point of the checkpoint on disk (unknown until one is written here). */
  private diskRecoveryPoint = Number.MAX_SAFE_INTEGER;
  private lastCheckpointAt = Number.NEGATIVE_INFINITY;
  private checkpointTimer: ReturnType<typeof setTimeout> | null = null;
  private checkpointFailing = false;
  private closed = false;
  private cutPending = false;
  private cfg: LogConfig;
  private readonly prep: PrepareContext;
  private readonly ahead = new ZeroAheadPolicy();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** The zeros being written ahead of the end while the log is idle (benchmarks wait for it). */
  zeroing: Promise<void> | null = null;

  constructor(
    readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    config: LogConfig,
    readonly deps: LogDeps,
  ) {
    this.cfg = { ...config };
    this.prep = {
      now: 0,
      config: this.cfg,
      origin: "client",
      nextOffset: 0,
      leaderEpoch: 0,
      decompress: deps.decompress,
      stats: deps.stats,
    };
    this.commit = new GroupCommit({
      writtenOffset: () => this.logEndOffset(),
      syncAll: () => this.syncAll(),
    }, 0);
  }

  get active(): Segment {
    return this.segments[this.segments.length - 1];
  }

  logStartOffset(): number {
    return this.logStart;
  }

  logEndOffset(): number {
    return this.active.nextOffset;
  }

  config(): LogConfig {
    return { ...this.cfg };
  }

  updateConfig(patch: Partial<LogConfig>): void {
    this.cfg = { ...this.cfg, ...patch };
  }

  sizeBytes(): number {
    let s = 0;
    for (const seg of this.segments) s += seg.size;
    return s;
  }

  latestEpoch(): number {
    return this.epochs.latestEpoch();
  }

  endOffsetForEpoch(epoch: number): EpochEndOffset {
    return this.epochs.endOffsetFor(epoch, this.logEndOffset());
  }

  producerState(pid: number): ProducerEntry | undefined {
    return this.producers.get(pid);
  }

  openedClean(): boolean {
    return this.recovery.clean;
  }

  damaged(): LogDamage | null {
    const q = openEntry(this.quarantine);
    if (q !== null) {
      return {
        state: "quarantined",
        fromOffset: q.from,
        toOffset: q.to,
        files: q.folders,
        reason: q.reason,
      };
    }
    return this.readDamage;
  }

  /** This log's files relative to the data dir, for messages. */
  private shown(name = ""): string {
    return shownPath(this.dir, path.join(this.dir, name));
  }

  /**
   * fdatasync every dirty segment (and the directory after creates or deletes). The usual round
   * has one dirty segment and goes straight to its fdatasync: this runs once per group-commit
   * round, and an async function with Promise.all was garbage in the acks=all latency tail.
   */
  private syncAll(): Promise<void> {
    if (this.deps.zeroAhead !== false) this.noteRound();
    return this.syncDirty();
  }

  /** Feed the zero-ahead policy; when the window runs low, look for a pause to refill it. */
  private noteRound(): void {
    const seg = this.active;
    const now = performance.now();
    this.ahead.noteRound(now, seg.baseOffset, seg.size);
    if (this.zeroing !== null) return;
    if (this.ahead.step(now, seg.size, seg.prepared, this.cfg.segmentBytes, false) === null) return;
    // One timer per log, re-armed by every round while the window is low: it fires only after a
    // pause of IDLE_MS with no round started.
    if (this.idleTimer === null) {
      this.idleTimer = setTimeout(() => this.onIdle(), IDLE_MS);
      this.idleTimer.unref?.();
    } else this.idleTimer.refresh();
  }

  private onIdle(): void {
    if (this.closed || this.zeroing !== null) return;
    // A round outlasted the pause (a slow sync): look again once it has been over for IDLE_MS.
    if (this.commit.busy) {
      this.idleTimer?.refresh();
      return;
    }
    this.zeroing = this.zeroWhileIdle().finally(() => {
      this.zeroing = null;
    });
  }

  /** Write the window's zeros in steps, each synced, for as long as no round wants the disk. */
  private async zeroWhileIdle(): Promise<void> {
    let refilling = false;
    while (!this.closed && !this.cutPending && !this.commit.busy) {
      const seg = this.active;
      const before = seg.prepared;
      const step = this.ahead.step(
        performance.now(),
        seg.size,
        before,
        this.cfg.segmentBytes,
        refilling,
      );
      if (step === null) return;
      refilling = true;
      try {
        // Keep the zeros being written further ahead than one more append can reach.
        const job = seg.zeroAhead(step.to, Math.max(MIN_MARGIN, 2 * this.cfg.maxMessageBytes));
        if (job !== null) await job;
        if (seg.closed || seg.prepared <= before) return;
        await seg.handle.fdatasync();
      } catch (e) {
        if (this.closed) return; // deleted or closed under it: nothing failed
        this.ahead.failed(performance.now());
        this.deps.logger(
          "warn",
          "could not write zeros ahead of the log end; not trying for 60 s",
          {
            dir: this.dir,
            error: errnoCode(e) ?? String(e),
          },
        );
        return;
      }
    }
  }

  private syncDirty(): Promise<void> {
    const dirty: Segment[] = [];
    for (const s of this.segments) {
      if (s.dirty && !s.closed) {
        s.dirty = false;
        dirty.push(s);
      }
    }
    const dirSync = this.needDirSync;
    this.needDirSync = false;
    let p: Promise<unknown>;
    try {
      p = dirty.length === 1 && !dirSync ? dirty[0].handle.fdatasync() : Promise.all([
        ...dirty.map((s) => s.handle.fdatasync()),
        ...(dirSync ? [this.deps.io.syncDir(this.dir)] : []),
      ]);
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then(
      () => this.synced(),
      (e) => {
        for (const s of dirty) s.dirty = true;
        if (dirSync) this.needDirSync = true;
        this.deps.logger("error", "fdatasync failed", { dir: this.dir, error: String(e) });
        throw new StorageError(`sync failed: ${errnoCode(e) ?? String(e)}`, e);
      },
    );
  }

  append(batches: Uint8Array, opts: AppendOptions): AppendResult {
    if (this.closed) throw new StorageError("log is closed");
    if (this.cutPending) throw new StorageError("truncation not yet durable");
    const origin = opts.origin ?? "client";
    // Quarantined offsets are never reused by a client's records; a follower's appends bring the
    // leader's copy of them (and heal the partition once past them).
    if (this.quarantine !== null && origin === "client") this.refuseIfQuarantined();
    const now = this.deps.clock.now();
    let stage = batches;
    if (!opts.inPlace) {
      stage = this.deps.staging.take(batches.length);
      stage.set(batches);
    }
    // One context object per log, refilled per append (appends are synchronous).
    const prep = this.prep;
    prep.now = now;
    prep.config = this.cfg;
    prep.origin = origin;
    prep.nextOffset = this.logEndOffset();
    prep.leaderEpoch = opts.leaderEpoch;
    const metas = prepareBatches(stage, prep);
    let latest = this.epochs.latestEpoch();
    for (const m of metas) {
      if (m.leaderEpoch < latest) {
        throw new InvalidRecordError(`leader epoch ${m.leaderEpoch} is older than ${latest}`);
      }
      latest = m.leaderEpoch;
    }
    if (origin === "client") {
      const dup = checkAppendProducers(this.producers, metas);
      if (dup) return this.duplicateResult(dup.baseOffset, dup.lastOffset, opts);
    }
    const mark = this.markUnclean();
    const total = metas[metas.length - 1].pos + metas[metas.length - 1].size;
    const first = metas[0];
    const last = metas[metas.length - 1];
    let maxTs = -1;
    for (const m of metas) if (m.maxTimestamp > maxTs) maxTs = m.maxTimestamp;
    this.maybeRoll(total, last.lastOffset, maxTs);
    const seg = this.active;
    const at = seg.size;
    seg.write(total === stage.length ? stage : stage.subarray(0, total));
    for (const m of metas) {
      seg.noteBatch(m, this.cfg.indexIntervalBytes, at);
      this.producers.update(m, m.baseOffset, now);
      if (this.epochs.assign(m.leaderEpoch, m.baseOffset)) this.persistEpochs();
    }
    let recordCount = 0;
    for (const m of metas) recordCount += m.recordCount;
    if (this.quarantine !== null) this.healIfRefetched();
    return new Appended(
      first.baseOffset,
      last.lastOffset,
      recordCount,
      this.cfg.messageTimestampType === "LogAppendTime" && origin === "client" ? now : -1,
      this.logStart,
      false,
      this.commit,
      mark,
      opts.requireDurable === true || this.deps.flush.kind === "always",
    );
  }

  private refuseIfQuarantined(): void {
    const q = openEntry(this.quarantine);
    if (q === null) return;
    throw new QuarantinedLogError(
      `partition ${this.topic}-${this.partition} is damaged: offsets ${q.from} to ${q.to - 1} ` +
        `are quarantined (${this.quarantinedFiles(q)}); writes are refused until an operator ` +
        "repairs it, so those offsets are not reused",
    );
  }

  private quarantinedFiles(q: QuarantineEntry): string {
    return q.folders.length > 0 ? q.folders.join(", ") : this.shown(QUARANTINE_FILE);
  }

  /**
   * A follower's appends reached the end of the quarantined range: the leader's copy replaced
   * it. Once that is durable the entry goes (its folders stay for the operator).
   */
  private healIfRefetched(): void {
    const q = openEntry(this.quarantine);
    if (q === null || q.status !== "quarantined" || this.healing) return;
    if (this.logEndOffset() < q.to) return;
    this.healing = true;
    const done = async () => {
      await this.commit.waitDurable(q.to);
      const next: QuarantineState = {
        v: 1,
        entries: this.quarantine!.entries.filter((e) => e !== q),
      };
      await writeQuarantine(this.deps.io, this.dir, next);
      this.quarantine = next;
      this.deps.logger(
        "warn",
        "quarantined offsets replaced by the leader's copy: writable again",
        {
          partition: `${this.topic}-${this.partition}`,
          fromOffset: q.from,
          toOffset: q.to,
          quarantine: q.folders,
        },
      );
    };
    done().catch((e) => {
      if (!this.closed) {
        this.deps.logger("warn", "could not record the end of a quarantine", {
          partition: `${this.topic}-${this.partition}`,
          error: errnoCode(e) ?? String(e),
        });
      }
    }).finally(() => {
      this.healing = false;
    });
  }

  /**
   * Before the first change after a clean open, start writing an unclean checkpoint; returns the
   * pending write (shared by every change until it lands), or null once it has.
   */
  private markUnclean(): Promise<void> | null {
    if (this.cleanOnDisk) {
      this.cleanOnDisk = false;
      const p = this.writeCheckpoint(false).then(
        () => {
          if (this.uncleanMark === p) this.uncleanMark = null;
        },
        (e) => {
          // Not on disk: the next change tries again; this one is not acknowledged.
          if (this.uncleanMark === p) this.uncleanMark = null;
          this.cleanOnDisk = true;
          throw new StorageError(
            `cannot write the recovery checkpoint in ${this.shown()}: ${errnoCode(e) ?? "error"}`,
            e,
          );
        },
      );
      // Pre-handled: acks=1 appends may never await it.
      void p.catch(() => {});
      this.uncleanMark = p;
    }
    return this.uncleanMark;
  }

  private duplicateResult(base: number, last: number, opts: AppendOptions): AppendResult {
    return new Appended(
      base,
      last,
      last - base + 1,
      -1,
      this.logStart,
      true,
      this.commit,
      null,
      opts.requireDurable === true || this.deps.flush.kind === "always",
    );
  }

  /**
   * `maxTs`: the incoming batches' largest timestamp. segment.ms is measured in record time, as
   * Kafka does (the incoming timestamp against the segment's first one), so a backfill of old
   * records does not roll a segment per batch, as comparing with the wall clock would.
   */
  private maybeRoll(incoming: number, lastOffset: number, maxTs: number): void {
    const seg = this.active;
    if (seg.isEmpty()) return;
    const bySize = seg.size + incoming > this.cfg.segmentBytes;
    const byTime = seg.firstBatchTimestamp >= 0 &&
      maxTs - seg.firstBatchTimestamp >= this.cfg.segmentMs;
    const byOffset = lastOffset - seg.baseOffset > INT32_MAX || seg.size + incoming > INT32_MAX;
    // Only if appends outran a zero write in flight (zero-ahead.ts): never write under it.
    const byZeroing = seg.zeroingFrom >= 0 && seg.size + incoming > seg.zeroingFrom;
    if (bySize || byTime || byOffset || byZeroing) this.roll();
  }

  /** Close the active segment's indexes and start a new segment at the log end. */
  roll(): void {
    if (this.closed || this.active.isEmpty()) return;
    const old = this.active;
    const base = old.nextOffset;
    try {
      old.writeIndexes();
      this.deps.io.writeFile(
        path.join(this.dir, segmentName(base, ".snapshot")),
        this.producers.encode(),
      );
    } catch (e) {
      this.deps.logger("warn", "could not write indexes/snapshot at roll", { error: String(e) });
    }
    const seg = Segment.open(this.deps.io, this.dir, base, this.deps.maps, true);
    this.segments.push(seg);
    this.needDirSync = true;
    this.pruneSnapshots();
  }

  /** Visit every batch header in [fromOffset, log end) without checking CRCs. */
  forEachHeader(fromOffset: number, visit: (h: BatchHeader) => void): void {
    for (const seg of this.segments) {
      if (seg.nextOffset <= fromOffset || seg.isEmpty()) continue;
      const start = seg.positionOf(Math.max(fromOffset, seg.baseOffset));
      if (start < 0) continue;
      seg.walk(start, seg.size, false, (h) => {
        visit(h);
        return null;
      });
    }
  }

  /**
   * Producer state for the log as it stands: the newest usable snapshot at or below the log end,
   * then the batch headers after it. Snapshots past the end describe bytes no longer there and
   * go. Used on open and after a truncation, where forgetting only the cut batches would also
   * forget what the producer window held before them (Kafka reloads from a snapshot too).
   */
  loadProducerState(): ProducerStateManager {
    const io = this.deps.io;
    const logEnd = this.logEndOffset();
    const first = this.segments[0].baseOffset;
    const snaps = io.readdir(this.dir).flatMap((n) => {
      const m = /^(\d{20})\.snapshot$/.exec(n);
      return m ? [Number(m[1])] : [];
    }).sort((a, b) => b - a);
    let from = first;
    let producers = new ProducerStateManager();
    for (const s of snaps) {
      const file = path.join(this.dir, segmentName(s, ".snapshot"));
      if (s > logEnd) {
        io.unlink(file);
        continue;
      }
      if (s < first) continue;
      const b = io.readFile(file);
      const decoded = b ? ProducerStateManager.decode(b) : null;
      if (decoded) {
        producers = decoded;
        from = s;
        break;
      }
    }
    this.forEachHeader(from, (h) => producers.update(h, h.baseOffset, h.maxTimestamp));
    return producers;
  }

  /** Keep snapshots from the oldest segment's base on; older ones describe deleted data. */
  pruneSnapshots(): void {
    const oldest = this.segments[0].baseOffset;
    for (const name of this.deps.io.readdir(this.dir)) {
      const m = /^(\d{20})\.snapshot$/.exec(name);
      if (m && Number(m[1]) < oldest) this.deps.io.unlink(path.join(this.dir, name));
    }
  }

  /** The leader epoch file's writes, one at a time (they share a temp file). */
  private epochWrites: Promise<void> = RESOLVED;
  private epochWriteQueued = false;

  /**
   * Write the epoch cache durably, after any write of it in flight; writes asked for meanwhile
   * are one write of the newest cache, and none once the log is closing (close writes it).
   */
  /** Before the first change to files the clean-shutdown manifest vouches for (see above). */
  private async noteChange(): Promise<void> {
    const note = this.beforeFirstChange;
    if (note === null) return;
    await note();
    this.beforeFirstChange = null;
  }

  private persistEpochs(): void {
    if (this.epochWriteQueued) return;
    this.epochWriteQueued = true;
    this.epochWrites = this.epochWrites.then(async () => {
      this.epochWriteQueued = false;
      if (this.closed) return;
      await this.noteChange();
      const p = path.join(this.dir, EPOCH_FILE);
      await writeFileDurable(this.deps.io, p, this.epochs.encode());
    }).catch((e) =>
      this.deps.logger("warn", "could not persist the leader epoch cache", { error: String(e) })
    );
  }

  private segmentFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    let ans = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid].baseOffset <= offset) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  }

  read(offset: number, maxBytes: number, upperOffset?: number): ReadResult {
    return this.readWith(offset, upperOffset, (s, pos, upper) => {
      return s.readBatches(pos, upper, maxBytes);
    });
  }

  readInto(offset: number, maxBytes: number, into: Uint8Array, upperOffset?: number): ReadResult {
    return this.readWith(offset, upperOffset, (s, pos, upper) => {
      return s.readBatchesInto(pos, upper, maxBytes, into);
    });
  }

  private readWith(
    offset: number,
    upperOffset: number | undefined,
    batches: (s: Segment, pos: number, upper: number) => {
      bytes: Uint8Array;
      first: number;
      next: number;
    },
  ): ReadResult {
    const end = this.logEndOffset();
    const upper = Math.min(upperOffset ?? end, end);
    if (!Number.isSafeInteger(offset) || offset < this.logStart || offset > end) {
      const q = this.quarantine !== null ? openEntry(this.quarantine) : null;
      if (q !== null && offset > end && offset < q.to) {
        // Records that were acknowledged: a storage error (clients retry), not "out of range"
        // (a consumer would reset its position).
        throw new CorruptLogError(
          `offset ${offset} of ${this.topic}-${this.partition} is quarantined (offsets ${q.from} ` +
            `to ${q.to - 1}, damaged on disk, in ${this.quarantinedFiles(q)}); it cannot be ` +
            "served until an operator repairs it",
          q.folders[0] ?? this.shown(QUARANTINE_FILE),
          offset,
        );
      }
      throw new OffsetOutOfRangeError(`offset ${offset} outside [${this.logStart}, ${end}]`);
    }
    const empty: ReadResult = {
      records: new Uint8Array(0),
      firstOffset: offset,
      nextOffset: offset,
      logStartOffset: this.logStart,
      logEndOffset: end,
    };
    if (offset >= upper) return empty;
    for (let i = this.segmentFor(offset); i < this.segments.length; i++) {
      const seg = this.segments[i];
      let pos: number;
      let r: { bytes: Uint8Array; first: number; next: number };
      try {
        pos = seg.positionOf(Math.max(offset, seg.baseOffset));
        if (pos < 0) continue;
        r = batches(seg, pos, upper);
      } catch (e) {
        if (e instanceof CorruptLogError) this.noteReadDamage(e, offset);
        throw e;
      }
      if (r.first < 0) return empty;
      return {
        records: r.bytes,
        firstOffset: r.first,
        nextOffset: r.next,
        logStartOffset: this.logStart,
        logEndOffset: end,
      };
    }
    return empty;
  }

  /** Remember the lowest damaged batch reads met, for damaged() (health and metrics). */
  private noteReadDamage(e: CorruptLogError, offset: number): void {
    const at = e.offset >= 0 ? e.offset : offset;
    if (this.readDamage !== null && this.readDamage.fromOffset <= at) return;
    this.readDamage = {
      state: "unreadable",
      fromOffset: at,
      toOffset: null,
      files: [e.file],
      reason: e.message,
    };
  }

  offsetForTimestamp(ts: number): { offset: number; timestamp: number } | null {
    for (const seg of this.segments) {
      if (seg.isEmpty() || seg.maxTimestamp < ts || seg.nextOffset <= this.logStart) continue;
      const r = seg.findTimestamp(ts, this.deps.decompress);
      if (r) {
        return r.offset < this.logStart ? { offset: this.logStart, timestamp: r.timestamp } : r;
      }
    }
    return null;
  }

  waitDurable(offset: number): Promise<void> {
    return this.commit.waitDurable(offset);
  }

  durableEndOffset(): number {
    return Math.min(this.commit.durableOffset, this.logEndOffset());
  }

  assignEpoch(epoch: number): void {
    if (this.epochs.assign(epoch, this.logEndOffset())) this.persistEpochs();
  }

  flush(): Promise<void> {
    return this.commit.flush();
  }

  /** Delete closed segments from the front while `pred` holds. */
  private async deleteFront(pred: (s: Segment) => boolean): Promise<RetentionResult> {
    let deletedSegments = 0;
    let deletedBytes = 0;
    while (this.segments.length > 1 && pred(this.segments[0])) {
      const s = this.segments.shift()!;
      deletedSegments++;
      deletedBytes += s.size;
      this.logStart = Math.max(this.logStart, this.segments[0].baseOffset);
      s.deleteFiles();
    }
    if (this.readDamage !== null && this.readDamage.fromOffset < this.logStart) {
      this.readDamage = null;
    }
    if (deletedSegments > 0) {
      this.epochs.truncateFromStart(this.logStart);
      this.pruneSnapshots();
      await this.writeCheckpoint(false);
      this.deps.logger("info", "deleted segments", {
        dir: this.dir,
        deletedSegments,
        deletedBytes,
      });
    }
    return { deletedSegments, deletedBytes, logStartOffset: this.logStart };
  }

  async enforceRetention(): Promise<RetentionResult> {
    if (this.closed) return { deletedSegments: 0, deletedBytes: 0, logStartOffset: this.logStart };
    const now = this.deps.clock.now();
    this.producers.expire(now, this.cfg.producerIdExpirationMs);
    const { retentionMs, retentionBytes } = this.cfg;
    const byTime = await this.deleteFront((s) =>
      retentionMs >= 0 && now - s.maxTimestamp > retentionMs
    );
    let excess = retentionBytes >= 0 ? this.sizeBytes() - retentionBytes : -1;
    const bySize = await this.deleteFront((s) => {
      if (excess - s.size < 0) return false;
      excess -= s.size;
      return true;
    });
    return {
      deletedSegments: byTime.deletedSegments + bySize.deletedSegments,
      deletedBytes: byTime.deletedBytes + bySize.deletedBytes,
      logStartOffset: this.logStart,
    };
  }

  async deleteRecords(offset: number): Promise<number> {
    const end = this.logEndOffset();
    if (offset === -1) offset = end;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > end) {
      throw new OffsetOutOfRangeError(`deleteRecords offset ${offset} beyond log end ${end}`);
    }
    if (offset <= this.logStart) return this.logStart;
    this.logStart = offset;
    const r = await this.deleteFront((s) => s.nextOffset <= this.logStart);
    if (r.deletedSegments === 0) {
      this.epochs.truncateFromStart(this.logStart);
      await this.writeCheckpoint(false);
    }
    return this.logStart;
  }

  async truncateTo(offset: number): Promise<void> {
    if (offset >= this.logEndOffset()) {
      // No bytes to cut, but an epoch a leader recorded at the end with nothing written in it
      // goes too: a follower keeping it would ask its new leader about an epoch with no data.
      const n = this.epochs.entries.length;
      this.epochs.truncateFromEnd(Math.max(offset, this.logStart));
      if (this.epochs.entries.length !== n) this.persistEpochs();
      return;
    }
    if (offset < this.logStart) offset = this.logStart;
    // The cut removes the whole batch holding `offset`: everything below concerns the new end.
    offset = this.batchStartOf(offset);
    this.cutPending = true;
    try {
      // The checkpoint on disk must never claim offsets the cut removes as synced: recovery takes
      // a bad batch below its recovery point for damage (quarantine), not a torn write. A write
      // queued or in flight may carry a recovery point computed before the cut: lower after it.
      this.commit.truncating(offset);
      if (this.diskRecoveryPoint > offset || this.cleanOnDisk || this.checkpointWrites > 0) {
        await this.lowerCheckpoint();
      }
      if (this.readDamage !== null && this.readDamage.fromOffset >= offset) this.readDamage = null;
      while (
        this.segments.length > 1 && this.active.baseOffset >= offset &&
        this.active.baseOffset > this.logStart
      ) {
        this.segments.pop()!.deleteFiles();
        this.needDirSync = true;
      }
      const seg = this.active;
      const pos = seg.positionOf(offset);
      if (pos >= 0) {
        const dropped = seg.zeroFrom(pos);
        seg.rebuild(pos, this.cfg.indexIntervalBytes, false);
        this.deps.logger("warn", "log truncated", {
          dir: this.dir,
          offset: seg.nextOffset,
          dropped,
        });
      }
      const newEnd = this.logEndOffset();
      this.commit.truncated(newEnd);
      this.producers = this.loadProducerState();
      this.epochs.truncateFromEnd(newEnd);
      this.persistEpochs();
      // The cut must be on disk before anything is appended over it.
      await this.syncAll();
    } finally {
      this.cutPending = false;
      // After a failed cut too: sync rounds may vouch again for what is there.
      this.commit.truncated(this.logEndOffset());
    }
  }

  /** The first offset of the batch holding `offset` (itself when none does). */
  private batchStartOf(offset: number): number {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const seg = this.segments[i];
      if (seg.baseOffset > offset) continue;
      const pos = seg.positionOf(offset);
      const h = pos >= 0 ? seg.header(pos) : null;
      return h !== null && h.baseOffset < offset && h.baseOffset >= this.logStart
        ? h.baseOffset
        : offset;
    }
    return offset;
  }

  async resetTo(offset: number): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset <= this.logEndOffset()) {
      throw new OffsetOutOfRangeError(`reset to ${offset} is not past the log end`);
    }
    this.cutPending = true;
    try {
      // Unlinked files stay readable through any map still held: nothing is truncated under one.
      for (const seg of this.segments) seg.deleteFiles();
      this.segments = [Segment.open(this.deps.io, this.dir, offset, this.deps.maps, true)];
      this.needDirSync = true;
      this.logStart = offset;
      this.commit.truncated(offset);
      this.commit.durableOffset = offset;
      this.readDamage = null;
      this.producers.clear();
      this.epochs = new LeaderEpochCache();
      this.persistEpochs();
      this.pruneSnapshots();
      this.deps.logger("warn", "log reset to the leader's log start", { dir: this.dir, offset });
      await this.writeCheckpoint(false);
      await this.syncAll();
      if (this.quarantine !== null) this.healIfRefetched();
    } finally {
      this.cutPending = false;
    }
  }

  checkpointData(clean: boolean): Checkpoint {
    return {
      v: 1,
      clean,
      recoveryPoint: Math.min(this.commit.durableOffset, this.logEndOffset()),
      logStart: this.logStart,
      activeBase: this.active.baseOffset,
      activeSize: this.active.size,
    };
  }

  /**
   * Write the recovery checkpoint (after syncs with clean=false; at close with clean=true). Writes
   * queue behind each other; each describes the log as it is when its turn comes.
   */
  writeCheckpoint(clean: boolean): Promise<void> {
    const run = async () => {
      if (!clean) await this.noteChange();
      const data = this.checkpointData(clean);
      const json = JSON.stringify(data);
      this.lastCheckpointAt = performance.now();
      await writeFileDurable(
        this.deps.io,
        path.join(this.dir, CHECKPOINT_FILE),
        new TextEncoder().encode(encodeCheckpoint(data)),
      );
      this.lastCheckpoint = json;
      this.diskRecoveryPoint = data.recoveryPoint;
      this.cleanOnDisk = clean;
    };
    this.checkpointWrites++;
    const p = this.checkpointChain.then(run, run).finally(() => {
      this.checkpointWrites--;
    });
    this.checkpointChain = p.catch(() => {});
    return p;
  }

  /**
   * Before a truncation: a checkpoint whose recovery point is at most the cut. Without the space
   * for one (a full disk), no checkpoint at all: a crash then scans the whole log, never taking
   * a torn write above the cut for damage.
   */
  private async lowerCheckpoint(): Promise<void> {
    try {
      await this.writeCheckpoint(false);
    } catch (e) {
      this.deps.logger("warn", "could not lower the recovery checkpoint before a truncation", {
        dir: this.dir,
        error: errnoCode(e) ?? String(e),
      });
      const io = this.deps.io;
      io.unlink(path.join(this.dir, CHECKPOINT_FILE));
      await io.syncDir(this.dir);
      this.lastCheckpoint = "";
      this.diskRecoveryPoint = 0;
      this.cleanOnDisk = false;
    }
  }

  /** Make a recent recovery point durable so a crash scans little (if anything moved). */
  async checkpoint(): Promise<void> {
    if (this.uncleanMark) await this.uncleanMark.catch(() => {});
    if (this.closed || this.cleanOnDisk || this.uncleanMark) return;
    if (JSON.stringify(this.checkpointData(false)) === this.lastCheckpoint) return;
    await this.writeCheckpoint(false);
  }

  /**
   * A sync round finished: have the checkpoint follow it soon, at most once per
   * `checkpointAfterSyncMs`, off the sync's path (a timer; the write is async).
   */
  private synced(): void {
    const every = this.deps.checkpointAfterSyncMs ?? 0;
    if (every <= 0 || this.checkpointTimer !== null || this.closed) return;
    const wait = Math.max(
      CHECKPOINT_DELAY_MS,
      this.lastCheckpointAt + every - performance.now(),
    );
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = null;
      this.checkpoint().then(() => {
        this.checkpointFailing = false;
      }, (e) => {
        // Once per run of failures (a full disk fails every second).
        if (this.closed || this.checkpointFailing) return;
        this.checkpointFailing = true;
        this.deps.logger("warn", "could not write the recovery checkpoint", {
          dir: this.dir,
          error: errnoCode(e) ?? String(e),
        });
      });
    }, wait);
    (this.checkpointTimer as { unref?: () => void }).unref?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (!this.beginClose()) return;
    try {
      await this.writeCloseFiles(true);
      await this.writeCheckpoint(true);
    } finally {
      this.releaseFiles();
    }
  }

  /**
   * Closing many logs at once (the store's shutdown, given a file-system sync): stageClose writes
   * what a clean checkpoint vouches for (producer snapshot, indexes, epochs) without syncing
   * each file; once the caller has synced the file system, finishStagedClose writes the clean
   * checkpoint (replaced, not synced) and one more sync makes every checkpoint durable. A crash
   * before that leaves the previous checkpoint, unclean: that log is recovered as after kill -9.
   * Resolves false when nothing is left to write (already closed, or clean on disk).
   */
  async stageClose(): Promise<boolean> {
    if (!this.beginClose()) return false;
    try {
      await this.writeCloseFiles(false);
      return true;
    } catch (e) {
      this.releaseFiles();
      throw e;
    }
  }

  /** After stageClose and a file-system sync: the clean checkpoint, then the files close. */
  async finishStagedClose(): Promise<void> {
    try {
      await this.checkpointChain;
      const data = this.checkpointData(true);
      writeFileReplacing(
        this.deps.io,
        path.join(this.dir, CHECKPOINT_FILE),
        new TextEncoder().encode(encodeCheckpoint(data)),
      );
      this.lastCheckpoint = JSON.stringify(data);
      this.diskRecoveryPoint = data.recoveryPoint;
      this.cleanOnDisk = true;
    } finally {
      this.releaseFiles();
    }
  }

  /** Marks the log closed; false when nothing is left to write (then its files are released). */
  private beginClose(): boolean {
    if (this.closed) return false;
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.checkpointTimer !== null) clearTimeout(this.checkpointTimer);
    if (this.cleanOnDisk) {
      // Nothing changed since a clean open: the files on disk already say so.
      this.releaseFiles();
      return false;
    }
    return true;
  }

  private releaseFiles(): void {
    this.commit.fail(new StorageError("log closed"));
    for (const s of this.segments) s.close();
  }

  /** Everything a clean checkpoint describes, each file synced when `sync` (else the caller). */
  private async writeCloseFiles(sync: boolean): Promise<void> {
    if (this.uncleanMark) await this.uncleanMark.catch(() => {});
    // The zeros in flight (stopped after their current piece) land before the clean checkpoint.
    if (this.zeroing !== null) {
      this.active.haltZeroing();
      await this.zeroing;
    }
    await this.commit.flush();
    const io = this.deps.io;
    const snap = path.join(this.dir, segmentName(this.logEndOffset(), ".snapshot"));
    io.writeFile(snap, this.producers.encode());
    const files = [snap];
    for (const s of this.segments) {
      s.writeIndexes();
      files.push(s.file(".index"), s.file(".timeindex"));
    }
    // A write of the epoch file in flight ends first (the same temp file); queued ones are off.
    await this.epochWrites;
    const epochs = path.join(this.dir, EPOCH_FILE);
    if (!sync) {
      writeFileReplacing(io, epochs, this.epochs.encode());
      return;
    }
    await Promise.all(files.map(async (f) => {
      const h = io.open(f, false);
      try {
        await h.fdatasync();
      } finally {
        h.close();
      }
    }));
    await writeFileDurable(io, epochs, this.epochs.encode());
  }

  /** Close without a clean checkpoint (tests, deletion). */
  abandon(): void {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.checkpointTimer !== null) clearTimeout(this.checkpointTimer);
    this.commit.fail(new StorageError("log closed"));
    for (const s of this.segments) s.close();
  }
}

/**
 * What `append` returns. A class rather than an object literal with a getter: the literal made a
 * getter, a closure and their holder per append, garbage whose collections land in the tail.
 */
class Appended implements AppendResult {
  #durable: Promise<void> | null = null;
  readonly ack: Promise<void>;
  constructor(
    readonly baseOffset: number,
    readonly lastOffset: number,
    readonly recordCount: number,
    readonly logAppendTime: number,
    readonly logStartOffset: number,
    readonly duplicate: boolean,
    private readonly commit: GroupCommit,
    /** The unclean-checkpoint write no acknowledgement may precede, or null once it landed. */
    private readonly mark: Promise<void> | null,
    mustSync: boolean,
  ) {
    this.ack = mustSync ? this.durable : mark ?? RESOLVED;
  }

  /** Created on first use: most acks=1 appends never ask. Pre-handled. */
  get durable(): Promise<void> {
    if (this.#durable === null) {
      const end = this.lastOffset + 1;
      const commit = this.commit;
      this.#durable = this.mark
        ? handled(this.mark.then(() => commit.waitDurable(end)))
        : commit.waitDurable(end);
    }
    return this.#durable;
  }
}
