// A leader-churn Raft scenario in the style of the classic "Figure 8" tests (MIT 6.824's
// TestFigure8Unreliable, etcd's figure-8 tests): 5 voters, every node that believes it leads is
// handed proposals, the current leader is crashed again and again shortly after (so entries of
// old terms sit on a minority, are overwritten, resurface on the next leader), crashed nodes
// come back so that a majority is always up. Appends carry few entries each, so a follower
// often acknowledges a new leader's old-term entries before its own term's no-op. The general
// campaign (scenario.ts) rarely builds these histories: a leader elected there mostly sends its
// whole backlog and its no-op in one message. Used by the mutation suite (scripts/mutate.ts,
// campaign "raft-figure8"); checked by the same Checker (election safety, log matching, leader
// completeness, committed entries never change, state machine safety) and, after the churn,
// every node must apply everything committed.
import type { SeedOutcome } from "../../../src/cluster/sim/campaigns.ts";
import { InvariantError } from "./checker.ts";
import { RaftCluster } from "./cluster.ts";

export const CHURN_MS = 60_000;
export const END_MS = 75_000;

export function runFigure8Seed(seed: number, o: { log?: (l: string) => void } = {}): SeedOutcome {
  const c = new RaftCluster(seed, {
    maxBatchEntries: 1 + (seed % 3),
    maxInflight: 2,
    snapshotThreshold: 0,
  });
  const rng = c.rng.fork();
  c.trace = o.log;
  const voters = [1, 2, 3, 4, 5];
  for (const id of voters) {
    c.clock.setSkew(id, { offsetMs: rng.int(-500, 500), rate: 0.99 + rng.next() * 0.02 });
  }
  c.net.setOptions({
    minDelayMs: 1,
    maxDelayMs: rng.int(5, 40),
    lossRate: rng.next() * 0.1,
    dupRate: rng.next() * 0.02,
    stragglerRate: 0.02,
  });
  for (const id of voters) c.addNode(id, voters);
  let cmd = 0;
  let lastTerm = 0;
  let healAt = -1;
  let committedAtHeal = 0;

  const up = () => c.running().map((n) => n.id);
  const act = (what: string) => {
    const now = c.clock.now;
    const churn = now < CHURN_MS;
    if (what === "propose") {
      // Every node that believes it leads gets the command, stale leaders included.
      for (const l of c.leaders()) {
        const r = c.withNode(l.id, (x) => x.propose(`c${++cmd}`));
        if (r?.ok) c.counts.proposals++;
      }
      if (now < END_MS - 3000) c.schedule(now + rng.int(5, 60), { k: "act", what: "propose" });
      return;
    }
    if (what === "watch") {
      // A new leader: most are crashed within a round trip or a few, while their first
      // appends (old-term entries, then their own no-op) are on the way.
      if (!churn) return;
      const l = c.leader();
      if (l !== undefined && l.term > lastTerm) {
        lastTerm = l.term;
        if (rng.chance(0.7)) {
          c.schedule(now + rng.int(1, 80), { k: "act", what: `crash:${l.id}:${l.term}` });
        }
      }
      c.schedule(now + 2, { k: "act", what: "watch" });
      return;
    }
    if (what.startsWith("crash:")) {
      const [, id, term] = what.split(":").map(Number);
      const n = c.nodes.get(id)!.raft;
      if (!churn || n === undefined || n.term !== term) return;
      c.crash(id);
      o.log?.(`${now} crash leader ${id} (term ${term})`);
      return;
    }
    if (what === "churn") {
      if (!churn) return;
      // Now and then the leader of the moment goes too, however long it has led.
      const l = c.leader();
      if (l !== undefined && rng.chance(0.3)) c.crash(l.id);
      // Keep a majority up: bring back random crashed nodes.
      const down = voters.filter((id) => !up().includes(id));
      while (up().length < 3 || (down.length > 0 && rng.chance(0.4))) {
        const id = down.splice(rng.int(0, down.length), 1)[0];
        if (id === undefined) break;
        c.restart(id);
      }
      c.schedule(now + rng.int(50, 1500), { k: "act", what: "churn" });
      return;
    }
    if (what === "heal") {
      healAt = now;
      committedAtHeal = c.check.commitMax;
      c.net.heal();
      c.net.setOptions({ lossRate: 0, dupRate: 0, stragglerRate: 0, maxDelayMs: 10 });
      for (const id of voters) c.restart(id);
    }
  };
  // A crash point that matters: the leader right after it applied a newly committed entry,
  // before the appends it sent with it (its own term's entries) arrive.
  c.onCommit = () => {
    const l = c.leader();
    if (c.clock.now < CHURN_MS && l !== undefined && rng.chance(0.05)) {
      c.schedule(c.clock.now, { k: "act", what: `crash:${l.id}:${l.term}` });
    }
  };
  c.schedule(0, { k: "act", what: "propose" });
  c.schedule(2000, { k: "act", what: "churn" });
  c.schedule(2000, { k: "act", what: "watch" });
  c.schedule(CHURN_MS, { k: "act", what: "heal" });
  const outcome = (failure?: string): SeedOutcome => ({
    failure,
    counts: { ...c.counts },
    simulatedMs: c.clock.now,
  });
  try {
    c.runUntil(END_MS, act);
    if (c.check.commitMax <= committedAtHeal) {
      return outcome(`no commit in ${END_MS - healAt} ms after the churn ended`);
    }
    const l = c.leader();
    if (l === undefined) return outcome("no leader at the end");
    for (const id of voters) {
      const x = c.nodes.get(id)!;
      if (x.smIndex < l.commit) {
        return outcome(`node ${id} applied ${x.smIndex} < commit ${l.commit} at the end`);
      }
    }
    return outcome();
  } catch (e) {
    if (e instanceof InvariantError) return outcome(`${e.message} (at ${c.clock.now} ms)`);
    return outcome(`crash: ${e instanceof Error ? e.stack : String(e)}`);
  }
}

export const campaign = {
  name: "raft-figure8",
  requiredCounts: ["crashes", "elections", "commits"],
  runSeed: (seed: number, o: { verbose: boolean; log: (l: string) => void }): SeedOutcome =>
    runFigure8Seed(seed, { log: o.verbose ? o.log : undefined }),
};
