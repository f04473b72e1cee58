// Partition reassignment (KIP-455) as pure decisions over a metadata view, like elections.ts.
// A move from the original replica set to a target set goes through committed PartitionChanged
// records only, each computed from the partition epoch it saw (apply refuses a stale one):
//
//   submit    reassignment recorded, queued (replicas unchanged)
//   start     replicas = original ∪ target: adding replicas follow outside the ISR and copy the
//             log; their leader proposes them into the ISR once caught up (AlterPartition)
//   complete  every adding replica in the ISR: replicas = target, ISR ∩ target, the leader moves
//             to the target's first in-sync replica if it is leaving, reassignment cleared
//   cancel    replicas = original, ISR ∩ original, leadership back to the original leader
//
// Every step is a function of the committed state alone, so a new controller carries on where
// its predecessor stopped, and a restarted broker finds its role in the metadata it applies.
import type { ReassignmentState } from "../meta/records.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { NO_LEADER, type PartitionChange, type PartitionView, pickLeader } from "./elections.ts";
import { planted } from "./planted.ts";

export type { ReassignmentState };

export interface Refusal {
  errorCode: number;
  message: string;
}

export type MovingPartition = PartitionView & { reassignment?: ReassignmentState | null };

/** Replicas that the move adds (target − original), in target order. */
export function addingReplicas(ra: ReassignmentState): number[] {
  return ra.target.filter((id) => !ra.original.includes(id));
}

/** Replicas that the move removes (original − target), in original order. */
export function removingReplicas(ra: ReassignmentState): number[] {
  return ra.original.filter((id) => !ra.target.includes(id));
}

/** The replica set while the move runs: the original order first, so preferred leadership stays. */
export function unionReplicas(ra: ReassignmentState): number[] {
  return [...ra.original, ...addingReplicas(ra)];
}

const name = (p: PartitionView) => `${p.topic}-${p.partition}`;

/**
 * A request to move `p` to `target`. Returns the change recording it (queued), null when there
 * is nothing to do (the partition already has these replicas, or is already moving to exactly
 * them: a retried request), or a refusal.
 */
export function submitReassignment(
  p: MovingPartition,
  target: readonly number[],
  registered: (id: number) => boolean,
  throttle = 0,
): PartitionChange | null | Refusal {
  const bad = (message: string): Refusal => ({
    errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    message: `${name(p)}: ${message}`,
  });
  if (target.length === 0) return bad("the target has no replicas");
  if (new Set(target).size !== target.length) return bad(`broker listed twice in [${target}]`);
  const unknown = target.find((id) => !Number.isSafeInteger(id) || id < 0 || !registered(id));
  if (unknown !== undefined) return bad(`broker ${unknown} is not registered`);
  if (!Number.isSafeInteger(throttle) || throttle < 0) {
    return { errorCode: ErrorCode.INVALID_REQUEST, message: "throttle must be >= 0 bytes/s" };
  }
  const ra = p.reassignment;
  if (ra) {
    if (same(ra.target, target)) return null;
    return {
      errorCode: ErrorCode.REASSIGNMENT_IN_PROGRESS,
      message: `${name(p)} is moving to [${ra.target}]: cancel that first`,
    };
  }
  if (same(p.replicas, target)) return null;
  return {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    reassignment: {
      target: [...target],
      original: [...p.replicas],
      originalLeader: p.leader,
      started: false,
      throttle,
    },
    reason: `reassignment [${p.replicas}] -> [${target}] submitted`,
  };
}

function same(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The throttle of a moving partition changes (0: none). */
export function throttleChange(p: MovingPartition, throttle: number): PartitionChange | Refusal {
  const ra = p.reassignment;
  if (!ra) {
    return {
      errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
      message: `${name(p)} has no reassignment in progress`,
    };
  }
  return {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    reassignment: { ...ra, throttle },
    reason: `reassignment throttle ${throttle} B/s`,
  };
}

/**
 * The move of `p` is done when every adding replica is in the ISR and the ISR within the target
 * is as large as it can be made: at least min.insync.replicas, or every live target replica
 * (waiting longer would not help). Returns the completing change, or undefined to wait.
 */
export function completion(
  p: MovingPartition,
  live: (id: number) => boolean,
  minIsr: number,
): PartitionChange | undefined {
  const ra = p.reassignment;
  if (!ra || !ra.started || p.leader === NO_LEADER) return undefined;
  // Planted: the naive switch (replicas = ISR = target) that does not wait for the copy.
  const naive = planted.size !== 0 && planted.has("reassign-isr-is-target");
  if (!naive && !addingReplicas(ra).every((id) => p.isr.includes(id))) return undefined;
  const isr = naive
    ? ra.target.filter((id) => live(id) || p.isr.includes(id))
    : p.isr.filter((id) => ra.target.includes(id));
  if (isr.length === 0) return undefined;
  const need = Math.min(minIsr, ra.target.length);
  if (isr.length < need && ra.target.some((id) => !isr.includes(id) && live(id))) return undefined;
  const stays = ra.target.includes(p.leader) && live(p.leader);
  const leader = stays ? p.leader : pickLeader(ra.target, isr, live);
  if (leader === NO_LEADER) return undefined;
  const c: PartitionChange = {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    replicas: [...ra.target],
    isr,
    reassignment: null,
    reason: `reassignment to [${ra.target}] complete` +
      (stays ? "" : `: leader ${p.leader} leaves, ${leader} leads`),
  };
  if (leader !== p.leader) {
    c.leader = leader;
    c.leaderEpoch = p.leaderEpoch + 1;
  }
  return c;
}

/** Starts a queued move: the adding replicas become followers outside the ISR. */
export function start(p: MovingPartition): PartitionChange | undefined {
  const ra = p.reassignment;
  if (!ra || ra.started) return undefined;
  const adding = addingReplicas(ra);
  return {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    replicas: unionReplicas(ra),
    reassignment: { ...ra, started: true },
    reason: `reassignment to [${ra.target}] started` +
      (adding.length ? `: ${adding.join(",")} copy the log` : ""),
  };
}

/**
 * The controller's periodic pass: completes the moves that are ready and starts queued ones
 * while fewer than `maxConcurrent` run. A partition without a leader is left alone (nothing
 * can be copied or moved safely until it has one).
 */
export function reassignmentSteps(
  parts: readonly MovingPartition[],
  live: (id: number) => boolean,
  minIsr: (p: MovingPartition) => number,
  maxConcurrent: number,
): PartitionChange[] {
  const out: PartitionChange[] = [];
  let running = 0;
  const queued: MovingPartition[] = [];
  for (const p of parts) {
    const ra = p.reassignment;
    if (!ra) continue;
    if (!ra.started) {
      queued.push(p);
      continue;
    }
    const c = completion(p, live, minIsr(p));
    if (c !== undefined) out.push(c);
    else running++;
  }
  for (const p of queued) {
    if (running >= maxConcurrent) break;
    if (p.leader === NO_LEADER) continue;
    const c = start(p);
    if (c === undefined) continue;
    out.push(c);
    running++;
  }
  return out;
}

/**
 * Cancel: back to the original replicas. The adding replicas leave (their logs are deleted),
 * the ISR keeps its original members, and leadership returns to the original leader when it is
 * live and in sync (else stays, or goes to the first in-sync original replica). Refused when
 * nothing is moving (a finished reassignment cannot be cancelled: move back with a new one), or
 * when no original replica is in sync (cancelling would leave no replica holding every
 * committed record; let the move finish, or wait for an original replica to catch up).
 */
export function cancelReassignment(
  p: MovingPartition,
  live: (id: number) => boolean,
): PartitionChange | Refusal {
  const ra = p.reassignment;
  if (!ra) {
    return {
      errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
      message: `${
        name(p)
      } has no reassignment in progress (finished or never submitted): nothing to cancel; to move it back, submit a reassignment to [${p.replicas}]'s former replicas`,
    };
  }
  const base = {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
  };
  if (!ra.started) {
    return { ...base, reassignment: null, reason: `reassignment to [${ra.target}] cancelled` };
  }
  // Planted: the naive revert that restores the original ISR too, lagging members included.
  const naive = planted.size !== 0 && planted.has("cancel-isr-is-original");
  const isr = naive
    ? ra.original.filter((id) => live(id) || p.isr.includes(id))
    : p.isr.filter((id) => ra.original.includes(id));
  if (isr.length === 0 || (p.leader !== NO_LEADER && !isr.some(live))) {
    return {
      errorCode: ErrorCode.INVALID_REQUEST,
      message: `${
        name(p)
      }: no original replica [${ra.original}] is in sync (ISR [${p.isr}]); cancelling now would leave no replica known to hold every committed record: let the move finish, or retry once an original replica has caught up`,
    };
  }
  let leader = p.leader;
  if (p.leader !== NO_LEADER) {
    if (isr.includes(ra.originalLeader) && live(ra.originalLeader)) leader = ra.originalLeader;
    else if (!isr.includes(p.leader) || !live(p.leader)) {
      leader = pickLeader(ra.original, isr, live);
    }
    if (leader === NO_LEADER) {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        message: `${name(p)}: no live original replica is in sync; retry later`,
      };
    }
  }
  const c: PartitionChange = {
    ...base,
    replicas: [...ra.original],
    isr,
    reassignment: null,
    reason: `reassignment to [${ra.target}] cancelled: back to [${ra.original}]`,
  };
  if (leader !== p.leader) {
    c.leader = leader;
    c.leaderEpoch = p.leaderEpoch + 1;
  }
  return c;
}

// ---- progress --------------------------------------------------------------------------------

export interface ReplicaProgress {
  broker: number;
  /** Bytes this replica holds of the leader's log (from its fetch position). */
  copiedBytes: number;
  /** Bytes of the leader's log it must hold (log start to log end, at the last sample). */
  totalBytes: number;
  inIsr: boolean;
  /** Bytes/s over the last samples; null before two samples. */
  rateBytesPerSec: number | null;
  /** Seconds left at that rate; null when unknown, 0 when caught up. */
  etaSec: number | null;
}

/**
 * Progress of one adding replica from two samples of (time, copied): the rate between them, and
 * the time left at that rate to copy the rest.
 */
export function progressOf(
  broker: number,
  inIsr: boolean,
  copied: number,
  total: number,
  prev?: { atMs: number; copied: number },
  nowMs?: number,
): ReplicaProgress {
  const done = Math.min(copied, total);
  let rate: number | null = null;
  if (prev !== undefined && nowMs !== undefined && nowMs > prev.atMs) {
    rate = Math.max(0, (copied - prev.copied) * 1000 / (nowMs - prev.atMs));
  }
  const left = Math.max(0, total - done);
  const eta = inIsr || left === 0 ? 0 : rate !== null && rate > 0 ? left / rate : null;
  return {
    broker,
    copiedBytes: done,
    totalBytes: total,
    inIsr,
    rateBytesPerSec: rate === null ? null : Math.round(rate),
    etaSec: eta === null ? null : Math.round(eta * 10) / 10,
  };
}
