// Planted bugs in the production Raft core (src/cluster/raft), run against the Raft campaign
// (test/sim/raft: 3-5 voters, crashes losing unsynced writes, partitions, membership changes,
// snapshots, leadership transfers, read-index reads; checker.ts), then the leader-churn campaign
// (test/sim/raft/figure8.ts: the current leader crashed again and again, stale leaders handed
// proposals, small appends).
import type { Mutation } from "./types.ts";

const NODE = "src/cluster/raft/node.ts";
const LOG = "src/cluster/raft/raft-log.ts";
const CONFIG = "src/cluster/raft/config.ts";
/** The general campaign first, then the leader-churn one (test/sim/raft/figure8.ts). */
const CAMPAIGNS = ["raft", "raft-figure8"] as const;

export const RAFT: Mutation[] = [
  {
    id: "raft-commit-earlier-term",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "if (n <= this.#commit || this.log.term(n) !== this.#term) return false;",
    replace: "if (n <= this.#commit) return false;",
    why: "The leader commits an entry of an earlier term by counting replicas (Raft paper, " +
      "Figure 8): a later leader may overwrite it.",
  },
  {
    id: "raft-vote-ignores-log",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "const upToDate = this.#bugs.voteIgnoresLog || this.log.isUpToDate(m.lastIndex, " +
      "m.lastTerm);",
    replace: "const upToDate = true;",
    why: "A vote is granted without the up-to-date check on the candidate's log: a leader " +
      "may lack committed entries.",
  },
  {
    id: "raft-uptodate-ignores-length",
    campaign: CAMPAIGNS,
    file: LOG,
    find: "return lastTerm > t || (lastTerm === t && lastIndex >= this.lastIndex());",
    replace: "return lastTerm >= t;",
    why: "The up-to-date check compares last terms only: a shorter log of the same last term " +
      "wins a vote.",
  },
  {
    id: "raft-uptodate-longest-log",
    campaign: CAMPAIGNS,
    file: LOG,
    find: "return lastTerm > t || (lastTerm === t && lastIndex >= this.lastIndex());",
    replace: "return lastIndex > this.lastIndex() || (lastIndex === this.lastIndex() && " +
      "lastTerm >= t);",
    why: "The up-to-date check prefers the longer log to the later last term.",
  },
  {
    id: "raft-vote-not-persisted",
    campaign: CAMPAIGNS,
    tests: ["test/cluster/raft/election.test.ts"],
    file: NODE,
    find: "      this.#vote = m.from;\n      this.#hsDirty = true;\n",
    replace: "      this.#vote = m.from;\n",
    why: "A granted vote is not marked for persisting (hsDirty): after a restart in the same " +
      "term the node votes again, for another candidate.",
  },
  {
    id: "raft-campaign-term-not-synced",
    campaign: CAMPAIGNS,
    file: NODE,
    find:
      "      this.#vote = this.id;\n      this.#hsDirty = true;\n      this.#mustSync = true;\n",
    replace: "      this.#vote = this.id;\n      this.#hsDirty = true;\n",
    why: "A candidate's new term and self-vote are not synced (Ready.mustSync) before its vote " +
      "requests go out.",
    expect: "survives",
    reason: "Both shells that run the core sync every persisted Ready whatever mustSync says: " +
      "the simulator's (test/sim/raft/cluster.ts only shortens the fsync delay to 0) and " +
      "production's raft.db (raft-storage-sqlite.ts, synchronous=FULL). The flag is not " +
      "observable until a shell honours mustSync=false.",
  },
  {
    id: "raft-prevote-raises-term",
    campaign: CAMPAIGNS,
    file: NODE,
    find: 'if (m.type === "prevote" || (m.type === "prevoteResp" && m.granted)) {',
    replace: 'if (m.type === "prevoteResp" && m.granted) {',
    why: "A pre-vote request raises the receiver's term (pre-vote traffic must change no " +
      "term): a node coming back from a partition disrupts the cluster.",
  },
  {
    id: "raft-leader-keeps-old-term",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "        this.#becomeFollower(m.term, lead);\n",
    replace: '        if (this.#role !== "leader") this.#becomeFollower(m.term, lead);\n',
    why: "A leader does not step down on a message of a higher term.",
  },
  {
    id: "raft-append-ignores-prev-term",
    campaign: CAMPAIGNS,
    file: LOG,
    find: "if (this.term(prevIndex) !== prevTerm) return undefined;",
    replace: "if (this.term(prevIndex) === undefined) return undefined;",
    why: "A follower accepts an append whose prevLogTerm does not match its entry at prevIndex.",
  },
  {
    id: "raft-follower-commit-past-match",
    campaign: CAMPAIGNS,
    tests: ["test/cluster/raft/replication.test.ts"],
    file: NODE,
    find: "this.#commitTo(Math.min(m.commit, last));",
    replace: "this.#commitTo(Math.min(m.commit, this.log.lastIndex()));",
    why: "A follower takes the leader's commit index up to its own log end, past the entries " +
      "the append proved match the leader's.",
  },
  {
    id: "raft-heartbeat-commit-unmatched",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "commit: Math.min(p.match, this.#commit),",
    replace: "commit: this.#commit,",
    why: "Heartbeats carry the full commit index, not capped at the follower's match: a " +
      "follower with a stale uncommitted tail commits it.",
  },
  {
    id: "raft-quorum-half",
    campaign: CAMPAIGNS,
    file: CONFIG,
    find: "return Math.floor(c.voters.length / 2) + 1;",
    replace: "return Math.ceil(c.voters.length / 2);",
    why: "Quorum is half the voters, rounded up: with an even number of voters two halves " +
      "each elect a leader and commit.",
  },
  {
    id: "raft-commit-highest-match",
    campaign: CAMPAIGNS,
    file: CONFIG,
    find: "return vs[quorum(c) - 1] ?? 0;",
    replace: "return vs[0] ?? 0;",
    why: "The commit index advances to the highest match instead of the one a majority reached.",
  },
  {
    id: "raft-read-before-term-commit",
    campaign: CAMPAIGNS,
    file: NODE,
    find:
      "    if (this.log.term(this.#commit) !== this.#term) {\n      // The commit index is only",
    replace: "    if (false) {\n      // The commit index is only",
    why: "A new leader serves read-index reads before an entry of its term is committed: its " +
      "commit index may be behind what an earlier leader committed.",
  },
];
