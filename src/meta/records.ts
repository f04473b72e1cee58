// Metadata log records: the only way cluster metadata changes. Today they are appended to the
// local log, later to the Raft log; every broker applies them into its SQLite (apply.ts).
// parseRecord validates a record from storage or from the network (hostile input).
import { MetaError } from "./errors.ts";
import { parseUserRecord, USER_RECORD_TYPES, type UserRecord } from "./users.ts";
import { ACL_RECORD_TYPES, type AclRecord, parseAclRecord } from "./acls.ts";

export interface PartitionAssignment {
  partition: number;
  replicas: number[];
  /** -1 = no leader. */
  leader: number;
  leaderEpoch: number;
  isr: number[];
}

/**
 * A partition's reassignment in flight (KIP-455): the replica set it moves to, the one it came
 * from (a cancel returns to it, with its leader where possible), whether it started (replicas
 * extended by the adding ones) or waits behind the concurrency bound, and the copy throttle.
 * Adding replicas are target − original, removing ones original − target.
 */
export interface ReassignmentState {
  target: number[];
  original: number[];
  originalLeader: number;
  started: boolean;
  /** Bytes per second for the adding replicas' copy; 0: unthrottled. */
  throttle: number;
}

export type MetadataRecord =
  /** Written by a new Raft leader before anything else; changes no table. */
  | { type: "NoOp" }
  /** A user's SCRAM credential set or deleted (users.ts). */
  | UserRecord
  /** An ACL binding created or deleted (acls.ts). */
  | AclRecord
  | {
    type: "BrokerRegistered";
    nodeId: number;
    host: string;
    kafkaPort: number;
    httpPort: number;
    clusterPort: number;
    rack: string | null;
    timestamp: number;
    /**
     * A broker of a replicated cluster registers fenced: the controller unfences it once it has
     * caught up on metadata (absent: registered unfenced, as a lone store's tests and old logs do).
     */
    fenced?: boolean;
  }
  | { type: "BrokerFenced"; nodeId: number; fenced: boolean }
  /**
   * A block of producer ids for `nodeId`: ids [index × 1000, index × 1000 + 1000), where index is
   * this record's own log index, so blocks are unique across the cluster with no state to keep.
   */
  | { type: "ProducerIdsAllocated"; nodeId: number }
  | {
    type: "TopicCreated";
    topicId: string;
    name: string;
    internal: boolean;
    partitions: PartitionAssignment[];
    configs: Record<string, string>;
    timestamp: number;
  }
  | { type: "TopicDeleted"; topicId: string; name: string }
  | { type: "PartitionsCreated"; topicId: string; partitions: PartitionAssignment[] }
  | {
    type: "PartitionChanged";
    topicId: string;
    partition: number;
    leader?: number;
    leaderEpoch?: number;
    isr?: number[];
    replicas?: number[];
    /**
     * The partition epoch this change was computed from: apply refuses it when the partition
     * changed meanwhile (a stale ISR request of a deposed leader, a controller's stale view).
     */
    partitionEpoch?: number;
    /** Why (an election, an ISR shrink...): for logs and operators. */
    reason?: string;
    /** A reassignment starts, moves on or changes (an object), or ends (null). */
    reassignment?: ReassignmentState | null;
  }
  | {
    type: "TopicConfigChanged";
    topicId: string;
    set: Record<string, string>;
    delete: string[];
  };

export type MetadataRecordType = MetadataRecord["type"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_INT32 = 2147483647;

function bad(why: string): MetaError {
  return new MetaError("INVALID_REQUEST", `malformed metadata record: ${why}`);
}

type Obj = Record<string, unknown>;

function int(o: Obj, k: string, min: number, max = MAX_INT32): number {
  const v = o[k];
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw bad(`${k} must be an integer in ${min}..${max}`);
  }
  return v;
}

function str(o: Obj, k: string, maxLen = 1024): string {
  const v = o[k];
  if (typeof v !== "string" || v.length > maxLen) throw bad(`${k} must be a string`);
  return v;
}

function bool(o: Obj, k: string): boolean {
  const v = o[k];
  if (typeof v !== "boolean") throw bad(`${k} must be a boolean`);
  return v;
}

function uuid(o: Obj, k: string): string {
  const v = str(o, k, 36);
  if (!UUID.test(v)) throw bad(`${k} must be a lower-case UUID`);
  return v;
}

function ids(o: Obj, k: string): number[] {
  const v = o[k];
  if (!Array.isArray(v) || v.length > 1000) throw bad(`${k} must be an array of node ids`);
  for (const x of v) {
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0 || x > MAX_INT32) {
      throw bad(`${k} must hold node ids`);
    }
  }
  if (new Set(v).size !== v.length) throw bad(`${k} has duplicate node ids`);
  return [...v] as number[];
}

function strMap(o: Obj, k: string): Record<string, string> {
  const v = o[k];
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw bad(`${k} must be an object`);
  const out: Record<string, string> = {};
  for (const [name, val] of Object.entries(v)) {
    if (typeof val !== "string") throw bad(`${k}.${name} must be a string`);
    out[name] = val;
  }
  return out;
}

function assignment(v: unknown): PartitionAssignment {
  if (v === null || typeof v !== "object") throw bad("partition must be an object");
  const o = v as Obj;
  return {
    partition: int(o, "partition", 0),
    replicas: ids(o, "replicas"),
    leader: int(o, "leader", -1),
    leaderEpoch: int(o, "leaderEpoch", 0),
    isr: ids(o, "isr"),
  };
}

function assignments(o: Obj, k: string): PartitionAssignment[] {
  const v = o[k];
  if (!Array.isArray(v) || v.length === 0 || v.length > 1_000_000) {
    throw bad(`${k} must be a non-empty array`);
  }
  return v.map(assignment);
}

export function reassignment(v: unknown): ReassignmentState | null {
  if (v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) throw bad("reassignment must be an object");
  const o = v as Obj;
  const target = ids(o, "target");
  const original = ids(o, "original");
  if (target.length === 0 || original.length === 0) throw bad("reassignment needs replicas");
  return {
    target,
    original,
    originalLeader: int(o, "originalLeader", -1),
    started: bool(o, "started"),
    throttle: int(o, "throttle", 0, Number.MAX_SAFE_INTEGER),
  };
}

/** Validates the shape of a record (not its fit with current state: that is apply's job). */
export function parseRecord(input: unknown): MetadataRecord {
  let v = input;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      throw bad("not JSON");
    }
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw bad("not an object");
  const o = v as Obj;
  switch (o.type) {
    case "NoOp":
      return { type: "NoOp" };
    case "BrokerRegistered": {
      const rack = o.rack === null ? null : str(o, "rack", 255);
      return {
        type: "BrokerRegistered",
        nodeId: int(o, "nodeId", 0),
        host: str(o, "host", 255),
        kafkaPort: int(o, "kafkaPort", 0, 65535),
        httpPort: int(o, "httpPort", 0, 65535),
        clusterPort: int(o, "clusterPort", 0, 65535),
        rack,
        timestamp: int(o, "timestamp", 0, Number.MAX_SAFE_INTEGER),
        ...(o.fenced !== undefined ? { fenced: bool(o, "fenced") } : {}),
      };
    }
    case "BrokerFenced":
      return { type: "BrokerFenced", nodeId: int(o, "nodeId", 0), fenced: bool(o, "fenced") };
    case "ProducerIdsAllocated":
      return { type: "ProducerIdsAllocated", nodeId: int(o, "nodeId", 0) };
    case "TopicCreated":
      return {
        type: "TopicCreated",
        topicId: uuid(o, "topicId"),
        name: str(o, "name", 249),
        internal: bool(o, "internal"),
        partitions: assignments(o, "partitions"),
        configs: strMap(o, "configs"),
        timestamp: int(o, "timestamp", 0, Number.MAX_SAFE_INTEGER),
      };
    case "TopicDeleted":
      return { type: "TopicDeleted", topicId: uuid(o, "topicId"), name: str(o, "name", 249) };
    case "PartitionsCreated":
      return {
        type: "PartitionsCreated",
        topicId: uuid(o, "topicId"),
        partitions: assignments(o, "partitions"),
      };
    case "PartitionChanged": {
      const r: MetadataRecord = {
        type: "PartitionChanged",
        topicId: uuid(o, "topicId"),
        partition: int(o, "partition", 0),
      };
      if (o.leader !== undefined) r.leader = int(o, "leader", -1);
      if (o.leaderEpoch !== undefined) r.leaderEpoch = int(o, "leaderEpoch", 0);
      if (o.isr !== undefined) r.isr = ids(o, "isr");
      if (o.replicas !== undefined) r.replicas = ids(o, "replicas");
      if (o.partitionEpoch !== undefined) r.partitionEpoch = int(o, "partitionEpoch", 0);
      if (o.reason !== undefined) r.reason = str(o, "reason", 1024);
      if (o.reassignment !== undefined) r.reassignment = reassignment(o.reassignment);
      return r;
    }
    case "TopicConfigChanged": {
      const del = o.delete;
      if (!Array.isArray(del) || del.some((x) => typeof x !== "string")) {
        throw bad("delete must be an array of names");
      }
      return {
        type: "TopicConfigChanged",
        topicId: uuid(o, "topicId"),
        set: strMap(o, "set"),
        delete: [...del] as string[],
      };
    }
    default:
      if (USER_RECORD_TYPES.has(String(o.type))) return parseUserRecord(o);
      if (ACL_RECORD_TYPES.has(String(o.type))) return parseAclRecord(o);
      throw bad(`unknown type ${JSON.stringify(String(o.type).slice(0, 40))}`);
  }
}

export function encodeRecord(r: MetadataRecord): string {
  return JSON.stringify(r);
}
