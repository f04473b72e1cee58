// Deliberate bugs for the replication simulation (test/sim/replication/planted.test.ts): each
// name flips one decision at the exact point in a replication core, so the simulator's
// invariants can be shown to catch it. ONLY TESTS ADD NAMES; in the broker the set is always
// empty, and every check is `planted.size !== 0 && planted.has(...)` (one property read).
export type PlantedBug =
  /** leader.ts: the HW is what a majority of all replicas hold, not the minimum over the ISR. */
  | "hw-majority-of-replicas"
  /** follower.ts: on a diverging epoch, truncate to the leader's high watermark. */
  | "truncate-to-hw"
  /** hw.ts: a pending ISR shrink counts for the HW before the controller commits it. */
  | "shrink-counts-before-commit"
  /** replica.ts: no epoch recorded when a leader takes over (log.assignEpoch skipped). */
  | "no-epoch-on-takeover"
  /** elections.ts: with no live ISR member, elect any live replica (unclean although disabled). */
  | "elect-outside-isr"
  /** leader.ts: a follower's position counts from its log end, not what it has synced. */
  | "position-from-log-end"
  /** elections.ts: an ISR change is accepted whatever partition epoch it was computed from. */
  | "isr-change-ignores-partition-epoch"
  /** leader.ts: a follower rejoins the ISR once past the epoch start, synced or not. */
  | "rejoin-below-hw"
  /** follower.ts: the leader misses "same epoch, but shorter here" divergence. */
  | "divergence-ignores-shorter-epoch"
  /** leader.ts: any refusal drops a pending ISR addition (the bug the simulation found). */
  | "refusal-forgets-addition"
  /** elections.ts: a new leader keeps the partition's leader epoch (no bump). */
  | "election-keeps-leader-epoch"
  /**
   * test/sim controller shell (ControllerService.#apply): the controller's own partition
   * changes (elections, fencing) are written without the partition epoch they were computed
   * from, so apply cannot refuse one computed from a stale view (a new controller that has not
   * applied its predecessor's last records, a deposed controller's record committed late).
   */
  | "decision-without-partition-epoch"
  /** test/sim controller shell: an accepted AlterPartition is written without its partition epoch. */
  | "alter-without-partition-epoch"
  /** reassignment.ts: a move completes at once with ISR = target, before the adding copied. */
  | "reassign-isr-is-target"
  /** reassignment.ts: a cancel restores the original ISR too, lagging members included. */
  | "cancel-isr-is-original"
  /**
   * test/sim controller shell (ControllerService.#maybeUnfence before 6b9a12d): a fenced broker
   * is unfenced once it has applied its own registration, before the elections that took its
   * leaderships away (chaos seed 32: a stale coordinator answered OffsetFetch 795 commits old).
   */
  | "unfence-on-registration"
  /**
   * test/sim broker shell (GroupService.coordinates before the lease check): a leader whose
   * session lease ran out (cut off from the controller) still answers OffsetFetch.
   */
  | "coordinator-without-lease";

export const PLANTED_BUGS: readonly PlantedBug[] = [
  "hw-majority-of-replicas",
  "truncate-to-hw",
  "shrink-counts-before-commit",
  "no-epoch-on-takeover",
  "elect-outside-isr",
  "position-from-log-end",
  "isr-change-ignores-partition-epoch",
  "rejoin-below-hw",
  "divergence-ignores-shorter-epoch",
  "refusal-forgets-addition",
  "election-keeps-leader-epoch",
  "decision-without-partition-epoch",
  "alter-without-partition-epoch",
  "reassign-isr-is-target",
  "cancel-isr-is-original",
  "unfence-on-registration",
  "coordinator-without-lease",
];

/** Mutable: tests add a name, run, and clear it. Empty in production. */
export const planted = new Set<PlantedBug>();
