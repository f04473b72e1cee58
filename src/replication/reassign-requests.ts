// Operators' reassignment requests as the controller receives them (from the HTTP API, the CLI
// and Kafka's AlterPartitionReassignments on any broker): validated here, planned over the
// controller's view with the pure core (reassignment.ts), answered per partition with a Kafka
// error code. `target: null` cancels, as in KIP-455.
import {
  cancelReassignment,
  type MovingPartition,
  type Refusal,
  submitReassignment,
  throttleChange,
} from "./reassignment.ts";
import type { PartitionChange } from "./elections.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";

/** The most partitions one request may name (a whole large cluster's move fits). */
export const MAX_REASSIGN_PARTITIONS = 100_000;
/** A throttle above this is a typo, not a rate (1 TB/s). */
export const MAX_THROTTLE = 1e12;

export interface ReassignItem {
  topic: string;
  partition: number;
  /** The new replica set, or null to cancel. */
  target: number[] | null;
}

export interface ReassignRequest {
  /** "alter": submit or cancel each item; "throttle": set the throttle of moving partitions. */
  op: "alter" | "throttle";
  items: ReassignItem[];
  /** Bytes/s for the adding replicas' copy (alter: of new moves; throttle: the new rate). */
  throttle: number;
  /**
   * alter: refuse a target whose size differs from the partition's replication factor (KIP-860's
   * AllowReplicationFactorChange false); the factor of a moving partition is its original's.
   */
  keepReplicationFactor?: boolean;
}

export interface ReassignResult {
  topic: string;
  partition: number;
  errorCode: number;
  message: string | null;
}

const isId = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= 2147483647;

/** Validates a request from the network; throws with a message saying what is wrong. */
export function parseReassignRequest(body: unknown): ReassignRequest {
  const b = body as Record<string, unknown> | null;
  if (b === null || typeof b !== "object") throw new Error("bad reassign request");
  if (b.op !== "alter" && b.op !== "throttle") throw new Error("op must be alter or throttle");
  const throttle = b.throttle ?? 0;
  if (
    typeof throttle !== "number" || !Number.isSafeInteger(throttle) || throttle < 0 ||
    throttle > MAX_THROTTLE
  ) throw new Error("throttle must be an integer number of bytes/s, 0 for none");
  if (!Array.isArray(b.items) || b.items.length > MAX_REASSIGN_PARTITIONS) {
    throw new Error(`items must be a list of at most ${MAX_REASSIGN_PARTITIONS} partitions`);
  }
  const items: ReassignItem[] = [];
  for (const x of b.items as unknown[]) {
    const o = x as Record<string, unknown> | null;
    if (
      o === null || typeof o !== "object" || typeof o.topic !== "string" ||
      o.topic.length === 0 || o.topic.length > 249 || !isId(o.partition)
    ) throw new Error("each item needs a topic and a partition");
    let target: number[] | null = null;
    if (o.target !== null && o.target !== undefined) {
      if (!Array.isArray(o.target) || o.target.length > 1000 || !o.target.every(isId)) {
        throw new Error(`${o.topic}-${o.partition}: replicas must be a list of broker ids`);
      }
      target = [...o.target];
    } else if (b.op === "alter" && o.target === undefined) {
      throw new Error(`${o.topic}-${o.partition}: replicas missing (null cancels)`);
    }
    items.push({ topic: o.topic, partition: o.partition, target });
  }
  const keep = b.keepReplicationFactor ?? false;
  if (typeof keep !== "boolean") throw new Error("keepReplicationFactor must be a boolean");
  return { op: b.op, items, throttle, keepReplicationFactor: keep };
}

export interface ReassignPlan {
  results: ReassignResult[];
  /** Changes to append, keyed by the index of their result. */
  changes: Map<number, PartitionChange>;
}

/**
 * Plans a request over the controller's view. A partition named twice gets the first item's
 * answer for both, and is changed once.
 */
export function planReassignRequest(
  req: ReassignRequest,
  view: readonly MovingPartition[],
  registered: (id: number) => boolean,
  live: (id: number) => boolean,
): ReassignPlan {
  const byKey = new Map(view.map((p) => [`${p.topic}\u0000${p.partition}`, p]));
  const results: ReassignResult[] = [];
  const changes = new Map<number, PartitionChange>();
  const seen = new Map<string, number>();
  for (const it of req.items) {
    const key = `${it.topic}\u0000${it.partition}`;
    const first = seen.get(key);
    if (first !== undefined) {
      results.push({ ...results[first] });
      continue;
    }
    seen.set(key, results.length);
    const p = byKey.get(key);
    if (p === undefined) {
      results.push({
        topic: it.topic,
        partition: it.partition,
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        message: `No such partition as ${it.topic}-${it.partition}`,
      });
      continue;
    }
    let out: PartitionChange | Refusal | null;
    if (req.op === "throttle") out = throttleChange(p, req.throttle);
    else if (it.target === null) out = cancelReassignment(p, live);
    else {
      out = req.keepReplicationFactor === true ? rfChange(p, it.target) : null;
      out ??= submitReassignment(p, it.target, registered, req.throttle);
    }
    if (out !== null && "errorCode" in out) {
      results.push({ topic: it.topic, partition: it.partition, ...out });
      continue;
    }
    if (out !== null) changes.set(results.length, out);
    results.push({ topic: it.topic, partition: it.partition, errorCode: 0, message: null });
  }
  return { results, changes };
}

/** A refusal when `target` changes `p`'s replication factor (that of its original, if moving). */
function rfChange(p: MovingPartition, target: readonly number[]): Refusal | null {
  const factor = (p.reassignment?.original ?? p.replicas).length;
  if (target.length === factor) return null;
  return {
    errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
    message: `${p.topic}-${p.partition}: the replication factor would change from ${factor} to ` +
      `${target.length}, and the request does not allow it`,
  };
}
