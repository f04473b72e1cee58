// The metadata state machine: applies one committed log record to the SQLite tables and
// records the applied index, atomically. Deterministic: the same records in the same order
// give the same tables on every broker (no clocks, no randomness: both live in the records).
// A record that does not fit the current state throws MetaError and changes nothing.
import { and, eq, sql } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { MetaError } from "./errors.ts";
import type { MetadataRecord, PartitionAssignment } from "./records.ts";
import { changedPartition, checkReplicas } from "./partition-rules.ts";
import * as s from "./schema.ts";
import { topicNamesCollide, unifyCollisionChars, validateTopicName } from "./topic-names.ts";
import { validateTopicConfig, validateTopicConfigs } from "./topic-configs.ts";
import { applyUserRecord } from "./users.ts";
import { applyAclRecord } from "./acls.ts";

/** A drizzle handle on the metadata db, or a transaction on it. */
export type MetaConn = BaseSQLiteDatabase<"sync", void, typeof s>;

let brokersVersion = 0;

/**
 * Bumped whenever the brokers table may have changed (a broker record applied, a snapshot
 * restored), so readers can cache it: the controller's tick, every heartbeat and every
 * follower fetch ask who is fenced, and a SQLite select each time was most of an idle
 * cluster's CPU. One counter for every database in the process: a bump only costs a re-read.
 */
export function brokersTableVersion(): number {
  return brokersVersion;
}

export function brokersTableChanged(): void {
  brokersVersion++;
}

export function appliedIndex(db: MetaConn): { index: number; term: number } {
  const row = db.select().from(s.metaState).where(eq(s.metaState.id, 1)).get();
  return row === undefined
    ? { index: 0, term: 0 }
    : { index: row.appliedIndex, term: row.appliedTerm };
}

function topicById(db: MetaConn, topicId: string) {
  const t = db.select().from(s.topics).where(eq(s.topics.topicId, topicId)).get();
  if (t === undefined) {
    throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Unknown topic id ${topicId}`);
  }
  return t;
}

function registeredBrokers(db: MetaConn): Set<number> {
  return new Set(db.select({ id: s.brokers.nodeId }).from(s.brokers).all().map((b) => b.id));
}

function fencedBrokers(db: MetaConn): Set<number> {
  return new Set(
    db.select({ id: s.brokers.nodeId }).from(s.brokers).where(eq(s.brokers.fenced, true)).all()
      .map((b) => b.id),
  );
}

function insertPartitions(
  db: MetaConn,
  topicId: string,
  name: string,
  from: number,
  ps: PartitionAssignment[],
) {
  const known = registeredBrokers(db);
  ps.forEach((p, i) => {
    if (p.partition !== from + i) {
      throw new MetaError(
        "INVALID_PARTITIONS",
        `${name}: partitions must be numbered from ${from} on`,
      );
    }
    checkReplicas(known, p.replicas, p.isr, p.leader, `${name}-${p.partition}`);
  });
  // One prepared statement run per partition: building a drizzle query per row (or a huge
  // multi-row one) costs ~8x more on a 10000-partition topic.
  const ph = sql.placeholder;
  const insert = db.insert(s.partitions).values({
    topicId,
    partition: ph("partition"),
    leader: ph("leader"),
    leaderEpoch: ph("leaderEpoch"),
    partitionEpoch: 0,
    replicas: ph("replicas"),
    isr: ph("isr"),
  }).prepare();
  for (const p of ps) {
    insert.run({
      partition: p.partition,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicas: p.replicas, // the json column encodes placeholder values too
      isr: p.isr,
    });
  }
}

function applyOne(db: MetaConn, r: MetadataRecord, index: number): void {
  switch (r.type) {
    case "NoOp":
    case "ProducerIdsAllocated": // the record's index is the block: no table changes
      return;
    case "UserScramCredentialSet":
    case "UserScramCredentialDeleted":
      applyUserRecord(db, r);
      return;
    case "AclCreated":
    case "AclDeleted":
      applyAclRecord(db, r);
      return;
    case "BrokerRegistered": {
      brokersTableChanged();
      // A broker registering again (a restart) replaces its row.
      const row = {
        host: r.host,
        kafkaPort: r.kafkaPort,
        httpPort: r.httpPort,
        clusterPort: r.clusterPort,
        rack: r.rack,
        fenced: r.fenced ?? false,
        epoch: index,
        registeredAt: r.timestamp,
      };
      db.insert(s.brokers).values({ nodeId: r.nodeId, ...row })
        .onConflictDoUpdate({ target: s.brokers.nodeId, set: row }).run();
      return;
    }
    case "BrokerFenced": {
      brokersTableChanged();
      const res = db.update(s.brokers).set({ fenced: r.fenced }).where(
        eq(s.brokers.nodeId, r.nodeId),
      )
        .returning({ id: s.brokers.nodeId }).all();
      if (res.length === 0) {
        throw new MetaError("BROKER_NOT_AVAILABLE", `Broker ${r.nodeId} is not registered`);
      }
      return;
    }
    case "TopicCreated": {
      validateTopicName(r.name);
      if (db.select().from(s.topics).where(eq(s.topics.name, r.name)).get() !== undefined) {
        throw new MetaError("TOPIC_ALREADY_EXISTS", `Topic '${r.name}' already exists.`);
      }
      const unified = unifyCollisionChars(r.name);
      const clash = db.select({ name: s.topics.name }).from(s.topics)
        .where(sql`replace(${s.topics.name}, '.', '_') = ${unified}`).get();
      if (clash !== undefined && topicNamesCollide(r.name, clash.name)) {
        throw new MetaError(
          "INVALID_TOPIC_EXCEPTION",
          `Topic '${r.name}' collides with existing topic: ${clash.name}`,
        );
      }
      if (db.select().from(s.topics).where(eq(s.topics.topicId, r.topicId)).get() !== undefined) {
        throw new MetaError("INVALID_REQUEST", `Topic id ${r.topicId} is already in use`);
      }
      db.insert(s.topics).values({
        topicId: r.topicId,
        name: r.name,
        internal: r.internal,
        configs: validateTopicConfigs(r.configs),
        createdAt: r.timestamp,
      }).run();
      insertPartitions(db, r.topicId, r.name, 0, r.partitions);
      return;
    }
    case "TopicDeleted": {
      const t = topicById(db, r.topicId);
      if (t.name !== r.name) {
        throw new MetaError("INVALID_REQUEST", `Topic id ${r.topicId} is not named ${r.name}`);
      }
      db.delete(s.partitions).where(eq(s.partitions.topicId, r.topicId)).run();
      db.delete(s.topics).where(eq(s.topics.topicId, r.topicId)).run();
      return;
    }
    case "PartitionsCreated": {
      const t = topicById(db, r.topicId);
      const count = db.select({ n: sql<number>`count(*)` }).from(s.partitions)
        .where(eq(s.partitions.topicId, r.topicId)).get()?.n ?? 0;
      insertPartitions(db, r.topicId, t.name, count, r.partitions);
      return;
    }
    case "PartitionChanged": {
      const t = topicById(db, r.topicId);
      const where = and(
        eq(s.partitions.topicId, r.topicId),
        eq(s.partitions.partition, r.partition),
      );
      const p = db.select().from(s.partitions).where(where).get();
      if (p === undefined) {
        throw new MetaError(
          "UNKNOWN_TOPIC_OR_PARTITION",
          `Unknown partition ${t.name}-${r.partition}`,
        );
      }
      let fenced: Set<number> | undefined;
      const next = changedPartition(
        p,
        r,
        registeredBrokers(db),
        { has: (id) => (fenced ??= fencedBrokers(db)).has(id) },
        `${t.name}-${r.partition}`,
      );
      db.update(s.partitions).set(next).where(where).run();
      return;
    }
    case "TopicConfigChanged": {
      const t = topicById(db, r.topicId);
      const configs = { ...t.configs };
      for (const k of r.delete) delete configs[k];
      for (const [k, v] of Object.entries(r.set)) configs[k] = validateTopicConfig(k, v);
      db.update(s.topics).set({ configs }).where(eq(s.topics.topicId, r.topicId)).run();
      return;
    }
  }
}

/**
 * Applies the record committed at `index` (and `term`) unless it is already applied. Returns
 * false for an already-applied index (a replay after restart). Atomic: a savepoint when the
 * caller is already in a transaction.
 */
export function applyRecord(
  db: MetaConn,
  record: MetadataRecord,
  index: number,
  term = 0,
): boolean {
  if (!Number.isSafeInteger(index) || index < 1) throw new Error(`bad log index ${index}`);
  return db.transaction((tx) => {
    const cur = appliedIndex(tx);
    if (index <= cur.index) return false;
    applyOne(tx, record, index);
    tx.insert(s.metaState).values({ id: 1, appliedIndex: index, appliedTerm: term })
      .onConflictDoUpdate({
        target: s.metaState.id,
        set: { appliedIndex: index, appliedTerm: term },
      })
      .run();
    return true;
  });
}

/**
 * For a replicated log: a committed record that does not fit the state (the proposer raced
 * another change) still consumes its index on every broker alike. Applies it, or, on
 * MetaError, advances the applied index without changing anything and returns the error.
 */
export function applyOrSkip(
  db: MetaConn,
  record: MetadataRecord,
  index: number,
  term = 0,
): MetaError | undefined {
  try {
    applyRecord(db, record, index, term);
    return undefined;
  } catch (e) {
    if (!(e instanceof MetaError)) throw e;
    applyRecord(db, { type: "NoOp" }, index, term);
    return e;
  }
}
