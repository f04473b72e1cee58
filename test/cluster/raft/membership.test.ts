import { describe, expect, test } from "bun:test";
import { nextMembershipChange } from "../../../src/cluster/raft/controller.ts";
import { parseMessage } from "../../../src/cluster/raft/messages.ts";
import { MemoryStorage } from "../../../src/cluster/raft/storage.ts";
import { Harness } from "./harness.ts";

function elected(voters = [1, 2, 3]): Harness {
  const h = new Harness(voters);
  h.run(3000);
  return h;
}

describe("membership", () => {
  test("a joiner is added as a learner, catches up, then is promoted", () => {
    const h = elected();
    const l = h.leader();
    for (let i = 0; i < 5; i++) h.on(l.id, (n) => n.propose(`v${i}`));
    h.start(4, new MemoryStorage());
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "promote", node: 4 })).ok).toBe(false);
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "addLearner", node: 4 })).ok).toBe(true);
    h.run(500);
    expect(h.node(4).config).toEqual({ voters: [1, 2, 3], learners: [4] });
    expect(h.data(4)).toEqual(["v0", "v1", "v2", "v3", "v4"]);
    expect(l.caughtUpLearners()).toEqual([4]);
    // A learner never campaigns.
    h.run(5000);
    expect(h.node(4).role).toBe("follower");
    const ch = nextMembershipChange({
      config: l.config,
      caughtUp: l.caughtUpLearners(),
      voters: 5,
    });
    expect(ch).toEqual({ op: "promote", node: 4 });
    expect(h.on(l.id, (n) => n.proposeConfChange(ch!)).ok).toBe(true);
    h.run(300);
    for (const id of [1, 2, 3, 4]) expect(h.node(id).config.voters).toEqual([1, 2, 3, 4]);
  });

  test("a learner that never answers is never caught up, nor promoted (a short log too)", () => {
    // The old rule (match within 16 of the leader's last index) counted a node that never
    // answered as caught up while the log was short: promoted, it then blocked every commit.
    const h = elected();
    const l = h.leader();
    expect(l.log.lastIndex()).toBeLessThan(16);
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "addLearner", node: 9 })).ok).toBe(true);
    h.run(3000); // node 9 is never started: nothing reaches it, it acknowledges nothing
    expect(l.config.learners).toEqual([9]);
    expect(l.caughtUpLearners()).toEqual([]);
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "promote", node: 9 })).ok).toBe(false);
    expect(nextMembershipChange({ config: l.config, caughtUp: l.caughtUpLearners(), voters: 5 }))
      .toBeUndefined();
    // Writes still commit with the three voters.
    expect(h.on(l.id, (n) => n.propose("still")).ok).toBe(true);
    h.run(300);
    expect(h.data(l.id)).toContain("still");
  });

  test("a learner counts as caught up once it acknowledged the leader's commit index", () => {
    const h = elected();
    const l = h.leader();
    h.start(4, new MemoryStorage());
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "addLearner", node: 4 })).ok).toBe(true);
    // Cut the learner off before it has anything: not caught up however short the log.
    for (const v of [1, 2, 3]) h.cut.add(`${v}>4`);
    h.run(500);
    expect(l.caughtUpLearners()).toEqual([]);
    for (const v of [1, 2, 3]) h.cut.delete(`${v}>4`);
    h.run(500);
    expect(l.progress(4)!.match).toBeGreaterThanOrEqual(l.commit);
    expect(l.caughtUpLearners()).toEqual([4]);
  });

  test("no configuration change before the leader's no-op commits, one at a time", () => {
    const h = new Harness([1, 2, 3], { preVote: false });
    const l = h.node(1);
    l.tick(5000);
    const rd = l.ready();
    l.advance(rd);
    for (const m of rd.messages) {
      const v = h.node(m.to);
      v.step(m);
      const out = v.ready();
      v.advance(out);
      for (const r of out.messages) l.step(r);
    }
    expect(l.role).toBe("leader");
    expect(l.commit).toBeLessThan(l.log.lastIndex());
    expect(l.proposeConfChange({ op: "addLearner", node: 9 })).toMatchObject({
      ok: false,
      reason: "conf_pending",
    });
    h.deliver();
    expect(l.proposeConfChange({ op: "addLearner", node: 9 }).ok).toBe(true);
    expect(l.proposeConfChange({ op: "addLearner", node: 8 })).toMatchObject({
      ok: false,
      reason: "conf_pending",
    });
    h.deliver();
    expect(l.proposeConfChange({ op: "addLearner", node: 8 }).ok).toBe(true);
  });

  test("a voter is removed; the leader cannot remove itself", () => {
    const h = elected();
    const l = h.leader();
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "remove", node: l.id })).ok).toBe(false);
    expect(h.on(l.id, (n) => n.proposeConfChange({ op: "remove", node: f })).ok).toBe(true);
    h.run(300);
    expect(l.config.voters).not.toContain(f);
    // Two voters left: commits still need both, and work.
    expect(h.on(l.id, (n) => n.propose("after")).ok).toBe(true);
    h.run(200);
    for (const id of l.config.voters) expect(h.data(id)).toContain("after");
  });
});

describe("controller", () => {
  const cfg = { voters: [1], learners: [2, 3] };
  test("promotes the lowest caught-up learner while below the target", () => {
    expect(nextMembershipChange({ config: cfg, caughtUp: [3, 2], voters: 3 })).toEqual({
      op: "promote",
      node: 2,
    });
    expect(nextMembershipChange({ config: cfg, caughtUp: [], voters: 3 })).toBeUndefined();
    expect(nextMembershipChange({ config: cfg, caughtUp: [2], voters: 1 })).toBeUndefined();
    expect(nextMembershipChange({ config: cfg, caughtUp: [9], voters: 5 })).toBeUndefined();
  });
});

describe("read-index", () => {
  test("leader and follower reads return the commit index after a quorum round", () => {
    const h = elected();
    const l = h.leader();
    h.on(l.id, (n) => n.propose("w"));
    h.run(100);
    h.on(l.id, (n) => n.readIndex("a"));
    expect(h.reads.get(l.id)).toEqual([{ index: l.commit, ctx: "a" }]);
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    h.on(f, (n) => n.readIndex("b"));
    expect(h.reads.get(f)).toEqual([{ index: l.commit, ctx: "b" }]);
  });

  test("an isolated leader cannot serve a read and reports it failed on stepping down", () => {
    const h = elected();
    const l = h.leader();
    h.isolate(l.id);
    h.on(l.id, (n) => n.readIndex("c"));
    expect(h.reads.get(l.id) ?? []).toEqual([]);
    h.run(2100);
    expect(h.events.get(l.id)!.some((e) => e.type === "readFailed" && e.ctx === "c")).toBe(true);
  });
});

describe("parseMessage", () => {
  test("accepts well-formed messages and rejects hostile ones", () => {
    const ok = {
      type: "app",
      from: 1,
      to: 2,
      term: 3,
      prevIndex: 4,
      prevTerm: 2,
      commit: 4,
      entries: [{ index: 5, term: 3, kind: "normal", data: "x" }],
    };
    expect(parseMessage(ok)).toEqual(ok as never);
    expect(parseMessage(null)).toBeUndefined();
    expect(parseMessage({ ...ok, term: -1 })).toBeUndefined();
    expect(parseMessage({ ...ok, entries: [{ index: 7, term: 3, kind: "normal", data: "x" }] }))
      .toBeUndefined();
    expect(parseMessage({ ...ok, entries: [{ index: 5, term: 9, kind: "normal", data: "x" }] }))
      .toBeUndefined();
    expect(parseMessage({ ...ok, type: "nope" })).toBeUndefined();
    expect(
      parseMessage({ type: "snap", from: 1, to: 2, term: 1, snapshot: { meta: {}, data: "" } }),
    )
      .toBeUndefined();
    expect(parseMessage({ type: "hb", from: 1, to: 2, term: 1, commit: 1.5, readSeq: 0 }))
      .toBeUndefined();
  });
});
