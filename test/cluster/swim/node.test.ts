import { describe, expect, test } from "bun:test";
import { Rng } from "../../../src/cluster/sim/index.ts";
import {
  DEFAULT_SWIM_CONFIG,
  messageWireSize,
  SwimConfigError,
  SwimNode,
  type Update,
} from "../../../src/cluster/swim/index.ts";
import { addrsOf, Mesh } from "./mesh.ts";

function allSeeAll(m: Mesh, ids: number[]): boolean {
  return ids.every((a) => ids.every((b) => a === b || m.state(a, b) === "alive"));
}

describe("SwimNode join and membership", () => {
  test("nodes joining through one seed all come to see each other", () => {
    const m = Mesh.cluster(6);
    expect(allSeeAll(m, [0, 1, 2, 3, 4, 5])).toBe(true);
    // Each node learned about each other node exactly once.
    for (let o = 0; o < 6; o++) {
      expect(m.events.filter((e) => e.node === o && e.ev.type === "alive").length).toBe(5);
    }
    expect(m.eventsOf("suspect").length).toBe(0);
    for (const n of m.nodes.values()) expect(n.isJoined).toBe(true);
  });

  test("join through any member, not only the first", () => {
    const m = Mesh.cluster(3);
    const n = m.add(9);
    m.absorb(9, n.join(addrsOf(2).cluster, m.now));
    m.run(m.now + 10_000);
    expect(allSeeAll(m, [0, 1, 2, 9])).toBe(true);
  });

  test("join retries the next seed while unanswered", () => {
    const m = Mesh.cluster(2);
    const n = m.add(5);
    m.absorb(5, n.join(["nowhere:1", addrsOf(1).cluster], m.now));
    expect(n.isJoined).toBe(false);
    m.run(m.now + 5000);
    expect(n.isJoined).toBe(true);
    expect(n.stats.joinRequestsSent).toBe(2);
    expect(allSeeAll(m, [0, 1, 5])).toBe(true);
  });
});

describe("SwimNode failure detection", () => {
  test("a silent member is pinged, ping-req'd through k helpers, suspected, then dead", () => {
    const m = Mesh.cluster(5);
    const t0 = m.now;
    m.remove(4); // crash: its address no longer answers
    m.run(t0 + 60_000);
    expect(m.sent.some((s) => s.at > t0 && s.out.msg.type === "ping-req" && s.out.msg.target === 4))
      .toBe(true);
    for (let o = 0; o < 4; o++) {
      expect(m.state(o, 4)).toBe("dead");
      const dead = m.events.find((e) =>
        e.node === o && e.ev.type === "dead" && e.ev.member.id === 4
      );
      expect(dead!.at - t0).toBeLessThan(40_000);
    }
    expect(m.eventsOf("suspect", 4).length).toBeGreaterThan(0);
    // Nobody else was hurt.
    expect(allSeeAll(m, [0, 1, 2, 3])).toBe(true);
  });

  test("a ping-req relay sends a nack when the target is silent", () => {
    const m = Mesh.cluster(4);
    m.remove(3);
    m.run(m.now + 10_000);
    expect(m.sent.some((s) => s.out.msg.type === "nack")).toBe(true);
  });

  test("indirect probe succeeds when only the direct path is cut", () => {
    const m = Mesh.cluster(5);
    // 0 cannot reach 1 directly (nor hear it); others can.
    m.drop = (from, out) => (from === 0 && out.toId === 1) || (from === 1 && out.toId === 0);
    const t0 = m.now;
    m.run(t0 + 30_000);
    expect(m.state(0, 1)).toBe("alive");
    expect(m.eventsOf("dead").length).toBe(0);
    expect(m.sent.some((s) => s.at > t0 && s.from === 0 && s.out.msg.type === "ping-req")).toBe(
      true,
    );
  });

  test("a wrongly suspected member refutes with a higher incarnation", () => {
    const m = Mesh.cluster(4);
    const victim = m.nodes.get(2)!;
    const inc0 = victim.incarnation;
    const accusation: Update = {
      id: 2,
      incarnation: inc0,
      state: "suspect",
      addrs: addrsOf(2),
      from: 0,
    };
    m.absorb(
      1,
      m.nodes.get(1)!.receive({
        type: "gossip",
        from: 0,
        fromIncarnation: 0,
        updates: [accusation],
      }, m.now),
    );
    expect(m.state(1, 2)).toBe("suspect");
    m.run(m.now + 20_000);
    expect(victim.incarnation).toBeGreaterThan(inc0);
    expect(victim.stats.refutations).toBeGreaterThan(0);
    for (const o of [0, 1, 3]) expect(m.state(o, 2)).toBe("alive");
    expect(m.eventsOf("dead").length).toBe(0);
    expect(m.events.some((e) => e.node === 1 && e.ev.type === "alive" && e.ev.member.id === 2))
      .toBe(true);
  });

  test("a member declared dead rejoins after restart with a higher incarnation", () => {
    const m = Mesh.cluster(4);
    m.remove(3);
    m.run(m.now + 60_000);
    expect(m.state(0, 3)).toBe("dead");
    const deadInc = m.nodes.get(0)!.member(3)!.incarnation;
    const back = m.add(3, 0, 0); // restarted from scratch: incarnation 0
    m.absorb(3, back.join(addrsOf(1).cluster, m.now));
    m.run(m.now + 15_000);
    expect(back.incarnation).toBeGreaterThan(deadInc);
    expect(allSeeAll(m, [0, 1, 2, 3])).toBe(true);
  });

  test("suspicion timeout scales with log(n) and shrinks with confirmations (Lifeguard)", () => {
    const m = Mesh.cluster(8);
    m.remove(7);
    const t0 = m.now;
    m.run(t0 + 60_000);
    const firstSuspect = Math.min(...m.eventsOf("suspect", 7).map((e) => e.at));
    const firstDead = Math.min(...m.eventsOf("dead", 7).map((e) => e.at));
    const c = DEFAULT_SWIM_CONFIG;
    const min = c.suspicionMult * Math.log10(8) * c.probeIntervalMs;
    expect(firstDead - firstSuspect).toBeGreaterThanOrEqual(Math.floor(min));
    expect(firstDead - firstSuspect).toBeLessThan(c.suspicionMaxMult * min);
  });
});

describe("SwimNode leave and addresses", () => {
  test("graceful leave is seen as left (not dead) by everyone and is not probed", () => {
    const m = Mesh.cluster(5);
    const n = m.nodes.get(4)!;
    m.absorb(4, n.leave(m.now));
    expect(n.left).toBe(true);
    const t0 = m.now;
    m.run(t0 + 5000);
    for (let o = 0; o < 4; o++) expect(m.state(o, 4)).toBe("left");
    m.run(m.now + 20_000);
    expect(m.eventsOf("dead").length).toBe(0);
    expect(m.eventsOf("suspect", 4).length).toBe(0);
    expect(m.sent.some((s) => s.at > t0 + 5000 && s.out.msg.type === "ping" && s.out.toId === 4))
      .toBe(false);
  });

  test("a left member may come back by joining again", () => {
    const m = Mesh.cluster(3);
    m.absorb(2, m.nodes.get(2)!.leave(m.now));
    m.run(m.now + 5000);
    m.absorb(2, m.nodes.get(2)!.join(addrsOf(0).cluster, m.now));
    m.run(m.now + 10_000);
    expect(allSeeAll(m, [0, 1, 2])).toBe(true);
  });

  test("an address change is disseminated as address-changed", () => {
    const m = Mesh.cluster(4);
    const n = m.nodes.get(3)!;
    const oldAddr = n.addresses.cluster;
    m.absorb(3, n.setAddresses(addrsOf(3, 1), m.now));
    m.byAddr.delete(oldAddr);
    m.byAddr.set(n.addresses.cluster, 3);
    m.run(m.now + 15_000);
    for (let o = 0; o < 3; o++) {
      expect(m.nodes.get(o)!.member(3)!.addrs).toEqual(addrsOf(3, 1));
      const ev = m.events.find((e) => e.node === o && e.ev.type === "address-changed");
      expect(ev?.ev.previousAddrs).toEqual(addrsOf(3));
    }
    expect(m.eventsOf("dead").length).toBe(0);
  });
});

describe("SwimNode protocol details", () => {
  test("a ping for another node id is not acked (recycled address)", () => {
    const m = Mesh.cluster(2);
    const out = m.nodes.get(1)!.receive(
      { type: "ping", from: 0, fromIncarnation: 0, seq: 7, target: 99, updates: [] },
      m.now,
    );
    expect(out.send.length).toBe(0);
  });

  test("stale updates (lower incarnation) are ignored", () => {
    const m = Mesh.cluster(3);
    m.absorb(2, m.nodes.get(2)!.setAddresses(addrsOf(2, 5), m.now));
    m.byAddr.set(addrsOf(2, 5).cluster, 2);
    m.run(m.now + 10_000);
    const n0 = m.nodes.get(0)!;
    const inc = n0.member(2)!.incarnation;
    expect(inc).toBe(1);
    const out = n0.receive({
      type: "gossip",
      from: 1,
      fromIncarnation: 0,
      updates: [{ id: 2, incarnation: 0, state: "dead", addrs: addrsOf(2), from: 1 }],
    }, m.now);
    expect(out.events.length).toBe(0);
    expect(n0.member(2)!.state).toBe("alive");
  });

  test("piggyback is bounded by count and bytes; each update is retransmitted a bounded number of times", () => {
    const config = { maxPiggybackUpdates: 4, maxPiggybackBytes: 200 };
    const m = Mesh.cluster(3, 2, config);
    // Flood node 0 with 40 newcomers' alive updates.
    const updates: Update[] = [];
    for (let i = 100; i < 140; i++) {
      updates.push({ id: i, incarnation: 0, state: "alive", addrs: addrsOf(i), from: i });
    }
    const n0 = m.nodes.get(0)!;
    for (let i = 0; i < updates.length; i += 10) {
      m.absorb(
        0,
        n0.receive({
          type: "gossip",
          from: 1,
          fromIncarnation: 0,
          updates: updates.slice(i, i + 10),
        }, m.now),
      );
    }
    const t0 = m.now;
    m.run(t0 + 30_000);
    const counts = new Map<number, number>();
    for (const s of m.sent) {
      if (s.at < t0 || s.from !== 0) continue;
      const msg = s.out.msg;
      if (msg.type === "push-pull" || msg.type === "nack") continue;
      expect(msg.updates.length).toBeLessThanOrEqual(4);
      expect(messageWireSize(msg) - 30).toBeLessThanOrEqual(200);
      for (const u of msg.updates) {
        if (u.id >= 100 && u.state === "alive") counts.set(u.id, (counts.get(u.id) ?? 0) + 1);
      }
    }
    // Every newcomer was gossiped, none more than retransmitMult * ceil(log10(n + 1)) times
    // (n grows to 43 live members here: 4 * 2 = 8).
    expect(counts.size).toBe(40);
    for (const c of counts.values()) expect(c).toBeLessThanOrEqual(8);
  });

  test("local health rises when probes fail without nacks and falls back on acks", () => {
    const m = Mesh.cluster(5);
    const n0 = m.nodes.get(0)!;
    expect(n0.localHealth).toBe(0);
    m.drop = (from, out) => from === 0 || out.toId === 0; // node 0 is cut off
    m.run(m.now + 8000);
    expect(n0.localHealth).toBeGreaterThan(0);
    m.drop = () => false;
    m.run(m.now + 120_000);
    expect(n0.localHealth).toBe(0);
  });

  test("the sim stays deterministic for a seed", () => {
    const a = Mesh.cluster(5, 42);
    const b = Mesh.cluster(5, 42);
    expect(a.sent.map((s) => s.bytes)).toEqual(b.sent.map((s) => s.bytes));
  });

  test("config validation refuses nonsense", () => {
    const rng = new Rng(1);
    const mk = (config: object) => new SwimNode({ id: 1, addrs: addrsOf(1), rng, config });
    expect(() => mk({ probeTimeoutMs: 2000 })).toThrow(SwimConfigError);
    expect(() => mk({ probeIntervalMs: NaN })).toThrow(SwimConfigError);
    expect(() => mk({ maxPiggybackUpdates: 100 })).toThrow(SwimConfigError);
    expect(() => new SwimNode({ id: -1, addrs: addrsOf(1), rng })).toThrow(RangeError);
    expect(mk({}).config).toEqual(DEFAULT_SWIM_CONFIG);
  });
});
