/**
 * ConsumerProtocol subscription and assignment payloads (versions 0-3, never flexible). The broker
 * treats them as opaque except for DescribeGroups, the HTTP API and assignments it computes itself.
 */
import {
  type Decoded,
  decodeSafely,
  readCount,
  Reader,
  readNullableBytes,
  readNullableString,
  readString,
  writeBytes,
  writeNullableString,
  Writer,
  writeString,
} from "./bytes.ts";

export const CONSUMER_PROTOCOL_TYPE = "consumer";
export const MAX_CONSUMER_PROTOCOL_VERSION = 3;

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface Subscription {
  version: number;
  topics: string[];
  userData: Uint8Array | null;
  /** v1+. */
  ownedPartitions: TopicPartitions[];
  /** v2+; -1 when absent. */
  generationId: number;
  /** v3+. */
  rackId: string | null;
}

export interface Assignment {
  version: number;
  assignedPartitions: TopicPartitions[];
  userData: Uint8Array | null;
}

function clampVersion(v: number): number {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`invalid consumer protocol version ${v}`);
  return Math.min(v, MAX_CONSUMER_PROTOCOL_VERSION);
}

function writeTopicPartitions(w: Writer, list: readonly TopicPartitions[]): void {
  w.int32(list.length);
  for (const tp of list) {
    writeString(w, tp.topic);
    w.int32(tp.partitions.length);
    for (const p of tp.partitions) w.int32(p);
  }
}

function readTopicPartitions(r: Reader): TopicPartitions[] {
  const n = readCount(r, 6, "topic");
  const out: TopicPartitions[] = [];
  for (let i = 0; i < n; i++) {
    const topic = readString(r, "topic");
    const m = readCount(r, 4, "partition");
    const partitions: number[] = [];
    for (let j = 0; j < m; j++) partitions.push(r.int32());
    out.push({ topic, partitions });
  }
  return out;
}

export function encodeSubscription(s: Subscription): Uint8Array {
  const v = clampVersion(s.version);
  const w = new Writer(64);
  w.int16(s.version);
  w.int32(s.topics.length);
  for (const t of s.topics) writeString(w, t);
  writeBytes(w, s.userData);
  if (v >= 1) writeTopicPartitions(w, s.ownedPartitions);
  if (v >= 2) w.int32(s.generationId);
  if (v >= 3) writeNullableString(w, s.rackId);
  return w.bytes();
}

/**
 * Lenient like the Java client: a version above 3 is read as 3 (newer fields are appended), and
 * fields missing at the very end take their defaults (@platformatic/kafka sends v1 without
 * OwnedPartitions). A field cut in the middle is an error.
 */
export function decodeSubscription(bytes: Uint8Array): Decoded<Subscription> {
  return decodeSafely(() => {
    const r = new Reader(bytes);
    const version = r.int16();
    if (version < 0) r.fail(`invalid subscription version ${version}`);
    const n = readCount(r, 2, "topic");
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(readString(r, "topic"));
    const userData = r.remaining > 0 ? readNullableBytes(r) : null;
    const ownedPartitions = version >= 1 && r.remaining > 0 ? readTopicPartitions(r) : [];
    const generationId = version >= 2 && r.remaining > 0 ? r.int32() : -1;
    const rackId = version >= 3 && r.remaining > 0 ? readNullableString(r) : null;
    return { version, topics, userData, ownedPartitions, generationId, rackId };
  });
}

export function encodeAssignment(a: Assignment): Uint8Array {
  clampVersion(a.version);
  const w = new Writer(64);
  w.int16(a.version);
  writeTopicPartitions(w, a.assignedPartitions);
  writeBytes(w, a.userData);
  return w.bytes();
}

/** Empty bytes (what a member gets when the leader left it out) decode to an empty v0 assignment. */
export function decodeAssignment(bytes: Uint8Array): Decoded<Assignment> {
  if (bytes.length === 0) {
    return { ok: true, value: { version: 0, assignedPartitions: [], userData: null } };
  }
  return decodeSafely(() => {
    const r = new Reader(bytes);
    const version = r.int16();
    if (version < 0) r.fail(`invalid assignment version ${version}`);
    const assignedPartitions = readTopicPartitions(r);
    const userData = r.remaining > 0 ? readNullableBytes(r) : null;
    return { version, assignedPartitions, userData };
  });
}
