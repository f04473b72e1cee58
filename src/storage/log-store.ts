// LogStore over segment files: `<dataDir>/logs/<topic>-<partition>/`, each holding a
// `partition.meta` with the topic id so a recreated topic never adopts old files.
// Runs the interval flusher (each log writes its recovery checkpoint after syncs).
import * as path from "node:path";
import type { DecompressFn } from "../protocol/record-batch.ts";
import { type FileIO, realFileIO, writeFileDurable, writeFileReplacing } from "./file-io.ts";
import type { LogDeps, SegmentPartitionLog } from "./partition-log.ts";
import { openCleanSync, openSegmentLog } from "./recovery.ts";
import {
  ChangeJournal,
  decodeJournal,
  decodeManifest,
  encodeManifest,
  JOURNAL_FILE,
  MANIFEST_FILE,
  type ManifestEntry,
} from "./clean-manifest.ts";
import { LazyPartitionLog } from "./lazy-log.ts";
import { MapCache, releaseMappingsSoon } from "./segment.ts";
import { StagingPool } from "./staging.ts";
import { cachedFileIO, HandleCache, type HandleCacheStats } from "./handle-cache.ts";
import {
  type Clock,
  DEFAULT_LOG_CONFIG,
  type FlushPolicy,
  type LogConfig,
  type Logger,
  type LogStore,
  noopLogger,
  type PartitionLog,
  type PartitionLogInfo,
  type PartitionSpec,
  StorageError,
  systemClock,
  TopicIdMismatchError,
} from "./types.ts";

/**
 * Below this many open logs a clean stop syncs each log's own files. syncfs(2) writes back the
 * whole file system, other programs' dirty pages too: brokers sharing a disk (the benchmark's
 * three on one machine) saw their acks=all syncs wait 0.2-0.4 s behind one broker's stop.
 */
export const SYNCFS_MIN_LOGS = 64;
export const META_FILE = "partition.meta";

export interface SegmentStoreOptions {
  dataDir: string;
  io?: FileIO;
  clock?: Clock;
  logger?: Logger;
  /** Default: interval 1000 ms. */
  flush?: FlushPolicy;
  decompress?: DecompressFn;
  /** Live mappings kept (LRU). Default 1024. */
  maxMappings?: number;
  /**
   * The recovery checkpoint follows syncs: written shortly after one advanced the durable offset,
   * at most once per this many ms per partition, so a crash rescans about that much. Default
   * 1000; 0: only at open, close, truncation and retention.
   */
  checkpointIntervalMs?: number;
  /** Broker-wide topic defaults under the per-partition config. */
  defaults?: Partial<LogConfig>;
  /** Benchmark hook. */
  stats?: { walkNs: number };
  /** Zeros ahead of the end while acks=all rounds are small (zero-ahead.ts). Default true. */
  zeroAhead?: boolean;
  /**
   * Descriptors the partitions' files may hold at once (handle-cache.ts): beyond it the least
   * recently used are closed and opened again when next used. Default: no bound.
   */
  maxOpenFiles?: number;
  /**
   * A clean close writes the clean-shutdown manifest, and an open after one opens the logs it
   * vouches for lazily, on first use (clean-manifest.ts). Default false: every log opens eagerly.
   */
  lazyOpen?: boolean;
}

interface Meta {
  v: 1;
  topic: string;
  partition: number;
  topicId: string;
}

function dirName(topic: string, partition: number): string {
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(topic) || topic === "." || topic === "..") {
    throw new StorageError(`illegal topic name for a directory: ${JSON.stringify(topic)}`);
  }
  if (!Number.isInteger(partition) || partition < 0) {
    throw new StorageError(`bad partition ${partition}`);
  }
  return `${topic}-${partition}`;
}

export class SegmentLogStore implements LogStore {
  private logs = new Map<string, SegmentPartitionLog>();
  /** Logs the clean-shutdown manifest vouches for, not opened yet (lazy-log.ts). */
  private lazy = new Map<string, LazyPartitionLog>();
  /** The manifest's entries this start trusts: in it and not in the journal of changes. */
  private trusted = new Map<string, ManifestEntry>();
  private journal: ChangeJournal;
  private opening = new Map<string, Promise<SegmentPartitionLog>>();
  private timers: ReturnType<typeof setInterval>[] = [];
  private closed = false;
  readonly logsDir: string;
  private readonly io: FileIO;
  private readonly logger: Logger;
  private readonly maps: MapCache;
  private readonly staging = new StagingPool();
  private readonly handles: HandleCache | null;

  private constructor(readonly opts: SegmentStoreOptions) {
    const io = opts.io ?? realFileIO;
    this.handles = opts.maxOpenFiles === undefined ? null : new HandleCache(opts.maxOpenFiles);
    this.io = this.handles === null ? io : cachedFileIO(io, this.handles);
    this.logger = opts.logger ?? noopLogger;
    this.logsDir = path.join(opts.dataDir, "logs");
    this.maps = new MapCache(opts.maxMappings ?? 1024);
    const changed = decodeJournal(this.io.readFile(path.join(opts.dataDir, JOURNAL_FILE)));
    const manifest = opts.lazyOpen
      ? decodeManifest(this.io.readFile(path.join(opts.dataDir, MANIFEST_FILE)))
      : null;
    for (const e of manifest ?? []) if (!changed.has(e.name)) this.trusted.set(e.name, e);
    this.journal = new ChangeJournal(this.io, path.join(opts.dataDir, JOURNAL_FILE), changed);
  }

  static async open(opts: SegmentStoreOptions): Promise<SegmentLogStore> {
    const s = new SegmentLogStore(opts);
    s.io.mkdirp(s.logsDir);
    // Opened eagerly, logs change unjournaled: a manifest left by a lazy run would go stale.
    const manifest = path.join(opts.dataDir, MANIFEST_FILE);
    if (!opts.lazyOpen && s.io.exists(manifest)) s.io.unlink(manifest);
    await s.io.syncDir(opts.dataDir);
    const flush = opts.flush ?? { kind: "interval", ms: 1000 };
    if (flush.kind === "interval" && flush.ms > 0) {
      s.timers.push(setInterval(() => s.flushAll(), flush.ms));
    }
    for (const t of s.timers) (t as { unref?: () => void }).unref?.();
    if (s.trusted.size > 0) {
      s.logger("info", "logs left clean by the last shutdown open on first use", {
        logs: s.trusted.size,
      });
    }
    return s;
  }

  /** The descriptor bound's counters (null without one). */
  handleStats(): HandleCacheStats | null {
    return this.handles?.stats ?? null;
  }

  /** Ask every log with unsynced bytes for a sync (the interval flusher). */
  flushAll(): void {
    for (const log of this.logs.values()) {
      if (log.logEndOffset() > log.commit.durableOffset) {
        log.flush().catch((e) =>
          this.logger("error", "interval flush failed", { dir: log.dir, error: String(e) })
        );
      }
    }
  }

  async checkpointAll(): Promise<void> {
    for (const log of this.logs.values()) {
      try {
        await log.checkpoint();
      } catch (e) {
        this.logger("warn", "checkpoint failed", { dir: log.dir, error: String(e) });
      }
    }
  }

  private readMeta(dir: string): Meta | null {
    const b = this.io.readFile(path.join(dir, META_FILE));
    if (!b) return null;
    try {
      const m = JSON.parse(new TextDecoder().decode(b)) as Meta;
      if (m.v !== 1 || typeof m.topicId !== "string" || typeof m.topic !== "string") return null;
      return m;
    } catch {
      return null;
    }
  }

  openLog(spec: PartitionSpec): Promise<PartitionLog> {
    if (this.closed) return Promise.reject(new StorageError("store is closed"));
    const name = dirName(spec.topic, spec.partition);
    const lazy = this.lazy.get(name) ?? this.lazyOpen(name, spec);
    if (lazy !== undefined && lazy.topicId === spec.topicId) {
      if (spec.config) lazy.updateConfig(spec.config);
      return Promise.resolve(lazy);
    }
    const open = this.logs.get(name);
    if (open) {
      if (open.topicId !== spec.topicId) {
        return Promise.reject(
          new TopicIdMismatchError(`${name} is open for topic id ${open.topicId}`),
        );
      }
      if (spec.config) open.updateConfig(spec.config);
      return Promise.resolve(open);
    }
    let p = this.opening.get(name);
    if (!p) {
      p = this.doOpen(name, spec).finally(() => this.opening.delete(name));
      this.opening.set(name, p);
    }
    return p;
  }

  /** A log the manifest vouches for, as a lazy log (undefined when it does not, or is open). */
  private lazyOpen(name: string, spec: PartitionSpec): LazyPartitionLog | undefined {
    const entry = this.trusted.get(name);
    if (entry === undefined || entry.topicId !== spec.topicId || this.logs.has(name)) return;
    const config: LogConfig = { ...DEFAULT_LOG_CONFIG, ...this.opts.defaults, ...spec.config };
    const lazy = new LazyPartitionLog(entry, config, (cfg) => this.openTrusted(name, spec, cfg));
    this.lazy.set(name, lazy);
    return lazy;
  }

  /** First use of a lazy log: its files opened as after a clean stop, or recovered if changed. */
  private openTrusted(name: string, spec: PartitionSpec, config: LogConfig): SegmentPartitionLog {
    if (this.closed) throw new StorageError("store is closed");
    const dir = path.join(this.logsDir, name);
    const lazy = this.lazy.get(name)!;
    this.lazy.delete(name);
    const log = openCleanSync(dir, spec, config, this.logDeps(), lazy.entry);
    if (log !== null) {
      log.beforeFirstChange = () => this.journal.note(name);
      this.logs.set(name, log);
      this.logger("debug", "partition log opened", {
        dir,
        lazy: true,
        logStart: log.logStart,
        logEnd: log.logEndOffset(),
        ...log.recovery,
      });
      return log;
    }
    // Changed on disk since the clean stop: opened (and recovered) the ordinary way, meanwhile
    // refused (retriable), and never trusted again.
    this.trusted.delete(name);
    this.logger("warn", "log changed since the clean shutdown recorded it: recovering it", {
      dir: name,
    });
    void this.journal.note(name).catch(() => {});
    this.openLog({ ...spec, config }).then(
      (l) => lazy.adopt(l as SegmentPartitionLog),
      (e) => this.logger("error", "could not open log", { dir: name, error: String(e) }),
    );
    throw new StorageError(`${name} is being recovered`);
  }

  private logDeps(): LogDeps {
    return {
      io: this.io,
      clock: this.opts.clock ?? systemClock,
      logger: this.logger,
      flush: this.opts.flush ?? { kind: "interval", ms: 1000 },
      maps: this.maps,
      staging: this.staging,
      decompress: this.opts.decompress,
      stats: this.opts.stats,
      zeroAhead: this.opts.zeroAhead,
      checkpointAfterSyncMs: this.opts.checkpointIntervalMs ?? 1000,
    };
  }

  private async doOpen(name: string, spec: PartitionSpec): Promise<SegmentPartitionLog> {
    const dir = path.join(this.logsDir, name);
    const config: LogConfig = { ...DEFAULT_LOG_CONFIG, ...this.opts.defaults, ...spec.config };
    const created = !this.io.exists(dir);
    if (!created) {
      const meta = this.readMeta(dir);
      if (meta && meta.topicId !== spec.topicId) {
        throw new TopicIdMismatchError(
          `${dir} belongs to topic id ${meta.topicId}, not ${spec.topicId}`,
        );
      }
      if (!meta) {
        const hasData = this.io.readdir(dir).some((n) => {
          if (!n.endsWith(".log")) return false;
          const b = this.io.readFile(path.join(dir, n));
          return b !== null && b.length > 0;
        });
        if (hasData) throw new TopicIdMismatchError(`${dir} holds data but no ${META_FILE}`);
        await this.writeMeta(dir, spec);
      }
    }
    // A new partition's directory, partition.meta and empty segment: made durable by one shared
    // file-system sync for all the partitions created meanwhile, where there is one (a create of
    // 1,000 partitions synced three files each, one at a time per partition).
    const shared = created && this.io.syncFs !== undefined;
    if (created) {
      this.io.mkdirp(dir);
      if (shared) this.writeMetaUnsynced(dir, spec);
      else {
        await this.writeMeta(dir, spec);
        await this.logsDirSync();
      }
    }
    const log = await openSegmentLog(
      dir,
      spec.topic,
      spec.partition,
      spec.topicId,
      config,
      shared ? { ...this.logDeps(), createdSyncedByCaller: true } : this.logDeps(),
    );
    if (shared) {
      try {
        await this.logsDirSync();
      } catch (e) {
        log.abandon();
        throw e;
      }
      log.needDirSync = false;
    }
    if (this.closed) {
      log.abandon();
      throw new StorageError("store closed while opening");
    }
    this.logs.set(name, log);
    return log;
  }

  private dirSyncRunning: Promise<void> | null = null;
  private dirSyncNext: Promise<void> | null = null;

  /**
   * fsync the logs directory (or the file system, where syncFs exists), shared by the partitions
   * created meanwhile: a caller arriving while one runs waits for the next, which starts after it
   * and so covers its new directory and files.
   */
  private logsDirSync(): Promise<void> {
    if (this.dirSyncNext !== null) return this.dirSyncNext;
    const start = (): Promise<void> => {
      const p = this.io.syncFs !== undefined
        ? this.io.syncFs(this.logsDir)
        : this.io.syncDir(this.logsDir);
      this.dirSyncRunning = p;
      return p.finally(() => {
        if (this.dirSyncRunning === p) this.dirSyncRunning = null;
      });
    };
    if (this.dirSyncRunning === null) return start();
    const next = this.dirSyncRunning.catch(() => {}).then(() => {
      this.dirSyncNext = null;
      return start();
    });
    this.dirSyncNext = next;
    return next;
  }

  private writeMetaUnsynced(dir: string, spec: PartitionSpec): void {
    const m: Meta = { v: 1, topic: spec.topic, partition: spec.partition, topicId: spec.topicId };
    writeFileReplacing(
      this.io,
      path.join(dir, META_FILE),
      new TextEncoder().encode(JSON.stringify(m)),
    );
  }

  private async writeMeta(dir: string, spec: PartitionSpec): Promise<void> {
    const m: Meta = { v: 1, topic: spec.topic, partition: spec.partition, topicId: spec.topicId };
    await writeFileDurable(
      this.io,
      path.join(dir, META_FILE),
      new TextEncoder().encode(JSON.stringify(m)),
    );
  }

  getLog(topic: string, partition: number): PartitionLog | undefined {
    const name = dirName(topic, partition);
    return this.logs.get(name) ?? this.lazy.get(name);
  }

  async deleteLog(topic: string, partition: number): Promise<void> {
    const name = dirName(topic, partition);
    await this.opening.get(name)?.catch(() => {});
    // Gone from under the manifest's entry: a log of this name is never trusted again.
    if (this.trusted.delete(name)) await this.journal.note(name);
    this.lazy.delete(name);
    const log = this.logs.get(name);
    if (log) {
      log.abandon();
      this.logs.delete(name);
    }
    // Unlinking is safe while maps are alive: the pages stay valid until unmapped.
    this.io.rmrf(path.join(this.logsDir, name));
    if (log) releaseMappingsSoon(); // and the space comes back once they are
    await this.io.syncDir(this.logsDir);
  }

  listLogs(): PartitionLogInfo[] {
    const out: PartitionLogInfo[] = [];
    for (const name of this.io.readdir(this.logsDir)) {
      const meta = this.trusted.get(name) ?? this.readMeta(path.join(this.logsDir, name));
      if (!meta) continue;
      out.push({
        topic: meta.topic,
        partition: meta.partition,
        topicId: meta.topicId,
        open: this.logs.has(name) || this.lazy.has(name),
      });
    }
    return out;
  }

  async enforceRetention(): Promise<void> {
    for (const log of [...this.logs.values(), ...this.lazy.values()]) {
      try {
        await log.enforceRetention();
      } catch (e) {
        this.logger("warn", "retention failed", {
          dir: `${log.topic}-${log.partition}`,
          error: String(e),
        });
      }
    }
  }

  /**
   * Closes many logs (SYNCFS_MIN_LOGS or more) with two file-system syncs in all instead of
   * about seven syncs per log (each a journal commit): at 10,000 partitions the shutdown outlasted
   * its budget, so the next start recovered every log as after a crash. First everything the
   * clean checkpoints describe, then a sync, then the checkpoints, then a sync
   * (SegmentPartitionLog.stageClose).
   */
  private async closeTogether(
    logs: SegmentPartitionLog[],
    syncFs: (p: string) => Promise<void>,
  ): Promise<PromiseSettledResult<unknown>[]> {
    const t0 = performance.now();
    const staged = await Promise.allSettled(logs.map((l) => l.stageClose()));
    const t1 = performance.now();
    const ready = logs.filter((_, i) => {
      const r = staged[i];
      return r.status === "fulfilled" && r.value;
    });
    try {
      await syncFs(this.logsDir);
    } catch (e) {
      // No clean checkpoint without the sync under it: those logs are recovered at next start.
      for (const l of ready) l.abandon();
      return [...staged, { status: "rejected", reason: e }];
    }
    const t2 = performance.now();
    const done = await Promise.allSettled(ready.map((l) => l.finishStagedClose()));
    const t3 = performance.now();
    try {
      await syncFs(this.logsDir);
    } catch (e) {
      done.push({ status: "rejected", reason: e });
    }
    // Where a slow shutdown's time went (the budget is 10 s by default).
    const ms = (a: number, b: number) => Math.round(b - a);
    this.logger("info", "logs closed", {
      logs: logs.length,
      written: ready.length,
      files_ms: ms(t0, t1),
      first_sync_ms: ms(t1, t2),
      checkpoints_ms: ms(t2, t3),
      second_sync_ms: ms(t3, performance.now()),
    });
    return [...staged, ...done];
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled([...this.opening.values()]);
    const logs = [...this.logs.values()];
    this.logs.clear();
    const results = this.io.syncFs !== undefined && logs.length >= SYNCFS_MIN_LOGS
      ? await this.closeTogether(logs, this.io.syncFs)
      : await Promise.allSettled(logs.map((l) => l.close()));
    for (const r of results) {
      if (r.status === "rejected") {
        this.logger("error", "close failed", { error: String(r.reason) });
      }
    }
    if (this.opts.lazyOpen) await this.writeManifest(logs);
  }

  /**
   * After a clean close: the manifest of every log left clean (closed clean now, or never opened
   * since the last one), then the journal emptied. Without it the next start opens every log.
   */
  private async writeManifest(closed: SegmentPartitionLog[]): Promise<void> {
    const entries: ManifestEntry[] = [];
    for (const l of closed) {
      if (!l.cleanOnDisk || l.quarantine !== null || l.damaged() !== null) continue;
      const cp = l.checkpointData(true);
      entries.push({
        name: dirName(l.topic, l.partition),
        topic: l.topic,
        partition: l.partition,
        topicId: l.topicId,
        logStart: cp.logStart,
        logEnd: l.logEndOffset(),
        activeBase: cp.activeBase,
        activeSize: cp.activeSize,
        epoch: l.latestEpoch(),
        sizeBytes: l.sizeBytes(),
        segments: l.segments.length,
      });
    }
    for (const lazy of this.lazy.values()) if (lazy.opened === null) entries.push(lazy.entry);
    this.lazy.clear();
    try {
      await this.journal.close();
      await writeFileDurable(
        this.io,
        path.join(this.opts.dataDir, MANIFEST_FILE),
        encodeManifest(entries),
      );
      this.io.unlink(path.join(this.opts.dataDir, JOURNAL_FILE));
      await this.io.syncDir(this.opts.dataDir);
    } catch (e) {
      this.logger("warn", "could not write the clean-shutdown manifest", { error: String(e) });
    }
  }
}
