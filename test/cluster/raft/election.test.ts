import { describe, expect, test } from "bun:test";
import type { RaftNode } from "../../../src/cluster/raft/node.ts";
import { NONE } from "../../../src/cluster/raft/types.ts";
import { Harness } from "./harness.ts";

describe("elections", () => {
  test("three voters elect exactly one leader, which commits a no-op of its term", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    expect(h.leaders().length).toBe(1);
    const l = h.leader();
    expect(l.term).toBeGreaterThanOrEqual(2);
    for (const id of [1, 2, 3]) {
      const noop = h.applied.get(id)!.find((e) => e.kind === "noop");
      expect(noop?.term).toBe(l.term);
      expect(h.node(id).leader).toBe(l.id);
    }
  });

  test("a single voter elects itself", () => {
    const h = new Harness([1]);
    h.run(2100);
    expect(h.node(1).role).toBe("leader");
  });

  test("term and vote are in the Ready that carries the vote requests, with a sync", () => {
    const h = new Harness([1, 2, 3], { preVote: false });
    const n = h.node(1);
    n.tick(5000);
    const rd = n.ready();
    expect(rd.hardState).toEqual({ term: 2, vote: 1, commit: 1 });
    expect(rd.mustSync).toBe(true);
    const votes = rd.messages.filter((m) => m.type === "vote");
    expect(votes.length).toBe(2);
    for (const v of votes) expect(v.term).toBe(2);
  });

  test("a voter grants one vote per term and refuses a stale log", () => {
    const h = new Harness([1, 2, 3], { preVote: false, checkQuorum: false });
    const n = h.node(2);
    n.step({ type: "vote", from: 1, to: 2, term: 5, lastIndex: 1, lastTerm: 1, transfer: false });
    n.step({ type: "vote", from: 3, to: 2, term: 5, lastIndex: 1, lastTerm: 1, transfer: false });
    n.step({ type: "vote", from: 3, to: 2, term: 6, lastIndex: 0, lastTerm: 0, transfer: false });
    const resp = n.ready().messages.filter((m) => m.type === "voteResp");
    expect(resp.map((m) => m.type === "voteResp" && m.granted)).toEqual([true, false, false]);
    expect(n.vote).toBe(NONE); // term 6 moved on; the stale candidate got nothing
    expect(n.term).toBe(6);
  });

  test("a vote granted in a term the voter already holds is persisted before the answer", () => {
    // The voter reaches term 5 by refusing a stale candidate, so granting the next one changes
    // only the vote: that change alone must be in the Ready carrying the grant (a restart would
    // otherwise forget it and grant term 5 again, to a third candidate: two leaders).
    const h = new Harness([1, 2, 3, 4, 5], { preVote: false, checkQuorum: false });
    const take = (n: RaftNode) => {
      const rd = n.ready();
      void h.storage.get(2)!.save(rd.hardState, rd.entries, rd.snapshot, rd.mustSync);
      n.advance(rd);
      return rd;
    };
    const n = h.node(2);
    n.step({ type: "vote", from: 3, to: 2, term: 5, lastIndex: 0, lastTerm: 0, transfer: false });
    take(n);
    expect(n.term).toBe(5);
    n.step({ type: "vote", from: 1, to: 2, term: 5, lastIndex: 1, lastTerm: 1, transfer: false });
    const rd = take(n);
    const grant = rd.messages.find((m) => m.type === "voteResp");
    expect(grant?.type === "voteResp" && grant.granted).toBe(true);
    expect(rd.hardState?.vote).toBe(1);
    expect(rd.mustSync).toBe(true);
    // Through storage and a restart: the vote holds, candidate 4 of term 5 gets nothing.
    const after = h.restart(2);
    after.step({
      type: "vote",
      from: 4,
      to: 2,
      term: 5,
      lastIndex: 1,
      lastTerm: 1,
      transfer: false,
    });
    const again = take(after).messages.find((m) => m.type === "voteResp");
    expect(again?.type === "voteResp" && again.granted).toBe(false);
  });

  test("restart keeps term, vote and log", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    h.on(l.id, (n) => n.propose("x"));
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    const before = h.node(f);
    const after = h.restart(f);
    expect(after.term).toBe(before.term);
    expect(after.vote).toBe(before.vote);
    expect(after.log.lastIndex()).toBe(before.log.lastIndex());
  });
});

describe("pre-vote and CheckQuorum", () => {
  test("a cut-off follower does not raise its term and does not depose the leader", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    const term = h.node(f).term;
    h.isolate(f);
    h.run(10_000);
    expect(h.node(f).term).toBe(term);
    expect(h.node(f).role).toBe("precandidate");
    h.heal();
    h.run(2000);
    expect(h.leader().id).toBe(l.id);
    expect(h.leader().term).toBe(term);
  });

  test("without pre-vote the same node would disrupt (the check is meaningful)", () => {
    const h = new Harness([1, 2, 3], { preVote: false, checkQuorum: false });
    h.run(3000);
    const l = h.leader();
    const term = l.term;
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    h.isolate(f);
    h.run(5000);
    expect(h.node(f).term).toBeGreaterThan(term);
    h.heal();
    h.run(3000);
    expect(h.leader().term).toBeGreaterThan(term);
  });

  test("a leader that cannot reach a majority steps down", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    h.isolate(l.id);
    h.run(2100);
    expect(l.role).toBe("follower");
    const others = [1, 2, 3].filter((i) => i !== l.id).map((i) => h.node(i));
    expect(others.some((n) => n.role === "leader")).toBe(true);
  });

  test("a hint that the leader is gone brings the election within a few heartbeats", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const rest = [1, 2, 3].filter((i) => i !== l.id);
    h.isolate(l.id); // its process died: every connection from it closed
    const t0 = h.now;
    for (const id of rest) h.node(id).hintPeerGone(l.id);
    while (h.now - t0 < 5000 && !rest.some((id) => h.node(id).role === "leader")) h.run(10);
    // Without the hint: at least one election timeout (1000 ms) of silence first.
    expect(h.now - t0).toBeLessThan(500);
    expect(rest.filter((id) => h.node(id).role === "leader").length).toBe(1);
  });

  test("a wrong hint (the leader is alive) changes no term and no leader", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const term = l.term;
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    h.node(f).hintPeerGone(l.id);
    h.run(2000);
    expect(h.leader().id).toBe(l.id);
    expect(h.leader().term).toBe(term);
    // A hint about a peer that is not the leader does nothing either.
    const other = [1, 2, 3].find((i) => i !== l.id && i !== f)!;
    h.node(f).hintPeerGone(other);
    h.run(2000);
    expect(h.leader().term).toBe(term);
  });

  test("voters that hear from a leader ignore higher-term campaigns (lease)", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const f = h.node([1, 2, 3].find((i) => i !== l.id)!);
    const term = f.term;
    f.step({
      type: "vote",
      from: 9,
      to: f.id,
      term: term + 5,
      lastIndex: 99,
      lastTerm: 99,
      transfer: false,
    });
    expect(f.term).toBe(term);
    f.step({
      type: "vote",
      from: 9,
      to: f.id,
      term: term + 5,
      lastIndex: 99,
      lastTerm: 99,
      transfer: true,
    });
    expect(f.term).toBe(term + 5);
  });
});

describe("leadership transfer", () => {
  test("TimeoutNow hands leadership to the target at once", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const term = l.term;
    const target = [1, 2, 3].find((i) => i !== l.id)!;
    h.on(l.id, (n) => n.propose("before"));
    const r = h.on(l.id, (n) => n.transferLeadership(target));
    expect(r.ok).toBe(true);
    h.run(50);
    expect(h.leader().id).toBe(target);
    expect(h.leader().term).toBe(term + 1);
    expect(h.data(target)).toEqual(["before"]);
    expect(h.sent.some((m) => m.type === "timeoutNow" && m.to === target)).toBe(true);
  });

  test("proposals are refused while transferring; the transfer gives up after a timeout", () => {
    const h = new Harness([1, 2, 3]);
    h.run(3000);
    const l = h.leader();
    const target = [1, 2, 3].find((i) => i !== l.id)!;
    h.isolate(target);
    h.on(l.id, (n) => n.transferLeadership(target));
    expect(l.propose("x")).toEqual({ ok: false, reason: "transferring" });
    h.run(1100);
    expect(l.role).toBe("leader");
    expect(l.propose("y").ok).toBe(true);
  });
});
