// In-memory LogStore: same validation, producer and epoch logic as the segment log, batches kept
// in arrays grouped into virtual segments (so retention behaves alike). Nothing is durable
// beyond the process; `durable` resolves at once. For tests and ephemeral topics.
import { BATCH_HEADER_SIZE, type DecompressFn, readBatchHeader } from "../protocol/record-batch.ts";
import { LeaderEpochCache } from "./epoch-cache.ts";
import { checkAppendProducers, ProducerStateManager } from "./producer-state.ts";
import {
  type AppendOptions,
  type AppendResult,
  type Clock,
  DEFAULT_LOG_CONFIG,
  type EpochEndOffset,
  InvalidRecordError,
  type LogConfig,
  type LogDamage,
  type LogStore,
  OffsetOutOfRangeError,
  type PartitionLog,
  type PartitionLogInfo,
  type PartitionSpec,
  type ProducerEntry,
  type ReadResult,
  type RetentionResult,
  StorageError,
  systemClock,
  TopicIdMismatchError,
} from "./types.ts";
import { firstOffsetAtOrAfter, prepareBatches } from "./validate.ts";

interface MemBatch {
  base: number;
  last: number;
  bytes: Uint8Array;
  maxTs: number;
}

interface MemSegment {
  base: number;
  next: number;
  batches: MemBatch[];
  size: number;
  maxTs: number;
  firstTs: number;
}

interface MemState {
  segments: MemSegment[];
  logStart: number;
  producers: ProducerStateManager;
  epochs: LeaderEpochCache;
  config: LogConfig;
}

const RESOLVED = Promise.resolve();

export class MemoryPartitionLog implements PartitionLog {
  private closed = false;
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    private readonly s: MemState,
    private readonly clock: Clock,
    private readonly decompress?: DecompressFn,
  ) {}

  private get active(): MemSegment {
    return this.s.segments[this.s.segments.length - 1];
  }
  logStartOffset(): number {
    return this.s.logStart;
  }
  logEndOffset(): number {
    return this.active.next;
  }
  config(): LogConfig {
    return { ...this.s.config };
  }
  updateConfig(patch: Partial<LogConfig>): void {
    this.s.config = { ...this.s.config, ...patch };
  }
  sizeBytes(): number {
    return this.s.segments.reduce((n, g) => n + g.size, 0);
  }
  latestEpoch(): number {
    return this.s.epochs.latestEpoch();
  }
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    return this.s.epochs.endOffsetFor(epoch, this.logEndOffset());
  }
  producerState(pid: number): ProducerEntry | undefined {
    return this.s.producers.get(pid);
  }
  /** Nothing survives a restart in memory. */
  openedClean(): boolean {
    return false;
  }

  damaged(): LogDamage | null {
    return null;
  }

  append(batches: Uint8Array, opts: AppendOptions): AppendResult {
    if (this.closed) throw new StorageError("log is closed");
    const origin = opts.origin ?? "client";
    const now = this.clock.now();
    const buf = batches.slice();
    const cfg = this.s.config;
    const metas = prepareBatches(buf, {
      now,
      config: cfg,
      origin,
      nextOffset: this.logEndOffset(),
      leaderEpoch: opts.leaderEpoch,
      decompress: this.decompress,
    });
    let latest = this.s.epochs.latestEpoch();
    for (const m of metas) {
      if (m.leaderEpoch < latest) {
        throw new InvalidRecordError(`leader epoch ${m.leaderEpoch} < ${latest}`);
      }
      latest = m.leaderEpoch;
    }
    if (origin === "client") {
      const dup = checkAppendProducers(this.s.producers, metas);
      if (dup) {
        return {
          baseOffset: dup.baseOffset,
          lastOffset: dup.lastOffset,
          recordCount: dup.lastOffset - dup.baseOffset + 1,
          logAppendTime: -1,
          logStartOffset: this.s.logStart,
          duplicate: true,
          durable: RESOLVED,
          ack: RESOLVED,
        };
      }
    }
    const total = buf.length;
    const last = metas[metas.length - 1];
    const a = this.active;
    let maxTs = -1;
    for (const m of metas) if (m.maxTimestamp > maxTs) maxTs = m.maxTimestamp;
    // segment.ms in record time, as Kafka and the segment store measure it.
    const byTime = a.firstTs >= 0 && maxTs - a.firstTs >= cfg.segmentMs;
    if (a.size + total > cfg.segmentBytes || byTime) this.roll();
    const seg = this.active;
    for (const m of metas) {
      if (seg.batches.length === 0) seg.firstTs = m.maxTimestamp;
      seg.batches.push({
        base: m.baseOffset,
        last: m.lastOffset,
        bytes: buf.subarray(m.pos, m.pos + m.size),
        maxTs: m.maxTimestamp,
      });
      seg.size += m.size;
      seg.maxTs = Math.max(seg.maxTs, m.maxTimestamp);
      seg.next = m.lastOffset + 1;
      this.s.producers.update(m, m.baseOffset, now);
      this.s.epochs.assign(m.leaderEpoch, m.baseOffset);
    }
    return {
      baseOffset: metas[0].baseOffset,
      lastOffset: last.lastOffset,
      recordCount: metas.reduce((n, m) => n + m.recordCount, 0),
      logAppendTime: cfg.messageTimestampType === "LogAppendTime" && origin === "client" ? now : -1,
      logStartOffset: this.s.logStart,
      duplicate: false,
      durable: RESOLVED,
      ack: RESOLVED,
    };
  }

  readInto(offset: number, maxBytes: number, into: Uint8Array, upperOffset?: number): ReadResult {
    const r = this.read(offset, Math.min(maxBytes, into.length), upperOffset);
    if (r.records.length > into.length) return r; // the first batch alone does not fit
    into.set(r.records);
    return { ...r, records: into.subarray(0, r.records.length) };
  }

  read(offset: number, maxBytes: number, upperOffset?: number): ReadResult {
    const end = this.logEndOffset();
    const upper = Math.min(upperOffset ?? end, end);
    if (!Number.isSafeInteger(offset) || offset < this.s.logStart || offset > end) {
      throw new OffsetOutOfRangeError(`offset ${offset} outside [${this.s.logStart}, ${end}]`);
    }
    const res: ReadResult = {
      records: new Uint8Array(0),
      firstOffset: offset,
      nextOffset: offset,
      logStartOffset: this.s.logStart,
      logEndOffset: end,
    };
    if (offset >= upper) return res;
    for (const seg of this.s.segments) {
      if (seg.next <= offset) continue;
      const chosen: MemBatch[] = [];
      let size = 0;
      for (const b of seg.batches) {
        if (b.last < offset) continue;
        if (b.last >= upper) break;
        if (chosen.length > 0 && size + b.bytes.length > maxBytes) break;
        chosen.push(b);
        size += b.bytes.length;
      }
      if (chosen.length === 0) return res;
      const out = new Uint8Array(size);
      let p = 0;
      for (const b of chosen) {
        out.set(b.bytes, p);
        p += b.bytes.length;
      }
      return {
        ...res,
        records: out,
        firstOffset: chosen[0].base,
        nextOffset: chosen[chosen.length - 1].last + 1,
      };
    }
    return res;
  }

  offsetForTimestamp(ts: number): { offset: number; timestamp: number } | null {
    for (const seg of this.s.segments) {
      if (seg.maxTs < ts) continue;
      for (const b of seg.batches) {
        if (b.last < this.s.logStart || b.maxTs < ts) continue;
        const h = readBatchHeader(b.bytes.subarray(0, BATCH_HEADER_SIZE));
        const r = firstOffsetAtOrAfter(b.bytes, h, ts, this.decompress);
        return r.offset < this.s.logStart ? { offset: this.s.logStart, timestamp: r.timestamp } : r;
      }
    }
    return null;
  }

  private deleteFront(pred: (g: MemSegment) => boolean): RetentionResult {
    let deletedSegments = 0;
    let deletedBytes = 0;
    const segs = this.s.segments;
    while (segs.length > 1 && pred(segs[0])) {
      const g = segs.shift()!;
      deletedSegments++;
      deletedBytes += g.size;
      this.s.logStart = Math.max(this.s.logStart, segs[0].base);
    }
    if (deletedSegments) this.s.epochs.truncateFromStart(this.s.logStart);
    return { deletedSegments, deletedBytes, logStartOffset: this.s.logStart };
  }

  enforceRetention(): Promise<RetentionResult> {
    const now = this.clock.now();
    const cfg = this.s.config;
    this.s.producers.expire(now, cfg.producerIdExpirationMs);
    const a = this.deleteFront((g) => cfg.retentionMs >= 0 && now - g.maxTs > cfg.retentionMs);
    let excess = cfg.retentionBytes >= 0 ? this.sizeBytes() - cfg.retentionBytes : -1;
    const b = this.deleteFront((g) => {
      if (excess - g.size < 0) return false;
      excess -= g.size;
      return true;
    });
    return Promise.resolve({
      deletedSegments: a.deletedSegments + b.deletedSegments,
      deletedBytes: a.deletedBytes + b.deletedBytes,
      logStartOffset: this.s.logStart,
    });
  }

  resetTo(offset: number): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset <= this.logEndOffset()) {
      return Promise.reject(
        new OffsetOutOfRangeError(`reset to ${offset} is not past the log end`),
      );
    }
    this.s.segments = [{
      base: offset,
      next: offset,
      batches: [],
      size: 0,
      maxTs: -1,
      firstTs: -1,
    }];
    this.s.logStart = offset;
    this.s.producers.clear();
    this.s.epochs = new LeaderEpochCache();
    return Promise.resolve();
  }

  roll(): void {
    const a = this.active;
    if (a.batches.length === 0) return;
    this.s.segments.push({
      base: a.next,
      next: a.next,
      batches: [],
      size: 0,
      maxTs: -1,
      firstTs: -1,
    });
  }

  deleteRecords(offset: number): Promise<number> {
    const end = this.logEndOffset();
    if (offset === -1) offset = end;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > end) {
      return Promise.reject(
        new OffsetOutOfRangeError(`deleteRecords offset ${offset} beyond ${end}`),
      );
    }
    if (offset > this.s.logStart) {
      this.s.logStart = offset;
      this.deleteFront((g) => g.next <= this.s.logStart);
      this.s.epochs.truncateFromStart(this.s.logStart);
    }
    return Promise.resolve(this.s.logStart);
  }

  truncateTo(offset: number): Promise<void> {
    if (offset >= this.logEndOffset()) {
      this.s.epochs.truncateFromEnd(Math.max(offset, this.s.logStart));
      return Promise.resolve();
    }
    offset = Math.max(offset, this.s.logStart);
    const segs = this.s.segments;
    while (segs.length > 1 && this.active.base >= offset && this.active.base > this.s.logStart) {
      segs.pop();
    }
    const seg = this.active;
    const keep = seg.batches.filter((b) => b.last < offset);
    seg.batches = keep;
    seg.size = keep.reduce((n, b) => n + b.bytes.length, 0);
    seg.maxTs = keep.reduce((m, b) => Math.max(m, b.maxTs), -1);
    seg.next = keep.length ? keep[keep.length - 1].last + 1 : seg.base;
    seg.firstTs = keep.length ? keep[0].maxTs : -1;
    // Rebuilt from what is left, as the segment store reloads from a snapshot: forgetting only the
    // cut batches would also forget the producer window before them.
    const producers = new ProducerStateManager();
    for (const sg of segs) {
      for (const b of sg.batches) producers.update(readBatchHeader(b.bytes), b.base, b.maxTs);
    }
    this.s.producers = producers;
    this.s.epochs.truncateFromEnd(seg.next);
    return Promise.resolve();
  }

  flush(): Promise<void> {
    return RESOLVED;
  }
  durableEndOffset(): number {
    return this.logEndOffset();
  }
  assignEpoch(epoch: number): void {
    this.s.epochs.assign(epoch, this.logEndOffset());
  }
  waitDurable(_offset: number): Promise<void> {
    return RESOLVED;
  }
  close(): Promise<void> {
    this.closed = true;
    return RESOLVED;
  }
}

export interface MemoryStoreOptions {
  clock?: Clock;
  decompress?: DecompressFn;
  defaults?: Partial<LogConfig>;
}

export class MemoryLogStore implements LogStore {
  private states = new Map<string, { spec: PartitionSpec; state: MemState }>();
  private open = new Map<string, MemoryPartitionLog>();
  constructor(private readonly opts: MemoryStoreOptions = {}) {}

  openLog(spec: PartitionSpec): Promise<PartitionLog> {
    const name = `${spec.topic}-${spec.partition}`;
    let entry = this.states.get(name);
    if (entry && entry.spec.topicId !== spec.topicId) {
      return Promise.reject(
        new TopicIdMismatchError(`${name} belongs to topic id ${entry.spec.topicId}`),
      );
    }
    const existing = this.open.get(name);
    if (existing) {
      if (spec.config) existing.updateConfig(spec.config);
      return Promise.resolve(existing);
    }
    if (!entry) {
      entry = {
        spec,
        state: {
          segments: [{ base: 0, next: 0, batches: [], size: 0, maxTs: -1, firstTs: -1 }],
          logStart: 0,
          producers: new ProducerStateManager(),
          epochs: new LeaderEpochCache(),
          config: { ...DEFAULT_LOG_CONFIG, ...this.opts.defaults, ...spec.config },
        },
      };
      this.states.set(name, entry);
    } else if (spec.config) {
      entry.state.config = { ...entry.state.config, ...spec.config };
    }
    const log = new MemoryPartitionLog(
      spec.topic,
      spec.partition,
      spec.topicId,
      entry.state,
      this.opts.clock ?? systemClock,
      this.opts.decompress,
    );
    this.open.set(name, log);
    return Promise.resolve(log);
  }

  getLog(topic: string, partition: number): PartitionLog | undefined {
    return this.open.get(`${topic}-${partition}`);
  }

  deleteLog(topic: string, partition: number): Promise<void> {
    const name = `${topic}-${partition}`;
    void this.open.get(name)?.close();
    this.open.delete(name);
    this.states.delete(name);
    return RESOLVED;
  }

  listLogs(): PartitionLogInfo[] {
    return [...this.states.entries()].map(([name, e]) => ({
      topic: e.spec.topic,
      partition: e.spec.partition,
      topicId: e.spec.topicId,
      open: this.open.has(name),
    }));
  }

  async enforceRetention(): Promise<void> {
    for (const log of this.open.values()) await log.enforceRetention();
  }

  async closeAll(): Promise<void> {
    for (const log of this.open.values()) await log.close();
    this.open.clear();
  }
}
