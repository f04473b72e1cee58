// The IO shell around the pure group coordinator (src/groups), shared by the Kafka listener and
// the HTTP API: requests become coordinator inputs, effects are carried out in order — responses
// resolve promises, offset and group records are appended to the internal __consumer_offsets
// topic (acks=all) and materialised into SQLite — and a timer ticks the coordinator at its
// next deadline. On start the coordinator is rebuilt by replaying __consumer_offsets.
import {
  type CoordinatorEffect,
  type CoordinatorInput,
  type CoordinatorOptions,
  type CoordinatorResponse,
  decodeOffsetsRecord,
  type EncodedRecord,
  GroupCoordinator,
  OFFSETS_TOPIC,
  offsetsPartitionFor,
  type OffsetsRecord,
} from "../groups/index.ts";
import { encodeRecordBatch } from "../protocol/record-batch.ts";
import type { GroupOffset, MetadataStore } from "../meta/index.ts";
import type { Logger } from "../log.ts";
import { CorruptLogError } from "../storage/index.ts";
import { BrokerError, type PartitionManager } from "./partition-manager.ts";
import {
  type OffsetsCompactionOptions,
  OffsetsCompactor,
  readKeyedRecords,
} from "./offsets-compaction.ts";

/** Kafka's offsets.topic.num.partitions is 50; one broker needs fewer files. Fixed once created. */
export const DEFAULT_OFFSETS_PARTITIONS = 16;

const COORDINATOR_NOT_AVAILABLE = 15;
const REQUEST_TIMED_OUT = 7;
/** Kafka's offsets.commit.timeout.ms. */
const COMMIT_TIMEOUT_MS = 5000;

/** A coordinator input as a front end sends it: the service assigns the token. */
export type GroupRequest = CoordinatorInput extends infer I
  ? I extends { token: number } ? Omit<I, "token"> : never
  : never;

/**
 * Wall-clock milliseconds that never step: the wall time at start plus the monotonic time since.
 * Member sessions, rebalance deadlines and the coordinator's timer run on it, so a wall clock
 * stepped back (NTP, an operator) neither freezes them for the length of the step (the
 * coordinator's time never goes back) nor does one stepped forward end every member's session at
 * once. Kafka's purgatory times the same deadlines with its monotonic clock. Commit timestamps
 * differ from the wall clock by the steps since start.
 */
export function steadyWallClock(
  wall: () => number = Date.now,
  mono: () => number = () => performance.now(),
): () => number {
  const wall0 = wall();
  const mono0 = mono();
  return () => wall0 + Math.floor(mono() - mono0);
}

export interface GroupServiceOptions extends CoordinatorOptions {
  offsetsPartitions?: number;
  now?: () => number;
  /** When __consumer_offsets partitions are compacted (src/core/offsets-compaction.ts). */
  offsetsCompaction?: OffsetsCompactionOptions;
}

interface Pending {
  resolve: (r: CoordinatorResponse) => void;
  connection: unknown;
}

export class GroupService {
  readonly coordinator: GroupCoordinator;
  readonly #pending = new Map<number, Pending>();
  #nextToken = 1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  #partitionCount = 0;
  #stopped = false;
  #started = false;
  /** Offsets partitions whose groups are loaded here (led here, replayed). */
  readonly #loaded = new Set<number>();
  readonly #now: () => number;
  /** Appends are materialised in order per offsets partition. */
  readonly #materialiseChain = new Map<number, Promise<void>>();
  /** Per group, the settlement of its latest append (appends of a group finish in order). */
  readonly #groupSettled = new Map<string, Promise<void>>();
  readonly compactor: OffsetsCompactor;

  constructor(
    readonly partitions: PartitionManager,
    readonly meta: MetadataStore,
    readonly log: Logger,
    readonly opts: GroupServiceOptions = {},
  ) {
    this.#now = opts.now ?? steadyWallClock();
    this.coordinator = new GroupCoordinator({
      ...opts,
      partitionCounts: (topic) => this.meta.getTopic(topic)?.partitions.length,
    });
    this.compactor = new OffsetsCompactor(
      partitions,
      log.child({ component: "offsets-compaction" }),
      () => this.#partitionCount,
      opts.offsetsCompaction,
    );
  }

  /** Create __consumer_offsets if missing, then replay it into the coordinator and SQLite. */
  async start(): Promise<void> {
    let t = this.meta.getTopic(OFFSETS_TOPIC);
    if (!t) {
      t = await this.partitions.createTopic(
        OFFSETS_TOPIC,
        this.opts.offsetsPartitions ?? DEFAULT_OFFSETS_PARTITIONS,
        1,
        // The topic is the source of truth for offsets: never deleted by time; the compactor
        // (offsets-compaction.ts) keeps it near the size of the live state.
        { "retention.ms": "-1", "segment.bytes": String(64 * 1024 * 1024) },
        false,
        true,
      );
    }
    this.#partitionCount = t.partitions.length;
    const started = performance.now();
    let count = 0;
    // In a cluster, a broker coordinates the groups of the offsets partitions it leads; it loads
    // them when it takes the lead and forgets them when it loses it (replicated like any topic).
    this.partitions.onLeadership((r, leading) => {
      if (r.topic !== OFFSETS_TOPIC || this.#stopped || !this.#started) return;
      if (leading) this.#load(r.partition);
      else this.#unload(r.partition);
    });
    this.#started = true;
    for (const p of t.partitions) {
      if (this.partitions.leaderError(OFFSETS_TOPIC, p.partition) !== 0) continue;
      count += this.#load(p.partition);
    }
    this.log.info("groups restored", {
      records: count,
      groups: this.coordinator.listGroups().length,
      ms: Math.round(performance.now() - started),
    });
    // Topics deleted while this broker was down: their offsets go now.
    const gone = new Set<string>();
    for (const g of this.coordinator.listGroups()) {
      for (const t of this.coordinator.fetchOffsets(g.groupId, null).topics) {
        if (this.meta.getTopic(t.name) === undefined) gone.add(t.name);
      }
    }
    for (const topic of gone) this.topicDeleted(topic);
    this.#schedule();
    this.compactor.start();
  }

  /** Replay one offsets partition into the coordinator (after dropping what it held of it). */
  #load(partition: number): number {
    this.#unload(partition);
    const records = this.#readAll(partition);
    this.#run(this.coordinator.restore(records.map((r) => r.encoded), this.#now()));
    this.#materialiseLater(records.map((r) => r.decoded));
    this.#loaded.add(partition);
    this.#schedule();
    if (records.length > 0) {
      this.log.info("groups loaded", { offsets_partition: partition, records: records.length });
    }
    return records.length;
  }

  /**
   * The SQLite view of a replayed partition, in small steps: each step is a synced transaction,
   * and a replay of thousands of records in one turn would stall the event loop for seconds
   * (heartbeats to the controller included). The coordinator already has the state.
   */
  #materialiseLater(records: OffsetsRecord[]): void {
    const STEP = 64;
    let at = 0;
    const step = () => {
      if (this.#stopped || at >= records.length) return;
      this.#materialise(records.slice(at, at + STEP));
      at += STEP;
      setTimeout(step, 0);
    };
    step();
  }

  /** This broker stopped leading an offsets partition: its groups go (clients move on). */
  #unload(partition: number): void {
    const had = this.#loaded.delete(partition);
    this.#run(
      this.coordinator.unload((g) => this.partitionFor(g) === partition, this.#now()),
    );
    if (had) this.log.info("groups unloaded", { offsets_partition: partition });
  }

  /** A topic was deleted (here or through another broker): drop the groups' offsets of it. */
  topicDeleted(topic: string): void {
    if (this.#stopped || topic === OFFSETS_TOPIC) return;
    this.#run(this.coordinator.handle({ type: "topicDeleted", topic }, this.#now()));
    this.#schedule();
  }

  #readAll(partition: number): { encoded: EncodedRecord; decoded: OffsetsRecord }[] {
    const out: { encoded: EncodedRecord; decoded: OffsetsRecord }[] = [];
    const st = this.partitions.partition(OFFSETS_TOPIC, partition);
    let offset = st.log.logStartOffset();
    const end = st.log.logEndOffset();
    while (offset < end) {
      let read;
      try {
        read = readKeyedRecords(st.log, offset, end, 4 * 1024 * 1024);
      } catch (e) {
        if (!(e instanceof CorruptLogError)) throw e;
        // Refusing to start would hold every group hostage to one damaged batch: keep what was
        // read. Groups stored past it restart from earlier commits (records again, none lost).
        this.log.error("__consumer_offsets is damaged; its later records are not replayed", {
          partition,
          offset,
          error: e.message,
        });
        break;
      }
      for (const r of read.records) {
        const d = decodeOffsetsRecord(r.key, r.value);
        if (!d.ok) {
          this.log.warn("skipping an undecodable __consumer_offsets record", {
            partition,
            offset: r.offset,
            error: d.error,
          });
          continue;
        }
        out.push({ encoded: { key: r.key, value: r.value }, decoded: d.value });
      }
      if (read.next <= offset) break;
      offset = read.next;
    }
    return out;
  }

  /** The __consumer_offsets partition that holds a group (its coordinator, in a cluster). */
  partitionFor(groupId: string): number {
    return offsetsPartitionFor(groupId, this.#partitionCount);
  }

  /**
   * Whether this broker coordinates the group: it leads the group's __consumer_offsets partition
   * and has its log open. Other brokers answer NOT_COORDINATOR, so clients ask FindCoordinator
   * again instead of forming a second group with its own offsets. A leader whose session lease
   * ran out (cut off from the controller, paused) does not coordinate either: it may have been
   * fenced and replaced, and would answer OffsetFetch from offsets the group has moved past
   * (the replication simulator's invariant 10 catches it).
   */
  coordinates(groupId: string): boolean {
    // The open partition carries its leader: no metadata query per heartbeat or commit.
    const p = this.partitionFor(groupId);
    return this.#loaded.has(p) && this.partitions.leaderError(OFFSETS_TOPIC, p) === 0 &&
      this.partitions.leaseValid();
  }

  /**
   * Send a request to the coordinator; resolves with its response (JoinGroup and SyncGroup
   * wait for the rebalance). `connection` ties it to a client connection for `disconnected`.
   */
  request(req: GroupRequest, connection?: unknown): Promise<CoordinatorResponse> {
    if (this.#stopped) {
      return Promise.reject(
        new BrokerError(COORDINATOR_NOT_AVAILABLE, "the broker is shutting down"),
      );
    }
    const token = this.#nextToken++;
    const { promise, resolve } = Promise.withResolvers<CoordinatorResponse>();
    this.#pending.set(token, { resolve, connection });
    this.#run(this.coordinator.handle({ ...req, token } as CoordinatorInput, this.#now()));
    this.#schedule();
    return promise;
  }

  /** A client connection closed: its waiting JoinGroup/SyncGroup requests are dropped. */
  disconnected(connection: unknown): void {
    const tokens = [...this.#pending].filter(([, p]) => p.connection === connection).map(([t]) =>
      t
    );
    if (tokens.length === 0) return;
    for (const t of tokens) this.#pending.delete(t);
    this.#run(this.coordinator.handle({ type: "disconnected", tokens }, this.#now()));
    this.#schedule();
  }

  #run(effects: CoordinatorEffect[]): void {
    for (const e of effects) {
      if (e.type === "respond") {
        const p = this.#pending.get(e.token);
        this.#pending.delete(e.token);
        p?.resolve(e.response);
      } else if (e.type === "append") {
        this.#append(e.appendId, e.groupId, e.records);
      } else {
        this.log.debug("group event", { ...e.event });
      }
    }
  }

  #append(
    appendId: number,
    groupId: string,
    records: (EncodedRecord & { record: OffsetsRecord })[],
  ): void {
    const partition = this.partitionFor(groupId);
    const done = (errorCode: number) => {
      this.#run(this.coordinator.handle({ type: "appendDone", appendId, errorCode }, this.#now()));
      this.#schedule();
    };
    let appended: Promise<unknown>;
    try {
      const batch = encodeRecordBatch({
        records: records.map((r) => ({ key: r.key, value: r.value })),
        baseTimestamp: this.#now(),
      });
      // Started synchronously, so records reach the log in effect order.
      appended = this.partitions.append(OFFSETS_TOPIC, partition, batch, -1);
    } catch (e) {
      appended = Promise.reject(e);
    }
    // Settled at once into an outcome, so a refusal (lost leadership, too few replicas) that
    // arrives while an earlier append is still pending is never an unhandled rejection. Bounded
    // as Kafka's offsets.commit.timeout.ms: a commit the replicas cannot confirm in time is
    // answered (the client retries) rather than held while members' sessions run out.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = Promise.race([
      appended.then(() => null, (e: unknown) => e ?? new Error("append failed")),
      new Promise<unknown>((resolve) => {
        timer = setTimeout(
          () =>
            resolve(
              new BrokerError(REQUEST_TIMED_OUT, "the offsets commit was not replicated in time"),
            ),
          COMMIT_TIMEOUT_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const prev = this.#materialiseChain.get(partition) ?? Promise.resolve();
    const next = prev.then(() => outcome).then((e) => {
      if (e === null) {
        // Durable in __consumer_offsets: the commit stands whatever the SQLite view makes of it.
        this.#materialise(records.map((r) => r.record));
        done(0);
        return;
      }
      const code = (e as { errorCode?: number }).errorCode ?? -1;
      this.log.warn("could not append to __consumer_offsets", { group: groupId, error: e, code });
      done(code === -1 ? COORDINATOR_NOT_AVAILABLE : code);
    });
    this.#materialiseChain.set(partition, next);
    const settled = next.then(() => {}, () => {});
    this.#groupSettled.set(groupId, settled);
    void settled.then(() => {
      if (this.#groupSettled.get(groupId) === settled) this.#groupSettled.delete(groupId);
    });
  }

  /**
   * Resolves once every append of `groupId` started before this call has finished (or after
   * `maxWaitMs`). OffsetFetch waits on it, so a commit accepted before the fetch arrived is seen
   * even while its record is still being written: a member that takes over a partition during a
   * rebalance then starts after the previous owner's last accepted commit.
   */
  commitsSettled(groupId: string, maxWaitMs = 5000): Promise<void> {
    const settled = this.#groupSettled.get(groupId);
    if (settled === undefined) return Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)));
    return Promise.race([settled, cap]).finally(() => clearTimeout(timer));
  }

  /**
   * Apply records to the SQLite view (idempotent upserts and deletes, in log order). The view is
   * only for queries: a record it refuses is logged and skipped, never fails the commit it belongs
   * to or the broker's start (the coordinator's own state comes from the topic).
   */
  #materialise(records: OffsetsRecord[]): void {
    const offsets: GroupOffset[] = [];
    const flush = () => {
      if (offsets.length === 0) return;
      const batch = offsets.splice(0);
      try {
        this.meta.applyGroupOffsetCommit(batch);
      } catch {
        // One refused offset must not cost the others of its batch their row.
        for (const o of batch) {
          this.#viewApply(() => this.meta.applyGroupOffsetCommit([o]), o.groupId);
        }
      }
    };
    for (const r of records) {
      if (r.type === "offset") {
        if (r.value === null) {
          flush();
          this.#viewApply(
            () => this.meta.applyGroupOffsetTombstone(r.group, r.topic, r.partition),
            r.group,
          );
        } else {
          offsets.push({
            groupId: r.group,
            topic: r.topic,
            partition: r.partition,
            offset: r.value.offset,
            leaderEpoch: r.value.leaderEpoch,
            metadata: r.value.metadata,
            commitTs: r.value.commitTimestamp,
            expireTs: r.value.expireTimestamp,
          });
        }
      } else if (r.type === "group") {
        flush();
        if (r.value === null) this.#viewApply(() => this.meta.applyGroupDeleted(r.group), r.group);
        else {
          const v = r.value;
          this.#viewApply(() =>
            this.meta.applyGroupMetadata({
              groupId: r.group,
              protocolType: v.protocolType,
              state: v.members.length > 0 ? "Stable" : "Empty",
              generation: v.generation,
              protocol: v.protocol,
              leader: v.leader,
              updatedAt: Math.max(0, v.currentStateTimestamp),
            }), r.group);
        }
      }
    }
    flush();
  }

  /** One change to the SQLite view; a refusal is logged and skipped. */
  #viewApply(apply: () => void, groupId: string): void {
    try {
      apply();
    } catch (e) {
      this.log.warn("a __consumer_offsets record was not applied to the SQLite view", {
        group: groupId,
        error: e,
      });
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    const next = this.coordinator.nextDeadlineMs();
    if (next === null) return;
    if (this.#timer !== undefined && this.#timerAt <= next) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = next;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#run(this.coordinator.handle({ type: "tick" }, this.#now()));
      this.#schedule();
    }, Math.max(0, next - this.#now()));
  }

  /** Stop ticking and wait for offset appends in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.compactor.stop();
    await Promise.allSettled([...this.#materialiseChain.values()]);
  }
}

/**
 * The broker that coordinates a group: the leader of its __consumer_offsets partition, or -1
 * while that topic or its leader is unknown.
 */
export function groupCoordinator(meta: MetadataStore, groupId: string): number {
  const t = meta.getTopic(OFFSETS_TOPIC);
  if (!t || t.partitions.length === 0) return -1;
  const index = offsetsPartitionFor(groupId, t.partitions.length);
  return t.partitions.find((p) => p.partition === index)?.leader ?? -1;
}
