// The broker core for partitions: keeps the open logs in step with the metadata, appends with
// the right durability, serves reads below the high watermark and wakes long-polling readers.
// Front ends (HTTP, Kafka) call this; it calls storage and meta.
import type {
  MetadataRecord,
  MetadataStore,
  PartitionInfo,
  ResolvedTopicConfig,
  TopicInfo,
} from "../meta/index.ts";
import {
  type AppendResult,
  type LogConfig,
  type LogStore,
  type PartitionLog,
  type ReadResult,
  StorageError,
  TopicIdMismatchError,
} from "../storage/index.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { isDiskFull, type SpaceReserve } from "./space-reserve.ts";
import type { Logger } from "../log.ts";
import { Replica } from "../replication/replica.ts";
import type { IsrProposal } from "../replication/leader.ts";

/** An error a front end maps to its protocol: Kafka error code plus a message. */
export class BrokerError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}

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

/** A partition held here: its replica (role, epochs, ISR, high watermark) and log. */
export type PartitionState = Replica;

/** What the replication layer plugs in (the broker wires it; a lone store's tests leave defaults). */
export interface ReplicationHooks {
  /** Whether this broker may act as a leader yet (unfenced in this incarnation). */
  canLead(): boolean;
  /** A leader's ISR change for the controller. */
  propose(r: Replica, p: IsrProposal): void;
  lagTimeMaxMs: number;
  /** The checkpointed high watermark of a partition from before a restart. */
  checkpointedHw(topic: string, partition: number): number;
  /**
   * Called after the set of partitions or their roles changed (fetchers follow): with the replica
   * when one changed, without when any may have (the hook then looks at every partition).
   */
  changed(r?: Replica): void;
  /** Called after a leader's append (long-polling follower fetches wake). */
  appended(): void;
  /** Whether this broker's session with the controller is confirmed recently enough to write. */
  mayAppend(): boolean;
}

/**
 * New partition logs opened at once by one topic's sync. Their syncs share the file system's
 * journal commits, so more at once costs less each: recovering 1,000 logs after kill -9 (three
 * syncs each) took 24.8 s to ready at 16 and 17.1 s at 128 (load 25-32).
 */
const OPEN_CONCURRENCY = 128;

/**
 * Disk a new partition's files take at least (directory, partition.meta, empty segment and
 * indexes, checkpoints: 24 KiB on ext4), with headroom for a first write.
 */
export const PARTITION_CREATE_BYTES = 64 * 1024;

const mib = (n: number) => (n / 2 ** 20).toFixed(1);

/** A broker without replication (and tests' starting point for fake hooks). */
export const LONE: ReplicationHooks = {
  canLead: () => true,
  propose: () => {},
  lagTimeMaxMs: 10_000,
  checkpointedHw: () => 0,
  changed: () => {},
  appended: () => {},
  mayAppend: () => true,
};

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * What one committed metadata record asks of the open logs: a topic (by id; the name for a
 * deleted one), one partition of it, or nothing. Records about brokers change no partition here.
 */
export function reconcileScope(
  r: MetadataRecord,
): { topicId: string; name?: string; partition?: number } | null {
  switch (r.type) {
    case "TopicCreated":
    case "TopicDeleted":
      return { topicId: r.topicId, name: r.name };
    case "PartitionChanged":
      return { topicId: r.topicId, partition: r.partition };
    case "PartitionsCreated":
    case "TopicConfigChanged":
      return { topicId: r.topicId };
    default:
      return null;
  }
}

export class PartitionManager {
  /** ISR changes of partitions led here, within a leader epoch (counted as they are applied). */
  readonly isrChanges = { shrinks: 0, expands: 0 };
  readonly #parts = new Map<string, PartitionState>();
  /** The partition numbers held here per topic name: a topic's changes touch only its own. */
  readonly #byTopic = new Map<string, Set<number>>();
  /** Names of internal topics (e.g. __consumer_offsets): the produce path checks this per request. */
  readonly #internal = new Set<string>();
  #closed = false;
  #repl: ReplicationHooks = LONE;
  readonly #leadership: ((r: Replica, leading: boolean) => void)[] = [];

  /** Called whenever this broker starts or stops leading a partition (group coordinators follow). */
  onLeadership(fn: (r: Replica, leading: boolean) => void): void {
    this.#leadership.push(fn);
  }

  #roleChanged(r: Replica, leading: boolean): void {
    for (const fn of this.#leadership) {
      try {
        fn(r, leading);
      } catch (e) {
        this.log.error("a leadership listener failed", { topic: r.topic, error: e });
      }
    }
  }

  /**
   * Whether this broker's session with the controller is confirmed recently enough to act as a
   * leader (always, alone): a leader cut off from the controller past it may have been fenced
   * and replaced, so it neither writes nor answers from state only a leader keeps current.
   */
  leaseValid(): boolean {
    return this.#repl.mayAppend();
  }

  /** Plug in replication (before openAll). */
  setReplication(h: ReplicationHooks): void {
    this.#repl = h;
  }

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
  /** Logs found at start of partitions the metadata did not place here (see openAll). */
  readonly #strays = new Set<string>();

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
      } else if (
        t && !t.partitions.find((p) => p.partition === info.partition)?.replicas.includes(
          this.nodeId,
        )
      ) {
        // Moved away by a reassignment while this broker was down: deleted once it has caught up
        // on metadata (syncTopic), unless the metadata by then names it a replica again.
        this.#strays.add(key(info.topic, info.partition));
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
  /** Everything must be brought in line (start, a snapshot, this broker's fencing changed). */
  #reconcileAll = false;
  /** Topics (by id) changed by committed records since the last run, with what changed. */
  readonly #pendingTopics = new Map<string, { name?: string; partitions: Set<number> | null }>();

  /**
   * Bring the open logs in line with the committed metadata, whichever broker wrote it: open the
   * partitions placed here, apply config changes, delete the logs of deleted topics. With a
   * record, only what that record changed is looked at (one topic, or one partition of it), so a
   * change costs what it changes, not what exists; without, every topic. Calls that arrive while
   * a run is going are folded into it; the promise resolves once they are done too.
   */
  reconcile(change?: MetadataRecord | null): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const scope = change ? reconcileScope(change) : undefined;
    if (scope === null) return this.#reconciling ?? Promise.resolve();
    if (scope === undefined) this.#reconcileAll = true;
    else {
      const cur = this.#pendingTopics.get(scope.topicId);
      const one = scope.partition === undefined ? null : new Set([scope.partition]);
      if (cur === undefined) {
        this.#pendingTopics.set(scope.topicId, { name: scope.name, partitions: one });
      } else {
        cur.name ??= scope.name;
        if (cur.partitions !== null && one !== null) cur.partitions.add(scope.partition!);
        else cur.partitions = null;
      }
    }
    if (this.#reconciling) return this.#reconciling;
    const run = async () => {
      while ((this.#reconcileAll || this.#pendingTopics.size > 0) && !this.#closed) {
        try {
          if (this.#reconcileAll) {
            this.#reconcileAll = false;
            this.#pendingTopics.clear();
            await this.#reconcileOnce();
          } else {
            const [id, what] = this.#pendingTopics.entries().next().value!;
            this.#pendingTopics.delete(id);
            await this.#reconcileTopic(id, what.name, what.partitions);
          }
        } catch (e) {
          this.log.error("could not apply the metadata to the partition logs", { error: e });
        }
      }
    };
    this.#reconciling = run().finally(() => (this.#reconciling = null));
    return this.#reconciling;
  }

  /** The reconciliation under way, if any (what was applied so far is in the logs after it). */
  async #reconciled(): Promise<void> {
    while (this.#reconciling) await this.#reconciling;
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
        this.#reconcileAll = true;
      }
    }
  }

  /** One topic's committed state (by id) onto its logs here: only `partitions` when given. */
  async #reconcileTopic(
    topicId: string,
    name: string | undefined,
    partitions: ReadonlySet<number> | null,
  ): Promise<void> {
    const t = this.meta.getTopicById(topicId, partitions ?? undefined);
    // Logs held under this name with another id belong to a topic deleted since (a change of
    // some partitions of a topic that exists cannot tell of one).
    const names = partitions !== null && t !== undefined ? [] : new Set([name, t?.name]);
    for (const n of names) {
      if (n === undefined) continue;
      for (const p of [...(this.#byTopic.get(n) ?? [])]) {
        const st = this.#parts.get(key(n, p));
        if (st === undefined || (t !== undefined && st.topicId === t.topicId)) continue;
        this.log.info("deleting the log of a deleted topic", { topic: n, partition: p });
        await this.#dropLog(n, p);
      }
    }
    if (t === undefined) return;
    try {
      await this.syncTopic(t, partitions ?? undefined);
    } catch (e) {
      // Deleted since it was read (records applied meanwhile): the deletion's own run drops it.
      if (this.meta.getTopicById(topicId) !== undefined) throw e;
    }
  }

  #put(k: string, r: PartitionState): void {
    this.#parts.set(k, r);
    let s = this.#byTopic.get(r.topic);
    if (s === undefined) this.#byTopic.set(r.topic, s = new Set());
    s.add(r.partition);
  }

  #remove(k: string, r: PartitionState): void {
    this.#parts.delete(k);
    const s = this.#byTopic.get(r.topic);
    s?.delete(r.partition);
    if (s?.size === 0) this.#byTopic.delete(r.topic);
  }

  async #dropLog(topic: string, partition: number): Promise<void> {
    const k = key(topic, partition);
    const st = this.#parts.get(k);
    if (st) {
      this.#remove(k, st);
      const led = st.isLeader;
      st.close();
      this.#repl.changed(st);
      if (led) this.#roleChanged(st, false);
    }
    await this.store.deleteLog(topic, partition);
  }

  /**
   * Make the open logs match one topic's metadata (new partitions, config changes, leaders and
   * ISRs); `only`: just those partitions (one partition's leader or ISR changed).
   */
  async syncTopic(t: TopicInfo, only?: ReadonlySet<number>): Promise<void> {
    if (t.internal) this.#internal.add(t.name);
    else this.#internal.delete(t.name);
    const resolved = this.meta.topicConfigOf(t);
    const config = logConfigOf(resolved);
    if (t.internal) {
      // Internal topics are compacted (INTERNAL_TOPIC_CONFIGS), and as in Kafka a compacted topic
      // has no time or size retention: an altered retention.ms must not delete committed offsets.
      config.retentionMs = -1;
      config.retentionBytes = -1;
    }
    const toOpen: PartitionInfo[] = [];
    for (const p of t.partitions) {
      if (only !== undefined && !only.has(p.partition)) continue;
      if (!p.replicas.includes(this.nodeId)) {
        // A reassignment moved this replica away: its log goes. Only once this broker may lead
        // (caught up on metadata since it registered), so a view older than a later record that
        // put it back never deletes a log the ISR counts on.
        const k = key(t.name, p.partition);
        const gone = this.#parts.get(k);
        const stray = this.#strays.has(k);
        if ((gone?.topicId === t.topicId || stray) && this.#repl.canLead()) {
          this.#strays.delete(k);
          this.log.info("replica moved away by a reassignment: deleting its log", {
            topic: t.name,
            partition: p.partition,
            replicas: p.replicas,
          });
          await this.#dropLog(t.name, p.partition);
        }
        continue;
      }
      const existing = this.#parts.get(key(t.name, p.partition));
      if (existing && existing.topicId === t.topicId) {
        existing.log.updateConfig(config);
        const before = `${existing.isLeader}/${existing.leader}/${existing.leaderEpoch}`;
        existing.update(this.#assignment(p), resolved.minInsyncReplicas);
        const after = `${existing.isLeader}/${existing.leader}/${existing.leaderEpoch}`;
        if (before !== after) {
          this.#repl.changed(existing);
          this.#roleChanged(existing, existing.isLeader);
        }
        continue;
      }
      toOpen.push(p);
    }
    // New logs open a few at a time: each create syncs a handful of small files, and syncs that
    // run together share the file system's journal commits (one after another, a topic of 1,000
    // partitions took seconds).
    let next = 0;
    const worker = async () => {
      while (next < toOpen.length && !this.#closed) {
        await this.#openPartition(t, toOpen[next++], config, resolved.minInsyncReplicas);
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, toOpen.length) }, worker));
  }

  async #openPartition(
    t: TopicInfo,
    p: PartitionInfo,
    config: Partial<LogConfig>,
    minInsyncReplicas: number,
  ): Promise<void> {
    const k = key(t.name, p.partition);
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
    if (this.#parts.get(k)?.topicId === t.topicId) return;
    const created = new Replica(
      t.name,
      p.partition,
      t.topicId,
      log,
      this.nodeId,
      this.#assignment(p),
      minInsyncReplicas,
      {
        onHighWatermark: (r) => this.#wake(r),
        propose: (r, prop) => this.#repl.propose(r, prop),
        lagTimeMaxMs: this.#repl.lagTimeMaxMs,
        now: () => performance.now(),
        log: (msg, fields) => this.log.info(msg, fields),
        debug: (msg, fields) => this.log.debug(msg, fields),
        onIsrChange: (_r, shrunk, expanded) => {
          if (shrunk) this.isrChanges.shrinks++;
          if (expanded) this.isrChanges.expands++;
        },
      },
      this.#repl.checkpointedHw(t.name, p.partition),
    );
    const old = this.#parts.get(k);
    if (old !== undefined) {
      // The log of a deleted topic of the same name, replaced above.
      this.#remove(k, old);
      old.close();
      this.#repl.changed(old);
    }
    this.#put(k, created);
    this.#repl.changed(created);
    if (created.isLeader) this.#roleChanged(created, true);
  }

  /** The committed assignment, with leadership withheld while this broker may not lead yet. */
  #assignment(p: PartitionInfo) {
    const gated = p.leader === this.nodeId && !this.#repl.canLead();
    return {
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: gated ? -1 : p.partitionEpoch,
      replicas: p.replicas,
      isr: p.isr,
      gated,
      reassignment: p.reassignment ?? null,
    };
  }

  /**
   * Before a create is committed: the partitions it places on this broker must fit on the disk
   * with the space reserve left whole, or it is refused (KAFKA_STORAGE_ERROR, HTTP 507) and
   * nothing is committed, so the metadata never names partitions whose logs could not be made.
   */
  #checkRoom(t: TopicInfo, alreadyHere: number): void {
    const free = this.reserve?.freeBytes() ?? null;
    if (free === null) return;
    const here = t.partitions.filter((p) => p.replicas.includes(this.nodeId)).length -
      alreadyHere;
    const need = here * PARTITION_CREATE_BYTES + this.reserve!.bytes;
    if (here > 0 && free < need) {
      throw new StorageError(
        `the disk is full: ${here} new partitions of ${t.name} need about ${mib(need)} MiB ` +
          `free in the data dir (with the space reserve) and ${mib(free)} MiB are`,
      );
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
    const create = (validateOnly: boolean) =>
      this.meta.createTopic(name, partitions, replicationFactor, configs, {
        validateOnly,
        internal,
        assignments,
      });
    // The placement as validated (nothing committed) tells what this broker would hold.
    if (!validateOnly) this.#checkRoom(await create(true), 0);
    const before = this.meta.getTopic(name)?.topicId;
    // A create committed before a later step hit the full disk is done: a retry would answer
    // "already exists" for the topic this very request created.
    const t = await this.#metaWrite(() => create(validateOnly), () => {
      const now = validateOnly ? undefined : this.meta.getTopic(name);
      return now !== undefined && now.topicId !== before ? { value: now } : undefined;
    });
    if (validateOnly) this.#checkRoom(t, 0);
    else await this.syncTopic(t);
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
    const create = (validateOnly: boolean) =>
      this.meta.createPartitions(name, total, { validateOnly, assignments });
    const here = this.meta.getTopic(name)?.partitions
      .filter((p) => p.replicas.includes(this.nodeId)).length ?? 0;
    if (!validateOnly) this.#checkRoom(await create(true), here);
    const t = await this.#metaWrite(() => create(validateOnly));
    if (validateOnly) this.#checkRoom(t, here);
    else await this.syncTopic(t);
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
    if (st) return st.isLeader ? 0 : ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const t = this.meta.getTopic(topic);
    return t?.partitions.some((p) => p.partition === partition)
      ? ErrorCode.NOT_LEADER_OR_FOLLOWER
      : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }

  /** The partition's leader as this broker knows it (-1 when unknown). */
  leaderOf(topic: string, partition: number): number {
    return this.#parts.get(key(topic, partition))?.leader ??
      this.meta.getTopic(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  #notLeader(topic: string, partition: number): BrokerError {
    const code = this.leaderError(topic, partition);
    if (code !== ErrorCode.NOT_LEADER_OR_FOLLOWER) {
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
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
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
    if (st === undefined || !st.isLeader) throw this.#notLeader(topic, partition);
    if (!this.#repl.mayAppend()) {
      // Possibly a zombie (paused past its session): a newer leader may exist already.
      throw new BrokerError(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `broker ${this.nodeId} has no confirmed session with the controller; not writing ${topic}-${partition} as its leader`,
      );
    }
    if (acks === -1 && st.isr.length < st.minInsyncReplicas) {
      throw new BrokerError(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `acks=all needs ${st.minInsyncReplicas} in-sync replicas (min.insync.replicas) but ${topic}-${partition} has ${st.isr.length}`,
      );
    }
    const result = st.log.append(batches, {
      leaderEpoch: st.leaderEpoch,
      requireDurable: acks === -1,
      inPlace,
    });
    st.afterAppend();
    this.#repl.appended();
    if (acks === 0) return result;
    await result.ack;
    // acks=all on a replicated partition: answered once the ISR has synced it too.
    if (acks === -1 && st.replicas.length > 1) await st.waitCommitted(result.lastOffset);
    return result;
  }

  /** What consumers may see: below this the ISR has every record (the replica decides). */
  highWatermark(topic: string, partition: number): number {
    return this.partition(topic, partition).highWatermark();
  }

  read(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    upTo?: number,
  ): ReadResult & { highWatermark: number } {
    const st = this.partition(topic, partition);
    const hw = st.highWatermark();
    return { ...st.log.read(offset, maxBytes, Math.min(upTo ?? hw, hw)), highWatermark: hw };
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
    const hw = st.highWatermark();
    return {
      ...st.log.readInto(offset, maxBytes, into, Math.min(upTo ?? hw, hw)),
      highWatermark: hw,
    };
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
    if (st.highWatermark() > offset) return Promise.resolve(true);
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
    const end = st.highWatermark();
    for (const w of [...st.waiters]) if (end > w.offset || !st.isLeader) w.wake();
  }

  /**
   * After this broker was unfenced: wait (bounded) until every partition the metadata says it
   * leads is led here, and none it holds the last ISR place of is offline, so a restart serves
   * (and the group coordinator replays) as before.
   */
  async settled(timeoutMs: number): Promise<void> {
    const until = performance.now() + timeoutMs;
    // One full pass, then only what committed records change (each is reconciled as applied).
    let full = true;
    while (performance.now() < until && !this.#closed) {
      if (full) await this.reconcile();
      else await this.#reconciled();
      full = false;
      const pending = [...this.#parts.values()].some((r) =>
        (r.leader === this.nodeId && !r.isLeader) ||
        (r.leader === -1 && r.isr.includes(this.nodeId))
      );
      if (!pending) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Single-replica partitions held here whose logs did not reopen clean, as "topicId:partition"
   * (what a registration tells the controller: it keeps this broker leading the others without
   * an election); null when there are more than `max`.
   */
  uncleanLogs(max: number): string[] | null {
    const out: string[] = [];
    for (const r of this.#parts.values()) {
      if (r.replicas.length !== 1 || r.replicas[0] !== this.nodeId || r.log.openedClean()) continue;
      if (out.length === max) return null;
      out.push(`${r.topicId}:${r.partition}`);
    }
    return out;
  }

  /** Every open partition, for admin listings. */
  partitions(): PartitionState[] {
    return [...this.#parts.values()];
  }

  /**
   * Retention runs where a partition is led: a follower's log start follows its leader's (its
   * fetches carry it), so replicas never disagree about which records exist.
   */
  async enforceRetention(): Promise<void> {
    for (const r of [...this.#parts.values()]) {
      if (!r.isLeader) continue;
      try {
        await r.log.enforceRetention();
      } catch (e) {
        this.log.warn("retention failed", { topic: r.topic, partition: r.partition, error: e });
      }
    }
    this.reserve?.ensure();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const st of this.#parts.values()) st.close();
    this.#parts.clear();
    this.#byTopic.clear();
    await this.store.closeAll();
  }
}
