// Manual replica assignments (CreateTopics `assignments`, CreatePartitions `assignments`), checked
// the way Kafka checks them: consecutive partition ids, no broker twice in one list, the same
// replication factor everywhere, and only registered brokers that are live (not fenced, not
// declared down by gossip). The first replica leads.
import { MetaError } from "./errors.ts";
import type { PartitionAssignment } from "./records.ts";

/** Replica lists for partitions `from`, `from + 1`, …, in that order. */
export function manualAssignments(
  lists: readonly (readonly number[])[],
  from: number,
  brokers: { registered: ReadonlySet<number>; live: ReadonlySet<number> },
  replicationFactor?: number,
): PartitionAssignment[] {
  if (lists.length === 0) {
    throw new MetaError("INVALID_REPLICA_ASSIGNMENT", "The replica assignment is empty.");
  }
  const rf = replicationFactor ?? lists[0].length;
  return lists.map((replicas, i) => {
    const partition = from + i;
    if (!Array.isArray(replicas) || replicas.length === 0) {
      throw new MetaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Partition ${partition} has an empty replica list.`,
      );
    }
    if (replicas.length !== rf) {
      throw new MetaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Inconsistent replication factor: partition ${partition} has ${replicas.length} ` +
          `replicas, expected ${rf}.`,
      );
    }
    if (new Set(replicas).size !== replicas.length) {
      throw new MetaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Duplicate brokers in the replica list of partition ${partition}: ${replicas.join(",")}.`,
      );
    }
    const unknown = replicas.filter((b) => !brokers.registered.has(b));
    if (unknown.length > 0) {
      throw new MetaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Unknown broker(s) ${unknown.join(",")} in the assignment of partition ${partition}.`,
      );
    }
    const unavailable = replicas.filter((b) => !brokers.live.has(b));
    if (unavailable.length > 0) {
      throw new MetaError(
        "INVALID_REPLICA_ASSIGNMENT",
        `Broker(s) ${unavailable.join(",")} in the assignment of partition ${partition} are ` +
          "fenced or down.",
      );
    }
    return {
      partition,
      replicas: [...replicas],
      leader: replicas[0],
      leaderEpoch: 0,
      isr: [...replicas],
    };
  });
}
