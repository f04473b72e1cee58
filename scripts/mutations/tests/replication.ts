// Planted bugs in replication code the unit tests run directly: the replica shell (acks=all,
// leadership changes), the leader core's ISR rules, the controller's elections and sessions, and
// partition reassignment. The replication campaign (scripts/mutations/replication.ts) runs a
// mirror of the shells; these bugs are measured against test/replication/ instead.
import type { Mutation } from "../types.ts";

const REPLICA = "src/replication/replica.ts";
const LEADER = "src/replication/leader.ts";
const ELECTIONS = "src/replication/elections.ts";
const REASSIGN = "src/replication/reassignment.ts";
const REPLICA_TESTS = ["test/replication/replica.test.ts"];
const LEADER_TESTS = ["test/replication/leader.test.ts"];
const ELECTION_TESTS = ["test/replication/elections.test.ts"];
const REASSIGN_TESTS = ["test/replication/reassignment.test.ts"];

export const REPLICATION_TESTS: readonly Mutation[] = [
  {
    id: "replica-acks-at-hw",
    file: REPLICA,
    find: "if (this.highWatermark() > lastOffset) return this.#afterCommit();",
    replace: "if (this.highWatermark() >= lastOffset) return this.#afterCommit();",
    tests: REPLICA_TESTS,
    why: "acks=all answers a batch whose last offset equals the high watermark: the last record " +
      "is not yet on every ISR member when the producer is told it is.",
  },
  {
    id: "replica-min-isr-after-append-unchecked",
    file: REPLICA,
    find: "    if (this.isr.length < this.minInsyncReplicas) {\n      return Promise.reject(",
    replace: "    if (this.isr.length < 0) {\n      return Promise.reject(",
    tests: REPLICA_TESTS,
    why: "An acks=all write the ISR shrank under (below min.insync.replicas) before it was " +
      "replicated is answered OK instead of NOT_ENOUGH_REPLICAS_AFTER_APPEND.",
  },
  {
    id: "replica-acks-kept-after-leadership-lost",
    file: REPLICA,
    find: "    this.#core = null;\n    this.#failAcks(\n",
    replace: "    this.#core = null;\n    if (!wasLeader) this.#failAcks(\n",
    tests: REPLICA_TESTS,
    // The waiting test hangs rather than failing: a hang is caught, in a minute.
    testBudgetSeconds: 60,
    why: "A leader that loses its leadership keeps its acks=all waiters: producers wait for " +
      "their timeout instead of NOT_LEADER_OR_FOLLOWER at once (and retry on the new leader).",
  },
  {
    id: "replica-gated-leadership-taken",
    file: REPLICA,
    find: "if (a.leader === this.nodeId && a.gated !== true) {",
    replace: "if (a.leader === this.nodeId) {",
    tests: REPLICA_TESTS,
    why: "A broker still fenced takes up the leadership the metadata names for it: it serves " +
      "and acknowledges writes before it has caught up on the metadata.",
  },
  {
    id: "replica-fenced-leader-keeps-leading",
    file: REPLICA,
    find: "        this.partitionEpoch = -1;\n        this.#becomeFollower();\n",
    replace: "        this.partitionEpoch = -1;\n",
    tests: REPLICA_TESTS,
    why: "A leader fenced by the controller (nothing newer in the metadata) keeps leading: a " +
      "zombie leader appends while the controller elects another.",
  },
  {
    id: "leader-caught-up-at-every-fetch",
    file: LEADER,
    find: "f.lastCaughtUpMs = Math.max(f.lastCaughtUpMs, f.lastFetchMs);",
    replace: "f.lastCaughtUpMs = nowMs;",
    tests: LEADER_TESTS,
    why: "A follower that reached the previous fetch's log end counts as caught up now, not as " +
      "of that fetch: a follower always one step behind a busy leader never leaves the ISR.",
  },
  {
    id: "leader-proposal-never-resent",
    file: LEADER,
    find: "return this.pending; // resend: the controller or the network may have dropped it",
    replace: "return undefined; // resend: the controller or the network may have dropped it",
    tests: LEADER_TESTS,
    why: "An ISR change the controller never answered is never sent again: a lagging follower " +
      "stays in the ISR (acks=all blocks) until the next leader epoch.",
  },
  {
    id: "leader-expands-while-pending",
    file: LEADER,
    find: "if (this.pending !== null || this.isr.includes(id)) return undefined;",
    replace: "if (this.isr.includes(id)) return undefined;",
    tests: LEADER_TESTS,
    why: "A follower catching up is proposed while another ISR change is in flight: two " +
      "proposals from one partition epoch, the second overwriting the first.",
  },
  {
    id: "elect-unclean-on-return-ignores-config",
    file: ELECTIONS,
    find: "} else if (p.unclean && live(broker)) {",
    replace: "} else if (live(broker)) {",
    tests: ELECTION_TESTS,
    why: "A returning broker outside the ISR takes an offline partition even with " +
      "unclean.leader.election.enable off: committed records it never had are lost.",
  },
  {
    id: "elect-preferred-outside-isr",
    file: ELECTIONS,
    find: "if (p.leader !== pref && p.isr.includes(pref) && live(pref)) {",
    replace: "if (p.leader !== pref && live(pref)) {",
    tests: ELECTION_TESTS,
    why: "A preferred-leader election moves leadership back to the first replica before it has " +
      "rejoined the ISR: it truncates the records it lacks, and followers with it.",
  },
  {
    id: "elect-leaders-force-ignored",
    file: ELECTIONS,
    find: "if (!force && ps.length / (preferred.get(broker) ?? 1) <= imbalance) continue;",
    replace: "if (ps.length / (preferred.get(broker) ?? 1) <= imbalance) continue;",
    tests: ELECTION_TESTS,
    why: "ElectLeaders (force) elects nothing when the imbalance is under " +
      "leader.imbalance.per.broker.percentage: an operator's request silently does nothing.",
  },
  {
    id: "elect-isr-change-adds-fenced",
    file: ELECTIONS,
    find: "if (added.some((id) => !live(id))) {",
    replace: "if (added.some((id) => id < 0)) {",
    tests: ELECTION_TESTS,
    why: "AlterPartition may add a fenced broker to the ISR: it can then be elected without " +
      "the records written while it was away.",
  },
  {
    id: "sessions-alive-without-heartbeat",
    file: "src/replication/sessions.ts",
    find: "return s !== undefined && nowMs <= s.deadlineMs && s.lastHeartbeatMs >= 0;",
    replace: "return s !== undefined && nowMs <= s.deadlineMs;",
    tests: ["test/replication/sessions.test.ts"],
    why: "A new controller counts every broker it merely knows of as alive before its first " +
      "heartbeat: it may elect a broker that is down.",
  },
  {
    id: "sessions-hint-sets-deadline",
    file: "src/replication/sessions.ts",
    find: "s.deadlineMs = Math.min(s.deadlineMs, nowMs + this.o.hintGraceMs);",
    replace: "s.deadlineMs = nowMs + this.o.hintGraceMs;",
    tests: ["test/replication/sessions.test.ts"],
    why: "A hint sets the deadline instead of only shortening it: a broker hinted again and " +
      "again after its deadline passed is never fenced.",
  },
  {
    id: "sessions-new-controller-short-deadline",
    file: "src/replication/sessions.ts",
    find: "const first = this.o.sessionTimeoutMs + this.o.electionMs;",
    replace:
      "const first = Math.min(this.o.sessionTimeoutMs, Math.max(750, 3 * this.o.heartbeatMs));",
    tests: ["test/replication/sessions.test.ts"],
    why: "A new controller fences a silent broker after 750 ms, while a lease the old " +
      "controller confirmed still holds: cut off, the broker serves stale reads and acks=1 " +
      "writes as the old leader next to its replacement.",
  },
  {
    id: "reassign-completes-after-one-copy",
    file: REASSIGN,
    find: "if (!naive && !addingReplicas(ra).every((id) => p.isr.includes(id))) return undefined;",
    replace:
      "if (!naive && !addingReplicas(ra).some((id) => p.isr.includes(id))) return undefined;",
    tests: REASSIGN_TESTS,
    why: "A move completes once any one adding replica is in sync: the others join the replica " +
      "set (and may be elected) with only part of the log.",
  },
  {
    id: "reassign-leaving-leader-stays",
    file: REASSIGN,
    find: "const stays = ra.target.includes(p.leader) && live(p.leader);",
    replace: "const stays = live(p.leader);",
    tests: REASSIGN_TESTS,
    why: "A leader the move takes off the partition keeps leading after completion: a leader " +
      "outside its own replica set and ISR.",
  },
  {
    id: "reassign-one-more-concurrent",
    file: REASSIGN,
    find: "if (running >= maxConcurrent) break;",
    replace: "if (running > maxConcurrent) break;",
    tests: REASSIGN_TESTS,
    why: "One more move runs at a time than the concurrency limit allows (more copy traffic " +
      "than the operator set).",
  },
  {
    id: "reassign-duplicate-broker-accepted",
    file: REASSIGN,
    find:
      "if (new Set(target).size !== target.length) return bad(`broker listed twice in [${target}]`);",
    replace: "",
    tests: REASSIGN_TESTS,
    why: "A target naming a broker twice is accepted: the partition ends with fewer copies than " +
      "its replica list says.",
  },
  {
    id: "reassign-retry-refused",
    file: REASSIGN,
    find: "    if (same(ra.target, target)) return null;\n",
    replace: "",
    tests: REASSIGN_TESTS,
    why: "A retried reassignment (the same target while it runs) is refused as " +
      "REASSIGNMENT_IN_PROGRESS instead of accepted: a tool that retries on a timeout fails.",
  },
];
