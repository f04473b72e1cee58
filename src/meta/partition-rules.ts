// The rules a partition's assignment must satisfy, and what a PartitionChanged record does to a
// partition, as pure functions over the partition's current row. apply.ts runs them inside the
// metadata transaction; the replication simulation (test/sim/replication) runs the very same
// rules over its in-memory metadata, so the two cannot drift apart.
import { MetaError } from "./errors.ts";
import type { MetadataRecord, ReassignmentState } from "./records.ts";

export interface PartitionRow {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  /** A reassignment in flight (src/replication/reassignment.ts); null or absent when none. */
  reassignment?: ReassignmentState | null;
}

const sameSet = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

/**
 * The replica sets a reassignment may pass through: queued, the replicas are still the
 * original ones; started, they are original ∪ target (adding replicas follow outside the ISR
 * until caught up). Any other set while one is in flight is refused.
 */
export function checkReassignment(
  known: BrokerIds,
  replicas: readonly number[],
  ra: ReassignmentState,
  what: string,
): void {
  for (const r of ra.target) {
    if (!known.has(r)) {
      throw new MetaError("INVALID_REPLICA_ASSIGNMENT", `${what}: broker ${r} is not registered`);
    }
  }
  const union = [...ra.original, ...ra.target.filter((id) => !ra.original.includes(id))];
  const want = ra.started ? union : ra.original;
  if (!sameSet(replicas, want)) {
    throw new MetaError(
      "INVALID_REPLICA_ASSIGNMENT",
      `${what}: replicas [${replicas}] do not fit the reassignment [${ra.original}] -> [${ra.target}]${
        ra.started ? "" : " (queued)"
      }`,
    );
  }
}

export type PartitionChangedRecord = Extract<MetadataRecord, { type: "PartitionChanged" }>;

/** A set of broker ids (a Set, or a lazy view of a table). */
export interface BrokerIds {
  has(id: number): boolean;
}

export function checkReplicas(
  known: BrokerIds,
  replicas: number[],
  isr: number[],
  leader: number,
  what: string,
): void {
  if (replicas.length === 0) {
    throw new MetaError("INVALID_REPLICA_ASSIGNMENT", `${what}: no replicas`);
  }
  for (const r of replicas) {
    if (!known.has(r)) {
      throw new MetaError("INVALID_REPLICA_ASSIGNMENT", `${what}: broker ${r} is not registered`);
    }
  }
  if (isr.some((i) => !replicas.includes(i))) {
    throw new MetaError(
      "INVALID_REPLICA_ASSIGNMENT",
      `${what}: ISR is not a subset of the replicas`,
    );
  }
  if (leader !== -1 && !isr.includes(leader)) {
    throw new MetaError(
      "INVALID_REPLICA_ASSIGNMENT",
      `${what}: leader ${leader} is not in the ISR`,
    );
  }
}

/**
 * The partition after `r`, or a MetaError: a change computed from another partition epoch (a
 * stale ISR request of a deposed leader, a controller's stale view), a leader epoch going back,
 * a new leader without a new epoch, an assignment checkReplicas refuses, or a fenced broker
 * leading or in the ISR of an online partition.
 */
export function changedPartition(
  p: PartitionRow,
  r: PartitionChangedRecord,
  registered: BrokerIds,
  fenced: BrokerIds,
  what: string,
): PartitionRow {
  if (r.partitionEpoch !== undefined && r.partitionEpoch !== p.partitionEpoch) {
    throw new MetaError(
      "INVALID_UPDATE_VERSION",
      `${what}: partition epoch ${r.partitionEpoch} is stale (now ${p.partitionEpoch})`,
    );
  }
  const next = {
    leader: r.leader ?? p.leader,
    leaderEpoch: r.leaderEpoch ?? p.leaderEpoch,
    isr: r.isr ?? p.isr,
    replicas: r.replicas ?? p.replicas,
    reassignment: r.reassignment === undefined ? p.reassignment ?? null : r.reassignment,
  };
  if (next.leaderEpoch < p.leaderEpoch) {
    throw new MetaError("INVALID_REQUEST", `${what}: leader epoch went backwards`);
  }
  if (next.leader !== p.leader && next.leaderEpoch === p.leaderEpoch) {
    throw new MetaError("INVALID_REQUEST", `${what}: new leader needs a new epoch`);
  }
  checkReplicas(registered, next.replicas, next.isr, next.leader, what);
  if (next.reassignment !== null) {
    checkReassignment(registered, next.replicas, next.reassignment, what);
  }
  if (next.leader !== -1) {
    // An online partition: no fenced broker leads it or counts in its ISR. (An offline one
    // keeps its last ISR, fenced, as the replicas known to hold every committed record.)
    const bad = next.isr.find((id) => fenced.has(id));
    if (bad !== undefined) {
      throw new MetaError(
        "INELIGIBLE_REPLICA",
        `${what}: broker ${bad} is fenced and cannot lead or be in the ISR`,
      );
    }
  }
  return { ...next, partitionEpoch: p.partitionEpoch + 1 };
}
