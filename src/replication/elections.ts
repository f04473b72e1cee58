// The controller's partition decisions as pure functions over a metadata view: elections when a
// broker is fenced or returns, leadership moves for a controlled shutdown, preferred-leader
// elections, and the check of a leader's ISR change. Each returns partition changes; the shell
// appends them as PartitionChanged records, each carrying the partition epoch it was computed
// from, so a change computed from a stale view is refused when applied (metadata apply.ts).
import type { ReassignmentState } from "../meta/records.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { planted } from "./planted.ts";

export interface PartitionView {
  topicId: string;
  topic: string;
  partition: number;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: readonly number[];
  isr: readonly number[];
  /** unclean.leader.election.enable for its topic. */
  unclean: boolean;
  /** A reassignment in flight (reassignment.ts), absent or null when none. */
  reassignment?: ReassignmentState | null;
}

export interface PartitionChange {
  topicId: string;
  partition: number;
  /** The partition epoch the change was computed from (apply refuses another). */
  partitionEpoch: number;
  leader?: number;
  leaderEpoch?: number;
  isr?: number[];
  /** A new replica set (replicas added or reordered; reassignment builds on this). */
  replicas?: number[];
  /** A reassignment recorded, moved on (an object) or ended (null). */
  reassignment?: ReassignmentState | null;
  reason: string;
}

/** -1: the partition has no leader (offline). */
export const NO_LEADER = -1;

function withLeader(
  p: PartitionView,
  leader: number,
  isr: readonly number[],
  reason: string,
): PartitionChange {
  const c: PartitionChange = {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    isr: [...isr],
    reason,
  };
  if (leader !== p.leader) {
    c.leader = leader;
    c.leaderEpoch = planted.size !== 0 && planted.has("election-keeps-leader-epoch")
      ? p.leaderEpoch
      : p.leaderEpoch + 1;
  }
  return c;
}

/** The first replica in assignment order that is in `isr` and live: Kafka's preferred choice. */
export function pickLeader(
  replicas: readonly number[],
  isr: readonly number[],
  live: (id: number) => boolean,
): number {
  for (const r of replicas) if (isr.includes(r) && live(r)) return r;
  return NO_LEADER;
}

/**
 * `broker` was fenced (session expired, restarted, or shut down): it leaves every ISR, and the
 * partitions it led get a new leader from the remaining ISR. When it was the last ISR member the
 * partition goes offline and keeps it as the ISR (the only replica known to hold every committed
 * record), unless unclean election is on for the topic and another live replica exists.
 * `keep`: partitions that would go offline but stay as they are, led by `broker` in the same
 * epochs (a restarted broker whose log of a single-replica partition reopened clean leads it
 * again with nothing lost: going offline and being elected back would cost two records each).
 */
export function onFenced(
  parts: readonly PartitionView[],
  broker: number,
  live: (id: number) => boolean,
  keep?: (p: PartitionView) => boolean,
): PartitionChange[] {
  const out: PartitionChange[] = [];
  const isLive = (id: number) => id !== broker && live(id);
  for (const p of parts) {
    const inIsr = p.isr.includes(broker);
    if (!inIsr && p.leader !== broker) continue;
    if (p.leader === NO_LEADER) continue; // offline: its ISR keeps the last members
    // Any other fenced member leaves too: an online partition names no fenced broker, and apply
    // refuses a change that would keep one (a fence whose own changes were lost meanwhile).
    const rest = p.isr.filter((id) => id !== broker && live(id));
    if (p.leader !== broker && live(p.leader)) {
      out.push(withLeader(p, p.leader, rest, `broker ${broker} fenced: leaves the ISR`));
      continue;
    }
    const next = pickLeader(p.replicas, rest, isLive);
    if (next !== NO_LEADER) {
      out.push(withLeader(p, next, rest, `broker ${broker} fenced: leader moves to ${next}`));
      continue;
    }
    const allowUnclean = p.unclean || (planted.size !== 0 && planted.has("elect-outside-isr"));
    const unclean = allowUnclean ? p.replicas.find(isLive) : undefined;
    if (unclean !== undefined) {
      out.push(
        withLeader(
          p,
          unclean,
          [unclean],
          `broker ${broker} fenced: UNCLEAN election of ${unclean}`,
        ),
      );
      continue;
    }
    if (p.leader === broker && keep?.(p) === true) continue;
    // Offline. The ISR keeps its last members (never empty): they hold every committed record.
    out.push(
      withLeader(
        p,
        NO_LEADER,
        rest.length > 0 ? rest : p.isr,
        `broker ${broker} fenced: partition offline`,
      ),
    );
  }
  return out;
}

/**
 * `broker` was unfenced (it has caught up on metadata): offline partitions whose ISR holds it get
 * it as leader; with unclean election on, an offline partition with no live ISR member takes any
 * live replica.
 */
export function onUnfenced(
  parts: readonly PartitionView[],
  broker: number,
  live: (id: number) => boolean,
): PartitionChange[] {
  const out: PartitionChange[] = [];
  for (const p of parts) {
    if (p.leader !== NO_LEADER || !p.replicas.includes(broker)) continue;
    const next = pickLeader(p.replicas, p.isr, live);
    if (next !== NO_LEADER) {
      out.push(withLeader(p, next, p.isr, `broker ${broker} back: ${next} leads again`));
    } else if (p.unclean && live(broker)) {
      out.push(withLeader(p, broker, [broker], `broker ${broker} back: UNCLEAN election`));
    }
  }
  return out;
}

/**
 * Controlled shutdown of `broker`: every partition it leads moves to another live ISR member
 * (preferring assignment order) and it leaves the ISRs where it follows, so the shutdown costs a
 * leader change, not a session timeout. Partitions with no other ISR member stay (RF 1).
 */
export function onShutdown(
  parts: readonly PartitionView[],
  broker: number,
  live: (id: number) => boolean,
): PartitionChange[] {
  const out: PartitionChange[] = [];
  const isLive = (id: number) => id !== broker && live(id);
  for (const p of parts) {
    if (!p.isr.includes(broker)) continue;
    const rest = p.isr.filter((id) => id !== broker);
    if (rest.length === 0) continue;
    if (p.leader === broker) {
      const next = pickLeader(p.replicas, rest, isLive);
      if (next === NO_LEADER) continue;
      out.push(
        withLeader(p, next, rest, `broker ${broker} shutting down: leader moves to ${next}`),
      );
    } else if (p.leader !== NO_LEADER) {
      out.push(withLeader(p, p.leader, rest, `broker ${broker} shutting down: leaves the ISR`));
    }
  }
  return out;
}

/**
 * Preferred-leader elections (auto.leader.rebalance.enable): a partition whose first replica is
 * live and in the ISR but does not lead gets it back. Applied per broker only when that broker's
 * share of partitions led by others exceeds `imbalance` (Kafka's
 * leader.imbalance.per.broker.percentage, 10 %); `force` elects every such partition (the
 * ElectLeaders API).
 */
export function preferredElections(
  parts: readonly PartitionView[],
  live: (id: number) => boolean,
  imbalance = 0.1,
  force = false,
): PartitionChange[] {
  const preferred = new Map<number, number>();
  const notLed = new Map<number, PartitionView[]>();
  for (const p of parts) {
    const pref = p.replicas[0];
    if (pref === undefined) continue;
    preferred.set(pref, (preferred.get(pref) ?? 0) + 1);
    if (p.leader !== pref && p.isr.includes(pref) && live(pref)) {
      const l = notLed.get(pref) ?? [];
      l.push(p);
      notLed.set(pref, l);
    }
  }
  const out: PartitionChange[] = [];
  for (const [broker, ps] of notLed) {
    if (!force && ps.length / (preferred.get(broker) ?? 1) <= imbalance) continue;
    for (const p of ps) {
      out.push(withLeader(p, broker, p.isr, `preferred replica ${broker} leads again`));
    }
  }
  return out;
}

/**
 * A leader asks to change its ISR (AlterPartition). Accepted only from the current leader in the
 * current leader epoch and partition epoch, within the replicas, keeping the leader, and adding
 * no fenced broker. Returns the change or a Kafka error code.
 */
export function checkIsrChange(
  p: PartitionView,
  req: { from: number; leaderEpoch: number; partitionEpoch: number; isr: readonly number[] },
  live: (id: number) => boolean,
): PartitionChange | { errorCode: number; message: string } {
  if (req.from !== p.leader) {
    return {
      errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
      message: `broker ${req.from} does not lead`,
    };
  }
  if (req.leaderEpoch !== p.leaderEpoch) {
    return {
      errorCode: ErrorCode.FENCED_LEADER_EPOCH,
      message: `leader epoch ${req.leaderEpoch} is not ${p.leaderEpoch}`,
    };
  }
  if (
    req.partitionEpoch !== p.partitionEpoch &&
    !(planted.size !== 0 && planted.has("isr-change-ignores-partition-epoch"))
  ) {
    return {
      errorCode: ErrorCode.INVALID_UPDATE_VERSION,
      message: `partition epoch ${req.partitionEpoch} is not ${p.partitionEpoch}`,
    };
  }
  if (
    req.isr.length === 0 || new Set(req.isr).size !== req.isr.length ||
    !req.isr.includes(p.leader) || req.isr.some((id) => !p.replicas.includes(id))
  ) {
    return { errorCode: ErrorCode.INVALID_REQUEST, message: `bad ISR [${req.isr}]` };
  }
  const added = req.isr.filter((id) => !p.isr.includes(id));
  if (added.some((id) => !live(id))) {
    return {
      errorCode: ErrorCode.INELIGIBLE_REPLICA,
      message: `a fenced broker cannot join the ISR`,
    };
  }
  const removed = p.isr.filter((id) => !req.isr.includes(id));
  const why = [
    added.length ? `${added.join(",")} caught up` : "",
    removed.length ? `${removed.join(",")} fell behind` : "",
  ].filter(Boolean).join("; ");
  return {
    topicId: p.topicId,
    partition: p.partition,
    partitionEpoch: p.partitionEpoch,
    isr: [...req.isr],
    reason: `leader ${p.leader}: ${why || "no change"}`,
  };
}
