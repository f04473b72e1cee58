// Snapshots of the metadata tables for the Raft log: the materialised state (brokers, topics,
// partitions) at the applied index, as JSON. Group tables are not included: they are
// materialised from __consumer_offsets, not from the metadata log. A snapshot arrives from the
// network, so restore validates every row before it replaces anything.
import { brokersTableChanged, type MetaConn } from "./apply.ts";
import { MetaError } from "./errors.ts";
import { reassignment as parseReassignment, type ReassignmentState } from "./records.ts";
import * as s from "./schema.ts";
import { parseUserImage, restoreUsers, snapshotUsers, type UserImageRow } from "./users.ts";
import { listAclBindings, parseAclImage, restoreAcls } from "./acls.ts";
import type { AclBinding } from "../acl/authorizer.ts";

const SNAPSHOT_VERSION = 1;
const MAX_INT32 = 2147483647;

interface TablesImage {
  v: number;
  brokers: (typeof s.brokers.$inferSelect)[];
  topics: (typeof s.topics.$inferSelect)[];
  partitions: (typeof s.partitions.$inferSelect)[];
  /** SCRAM credentials (absent in images from before users existed: none). */
  users?: UserImageRow[];
  /** ACL bindings (absent in images from before ACLs existed: none). */
  acls?: AclBinding[];
}

/** The metadata tables as a JSON image (deterministic row order). */
export function snapshotTables(db: MetaConn): string {
  const image: TablesImage = {
    v: SNAPSHOT_VERSION,
    brokers: db.select().from(s.brokers).orderBy(s.brokers.nodeId).all(),
    topics: db.select().from(s.topics).orderBy(s.topics.topicId).all(),
    partitions: db.select().from(s.partitions).orderBy(s.partitions.topicId, s.partitions.partition)
      .all(),
    users: snapshotUsers(db),
    acls: listAclBindings(db),
  };
  return JSON.stringify(image);
}

const bad = (why: string) => new MetaError("INVALID_REQUEST", `metadata snapshot: ${why}`);

function int(v: unknown, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    throw bad(`${what} is not an integer in ${min}..${max}`);
  }
  return v;
}
function str(v: unknown, what: string, maxLen = 4096): string {
  if (typeof v !== "string" || v.length > maxLen) throw bad(`${what} is not a string`);
  return v;
}
function bool(v: unknown, what: string): boolean {
  if (typeof v !== "boolean") throw bad(`${what} is not a boolean`);
  return v;
}
function ints(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.length > 32767) throw bad(`${what} is not a list`);
  return v.map((x, i) => int(x, `${what}[${i}]`, -1, MAX_INT32));
}
function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw bad(`${what} is not an object`);
  }
  return v as Record<string, unknown>;
}
function list(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw bad(`${what} is not a list`);
  return v;
}

function reassignmentOf(v: unknown): ReassignmentState | null {
  try {
    return parseReassignment(v);
  } catch (e) {
    throw bad(`reassignment: ${(e as Error).message}`);
  }
}

/** Parses and validates an image; throws MetaError when malformed. "" is the empty state. */
export function parseTablesImage(data: string): TablesImage {
  if (data === "") return { v: SNAPSHOT_VERSION, brokers: [], topics: [], partitions: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    throw bad("not JSON");
  }
  const o = obj(raw, "image");
  if (o.v !== SNAPSHOT_VERSION) throw bad(`unsupported version ${String(o.v)}`);
  const brokers = list(o.brokers, "brokers").map((x, i) => {
    const b = obj(x, `brokers[${i}]`);
    return {
      nodeId: int(b.nodeId, "nodeId", 0, MAX_INT32),
      host: str(b.host, "host", 255),
      kafkaPort: int(b.kafkaPort, "kafkaPort", 0, 65535),
      httpPort: int(b.httpPort, "httpPort", 0, 65535),
      clusterPort: int(b.clusterPort, "clusterPort", 0, 65535),
      rack: b.rack === null ? null : str(b.rack, "rack", 255),
      fenced: bool(b.fenced, "fenced"),
      epoch: int(b.epoch, "epoch"),
      registeredAt: int(b.registeredAt, "registeredAt"),
    };
  });
  const topics = list(o.topics, "topics").map((x, i) => {
    const t = obj(x, `topics[${i}]`);
    const configs: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj(t.configs, "configs"))) {
      configs[str(k, "config name", 255)] = str(v, `config ${k}`);
    }
    return {
      topicId: str(t.topicId, "topicId", 64),
      name: str(t.name, "name", 249),
      internal: bool(t.internal, "internal"),
      configs,
      createdAt: int(t.createdAt, "createdAt"),
    };
  });
  const ids = new Set(topics.map((t) => t.topicId));
  const partitions = list(o.partitions, "partitions").map((x, i) => {
    const p = obj(x, `partitions[${i}]`);
    const topicId = str(p.topicId, "topicId", 64);
    if (!ids.has(topicId)) throw bad(`partition of unknown topic ${topicId}`);
    return {
      topicId,
      partition: int(p.partition, "partition", 0, MAX_INT32),
      leader: int(p.leader, "leader", -1, MAX_INT32),
      leaderEpoch: int(p.leaderEpoch, "leaderEpoch", 0, MAX_INT32),
      partitionEpoch: int(p.partitionEpoch, "partitionEpoch", 0, MAX_INT32),
      replicas: ints(p.replicas, "replicas"),
      isr: ints(p.isr, "isr"),
      // Absent in images taken before reassignments existed.
      reassignment: p.reassignment === undefined ? null : reassignmentOf(p.reassignment),
    };
  });
  return {
    v: SNAPSHOT_VERSION,
    brokers,
    topics,
    partitions,
    users: parseUserImage(o.users),
    acls: parseAclImage(o.acls),
  };
}

/**
 * Replaces the metadata tables by an image and sets the applied index, in one transaction, so a
 * crash leaves either the old state or the new one. Throws MetaError on a malformed image
 * (nothing is changed then).
 */
export function restoreTables(db: MetaConn, data: string, index: number, term: number): void {
  const image = parseTablesImage(data);
  brokersTableChanged();
  db.transaction((tx) => {
    tx.delete(s.partitions).run();
    tx.delete(s.topics).run();
    tx.delete(s.brokers).run();
    for (const b of image.brokers) tx.insert(s.brokers).values(b).run();
    for (const t of image.topics) tx.insert(s.topics).values(t).run();
    for (const p of image.partitions) tx.insert(s.partitions).values(p).run();
    restoreUsers(tx, image.users ?? []);
    restoreAcls(tx, image.acls ?? []);
    tx.insert(s.metaState).values({ id: 1, appliedIndex: index, appliedTerm: term })
      .onConflictDoUpdate({
        target: s.metaState.id,
        set: { appliedIndex: index, appliedTerm: term },
      }).run();
  });
}
