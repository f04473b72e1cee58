// Consumer group state materialised from the internal __consumer_offsets topic. These are not
// metadata-log records: the group coordinator (or any replica of the offsets partition)
// applies what it reads from that topic, and SQLite is only the queryable view of it.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { MetaConn } from "./apply.ts";
import { MetaError } from "./errors.ts";
import * as s from "./schema.ts";

export interface GroupOffset {
  groupId: string;
  topic: string;
  partition: number;
  offset: number;
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string;
  commitTs: number;
  /** null = does not expire on its own. */
  expireTs: number | null;
}

export interface GroupInfo {
  groupId: string;
  protocolType: string;
  state: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  updatedAt: number;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new MetaError("INVALID_REQUEST", `group record: ${what}`);
}

const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max;
const isStr = (v: unknown, max: number): boolean => typeof v === "string" && v.length <= max;

function checkOffset(o: GroupOffset): void {
  check(isStr(o.groupId, 32767), "groupId must be a string");
  check(isStr(o.topic, 249) && o.topic.length > 0, "topic must be a topic name");
  check(isInt(o.partition, 0, 2147483647), "partition must be an int32 >= 0");
  // Any int64 (within the safe-integer range), as Kafka stores it: kafkajs's resetOffsets commits
  // -2 ("earliest") and -1 ("latest") and resolves them when it reads them back.
  check(isInt(o.offset, Number.MIN_SAFE_INTEGER), "offset must be an integer");
  check(isInt(o.leaderEpoch, -1, 2147483647), "leaderEpoch must be an int32 >= -1");
  check(isStr(o.metadata, 1 << 20), "metadata must be a string");
  check(isInt(o.commitTs, -1), "commitTs must be an integer");
  check(o.expireTs === null || isInt(o.expireTs, -1), "expireTs must be an integer or null");
}

/** Upserts committed offsets (one __consumer_offsets batch), atomically. */
export function applyGroupOffsetCommit(db: MetaConn, offsets: readonly GroupOffset[]): void {
  offsets.forEach(checkOffset);
  db.transaction((tx) => {
    for (const o of offsets) {
      const row = {
        groupId: o.groupId,
        topic: o.topic,
        partition: o.partition,
        offset: o.offset,
        leaderEpoch: o.leaderEpoch,
        metadata: o.metadata,
        commitTs: o.commitTs,
        expireTs: o.expireTs,
      };
      tx.insert(s.groupOffsets).values(row).onConflictDoUpdate({
        target: [s.groupOffsets.groupId, s.groupOffsets.topic, s.groupOffsets.partition],
        set: row,
      }).run();
    }
  });
}

/** An offset tombstone (null value in __consumer_offsets): the committed offset is gone. */
export function applyGroupOffsetTombstone(
  db: MetaConn,
  groupId: string,
  topic: string,
  partition: number,
): void {
  db.delete(s.groupOffsets).where(and(
    eq(s.groupOffsets.groupId, groupId),
    eq(s.groupOffsets.topic, topic),
    eq(s.groupOffsets.partition, partition),
  )).run();
}

/** Upserts a group's metadata record (state, generation, protocol, leader). */
export function applyGroupMetadata(db: MetaConn, g: GroupInfo): void {
  check(isStr(g.groupId, 32767), "groupId must be a string");
  check(isStr(g.protocolType, 255), "protocolType must be a string");
  check(isStr(g.state, 64), "state must be a string");
  check(isInt(g.generation, -1, 2147483647), "generation must be an int32");
  check(g.protocol === null || isStr(g.protocol, 255), "protocol must be a string or null");
  check(g.leader === null || isStr(g.leader, 32767), "leader must be a string or null");
  check(isInt(g.updatedAt, 0), "updatedAt must be an integer");
  db.insert(s.groups).values(g).onConflictDoUpdate({ target: s.groups.groupId, set: g }).run();
}

/** A group metadata tombstone: the group is gone (its offsets have their own tombstones). */
export function applyGroupDeleted(db: MetaConn, groupId: string): void {
  db.delete(s.groups).where(eq(s.groups.groupId, groupId)).run();
}

/** Committed offsets of a group, optionally only for some topics. */
export function fetchOffsets(
  db: MetaConn,
  groupId: string,
  topics?: readonly string[],
): GroupOffset[] {
  const byGroup = eq(s.groupOffsets.groupId, groupId);
  const where = topics === undefined
    ? byGroup
    : and(byGroup, inArray(s.groupOffsets.topic, [...topics]));
  return db.select().from(s.groupOffsets).where(where)
    .orderBy(asc(s.groupOffsets.topic), asc(s.groupOffsets.partition)).all();
}

export function listGroups(db: MetaConn): GroupInfo[] {
  return db.select().from(s.groups).orderBy(asc(s.groups.groupId)).all();
}
