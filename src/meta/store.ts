// MetadataStore: the facade the broker uses. Admin writes are validated here (under one lock,
// so validation sees the state the record will be applied to), then appended to the metadata
// log, which applies them to SQLite before `append` resolves. Reads are plain drizzle queries.
import type { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { IdentityError, MetaError } from "./errors.ts";
import { manualAssignments } from "./assignments.ts";
import { ensureIdentity } from "./identity.ts";
import type { MetaDb } from "./migrate.ts";
import { openMetaDb } from "./migrate.ts";
import { LocalMetadataLog, type MetadataLog } from "./log.ts";
import { brokersTableVersion } from "./apply.ts";
import type { PartitionRow } from "./partition-rules.ts";
import type { MetadataRecord, PartitionAssignment } from "./records.ts";
import * as s from "./schema.ts";
import * as g from "./groups.ts";
import * as users from "./users.ts";
import * as acls from "./acls.ts";
import {
  type AclBinding,
  type AclFilter,
  filterMatches,
  validateBinding,
} from "../acl/authorizer.ts";
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
  /**
   * Replication factor of a topic created with -1 (Kafka's default.replication.factor).
   * Default (undefined): automatic, min(3, live brokers).
   */
  defaultReplicationFactor?: number;
  /** Brokers gossip reports down; placement leaves them out (fencing is not built yet). */
  isDown?: (nodeId: number) => boolean;
  /** Upper bound on partitions per topic, against hostile requests. Default 10000. */
  maxPartitionsPerTopic?: number;
  /** The metadata log; default LocalMetadataLog on the same database. */
  log?: (db: MetaDb) => MetadataLog;
  now?: () => number;
}

/** A partition's row (its leader, epochs, replicas, ISR and any reassignment) with its index. */
export interface PartitionInfo extends PartitionRow {
  partition: number;
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

/** Kafka's largest replication factor (an int16). */
const MAX_RF = 32767;
/** The automatic default replication factor: this many, or every live broker when fewer. */
export const AUTO_REPLICATION_FACTOR = 3;

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
  readonly #defaultRf: number | undefined;
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
    this.#defaultRf = opts.defaultReplicationFactor;
    this.#isDown = opts.isDown ?? (() => false);
    this.#maxPartitions = opts.maxPartitionsPerTopic ?? 10_000;
    if (!positiveInt(this.#numPartitions, 1, this.#maxPartitions)) {
      throw new MetaError("INVALID_PARTITIONS", `num.partitions must be 1..${this.#maxPartitions}`);
    }
    if (this.#defaultRf !== undefined && !positiveInt(this.#defaultRf, 1, MAX_RF)) {
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

  #partitionsOf(topicId: string, only?: readonly number[]): PartitionInfo[] {
    const ofTopic = eq(s.partitions.topicId, topicId);
    return this.db.select().from(s.partitions)
      .where(only === undefined ? ofTopic : and(ofTopic, inArray(s.partitions.partition, only)))
      .orderBy(asc(s.partitions.partition)).all()
      .map(({ topicId: _, reassignment, ...p }) => reassignment ? { ...p, reassignment } : p);
  }

  getTopic(name: string): TopicInfo | undefined {
    const t = this.db.select().from(s.topics).where(eq(s.topics.name, name)).get();
    return t === undefined ? undefined : { ...t, partitions: this.#partitionsOf(t.topicId) };
  }

  /**
   * `only`: just those partitions (and partition 0, which tells the replication factor), so one
   * partition's change does not read a topic of thousands.
   */
  getTopicById(topicId: string, only?: ReadonlySet<number>): TopicInfo | undefined {
    const t = this.db.select().from(s.topics).where(eq(s.topics.topicId, topicId)).get();
    const which = only === undefined ? undefined : [...new Set([0, ...only])];
    return t === undefined ? undefined : { ...t, partitions: this.#partitionsOf(t.topicId, which) };
  }

  listTopics(): TopicInfo[] {
    const byTopic = new Map<string, PartitionInfo[]>();
    for (
      const p of this.db.select().from(s.partitions).orderBy(asc(s.partitions.partition)).all()
    ) {
      const { topicId, reassignment, ...rest } = p;
      let list = byTopic.get(topicId);
      if (list === undefined) byTopic.set(topicId, list = []);
      list.push(reassignment ? { ...rest, reassignment } : rest);
    }
    return this.db.select().from(s.topics).orderBy(asc(s.topics.name)).all()
      .map((t) => ({ ...t, partitions: byTopic.get(t.topicId) ?? [] }));
  }

  #brokers: { version: number; list: readonly BrokerInfo[] } | undefined;

  /** Every registered broker, by node id (cached until a broker record is applied). */
  listBrokers(): BrokerInfo[] {
    return this.#brokerRows().map((b) => ({ ...b }));
  }

  /** Whether broker `id` is registered and unfenced: a follower fetch asks, so no copies. */
  isUnfenced(id: number): boolean {
    return this.#brokerRows().some((b) => b.nodeId === id && !b.fenced);
  }

  #brokerRows(): readonly BrokerInfo[] {
    const version = brokersTableVersion();
    const c = this.#brokers;
    if (c !== undefined && c.version === version) return c.list;
    const list = this.db.select().from(s.brokers).orderBy(asc(s.brokers.nodeId)).all();
    // Inside a transaction the rows may yet be rolled back: read, but do not keep.
    if (!this.#sqlite.inTransaction) this.#brokers = { version, list };
    return list;
  }

  #topicOrThrow(name: string): TopicInfo {
    const t = this.getTopic(name);
    if (t === undefined) {
      throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${name}' does not exist.`);
    }
    return t;
  }

  /**
   * Effective typed config of a topic (override ← --topic-default ← built-in default, which for
   * min.insync.replicas depends on the topic's replication factor).
   */
  topicConfig(name: string): ResolvedTopicConfig {
    return this.topicConfigOf(this.#topicOrThrow(name));
  }

  /** As topicConfig, of a topic already read (its partition 0 at least). */
  topicConfigOf(t: TopicInfo): ResolvedTopicConfig {
    return resolveTopicConfig(t.configs, this.topicDefaults, replicationFactorOf(t));
  }

  /** DescribeConfigs view of a topic: every config with value, source and synonyms. */
  describeTopicConfigs(name: string): DescribedTopicConfig[] {
    return this.describeTopicConfigsOf(this.#topicOrThrow(name));
  }

  /** As describeTopicConfigs, of a topic already read (its partition 0 at least). */
  describeTopicConfigsOf(t: TopicInfo): DescribedTopicConfig[] {
    return describeTopicConfig(t.configs, this.topicDefaults, t.internal, replicationFactorOf(t));
  }

  /** What replication factor -1 means now: the configured default, else the automatic one. */
  defaultReplicationFactor(): number {
    return this.#defaultRf ?? this.automaticReplicationFactor();
  }

  /** The automatic default replication factor: min(3, live brokers), at least 1. */
  automaticReplicationFactor(): number {
    return Math.max(1, Math.min(AUTO_REPLICATION_FACTOR, this.#liveBrokers().length));
  }

  // ---- admin writes (through the metadata log) ---------------------------------------------

  /** Brokers a manual assignment may name: registered ones, and which of them are live. */
  #assignable(): { registered: ReadonlySet<number>; live: ReadonlySet<number> } {
    return {
      registered: new Set(this.listBrokers().map((b) => b.nodeId)),
      live: new Set(this.#liveBrokers()),
    };
  }

  #liveBrokers(): number[] {
    return this.listBrokers().filter((b) => !b.fenced).map((b) => b.nodeId)
      .filter((id) => !this.#isDown(id));
  }

  /**
   * Placement of partitions `from`..`from + count - 1` with `rf` replicas each over the live
   * brokers, as Kafka places them (rack-unaware): partition p's first replica (its leader) is
   * broker (p + start) mod n, and its followers follow at a shift of 1 + (shift + j) mod (n - 1),
   * the shift growing by one every n partitions. So no broker holds two replicas of a partition,
   * each broker leads ~count/n partitions and holds ~count·rf/n replicas, and the followers of one
   * broker's partitions are spread over the others. A new topic starts at the number of
   * partitions placed so far (leaders of small topics rotate over the brokers); new partitions of
   * a topic continue its partition 0's pattern when that still fits the live brokers.
   */
  #assign(
    from: number,
    count: number,
    rf: number,
    existing?: PartitionInfo,
  ): PartitionAssignment[] {
    const live = this.#liveBrokers();
    const n = live.length;
    if (rf > n) {
      throw new MetaError(
        "INVALID_REPLICATION_FACTOR",
        `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} ` +
          `cannot be reached because only ${n} broker(s) are registered and live.`,
      );
    }
    const total = this.db.select({ n: sql<number>`count(*)` }).from(s.partitions).get()?.n ?? 0;
    let start = total % n;
    let shift = Math.floor(total / n) % Math.max(1, n - 1);
    const first = existing === undefined ? -1 : live.indexOf(existing.replicas[0]);
    if (first >= 0) {
      // Partition 0 was placed at start = first; its second replica tells the shift it had.
      start = first;
      const second = existing!.replicas.length > 1 ? live.indexOf(existing!.replicas[1]) : -1;
      if (second >= 0) shift = ((second - first + n) % n) - 1;
    }
    const out: PartitionAssignment[] = [];
    for (let p = from; p < from + count; p++) {
      const firstIndex = (p + start) % n;
      const rowShift = shift + Math.floor(p / n);
      const replicas = [live[firstIndex]];
      for (let j = 0; j < rf - 1; j++) {
        replicas.push(live[(firstIndex + 1 + ((rowShift + j) % (n - 1))) % n]);
      }
      out.push({ partition: p, replicas, leader: replicas[0], leaderEpoch: 0, isr: [...replicas] });
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
      const rf = replicationFactor === -1 ? this.defaultReplicationFactor() : replicationFactor;
      if (!Number.isInteger(rf) || rf < 1 || rf > MAX_RF) {
        throw new MetaError(
          "INVALID_REPLICATION_FACTOR",
          "Replication factor must be larger than 0, or -1 to use the default value.",
        );
      }
      const live = this.#liveBrokers().length;
      if (!manual && replicationFactor === -1 && this.#defaultRf !== undefined && rf > live) {
        throw new MetaError(
          "INVALID_REPLICATION_FACTOR",
          `The default replication factor (default.replication.factor) is ${rf} but only ${live} ` +
            "broker(s) are registered and live.",
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
          ? manualAssignments(manual, 0, this.#assignable())
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
      // New partitions keep the topic's replication factor.
      const rf = replicationFactorOf(t) ?? this.defaultReplicationFactor();
      const manual = opts.assignments;
      if (manual && manual.length !== newTotal - cur) {
        throw new MetaError(
          "INVALID_REPLICA_ASSIGNMENT",
          `Increasing the number of partitions by ${newTotal - cur} but ${manual.length} ` +
            "assignments provided.",
        );
      }
      const added = manual
        ? manualAssignments(manual, cur, this.#assignable(), rf)
        : this.#assign(cur, newTotal - cur, rf, t.partitions[0]);
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

  // ---- users (SCRAM credentials; users.ts) -------------------------------------------------

  /** A user's stored credential for a mechanism (what SCRAM and password logins check). */
  scramCredential(
    user: string,
    mechanism: users.UserMechanism,
  ): users.StoredScramCredential | undefined {
    return users.readScramCredential(this.db, user, mechanism);
  }

  listScramCredentials(): users.UserCredentialInfo[] {
    return users.listScramCredentials(this.db);
  }

  /** Creates or replaces `user`'s credential for its mechanism (AlterUserScramCredentials). */
  setScramCredential(user: string, cred: users.StoredScramCredential): Promise<void> {
    return this.#serial(async () => {
      const why = users.userNameProblem(user);
      if (why !== undefined) throw new MetaError("UNACCEPTABLE_CREDENTIAL", why);
      if (
        !Number.isInteger(cred.iterations) || cred.iterations < users.MIN_SCRAM_ITERATIONS ||
        cred.iterations > users.MAX_SCRAM_ITERATIONS
      ) {
        throw new MetaError(
          "UNACCEPTABLE_CREDENTIAL",
          `Iterations must be ${users.MIN_SCRAM_ITERATIONS}..${users.MAX_SCRAM_ITERATIONS}`,
        );
      }
      await this.#append(users.credentialRecord(user, cred));
    });
  }

  deleteScramCredential(user: string, mechanism: users.UserMechanism): Promise<void> {
    return this.#serial(async () => {
      if (users.readScramCredential(this.db, user, mechanism) === undefined) {
        throw new MetaError(
          "RESOURCE_NOT_FOUND",
          `Attempt to delete a user credential that does not exist: ${mechanism} of ${user}`,
        );
      }
      await this.#append({ type: "UserScramCredentialDeleted", user, mechanism });
    });
  }

  // ---- ACLs (acls.ts; the decision is src/acl/authorizer.ts) ------------------------------

  aclBindings(): AclBinding[] {
    return acls.listAclBindings(this.db);
  }

  /** Changes whenever the ACLs may have changed (an in-memory Authorizer reloads then). */
  aclGeneration(): number {
    return acls.aclGeneration();
  }

  /** Creates bindings (CreateAcls); existing ones are left as they are, as in Kafka. */
  createAcls(bindings: readonly AclBinding[]): Promise<void> {
    return this.#serial(async () => {
      for (const b of bindings) {
        const why = validateBinding(b);
        if (why !== null) throw new MetaError("INVALID_REQUEST", why);
      }
      for (const b of bindings) {
        if (!acls.aclExists(this.db, b)) await this.#append({ type: "AclCreated", ...b });
      }
    });
  }

  /**
   * Deletes the bindings each filter matches (DeleteAcls); returns them per filter. A binding
   * matched by two filters is reported by both and deleted once.
   */
  deleteAcls(filters: readonly AclFilter[]): Promise<AclBinding[][]> {
    return this.#serial(async () => {
      const all = acls.listAclBindings(this.db);
      const matched = filters.map((f) => all.filter((b) => filterMatches(f, b)));
      const gone = new Set<AclBinding>();
      for (const b of matched.flat()) {
        if (gone.has(b)) continue;
        gone.add(b);
        await this.#append({ type: "AclDeleted", ...b });
      }
      return matched;
    });
  }

  /** Waits for queued admin writes, then closes the log and the database. */
  async close(): Promise<void> {
    await this.#lock;
    this.log.close();
    this.#sqlite.close();
  }
}

/** A topic's replication factor: the replica count of its partition 0 (none: undefined). */
function replicationFactorOf(t: TopicInfo): number | undefined {
  return t.partitions[0]?.replicas.length;
}
