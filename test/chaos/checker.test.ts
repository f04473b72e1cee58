// The chaos checker on doctored histories: a clean history passes, and each kind of bug planted in
// it (a lost acknowledgement, an idempotent duplicate, a committed offset going back, ...) fails
// it with that kind, and only that kind.
import { describe, expect, test } from "bun:test";
import { check, failovers, windows } from "../../scripts/chaos/checker.ts";
import { emptyHistory, type History } from "../../scripts/chaos/history.ts";

const T0 = 1_000_000;

/**
 * A clean history: per partition, 20 records acknowledged one after another (idempotent kafkajs
 * and a plain producer taking turns), read back in order by the group, committed every 5, an
 * OffsetFetch after each commit, and three replicas agreeing.
 */
function clean(): History {
  const h = emptyHistory("t", 2, ["kafkajs"]);
  h.startAt = T0;
  for (let p = 0; p < 2; p++) {
    const log: [number, string][] = [];
    let at = T0 + 100;
    for (let o = 0; o < 20; o++) {
      const src = o % 2 === 0 ? "kafkajs" : "plain";
      const key = `${src}-${p}-${o}`;
      h.sends.push({ key, src, at });
      h.acks.push({ key, p, o, src, sentAt: at, ackAt: at + 5 });
      log.push([o, key]);
      at += 10;
    }
    for (const [o, key] of log) h.reads.push({ p, o, key, at: at + o, by: "group read by m0" });
    for (let next = 5; next <= 20; next += 5) {
      const sentAt = at + 100 * next;
      h.commits.push({ p, offset: next, by: "m0", sentAt, ackAt: sentAt + 5 });
      h.fetches.push({ p, offset: next, sentAt: sentAt + 20, answeredAt: sentAt + 25, by: "poll" });
    }
    for (const broker of [0, 1, 2]) {
      h.replicas.push({ p, broker, leader: broker === p, highWatermark: 20, records: [...log] });
    }
  }
  h.endAt = T0 + 10_000;
  return h;
}

function kinds(h: History): string[] {
  return [...new Set(check(h).violations.map((v) => v.kind))];
}

const leaderLog = (h: History, p: number) => h.replicas.find((r) => r.p === p && r.leader)!;

describe("chaos checker", () => {
  test("a clean history passes", () => {
    const v = check(clean());
    expect(v.violations).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.acked).toEqual({ kafkajs: 20, plain: 20 });
    expect(v.records).toBe(40);
    expect(v.replicasCompared).toBe(4);
  });

  test("a lost acknowledged record", () => {
    const h = clean();
    const l = leaderLog(h, 1);
    // The record at offset 7 is gone and the rest of the log moved down (a truncation).
    l.records = l.records.filter(([o]) => o !== 7).map(([o, k]) => [o > 7 ? o - 1 : o, k]);
    for (const r of h.replicas.filter((r) => r.p === 1)) r.records = l.records;
    const v = check(h);
    expect(v.ok).toBe(false);
    expect(v.lost).toBe(13);
    expect(kinds(h)).toContain("lost");
    expect(v.violations.find((x) => x.kind === "lost")!.msg).toContain("plain-1-7");
  });

  test("an acknowledged record replaced at its offset, read by nobody", () => {
    const h = clean();
    h.reads = [];
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records = r.records.map(([o, k]) => [o, o === 19 ? "plain-0-x" : k]);
    }
    h.sends.push({ key: "plain-0-x", src: "plain", at: T0 });
    expect(kinds(h)).toEqual(["lost"]);
  });

  test("a duplicate from an idempotent producer; a plain producer's duplicate is allowed", () => {
    const h = clean();
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records.push([20, "plain-0-1"]);
      r.highWatermark = 21;
    }
    let v = check(h);
    expect(v.ok).toBe(true);
    expect(v.duplicatedPlain).toBe(1);
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records.push([21, "kafkajs-0-2"]);
      r.highWatermark = 22;
    }
    v = check(h);
    expect(kinds(h)).toEqual(["duplicate"]);
    expect(v.duplicatedIdempotent).toBe(1);
  });

  test("an idempotent key written again under a new producer epoch is the client's doing", () => {
    const h = clean();
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records.push([20, "kafkajs-0-2"]);
      r.highWatermark = 21;
    }
    // The leader's batches: offsets 0-19 from pid 7 epoch 0, offset 20 from pid 7 epoch 1.
    h.batches = [
      { p: 0, base: 0, last: 19, pid: 7, epoch: 0, seq: 0 },
      { p: 0, base: 20, last: 20, pid: 7, epoch: 1, seq: 0 },
    ];
    let v = check(h);
    expect(v.violations).toEqual([]);
    expect(v.duplicatedAcrossEpochs).toBe(1);
    // The same session twice is the broker's: its sequence check let a retry in.
    h.batches[1].epoch = 0;
    v = check(h);
    expect(kinds(h)).toEqual(["duplicate"]);
    expect(v.violations[0].msg).toContain("t-0@2 (pid 7 epoch 0), t-0@20 (pid 7 epoch 0)");
  });

  test("a committed offset going back", () => {
    const h = clean();
    // After the group's commit of 20 was acknowledged, OffsetFetch serves 10 (a coordinator that
    // lost the last commits in a failover).
    const last = h.commits.filter((c) => c.p === 1).at(-1)!;
    h.fetches.push({
      p: 1,
      offset: 10,
      sentAt: last.ackAt! + 1000,
      answeredAt: last.ackAt! + 1005,
      by: "poll",
    });
    expect(kinds(h)).toEqual(["commit-lost", "commit-regression"]);
  });

  test("an answer of an unacknowledged commit that later vanishes is a regression", () => {
    const h = clean();
    const last = h.commits.filter((c) => c.p === 0).at(-1)!;
    // A commit of 25 is sent and never answered; OffsetFetch serves it, then serves 20 again.
    h.commits.push({ p: 0, offset: 25, by: "m0", sentAt: last.ackAt! + 100 });
    h.fetches.push({
      p: 0,
      offset: 25,
      sentAt: last.ackAt! + 200,
      answeredAt: last.ackAt! + 205,
      by: "poll",
    });
    expect(kinds(h)).toEqual([]);
    h.fetches.push({
      p: 0,
      offset: 20,
      sentAt: last.ackAt! + 300,
      answeredAt: last.ackAt! + 305,
      by: "poll",
    });
    expect(kinds(h)).toEqual(["commit-regression"]);
  });

  test("a lower commit acknowledged later explains a lower answer", () => {
    const h = clean();
    const last = h.commits.filter((c) => c.p === 0).at(-1)!;
    h.commits.push({
      p: 0,
      offset: 15,
      by: "m1",
      sentAt: last.ackAt! + 50,
      ackAt: last.ackAt! + 60,
    });
    h.fetches.push({
      p: 0,
      offset: 15,
      sentAt: last.ackAt! + 100,
      answeredAt: last.ackAt! + 105,
      by: "poll",
    });
    expect(kinds(h)).toEqual([]);
  });

  test("no committed offset served after one was acknowledged", () => {
    const h = clean();
    h.fetches.push({ p: 0, offset: -1, sentAt: T0 + 9000, answeredAt: T0 + 9005, by: "poll" });
    expect(kinds(h)).toEqual(["commit-lost", "commit-regression"]);
  });

  test("a record acknowledged before another was sent, at a higher offset (reorder)", () => {
    const h = clean();
    // Swap the offsets of two records acknowledged one after the other, in the log too.
    const a = h.acks.find((x) => x.p === 0 && x.o === 3)!;
    const b = h.acks.find((x) => x.p === 0 && x.o === 4)!;
    [a.o, b.o] = [b.o, a.o];
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records = r.records.map(([o, k]) => [o === 3 ? 4 : o === 4 ? 3 : o, k]);
      r.records.sort((x, y) => x[0] - y[0]);
    }
    h.reads = h.reads.filter((r) => r.p !== 0);
    expect(kinds(h)).toEqual(["reorder"]);
  });

  test("concurrent sends may land in either order", () => {
    const h = clean();
    const a = h.acks.find((x) => x.p === 0 && x.o === 3)!;
    const b = h.acks.find((x) => x.p === 0 && x.o === 4)!;
    b.sentAt = a.sentAt; // b was sent before a was acknowledged
    [a.o, b.o] = [b.o, a.o];
    for (const r of h.replicas.filter((r) => r.p === 0)) {
      r.records = r.records.map(([o, k]) => [o === 3 ? 4 : o === 4 ? 3 : o, k]);
      r.records.sort((x, y) => x[0] - y[0]);
    }
    h.reads = h.reads.filter((r) => r.p !== 0);
    expect(kinds(h)).toEqual([]);
  });

  test("replicas that disagree below the high watermark", () => {
    const h = clean();
    const f = h.replicas.find((r) => r.p === 0 && !r.leader)!;
    f.records = f.records.map(([o, k]) => [o, o === 12 ? "kafkajs-0-zz" : k]);
    expect(kinds(h)).toEqual(["divergence"]);
    // Missing below the watermark is a divergence too; beyond it, it is not.
    const g = clean();
    const f2 = g.replicas.find((r) => r.p === 1 && !r.leader)!;
    f2.records = f2.records.slice(0, 15);
    expect(kinds(g)).toEqual(["divergence"]);
    f2.highWatermark = 15;
    expect(kinds(g)).toEqual([]);
  });

  test("a consumer read a record that later disappeared", () => {
    const h = clean();
    h.reads.push({ p: 1, o: 20, key: "plain-1-ghost", at: T0 + 500, by: "group read by m1" });
    expect(kinds(h)).toEqual(["dirty-read"]);
  });

  test("a record no client sent, a double acknowledgement, an unreadable partition", () => {
    const h = clean();
    for (const r of h.replicas.filter((r) => r.p === 1)) r.records.push([20, "nobody"]);
    expect(kinds(h)).toEqual(["phantom"]);
    const g = clean();
    g.acks.push({ ...g.acks[0], o: 99 });
    expect(kinds(g)).toEqual(["double-ack"]);
    const u = clean();
    u.replicas = u.replicas.filter((r) => r.p !== 0);
    expect(kinds(u)).toEqual(["unreadable"]);
  });

  test("violations seen live fail the run", () => {
    const h = clean();
    h.live.push("crash: broker 1 exited by itself with code 1");
    expect(kinds(h)).toEqual(["live"]);
  });

  test("failover times and unavailability windows", () => {
    const h = clean();
    // A kill at +152 ms of the leader of partition 0: its next acknowledgement comes 2 s later.
    const at = T0 + 152;
    h.faults.push({
      kind: "kill",
      variant: "",
      targets: [0],
      role: "leader of 0",
      startAt: at,
      endAt: at + 1000,
      led: [0],
      recoveredAt: at + 3000,
    });
    for (const a of h.acks.filter((x) => x.p === 0 && x.o >= 6)) {
      a.sentAt += 2000;
      a.ackAt += 2000;
    }
    const f = failovers(h.acks, h.faults);
    expect(f).toEqual([{ fault: "kill 0 (leader of 0)", p: 0, ms: 2013 }]);
    const w = windows(h);
    expect(w.map((x) => [x.p, x.ms, x.during])).toEqual([[0, 2010, ["kill 0 (leader of 0)"]]]);
  });
});
