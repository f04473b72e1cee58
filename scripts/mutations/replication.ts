// Planted bugs in the replication cores (src/replication), the metadata rules they rely on
// (src/meta/partition-rules.ts) and, as known survivors, the shells the simulator mirrors
// instead of running. Run against the replication campaign (test/sim/replication, see
// docs/replication-sim.md: 3 brokers that are also the metadata quorum, acks=all producers, a
// consumer, crashes, pauses, partitions, controller failovers; invariants 1-8 and liveness).
import type { Mutation } from "./types.ts";

const LEADER = "src/replication/leader.ts";
const HW = "src/replication/hw.ts";
const FOLLOWER = "src/replication/follower.ts";
const ELECTIONS = "src/replication/elections.ts";

const MIRRORED = "The simulator mirrors this shell in test/sim/replication/broker.ts instead " +
  "of running it (it runs the pure cores, the metadata rules and replica.ts's Replica, but not " +
  "the Replica's acks=all waiters, replica-manager.ts or session-client.ts), so a bug here " +
  "changes nothing it executes.";

export const REPLICATION: Mutation[] = [
  {
    id: "repl-hw-skips-unknown-member",
    campaign: "replication",
    file: HW,
    find: "if (end === undefined || end < 0) return -1;",
    replace: "if (end === undefined || end < 0) continue;",
    why: "An ISR member whose position is not known yet (a new leader's followers before their " +
      "first fetch) is skipped in the HW instead of holding it.",
  },
  {
    id: "repl-hw-ignores-pending-addition",
    campaign: "replication",
    file: LEADER,
    find: ": isrDurableMin(this.maximalIsr(), pos);",
    replace: ": isrDurableMin(this.isr, pos);",
    why: "The HW counts the committed ISR only, not a pending addition (KIP-497's maximal ISR): " +
      "the controller may commit the addition and elect the added replica, which lacks records " +
      "acknowledged meanwhile.",
  },
  {
    id: "repl-shrink-before-commit",
    campaign: "replication",
    file: HW,
    find: "  const out = [...committed];\n  for (const id of pending) if (!out.includes(id)) " +
      "out.push(id);\n",
    replace: "  const out = [...pending];\n",
    why: "A pending ISR shrink counts for the HW before the controller commits it.",
  },
  {
    id: "repl-truncate-to-hw",
    campaign: "replication",
    file: FOLLOWER,
    find: "offset: truncationOffset(local.endOffsetFor, local.logEnd, r.diverging, " +
      "local.logStart),",
    replace: "offset: Math.min(r.highWatermark, local.logEnd),",
    why: "A diverging follower truncates to the leader's high watermark instead of the epoch " +
      "boundary (the pre-KIP-101 rule).",
  },
  {
    id: "repl-truncation-keeps-divergent-suffix",
    campaign: "replication",
    file: FOLLOWER,
    find: "return Math.min(diverging.endOffset, local.endOffset, localLogEnd);",
    replace: "return Math.min(local.endOffset, localLogEnd);",
    why: "Truncation keeps the follower's records of the diverging epoch past where the " +
      "leader's copy of that epoch ends.",
  },
  {
    id: "repl-divergence-ignores-shorter-epoch",
    campaign: "replication",
    file: FOLLOWER,
    find: "if (shorter || e.leaderEpoch < lastFetchedEpoch) {",
    replace: "if (e.leaderEpoch < lastFetchedEpoch) {",
    why: "The leader misses divergence when it holds the follower's last epoch but that epoch " +
      "ends earlier in its log.",
  },
  {
    id: "repl-elect-outside-isr",
    campaign: "replication",
    file: ELECTIONS,
    find: "for (const r of replicas) if (isr.includes(r) && live(r)) return r;",
    replace: "for (const r of replicas) if (live(r)) return r;",
    why: "The leader is picked among live replicas, in or out of the ISR (an unclean election " +
      "although it is disabled).",
  },
  {
    id: "repl-position-from-log-end",
    campaign: "replication",
    file: LEADER,
    find: ": Math.min(durableEnd, fetchOffset);",
    replace: ": fetchOffset;",
    why: "The leader counts a follower's position from its log end (fetch offset), not what it " +
      "reports synced.",
  },
  {
    id: "repl-election-keeps-epoch",
    campaign: "replication",
    file: ELECTIONS,
    find: ": p.leaderEpoch + 1;",
    replace: ": p.leaderEpoch;",
    why: "An election does not bump the leader epoch.",
  },
  {
    id: "repl-partition-epoch-unchecked",
    campaign: "replication",
    file: "src/meta/partition-rules.ts",
    find: "if (r.partitionEpoch !== undefined && r.partitionEpoch !== p.partitionEpoch) {",
    replace: "if (false) {",
    why: "Metadata apply accepts a PartitionChanged computed from another partition epoch (a " +
      "stale controller's decision, a deposed leader's ISR change).",
    // The planted decision-without-partition-epoch bug needed as many (docs/replication-sim.md).
    seeds: 1500,
  },
  {
    id: "repl-rejoin-before-epoch-start",
    campaign: "replication",
    file: LEADER,
    find: "if (!synced || f.logEnd < this.epochStartOffset) return undefined;",
    replace: "if (!synced) return undefined;",
    why: "A follower rejoins the ISR without having reached this leader's epoch start, i.e. " +
      "possibly before it truncated its diverged records.",
    expect: "survives",
    reason: "Masked by the divergence check before it: the leader records a follower's position " +
      "only for a fetch whose last epoch findDivergence found in its own history " +
      "(replica-manager.ts, and the model's #serveOne), i.e. from a log that matches the " +
      "leader's up to the fetch offset. A follower that has not truncated its diverged records " +
      "never reaches onFetch, and one whose log is a matching prefix below the epoch start " +
      "holds everything up to the HW it rejoins at. Defence in depth (not in 4000 seeds).",
  },
  {
    id: "repl-rejoin-unsynced",
    campaign: "replication",
    file: LEADER,
    find: "const synced = f.durableEnd >= this.#hw ||",
    replace: "const synced = f.logEnd >= this.#hw ||",
    why: "A follower rejoins the ISR once its log end reaches the HW, synced or not.",
  },
  {
    id: "repl-fenced-member-kept",
    campaign: "replication",
    file: ELECTIONS,
    find: "const rest = p.isr.filter((id) => id !== broker && live(id));",
    replace: "const rest = p.isr.filter((id) => id !== broker);",
    why: "A fence removes the fenced broker from the ISR but keeps other fenced members (whose " +
      "own fence's changes were lost with a failing controller).",
    expect: "survives",
    reason: "Metadata apply refuses a PartitionChanged that keeps a fenced broker in an online " +
      "ISR (INELIGIBLE_REPLICA), and invariant 5 must allow that refusal: a correct " +
      "controller's decision meets it too when a broker was fenced after the view it was " +
      "computed from. The fence's election is refused until the other fenced broker is back, " +
      "which costs availability and every seed's heal restores (not in 4000 seeds). A checker " +
      "knowing the fenced set each decision was computed from could call it a bug.",
  },
  {
    id: "repl-offline-isr-emptied",
    campaign: "replication",
    file: ELECTIONS,
    find: "rest.length > 0 ? rest : p.isr,",
    replace: "rest,",
    why: "A partition going offline gets an empty ISR instead of keeping its last members, the " +
      "only replicas known to hold every committed record.",
  },
  {
    id: "repl-sessions-never-expire",
    campaign: "replication",
    file: "src/replication/sessions.ts",
    find: "if (nowMs > s.deadlineMs) {",
    replace: "if (false) {",
    why: "Broker sessions never expire: a dead or cut-off broker is never fenced, its " +
      "partitions never fail over.",
    expect: "survives",
    reason: "Every fault in the campaign heals: a crashed broker restarts and re-registers " +
      "(which fences its old incarnation at once), a paused one resumes, partitions end. " +
      "Sessions only decide when a broker is fenced, which costs availability until it is " +
      "back, never acknowledged data; the liveness check runs after everything is back.",
  },
  {
    id: "repl-alter-leader-epoch-unchecked",
    campaign: "replication",
    file: ELECTIONS,
    find: "if (req.leaderEpoch !== p.leaderEpoch) {",
    replace: "if (false) {",
    why: "The controller accepts an ISR change from a leader epoch that is not current.",
    expect: "survives",
    reason: "Masked by the partition-epoch check right after it: every election bumps the " +
      "partition epoch too, so a request from an old leader epoch always carries an old " +
      "partition epoch and is refused anyway (INVALID_UPDATE_VERSION instead of " +
      "FENCED_LEADER_EPOCH). Defence in depth, not visible as a wrong outcome.",
  },
  {
    id: "repl-replica-leader-hw-at-log-end",
    campaign: "replication",
    file: "src/replication/replica.ts",
    find: "      highWatermark: hw,",
    replace: "      highWatermark: this.log.logEndOffset(),",
    why: "A new leader's shell starts its high watermark at its log end: records it holds that " +
      "were never committed become visible to consumers and count as committed, though a later " +
      "leader may not have them (the simulator runs replica.ts since 2026-12-05).",
  },
  {
    id: "repl-ack-before-hw",
    campaign: "replication",
    file: "src/replication/replica.ts",
    find: "while (i < this.#acks.length && this.#acks[i].lastOffset < hw) i++;",
    replace: "while (i < this.#acks.length && this.#acks[i].lastOffset <= hw) i++;",
    why: "acks=all is answered when the HW reaches a batch's last offset rather than passes it: " +
      "its last record is acknowledged before every ISR member has it.",
    expect: "survives",
    reason: MIRRORED,
  },
  {
    id: "repl-lease-ignored",
    campaign: "replication",
    file: "src/replication/replica-manager.ts",
    find: "  mayAppend(): boolean {\n    return this.#lease();\n  }",
    replace: "  mayAppend(): boolean {\n    return true;\n  }",
    why: "The produce path's lease check is gone: a paused, fenced and replaced leader appends " +
      "(and may acknowledge) as a zombie when it resumes.",
    expect: "survives",
    reason: MIRRORED,
  },
  {
    id: "repl-fetch-reports-log-end",
    campaign: "replication",
    file: "src/replication/fetcher.ts",
    find: "lastFetchedEpoch: r.log.latestEpoch(),\n          durableEnd: r.log.durableEndOffset(),",
    replace: "lastFetchedEpoch: r.log.latestEpoch(),\n          durableEnd: r.log.logEndOffset(),",
    why: "The follower's fetcher reports its log end as its durable end: the leader counts " +
      "unsynced bytes for the HW.",
    expect: "survives",
    reason: MIRRORED,
  },
];
