/**
 * Records of the internal __consumer_offsets topic in Kafka's own format (apache/kafka
 * OffsetCommitKey/Value, GroupMetadataKey/Value): the key starts with an int16 record type
 * (0 or 1 = offset commit, 2 = group metadata), the value with an int16 version; a null value
 * is a tombstone. We write offset values v3 (v1 when an explicit expiry is set) and group values
 * v3, all non-flexible, and read values v0-v3.
 */
import {
  type Decoded,
  decodeSafely,
  readBytes,
  readCount,
  Reader,
  readNullableString,
  readString,
  writeBytes,
  writeNullableString,
  Writer,
  writeString,
} from "./bytes.ts";

export const OFFSETS_TOPIC = "__consumer_offsets";
export const OFFSET_COMMIT_KEY_VERSION = 1;
export const GROUP_METADATA_KEY_VERSION = 2;
export const OFFSET_COMMIT_VALUE_VERSION = 3;
export const GROUP_METADATA_VALUE_VERSION = 3;

export interface OffsetCommitValue {
  offset: number;
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** Explicit expiry (OffsetCommit v2-4 RetentionTimeMs); only value v1 can carry it. */
  expireTimestamp: number | null;
}

export interface GroupMemberRecord {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  /** The member's metadata for the group's selected protocol. */
  subscription: Uint8Array;
  assignment: Uint8Array;
}

export interface GroupMetadataValue {
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** -1 when unknown. */
  currentStateTimestamp: number;
  members: GroupMemberRecord[];
}

export type OffsetsRecord =
  | {
    type: "offset";
    group: string;
    topic: string;
    partition: number;
    value: OffsetCommitValue | null;
  }
  | { type: "group"; group: string; value: GroupMetadataValue | null }
  /** A record type this broker does not use (e.g. Kafka's new-protocol records); loaders skip it. */
  | { type: "other"; keyVersion: number };

export interface EncodedRecord {
  key: Uint8Array;
  /** null = tombstone. */
  value: Uint8Array | null;
}

export function encodeOffsetsRecord(rec: OffsetsRecord): EncodedRecord {
  if (rec.type === "offset") {
    const k = new Writer(64);
    k.int16(OFFSET_COMMIT_KEY_VERSION);
    writeString(k, rec.group);
    writeString(k, rec.topic);
    k.int32(rec.partition);
    return { key: k.bytes(), value: rec.value === null ? null : encodeOffsetValue(rec.value) };
  }
  if (rec.type === "group") {
    const k = new Writer(64);
    k.int16(GROUP_METADATA_KEY_VERSION);
    writeString(k, rec.group);
    return { key: k.bytes(), value: rec.value === null ? null : encodeGroupValue(rec.value) };
  }
  throw new RangeError(`cannot encode a record of key version ${rec.keyVersion}`);
}

function encodeOffsetValue(v: OffsetCommitValue): Uint8Array {
  const w = new Writer(64);
  if (v.expireTimestamp !== null) {
    w.int16(1);
    w.int64(v.offset);
    writeString(w, v.metadata);
    w.int64(v.commitTimestamp);
    w.int64(v.expireTimestamp);
  } else {
    w.int16(OFFSET_COMMIT_VALUE_VERSION);
    w.int64(v.offset);
    w.int32(v.leaderEpoch);
    writeString(w, v.metadata);
    w.int64(v.commitTimestamp);
  }
  return w.bytes();
}

function encodeGroupValue(v: GroupMetadataValue): Uint8Array {
  const w = new Writer(256);
  w.int16(GROUP_METADATA_VALUE_VERSION);
  writeString(w, v.protocolType);
  w.int32(v.generation);
  writeNullableString(w, v.protocol);
  writeNullableString(w, v.leader);
  w.int64(v.currentStateTimestamp);
  w.int32(v.members.length);
  for (const m of v.members) {
    writeString(w, m.memberId);
    writeNullableString(w, m.groupInstanceId);
    writeString(w, m.clientId);
    writeString(w, m.clientHost);
    w.int32(m.rebalanceTimeoutMs);
    w.int32(m.sessionTimeoutMs);
    writeBytes(w, m.subscription);
    writeBytes(w, m.assignment);
  }
  return w.bytes();
}

/** Decodes one record of the topic; never throws on hostile bytes. */
export function decodeOffsetsRecord(
  key: Uint8Array,
  value: Uint8Array | null,
): Decoded<OffsetsRecord> {
  return decodeSafely((): OffsetsRecord => {
    const r = new Reader(key);
    const keyVersion = r.int16();
    if (keyVersion === 0 || keyVersion === 1) {
      const group = readString(r, "group");
      const topic = readString(r, "topic");
      const partition = r.int32();
      return {
        type: "offset",
        group,
        topic,
        partition,
        value: value === null ? null : decodeOffsetValue(value),
      };
    }
    if (keyVersion === 2) {
      const group = readString(r, "group");
      return { type: "group", group, value: value === null ? null : decodeGroupValue(value) };
    }
    if (keyVersion < 0) r.fail(`invalid key version ${keyVersion}`);
    return { type: "other", keyVersion };
  });
}

function decodeOffsetValue(bytes: Uint8Array): OffsetCommitValue {
  const r = new Reader(bytes);
  const v = r.int16();
  if (v < 0 || v > 3) r.fail(`unsupported offset commit value version ${v}`);
  const offset = r.int64();
  const leaderEpoch = v >= 3 ? r.int32() : -1;
  const metadata = readString(r, "metadata");
  const commitTimestamp = r.int64();
  const expireTimestamp = v === 1 ? r.int64() : null;
  return { offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp };
}

function decodeGroupValue(bytes: Uint8Array): GroupMetadataValue {
  const r = new Reader(bytes);
  const v = r.int16();
  if (v < 0 || v > 3) r.fail(`unsupported group metadata value version ${v}`);
  const protocolType = readString(r, "protocolType");
  const generation = r.int32();
  const protocol = readNullableString(r);
  const leader = readNullableString(r);
  const currentStateTimestamp = v >= 2 ? r.int64() : -1;
  const n = readCount(r, 18, "member");
  const members: GroupMemberRecord[] = [];
  for (let i = 0; i < n; i++) {
    const memberId = readString(r, "memberId");
    const groupInstanceId = v >= 3 ? readNullableString(r) : null;
    const clientId = readString(r, "clientId");
    const clientHost = readString(r, "clientHost");
    const rebalanceTimeoutMs = v >= 1 ? r.int32() : -1;
    const sessionTimeoutMs = r.int32();
    const subscription = readBytes(r, "subscription");
    const assignment = readBytes(r, "assignment");
    members.push({
      memberId,
      groupInstanceId,
      clientId,
      clientHost,
      rebalanceTimeoutMs: rebalanceTimeoutMs < 0 ? sessionTimeoutMs : rebalanceTimeoutMs,
      sessionTimeoutMs,
      subscription,
      assignment,
    });
  }
  return { protocolType, generation, protocol, leader, currentStateTimestamp, members };
}

/** Java's String.hashCode over UTF-16 code units, as Kafka uses for partitionFor(groupId). */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** The __consumer_offsets partition that holds a group (Kafka: Utils.abs(hashCode) % count). */
export function offsetsPartitionFor(groupId: string, partitionCount: number): number {
  if (!Number.isInteger(partitionCount) || partitionCount <= 0) {
    throw new RangeError(`invalid partition count ${partitionCount}`);
  }
  const h = javaStringHash(groupId);
  // Kafka's Utils.abs maps Integer.MIN_VALUE to 0 rather than masking the sign bit.
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitionCount;
}
