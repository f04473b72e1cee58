import { describe, expect, test } from "bun:test";
import { RaftLog } from "../../../src/cluster/raft/raft-log.ts";
import type { Entry } from "../../../src/cluster/raft/types.ts";
import { Harness } from "./harness.ts";

const ent = (index: number, term: number, data = `d${index}.${term}`): Entry => ({
  index,
  term,
  kind: "normal",
  data,
});

function elected(opts = {}): Harness {
  const h = new Harness([1, 2, 3], opts);
  h.run(3000);
  return h;
}

describe("replication", () => {
  test("proposals commit on every node, in order", () => {
    const h = elected();
    const l = h.leader();
    for (let i = 0; i < 100; i++) expect(h.on(l.id, (n) => n.propose(`v${i}`)).ok).toBe(true);
    h.run(200);
    const want = Array.from({ length: 100 }, (_, i) => `v${i}`);
    for (const id of [1, 2, 3]) expect(h.data(id)).toEqual(want);
    expect(l.commit).toBe(l.log.lastIndex());
  });

  test("followers refuse proposals", () => {
    const h = elected();
    const f = [1, 2, 3].find((i) => i !== h.leader().id)!;
    expect(h.node(f).propose("x")).toEqual({ ok: false, reason: "not_leader" });
  });

  test("a lagging follower is caught up with batched appends, then pipelined", () => {
    const h = elected({ maxBatchEntries: 16, maxInflight: 4 });
    const l = h.leader();
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    h.isolate(f);
    for (let i = 0; i < 60; i++) h.on(l.id, (n) => n.propose(`v${i}`));
    h.sent = [];
    h.heal();
    h.run(300);
    expect(h.data(f).length).toBe(60);
    const apps = h.sent.filter((m) => m.type === "app" && m.to === f);
    expect(Math.max(...apps.map((m) => m.type === "app" ? m.entries.length : 0))).toBe(16);
    expect(l.progress(f)?.state).toBe("replicate");
    // Pipelining: several appends to the follower go out before any answer comes back.
    h.sent = [];
    for (let i = 0; i < 3; i++) {
      l.propose(`p${i}`);
      h.flush();
    }
    expect(h.sent.filter((m) => m.type === "app" && m.to === f).length).toBe(3);
    h.deliver();
  });

  test("proposals made together leave as one append per follower, committed in one round", () => {
    // A controller pass proposes many partition changes at once; one message each (up to
    // maxInflight, the rest after an answer) committed them over three rounds.
    const h = elected({ maxInflight: 4 });
    const l = h.leader();
    const others = [1, 2, 3].filter((i) => i !== l.id);
    h.sent = [];
    for (let i = 0; i < 24; i++) l.propose(`c${i}`);
    h.flush();
    for (const f of others) {
      const apps = h.sent.filter((m) => m.type === "app" && m.to === f);
      expect(apps.length).toBe(1);
      expect(apps[0].type === "app" && apps[0].entries.length).toBe(24);
    }
    h.run(50);
    for (const f of others) expect(h.data(f).length).toBe(24);
  });

  test("an old leader's uncommitted entries are replaced by the new leader's", () => {
    const h = elected();
    const old = h.leader();
    h.isolate(old.id);
    old.propose("lost-1");
    old.propose("lost-2");
    h.flush();
    h.run(3000);
    const nl = h.leader();
    expect(nl.id).not.toBe(old.id);
    h.on(nl.id, (n) => n.propose("kept"));
    h.heal();
    h.run(500);
    expect(h.data(old.id)).toEqual(["kept"]);
    expect(old.log.lastIndex()).toBe(nl.log.lastIndex());
    expect(old.log.slice(1, 100).every((e) => e.kind !== "normal" || e.data === "kept")).toBe(true);
  });
});

test("a follower commits no further than what the append proved matches the leader's log", () => {
  // A follower holding a stale tail (2 and 3, of term 2) past an append that matched entirely
  // (an empty append at index 1, e.g. a delayed duplicate): the leader's commit index 3 says
  // nothing about that tail, which a later append of the leader's will replace.
  const h = new Harness([1, 2, 3], { preVote: false, checkQuorum: false });
  const f = h.node(2);
  const e = (index: number, term: number) => ({ index, term, kind: "normal" as const, data: "" });
  f.step({
    type: "app",
    from: 1,
    to: 2,
    term: 2,
    prevIndex: 1,
    prevTerm: 1,
    entries: [e(2, 2), e(3, 2)],
    commit: 1,
  });
  f.advance(f.ready());
  expect(f.log.lastIndex()).toBe(3);
  f.step({
    type: "app",
    from: 3,
    to: 2,
    term: 3,
    prevIndex: 1,
    prevTerm: 1,
    entries: [],
    commit: 3,
  });
  f.advance(f.ready());
  expect(f.commit).toBe(1);
});

describe("RaftLog", () => {
  test("maybeAppend truncates a conflicting suffix and keeps matching entries", () => {
    const log = new RaftLog({ voters: [1], learners: [] }, undefined, [
      ent(1, 1),
      ent(2, 1),
      ent(3, 2),
    ]);
    expect(log.maybeAppend(1, 1, [ent(2, 1), ent(3, 3), ent(4, 3)])).toBe(4);
    expect(log.entries.map((e) => e.term)).toEqual([1, 1, 3, 3]);
    expect(log.unstableFrom).toBe(3);
    expect(log.maybeAppend(4, 2, [])).toBeUndefined();
    // A duplicate, older append does not truncate newer entries.
    expect(log.maybeAppend(1, 1, [ent(2, 1)])).toBe(2);
    expect(log.lastIndex()).toBe(4);
  });

  test("configuration follows appended conf entries and is undone by truncation", () => {
    const log = new RaftLog({ voters: [1], learners: [] }, undefined, [ent(1, 1)]);
    log.append({ index: 2, term: 1, kind: "conf", change: { op: "addLearner", node: 2 } });
    expect(log.config()).toEqual({ voters: [1], learners: [2] });
    log.truncateFrom(2);
    expect(log.config()).toEqual({ voters: [1], learners: [] });
  });

  test("up-to-date comparison uses last term, then length", () => {
    const log = new RaftLog({ voters: [1], learners: [] }, undefined, [ent(1, 1), ent(2, 2)]);
    expect(log.isUpToDate(1, 3)).toBe(true);
    expect(log.isUpToDate(5, 1)).toBe(false);
    expect(log.isUpToDate(2, 2)).toBe(true);
    expect(log.isUpToDate(1, 2)).toBe(false);
  });
});

describe("snapshots", () => {
  test("the log is compacted past the snapshot threshold", () => {
    const h = elected({ snapshotThreshold: 10 });
    const l = h.leader();
    for (let i = 0; i < 35; i++) h.on(l.id, (n) => n.propose(`v${i}`));
    h.run(200);
    for (const id of [1, 2, 3]) {
      expect(h.node(id).log.snapIndex).toBeGreaterThan(20);
      expect(h.storage.get(id)!.snapshot!.meta.index).toBe(h.node(id).log.snapIndex);
    }
  });

  test("a follower far behind gets the snapshot installed, then the rest", () => {
    const h = elected({ snapshotThreshold: 10 });
    const l = h.leader();
    const f = [1, 2, 3].find((i) => i !== l.id)!;
    h.isolate(f);
    for (let i = 0; i < 40; i++) h.on(l.id, (n) => n.propose(`v${i}`));
    h.run(100);
    h.on(l.id, (n) => n.propose("last"));
    h.sent = [];
    h.heal();
    h.run(500);
    expect(h.sent.some((m) => m.type === "snap" && m.to === f)).toBe(true);
    const fn = h.node(f);
    expect(fn.log.snapIndex).toBeGreaterThan(1);
    expect(fn.commit).toBe(l.commit);
    expect(h.data(f).at(-1)).toBe("last");
    expect(h.storage.get(f)!.snapshot!.data).toMatch(/^snap@/);
  });
});
