// Planted bugs in the production SWIM core (src/cluster/swim/node.ts), run against the SWIM
// chaos campaign (test/sim/swim: 5-20 nodes, loss, duplication, reordering, skewed clocks, a
// crash with restart, a graceful leave and rejoin, a partition; checked: a crashed member is
// declared dead by everyone within 45 s, live members converge within 30 s of the last
// disruption and stay so), then against SWIM under 10 % message loss (test/sim/swim/
// loss-campaign.ts: false positives within the stated bound).
import type { Mutation } from "./types.ts";

const NODE = "src/cluster/swim/node.ts";
/** Chaos first (detection, convergence), then loss (false positives). */
const CAMPAIGNS = ["swim", "swim-loss"] as const;

export const SWIM: Mutation[] = [
  {
    id: "swim-equal-alive-clears-suspicion",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "if (u.incarnation === cur.incarnation && STATE_RANK[u.state] <= " +
      "STATE_RANK[cur.state]) {",
    replace: 'if (u.incarnation === cur.incarnation && u.state !== "alive" && ' +
      "STATE_RANK[u.state] <= STATE_RANK[cur.state]) {",
    why: "An alive message of the same incarnation overrides a suspicion (or a death): old " +
      "gossip keeps a crashed member alive.",
  },
  {
    id: "swim-older-alive-accepted",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "if (u.incarnation < cur.incarnation) return;",
    replace: 'if (u.incarnation < cur.incarnation && u.state !== "alive") return;',
    why: "An alive message of an older incarnation is applied: stale news revives failed " +
      "members and rolls incarnations back.",
  },
  {
    id: "swim-no-buddy-on-probe",
    campaign: CAMPAIGNS,
    file: NODE,
    find: 'const buddy = e.member.state === "suspect" ? [this.suspectUpdate(e)] : [];',
    replace: "const buddy: Update[] = [];",
    why: "Lifeguard's buddy system is gone: a probe to a suspect does not carry its suspicion, " +
      "so the suspect learns of it only by gossip.",
    expect: "survives",
    reason: "Measured over 150 chaos seeds and 12 ten-minute runs at 30 % loss: the worst " +
      "convergence after a heal doubles (13 s against 6 s) but stays within the 30 s bound, and " +
      "false positives stay within the noise (7.9 against 6.75 per member-hour at 30 % loss, " +
      "none at 10 %): the suspect still hears of its suspicion by gossip within a few probe " +
      "rounds. Only a tighter convergence bound would show it.",
  },
  {
    id: "swim-failed-sender-never-told",
    campaign: CAMPAIGNS,
    file: NODE,
    find: 'if (m.state !== "suspect" && m.state !== "dead") return undefined;',
    replace: "return undefined;",
    why: "A member that messages us while we hold it suspect or dead is not told (no notice in " +
      "the reply), so it cannot refute unless gossip happens to reach it.",
    expect: "survives",
    reason: "Push-pull still reaches members held dead (half of all push-pulls go to one) and " +
      "carries the verdict, so the member refutes. Measured: worst convergence 8 s (6 s " +
      "unmutated, bound 30 s), no false positive at 10 % loss; at 30 % loss they nearly double " +
      "(12.7 against 6.75 per member-hour over 12 runs), but one run's own noise at 30 % loss " +
      "spans 2-15, so no per-seed bound tells them apart.",
  },
  {
    id: "swim-confirmation-restarts-timer",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "s.deadline = s.startedAt + suspicionTimeoutMs(s.minMs, s.maxMs, s.k, c);",
    replace: "s.deadline = this.now + suspicionTimeoutMs(s.minMs, s.maxMs, s.k, c);",
    why: "Each independent confirmation restarts the suspicion timeout from now instead of " +
      "shortening it from the start (Lifeguard): more accusers, later death.",
    expect: "survives",
    reason: "Detection slows but stays within the stated 45 s bound (worst 25.9 s against 20.5 s " +
      "unmutated over 150 chaos seeds) and false positives fall; only a tighter bound on " +
      "detection time would show it.",
  },
  {
    id: "swim-refute-same-incarnation",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "this.bumpIncarnation(u.incarnation + 1);",
    replace: "this.bumpIncarnation(u.incarnation);",
    why: "A refutation does not raise the incarnation above the accusation's, so suspect " +
      "still beats its alive message.",
  },
  {
    id: "swim-current-suspicion-not-refuted",
    campaign: CAMPAIGNS,
    file: NODE,
    find: ": u.incarnation >= this.inc;",
    replace: ": u.incarnation > this.inc;",
    why: "A member ignores a suspicion about its current incarnation (only refutes newer " +
      "ones), so a live member is declared dead.",
  },
  {
    id: "swim-probe-failure-declares-dead",
    campaign: CAMPAIGNS,
    file: NODE,
    find: 'this.apply({ ...e.member, state: "suspect", from: this.id });',
    replace: 'this.apply({ ...e.member, state: "dead", from: this.id });',
    why: "A failed probe declares the target dead at once, skipping the suspicion a live " +
      "member could refute.",
  },
  {
    id: "swim-tombstone-reaped-at-once",
    campaign: CAMPAIGNS,
    file: NODE,
    find: "        e.since + this.config.deadRetentionMs <= now\n",
    replace: "        e.since <= now\n",
    why: "Dead members are forgotten at once instead of after deadRetentionMs: the tombstone " +
      "that stops stale alive news is gone.",
  },
];
