// MetadataStore: the facade the broker uses. Admin writes are validated here (under one lock,
// so validation sees the state the record will be applied to), then appended to the metadata
// log, which applies them to SQLite before `append` resolves. Reads are plain drizzle queries.
import type { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { IdentityError, MetaError } from "./errors.ts";
import { manualAssignments } from "./assignments.ts";
import { ensureIdentity } from "./identity.ts";
import type { MetaDb } from "./migrate.ts";
import { openMetaDb } from "./migrate.ts";
import { LocalMetadataLog, type MetadataLog } from "./log.ts";
import type { MetadataRecord, PartitionAssignment } from "./records.ts";
import * as s from "./schema.ts";
import * as g from "./groups.ts";
import { isInternalTopicName, topicNamesCollide, validateTopicName } from "./topic-names.ts";
import {
  assertKnownTopicConfig,
  type DescribedTopicConfig,
  describeTopicConfig,
  INTERNAL_TOPIC_CONFIGS,
  normalizeTopicDefaults,
  type ResolvedTopicConfig,
  resolveTopicConfig,
  validateTopicConfigs,
} from "./topic-configs.ts";

export interface StoreOptions {
  /** The --node-id flag (checked against the data dir). */
  nodeId?: number;
  /** Refuse a data dir of another cluster (for --join). */
  expectedClusterId?: string;
  /** Broker-wide topic defaults (--topic-default), topic or broker key names. */
  topicDefaults?: Readonly<Record<string, string>>;
  /** Partitions of a topic created with -1 (Kafka's num.partitions). Default 1. */
  numPartitions?: number;
  /** Replication factor of a topic created with -1. Default 1. */
  defaultReplicationFactor?: number;
  /**
   * Highest replication factor accepted. The broker sets 1 while partitions are not replicated
   * between brokers, so no topic claims copies that do not exist. Default: no limit.
   */
  maxReplicationFactor?: number;
  /** Brokers gossip reports down; placement leaves them out (fencing is not built yet). */
  isDown?: (nodeId: number) => boolean;
  /** Upper bound on partitions per topic, against hostile requests. Default 10000. */
  maxPartitionsPerTopic?: number;
  /** The metadata log; default LocalMetadataLog on the same database. */
  log?: (db: MetaDb) => MetadataLog;
  now?: () => number;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
}

export interface TopicInfo {
  topicId: string;
  name: string;
  internal: boolean;
  /** Topic-level overrides only; see topicConfig()/describeTopicConfigs() for effective ones. */
  configs: Record<string, string>;
  createdAt: number;
  partitions: PartitionInfo[];
}

export interface BrokerRegistration {
  nodeId: number;
  host: string;
  kafkaPort: number;
  httpPort: number;
  clusterPort: number;
  rack?: string | null;
}

export interface BrokerInfo extends Required<BrokerRegistration> {
  fenced: boolean;
  epoch: number;
  registeredAt: number;
}

export interface PartitionChange {
  leader?: number;
  isr?: number[];
  replicas?: number[];
}

export interface WriteOptions {
  /** Validate and return the would-be result without changing anything (Kafka validateOnly). */
  validateOnly?: boolean;
}

export const META_DB_FILE = "meta.db";

function positiveInt(v: number, min: number, max: number): boolean {
  return Number.isInteger(v) && v >= min && v <= max;
}

export class MetadataStore {
  readonly clusterId: string;
  readonly nodeId: number;
  readonly db: MetaDb;
  readonly log: MetadataLog;
  /** Validated broker-wide topic defaults keyed by topic config name. */
  readonly topicDefaults: Readonly<Record<string, string>>;
  readonly #sqlite: Database;
  readonly #numPartitions: number;
  readonly #defaultRf: number;
  readonly #maxRf: number;
  readonly #isDown: (nodeId: number) => boolean;
  readonly #maxPartitions: number;
  readonly #now: () => number;
  #lock: Promise<unknown> = Promise.resolve();

  private constructor(
    sqlite: Database,
    db: MetaDb,
    ids: { clusterId: string; nodeId: number },
    opts: StoreOptions,
  ) {
    this.#sqlite = sqlite;
    this.db = db;
    this.clusterId = ids.clusterId;
    this.nodeId = ids.nodeId;
    this.#now = opts.now ?? Date.now;
    this.topicDefaults = normalizeTopicDefaults(opts.topicDefaults ?? {});
    this.#numPartitions = opts.numPartitions ?? 1;
    this.#defaultRf = opts.defaultReplicationFactor ?? 1;
    this.#maxRf = opts.maxReplicationFactor ?? 32767;
    this.#isDown = opts.isDown ?? (() => false);
    if (this.#defaultRf > this.#maxRf) {
      throw new MetaError("INVALID_REPLICATION_FACTOR", replicationRefusal(this.#defaultRf));
    }
    this.#maxPartitions = opts.maxPartitionsPerTopic ?? 10_000;
    if (!positiveInt(this.#numPartitions, 1, this.#maxPartitions)) {
      throw new MetaError("INVALID_PARTITIONS", `num.partitions must be 1..${this.#maxPartitions}`);
    }
    if (!positiveInt(this.#defaultRf, 1, 32767)) {
      throw new MetaError(
        "INVALID_REPLICATION_FACTOR",
        "default replication factor must be 1..32767",
      );
    }
    this.log = opts.log ? opts.log(db) : new LocalMetadataLog(db, this.#now);
  }

  /**
   * Opens the metadata of a data dir: checks/creates its identity (meta.properties), opens
   * <dataDir>/meta.db (WAL) and applies the embedded migrations. Throws IdentityError when the
   * data dir belongs to another node or cluster.
   */
  static open(dataDir: string, opts: StoreOptions = {}): MetadataStore {
    const id = ensureIdentity(dataDir, {
      nodeId: opts.nodeId,
      expectedClusterId: opts.expectedClusterId,
    });
    const { sqlite, db } = openMetaDb(join(dataDir, META_DB_FILE));
    try {
      const row = db.select().from(s.cluster).where(eq(s.cluster.id, 1)).get();
      if (row === undefined) {
        db.insert(s.cluster).values({
          id: 1,
          clusterId: id.clusterId,
          nodeId: id.nodeId,
          createdAt: (opts.now ?? Date.now)(),
        }).run();
      } else if (row.clusterId !== id.clusterId || row.nodeId !== id.nodeId) {
        throw new IdentityError(
          `${
            join(dataDir, META_DB_FILE)
          } belongs to cluster ${row.clusterId} node ${row.nodeId}, ` +
            `but meta.properties says cluster ${id.clusterId} node ${id.nodeId}`,
        );
      }
      return new MetadataStore(sqlite, db, id, opts);
    } catch (e) {
      sqlite.close();
      throw e;
    }
  }

  /** Runs admin writes one at a time, so each validates against the state it will change. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => undefined);
    return run;
  }

  async #append(record: MetadataRecord): Promise<number> {
    return await this.log.append(record);
  }

  // ---- reads ------------------------------------------------------------------------------

  #partitionsOf(topicId: string): PartitionInfo[] {
    return this.db.select().from(s.partitions).where(eq(s.partitions.topicId, topicId))
      .orderBy(asc(s.partitions.partition)).all()
      .map(({ topicId: _, ...p }) => p);
  }

  getTopic(name: string): TopicInfo | undefined {
    const t = this.db.select().from(s.topics).where(eq(s.topics.name, name)).get();
    return t === undefined ? undefined : { ...t, partitions: this.#partitionsOf(t.topicId) };
  }

  getTopicById(topicId: string): TopicInfo | undefined {
    const t = this.db.select().from(s.topics).where(eq(s.topics.topicId, topicId)).get();
    return t === undefined ? undefined : { ...t, partitions: this.#partitionsOf(t.topicId) };
  }

  listTopics(): TopicInfo[] {
    const byTopic = new Map<string, PartitionInfo[]>();
    for (
      const p of this.db.select().from(s.partitions).orderBy(asc(s.partitions.partition)).all()
    ) {
      const { topicId, ...rest } = p;
      let list = byTopic.get(topicId);
      if (list === undefined) byTopic.set(topicId, list = []);
      list.push(rest);
    }
    return this.db.select().from(s.topics).orderBy(asc(s.topics.name)).all()
      .map((t) => ({ ...t, partitions: byTopic.get(t.topicId) ?? [] }));
  }

  listBrokers(): BrokerInfo[] {
    return this.db.select().from(s.brokers).orderBy(asc(s.brokers.nodeId)).all();
  }

  #topicOrThrow(name: string): TopicInfo {
    const t = this.getTopic(name);
    if (t === undefined) {
      throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${name}' does not exist.`);
    }
    return t;
  }

  /** Effective typed config of a topic (override ← --topic-default ← built-in default). */
  topicConfig(name: string): ResolvedTopicConfig {
    return resolveTopicConfig(this.#topicOrThrow(name).configs, this.topicDefaults);
  }

  /** DescribeConfigs view of a topic: every config with value, source and synonyms. */
  describeTopicConfigs(name: string): DescribedTopicConfig[] {
    const t = this.#topicOrThrow(name);
    return describeTopicConfig(t.configs, this.topicDefaults, t.internal);
  }

  // ---- admin writes (through the metadata log) ---------------------------------------------

  #liveBrokers(): number[] {
    return this.db.select({ id: s.brokers.nodeId }).from(s.brokers)
      .where(eq(s.brokers.fenced, false)).orderBy(asc(s.brokers.nodeId)).all().map((b) => b.id)
      .filter((id) => !this.#isDown(id));
  }

  /** Round-robin placement over live brokers, leaders spread by a rotating start. */
  #assign(from: number, count: number, rf: number): PartitionAssignment[] {
    const live = this.#liveBrokers();
    if (rf > live.length) {
      throw new MetaError(
        "INVALID_REPLICATION_FACTOR",
        `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} ` +
          `cannot be reached because only ${live.length} broker(s) are registered.`,
      );
    }
    const total = this.db.select({ n: sql<number>`count(*)` }).from(s.partitions).get()?.n ?? 0;
    const out: PartitionAssignment[] = [];
    for (let i = 0; i < count; i++) {
      const start = (total + i) % live.length;
      const replicas = Array.from({ length: rf }, (_, j) => live[(start + j) % live.length]);
      out.push({
        partition: from + i,
        replicas,
        leader: replicas[0],
        leaderEpoch: 0,
        isr: [...replicas],
      });
    }
    return out;
  }

  /**
   * CreateTopics. partitions/replicationFactor -1 = the defaults. Errors: INVALID_TOPIC_EXCEPTION,
   * TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_CONFIG.
   */
  createTopic(
    name: string,
    partitions = -1,
    replicationFactor = -1,
    configs: Readonly<Record<string, string>> = {},
    opts: WriteOptions & { internal?: boolean; assignments?: number[][] } = {},
  ): Promise<TopicInfo> {
    return this.#serial(async () => {
      validateTopicName(name);
      const manual = opts.assignments;
      if (manual && (partitions !== -1 || replicationFactor !== -1)) {
        throw new MetaError(
          "INVALID_REQUEST",
          "Both numPartitions or replicationFactor and replicasAssignments were set. " +
            "Both cannot be used at the same time.",
        );
      }
      if (manual) {
        partitions = manual.length;
        replicationFactor = manual[0]?.length ?? 0;
      }
      const n = partitions === -1 ? this.#numPartitions : partitions;
      if (!Number.isInteger(n) || n < 1) {
        throw new MetaError(
          "INVALID_PARTITIONS",
          "Number of partitions was set to an invalid non-positive value.",
        );
      }
      if (n > this.#maxPartitions) {
        throw new MetaError(
          "INVALID_PARTITIONS",
          `Number of partitions ${n} exceeds the limit of ${this.#maxPartitions}.`,
        );
      }
      const rf = replicationFactor === -1 ? this.#defaultRf : replicationFactor;
      if (!Number.isInteger(rf) || rf < 1 || rf > 32767) {
        throw new MetaError(
          "INVALID_REPLICATION_FACTOR",
          "Replication factor must be larger than 0, or -1 to use the default value.",
        );
      }
      if (rf > this.#maxRf || (manual && manual.some((r) => r.length > this.#maxRf))) {
        throw new MetaError(
          "INVALID_REPLICATION_FACTOR",
          replicationRefusal(Math.max(rf, ...(manual ?? []).map((r) => r.length))),
        );
      }
      const cfg = validateTopicConfigs(configs);
      if (this.getTopic(name) !== undefined) {
        throw new MetaError("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
      }
      for (const t of this.db.select({ name: s.topics.name }).from(s.topics).all()) {
        if (topicNamesCollide(name, t.name)) {
          throw new MetaError(
            "INVALID_TOPIC_EXCEPTION",
            `Topic '${name}' collides with existing topic: ${t.name}`,
          );
        }
      }
      const record: MetadataRecord = {
        type: "TopicCreated",
        topicId: randomUUID(),
        name,
        internal: opts.internal ?? isInternalTopicName(name),
        partitions: manual
          ? manualAssignments(manual, 0, new Set(this.#liveBrokers()))
          : this.#assign(0, n, rf),
        configs: cfg,
        timestamp: this.#now(),
      };
      if (opts.validateOnly) {
        const { topicId, name: nm, internal, timestamp, partitions: ps } = record;
        return {
          topicId,
          name: nm,
          internal,
          configs: cfg,
          createdAt: timestamp,
          partitions: ps.map((p) => ({ ...p, partitionEpoch: 0 })),
        };
      }
      await this.#append(record);
      return this.#topicOrThrow(name);
    });
  }

  /** DeleteTopics. Internal topics (__consumer_offsets...) are refused with INVALID_REQUEST. */
  deleteTopic(name: string): Promise<void> {
    return this.#serial(async () => {
      const t = this.#topicOrThrow(name);
      if (t.internal) {
        throw new MetaError(
          "INVALID_REQUEST",
          `Topic '${name}' is internal and cannot be deleted.`,
        );
      }
      await this.#append({ type: "TopicDeleted", topicId: t.topicId, name });
    });
  }

  /** CreatePartitions: grow `name` to `newTotal` partitions. */
  createPartitions(
    name: string,
    newTotal: number,
    opts: WriteOptions & { assignments?: number[][] } = {},
  ): Promise<TopicInfo> {
    return this.#serial(async () => {
      const t = this.#topicOrThrow(name);
      const cur = t.partitions.length;
      if (!Number.isInteger(newTotal) || newTotal < cur) {
        throw new MetaError(
          "INVALID_PARTITIONS",
          `Topic currently has ${cur} partitions, which is higher than the requested ${newTotal}.`,
        );
      }
      if (newTotal === cur) {
        throw new MetaError("INVALID_PARTITIONS", `Topic already has ${cur} partitions.`);
      }
      if (newTotal > this.#maxPartitions) {
        throw new MetaError(
          "INVALID_PARTITIONS",
          `Number of partitions ${newTotal} exceeds the limit of ${this.#maxPartitions}.`,
        );
      }
      const rf = t.partitions[0]?.replicas.length ?? this.#defaultRf;
      const manual = opts.assignments;
      if (manual && manual.length !== newTotal - cur) {
        throw new MetaError(
          "INVALID_REPLICA_ASSIGNMENT",
          `Increasing the number of partitions by ${newTotal - cur} but ${manual.length} ` +
            "assignments provided.",
        );
      }
      const added = manual
        ? manualAssignments(manual, cur, new Set(this.#liveBrokers()), rf)
        : this.#assign(cur, newTotal - cur, rf);
      if (opts.validateOnly) {
        return {
          ...t,
          partitions: [...t.partitions, ...added.map((p) => ({ ...p, partitionEpoch: 0 }))],
        };
      }
      await this.#append({ type: "PartitionsCreated", topicId: t.topicId, partitions: added });
      return this.#topicOrThrow(name);
    });
  }

  /** IncrementalAlterConfigs SET/DELETE on a topic's overrides. */
  alterTopicConfigs(
    name: string,
    set: Readonly<Record<string, string>>,
    del: readonly string[] = [],
    opts: WriteOptions = {},
  ): Promise<TopicInfo> {
    return this.#serial(async () => {
      const t = this.#topicOrThrow(name);
      if (t.internal) {
        const fixed = [...Object.keys(set), ...del].find((k) => k in INTERNAL_TOPIC_CONFIGS);
        if (fixed !== undefined) {
          throw new MetaError(
            "INVALID_CONFIG",
            `${fixed} of internal topic '${name}' is fixed (${INTERNAL_TOPIC_CONFIGS[fixed]})`,
          );
        }
      }
      const cfg = validateTopicConfigs(set);
      if (!Array.isArray(del) || del.some((k) => typeof k !== "string")) {
        throw new MetaError("INVALID_REQUEST", "Config names to delete must be strings");
      }
      for (const k of del) {
        assertKnownTopicConfig(k);
        if (Object.hasOwn(cfg, k)) {
          throw new MetaError(
            "INVALID_REQUEST",
            `Config ${k} is both set and deleted in one request`,
          );
        }
      }
      if (opts.validateOnly) {
        const configs = { ...t.configs };
        for (const k of del) delete configs[k];
        return { ...t, configs: { ...configs, ...cfg } };
      }
      await this.#append({
        type: "TopicConfigChanged",
        topicId: t.topicId,
        set: cfg,
        delete: [...del],
      });
      return this.#topicOrThrow(name);
    });
  }

  /** Controller path: change a partition's leader/ISR/replicas; a new leader bumps the epoch. */
  alterPartition(name: string, partition: number, change: PartitionChange): Promise<PartitionInfo> {
    return this.#serial(async () => {
      const t = this.#topicOrThrow(name);
      const p = t.partitions.find((x) => x.partition === partition);
      if (p === undefined) {
        throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Unknown partition ${name}-${partition}`);
      }
      const record: MetadataRecord = { type: "PartitionChanged", topicId: t.topicId, partition };
      if (change.replicas !== undefined) record.replicas = [...change.replicas];
      if (change.isr !== undefined) record.isr = [...change.isr];
      if (change.leader !== undefined) {
        record.leader = change.leader;
        if (change.leader !== p.leader) record.leaderEpoch = p.leaderEpoch + 1;
      }
      await this.#append(record);
      const after = this.#topicOrThrow(name).partitions.find((x) => x.partition === partition);
      if (after === undefined) {
        throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Partition vanished`);
      }
      return after;
    });
  }

  /** Registers (or re-registers) a broker; its epoch is the index of the record. */
  registerBroker(reg: BrokerRegistration): Promise<BrokerInfo> {
    return this.#serial(async () => {
      await this.#append({
        type: "BrokerRegistered",
        nodeId: reg.nodeId,
        host: reg.host,
        kafkaPort: reg.kafkaPort,
        httpPort: reg.httpPort,
        clusterPort: reg.clusterPort,
        rack: reg.rack ?? null,
        timestamp: this.#now(),
      });
      const b = this.listBrokers().find((x) => x.nodeId === reg.nodeId);
      if (b === undefined) throw new MetaError("BROKER_NOT_AVAILABLE", "registration vanished");
      return b;
    });
  }

  fenceBroker(nodeId: number, fenced = true): Promise<void> {
    return this.#serial(async () => {
      await this.#append({ type: "BrokerFenced", nodeId, fenced });
    });
  }

  // ---- group state, materialised from __consumer_offsets (not metadata-log records) --------

  applyGroupOffsetCommit(offsets: readonly g.GroupOffset[]): void {
    g.applyGroupOffsetCommit(this.db, offsets);
  }

  applyGroupOffsetTombstone(groupId: string, topic: string, partition: number): void {
    g.applyGroupOffsetTombstone(this.db, groupId, topic, partition);
  }

  applyGroupMetadata(group: g.GroupInfo): void {
    g.applyGroupMetadata(this.db, group);
  }

  applyGroupDeleted(groupId: string): void {
    g.applyGroupDeleted(this.db, groupId);
  }

  fetchOffsets(groupId: string, topics?: readonly string[]): g.GroupOffset[] {
    return g.fetchOffsets(this.db, groupId, topics);
  }

  listGroups(): g.GroupInfo[] {
    return g.listGroups(this.db);
  }

  /** Waits for queued admin writes, then closes the log and the database. */
  async close(): Promise<void> {
    await this.#lock;
    this.log.close();
    this.#sqlite.close();
  }
}

function replicationRefusal(rf: number): string {
  return `Replication factor ${rf} is not supported yet: partitions are not replicated between ` +
    "brokers, so a topic has one replica (use replication factor 1 or -1).";
}
