// The broker core for partitions: keeps the open logs in step with the metadata, appends with
// the right durability, serves reads below the high watermark and wakes long-polling readers.
// Front ends (HTTP, Kafka) call this; it calls storage and meta.
import type { MetadataStore, ResolvedTopicConfig, TopicInfo } from "../meta/index.ts";
import {
  type AppendResult,
  type LogConfig,
  type LogStore,
  type PartitionLog,
  type ReadResult,
  StorageError,
  TopicIdMismatchError,
} from "../storage/index.ts";
import { isDiskFull, type SpaceReserve } from "./space-reserve.ts";
import type { Logger } from "../log.ts";

/** An error a front end maps to its protocol: Kafka error code plus a message. */
export class BrokerError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}

export const UNKNOWN_TOPIC_OR_PARTITION = 3;
export const NOT_LEADER_OR_FOLLOWER = 6;
export const NOT_ENOUGH_REPLICAS = 19;

export type Acks = 0 | 1 | -1;

export function logConfigOf(c: ResolvedTopicConfig): Partial<LogConfig> {
  // Infinity (Kafka's Long.MAX_VALUE) is as good as "never" for a millisecond bound.
  const finite = (n: number) => (Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER);
  return {
    segmentBytes: c.segmentBytes,
    segmentMs: finite(c.segmentMs),
    retentionMs: finite(c.retentionMs),
    retentionBytes: finite(c.retentionBytes),
    maxMessageBytes: c.maxMessageBytes,
    messageTimestampType: c.messageTimestampType,
    messageTimestampBeforeMaxMs: finite(c.messageTimestampBeforeMaxMs),
    messageTimestampAfterMaxMs: finite(c.messageTimestampAfterMaxMs),
  };
}

interface Waiter {
  offset: number;
  wake: () => void;
}

interface PartitionState {
  topic: string;
  partition: number;
  topicId: string;
  /** The partition's leader (this broker appends only when it is the leader). */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  minInsyncReplicas: number;
  log: PartitionLog;
  waiters: Set<Waiter>;
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class PartitionManager {
  readonly #parts = new Map<string, PartitionState>();
  /** Names of internal topics (e.g. __consumer_offsets): the produce path checks this per request. */
  readonly #internal = new Set<string>();
  #closed = false;

  constructor(
    readonly meta: MetadataStore,
    readonly store: LogStore,
    readonly nodeId: number,
    readonly log: Logger,
    readonly reserve?: SpaceReserve,
  ) {}

  /**
   * Run a metadata write; on a full disk give back the space reserve and try once more, so
   * that an operator can still lower retention to free space. Fails as a storage error.
   */
  async #metaWrite<T>(fn: () => Promise<T>, done?: () => { value: T } | undefined): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (!isDiskFull(e)) throw e;
      // A later step of applying a change that was already committed can hit the full disk (a
      // file of a deleted log, say): then the change is done and must not be tried again.
      const result = done?.();
      if (result !== undefined) return result.value;
      if (this.reserve?.release()) {
        try {
          return await fn();
        } catch (e2) {
          if (!isDiskFull(e2)) throw e2;
        }
      }
      throw new StorageError("the disk is full: metadata cannot be written", e);
    }
  }

  /** Open the log of every partition this broker holds; drop dirs of topics that were recreated. */
  async openAll(): Promise<void> {
    const topics = this.meta.listTopics();
    const byName = new Map(topics.map((t) => [t.name, t]));
    for (const info of this.store.listLogs()) {
      const t = byName.get(info.topic);
      if (t && t.topicId !== info.topicId) {
        // The metadata knows this name under a newer id: the files belong to a deleted topic.
        this.log.warn("deleting the log of a deleted topic", {
          topic: info.topic,
          partition: info.partition,
          topic_id: info.topicId,
        });
        await this.store.deleteLog(info.topic, info.partition);
      } else if (!t) {
        this.log.warn("partition directory of a topic unknown to the metadata is left alone", {
          topic: info.topic,
          partition: info.partition,
          topic_id: info.topicId,
        });
      }
    }
    for (const t of topics) await this.syncTopic(t);
  }

  #reconciling: Promise<void> | null = null;
  #reconcileAgain = false;

  /**
   * Bring the open logs in line with the committed metadata, whichever broker wrote it: open the
   * partitions placed here, apply config changes, delete the logs of deleted topics. Calls that
   * arrive while one runs are folded into one more run.
   */
  reconcile(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#reconciling) {
      this.#reconcileAgain = true;
      return this.#reconciling;
    }
    const run = async () => {
      do {
        this.#reconcileAgain = false;
        try {
          await this.#reconcileOnce();
        } catch (e) {
          this.log.error("could not apply the metadata to the partition logs", { error: e });
        }
      } while (this.#reconcileAgain && !this.#closed);
    };
    this.#reconciling = run().finally(() => (this.#reconciling = null));
    return this.#reconciling;
  }

  async #reconcileOnce(): Promise<void> {
    const topics = this.meta.listTopics();
    const ids = new Map(topics.map((t) => [t.name, t.topicId]));
    for (const st of [...this.#parts.values()]) {
      if (ids.get(st.topic) === st.topicId) continue;
      // Deleted (or deleted and created again under a new id) by a write on another broker.
      this.log.info("deleting the log of a deleted topic", {
        topic: st.topic,
        partition: st.partition,
      });
      await this.#dropLog(st.topic, st.partition);
    }
    for (const t of topics) {
      try {
        await this.syncTopic(t);
      } catch (e) {
        // Deleted since the list was read (records applied meanwhile): the next run drops it.
        if (this.meta.getTopic(t.name)?.topicId === t.topicId) throw e;
        this.#reconcileAgain = true;
      }
    }
  }

  async #dropLog(topic: string, partition: number): Promise<void> {
    const st = this.#parts.get(key(topic, partition));
    if (st) {
      this.#parts.delete(key(topic, partition));
      for (const w of st.waiters) w.wake();
    }
    await this.store.deleteLog(topic, partition);
  }

  /** Make the open logs match one topic's metadata (new partitions, config changes). */
  async syncTopic(t: TopicInfo): Promise<void> {
    if (t.internal) this.#internal.add(t.name);
    else this.#internal.delete(t.name);
    const resolved = this.meta.topicConfig(t.name);
    const config = logConfigOf(resolved);
    if (t.internal) {
      // Internal topics are compacted (INTERNAL_TOPIC_CONFIGS), and as in Kafka a compacted topic
      // has no time or size retention: an altered retention.ms must not delete committed offsets.
      config.retentionMs = -1;
      config.retentionBytes = -1;
    }
    for (const p of t.partitions) {
      if (!p.replicas.includes(this.nodeId)) continue;
      const k = key(t.name, p.partition);
      const existing = this.#parts.get(k);
      if (existing && existing.topicId === t.topicId) {
        existing.log.updateConfig(config);
        existing.leader = p.leader;
        existing.leaderEpoch = p.leaderEpoch;
        existing.replicas = p.replicas;
        existing.isr = p.isr;
        existing.minInsyncReplicas = resolved.minInsyncReplicas;
        continue;
      }
      let log: PartitionLog;
      const spec = { topic: t.name, partition: p.partition, topicId: t.topicId, config };
      try {
        log = await this.store.openLog(spec);
      } catch (e) {
        if (!(e instanceof TopicIdMismatchError)) throw e;
        this.log.warn("replacing the log of a deleted topic of the same name", {
          topic: t.name,
          partition: p.partition,
        });
        await this.store.deleteLog(t.name, p.partition);
        log = await this.store.openLog(spec);
      }
      // A concurrent sync (a local write and the applied metadata) may have opened it meanwhile.
      if (this.#parts.get(k)?.topicId === t.topicId) continue;
      this.#parts.set(k, {
        topic: t.name,
        partition: p.partition,
        topicId: t.topicId,
        leader: p.leader,
        leaderEpoch: p.leaderEpoch,
        replicas: p.replicas,
        isr: p.isr,
        minInsyncReplicas: resolved.minInsyncReplicas,
        log,
        waiters: new Set(),
      });
    }
  }

  async createTopic(
    name: string,
    partitions: number,
    replicationFactor: number,
    configs: Record<string, string>,
    validateOnly = false,
    internal = false,
    assignments?: number[][],
  ): Promise<TopicInfo> {
    const t = await this.#metaWrite(() =>
      this.meta.createTopic(name, partitions, replicationFactor, configs, {
        validateOnly,
        internal,
        assignments,
      })
    );
    if (!validateOnly) await this.syncTopic(t);
    return t;
  }

  async deleteTopic(name: string): Promise<void> {
    const t = this.meta.getTopic(name);
    await this.#metaWrite(
      () => this.meta.deleteTopic(name),
      () => (t && this.meta.getTopic(name)?.topicId !== t.topicId
        ? { value: undefined }
        : undefined),
    );
    this.#internal.delete(name);
    if (!t) return;
    for (const p of t.partitions) await this.#dropLog(name, p.partition);
  }

  async createPartitions(
    name: string,
    total: number,
    validateOnly = false,
    assignments?: number[][],
  ): Promise<TopicInfo> {
    const t = await this.#metaWrite(() =>
      this.meta.createPartitions(name, total, { validateOnly, assignments })
    );
    if (!validateOnly) await this.syncTopic(t);
    return t;
  }

  async alterTopicConfigs(
    name: string,
    set: Record<string, string>,
    del: string[] = [],
    validateOnly = false,
  ) {
    await this.#metaWrite(() => this.meta.alterTopicConfigs(name, set, del, { validateOnly }));
    const t = this.meta.getTopic(name);
    if (t && !validateOnly) await this.syncTopic(t);
  }

  /**
   * 0 when this broker leads the partition; else what a client should hear: NOT_LEADER_OR_FOLLOWER
   * when the partition exists but is led elsewhere (it refreshes its metadata and goes there),
   * UNKNOWN_TOPIC_OR_PARTITION when it does not exist.
   */
  leaderError(topic: string, partition: number): number {
    const st = this.#parts.get(key(topic, partition));
    if (st) return st.leader === this.nodeId ? 0 : NOT_LEADER_OR_FOLLOWER;
    const t = this.meta.getTopic(topic);
    return t?.partitions.some((p) => p.partition === partition)
      ? NOT_LEADER_OR_FOLLOWER
      : UNKNOWN_TOPIC_OR_PARTITION;
  }

  /** The partition's leader as this broker knows it (-1 when unknown). */
  leaderOf(topic: string, partition: number): number {
    return this.#parts.get(key(topic, partition))?.leader ??
      this.meta.getTopic(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  #notLeader(topic: string, partition: number): BrokerError {
    const code = this.leaderError(topic, partition);
    if (code !== NOT_LEADER_OR_FOLLOWER) {
      return new BrokerError(code, `unknown topic or partition ${topic}-${partition}`);
    }
    return new BrokerError(
      code,
      `broker ${this.nodeId} is not the leader of ${topic}-${partition}: broker ${
        this.leaderOf(topic, partition)
      } is`,
    );
  }

  partition(topic: string, partition: number): PartitionState {
    const st = this.#parts.get(key(topic, partition));
    if (!st) {
      throw new BrokerError(
        UNKNOWN_TOPIC_OR_PARTITION,
        `unknown topic or partition ${topic}-${partition}`,
      );
    }
    return st;
  }

  /** Whether a topic is internal, answered from memory (no metadata query on the hot path). */
  isInternal(topic: string): boolean {
    return this.#internal.has(topic);
  }

  has(topic: string, partition: number): boolean {
    return this.#parts.has(key(topic, partition));
  }

  /**
   * Append RecordBatch v2 bytes. Resolves when the append may be acknowledged: for acks=all
   * after the fdatasync covering it, for acks=1 once written (flush=always syncs both).
   */
  async append(
    topic: string,
    partition: number,
    batches: Uint8Array,
    acks: Acks,
    /** The caller gives up `batches`: the log may rewrite them in place (see AppendOptions). */
    inPlace = false,
  ): Promise<AppendResult> {
    const st = this.#parts.get(key(topic, partition));
    // Only the leader writes: a copy elsewhere would diverge from it, and readers of the leader
    // would never see these records.
    if (st === undefined || st.leader !== this.nodeId) throw this.#notLeader(topic, partition);
    if (acks === -1 && st.isr.length < st.minInsyncReplicas) {
      throw new BrokerError(
        NOT_ENOUGH_REPLICAS,
        `acks=all needs ${st.minInsyncReplicas} in-sync replicas (min.insync.replicas) but ${topic}-${partition} has ${st.isr.length}`,
      );
    }
    const result = st.log.append(batches, {
      leaderEpoch: st.leaderEpoch,
      requireDurable: acks === -1,
      inPlace,
    });
    this.#wake(st);
    if (acks !== 0) await result.ack;
    return result;
  }

  /** The high watermark: on one broker, everything written. Replication will lower it to the ISR minimum. */
  highWatermark(topic: string, partition: number): number {
    return this.partition(topic, partition).log.logEndOffset();
  }

  read(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    upTo?: number,
  ): ReadResult & { highWatermark: number } {
    const st = this.partition(topic, partition);
    const hw = st.log.logEndOffset();
    return { ...st.log.read(offset, maxBytes, upTo ?? hw), highWatermark: hw };
  }

  /**
   * As `read`, but the batches are copied (pread) into `into`, which the caller reuses: cold
   * data is cheaper to copy than to fault in through a fresh mapping (docs/benchmarks.md,
   * Storage). `records` views `into` unless the first batch alone does not fit.
   */
  readInto(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    into: Uint8Array,
    upTo?: number,
  ): ReadResult & { highWatermark: number } {
    const st = this.partition(topic, partition);
    const hw = st.log.logEndOffset();
    return { ...st.log.readInto(offset, maxBytes, into, upTo ?? hw), highWatermark: hw };
  }

  /**
   * Wait until the partition has data at or above `offset` (or is gone), at most `timeoutMs`.
   * Resolves true when woken by data, false on timeout or abort.
   */
  waitForData(
    topic: string,
    partition: number,
    offset: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const st = this.partition(topic, partition);
    if (st.log.logEndOffset() > offset) return Promise.resolve(true);
    if (timeoutMs <= 0 || this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        st.waiters.delete(waiter);
        signal?.removeEventListener("abort", onAbort);
        resolve(v);
      };
      const waiter: Waiter = { offset, wake: () => done(true) };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      st.waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #wake(st: PartitionState): void {
    if (st.waiters.size === 0) return;
    const end = st.log.logEndOffset();
    for (const w of [...st.waiters]) if (end > w.offset) w.wake();
  }

  /** Every open partition, for admin listings. */
  partitions(): PartitionState[] {
    return [...this.#parts.values()];
  }

  async enforceRetention(): Promise<void> {
    await this.store.enforceRetention();
    this.reserve?.ensure();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const st of this.#parts.values()) for (const w of [...st.waiters]) w.wake();
    this.#parts.clear();
    await this.store.closeAll();
  }
}
