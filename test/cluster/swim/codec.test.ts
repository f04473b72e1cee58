import { describe, expect, test } from "bun:test";
import { Rng } from "../../../src/cluster/sim/index.ts";
import {
  BroadcastQueue,
  decodeSwim,
  encodeSwim,
  MAX_MESSAGE_BYTES,
  type Member,
  type MemberState,
  messageWireSize,
  SwimDecodeError,
  SwimEncodeError,
  type SwimMessage,
  type Update,
  updateWireSize,
} from "../../../src/cluster/swim/index.ts";

const STATES: MemberState[] = ["alive", "suspect", "dead", "left"];

function randStr(r: Rng, max: number): string {
  const alphabet = ["a", "Z", "9", ".", ":", "é", "東", "😀"];
  let s = "";
  const n = r.int(0, max);
  for (let i = 0; i < n; i++) s += r.pick(alphabet);
  return s;
}

function randMember(r: Rng): Member {
  return {
    id: r.int(0, 0x7fffffff),
    incarnation: r.u32(),
    state: r.pick(STATES),
    addrs: { cluster: randStr(r, 20), kafka: randStr(r, 20), http: randStr(r, 20) },
  };
}

function randUpdate(r: Rng): Update {
  return { ...randMember(r), from: r.int(0, 0x7fffffff) };
}

function randMessage(r: Rng): SwimMessage {
  const h = { from: r.int(0, 0x7fffffff), fromIncarnation: r.u32() };
  const ups = () => Array.from({ length: r.int(0, 6) }, () => randUpdate(r));
  switch (r.int(0, 6)) {
    case 0:
      return { type: "ping", ...h, seq: r.u32(), target: r.int(0, 1000), updates: ups() };
    case 1:
      return {
        type: "ping-req",
        ...h,
        seq: r.u32(),
        target: r.int(0, 1000),
        targetAddr: randStr(r, 30),
        updates: ups(),
      };
    case 2:
      return { type: "ack", ...h, seq: r.u32(), updates: ups() };
    case 3:
      return { type: "nack", ...h, seq: r.u32() };
    case 4:
      return { type: "gossip", ...h, updates: ups() };
    default:
      return {
        type: "push-pull",
        ...h,
        join: r.chance(0.5),
        wantReply: r.chance(0.5),
        members: Array.from({ length: r.int(0, 10) }, () => randMember(r)),
      };
  }
}

/** Decoding must return a message or throw SwimDecodeError, nothing else. */
function decodeOrTyped(bytes: Uint8Array): SwimMessage | SwimDecodeError {
  try {
    return decodeSwim(bytes);
  } catch (e) {
    if (e instanceof SwimDecodeError) return e;
    throw e;
  }
}

describe("SWIM wire codec", () => {
  test("every message type round-trips and its size is exact", () => {
    const r = new Rng(7);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const m = randMessage(r);
      seen.add(m.type);
      const bytes = encodeSwim(m);
      expect(bytes.length).toBe(messageWireSize(m));
      expect(decodeSwim(bytes)).toEqual(m);
    }
    expect(seen.size).toBe(6);
  });

  test("update sizes used for piggyback budgets match the encoding", () => {
    const r = new Rng(8);
    for (let i = 0; i < 200; i++) {
      const u = randUpdate(r);
      const one = encodeSwim({ type: "gossip", from: 1, fromIncarnation: 0, updates: [u] });
      expect(one.length).toBe(10 + 1 + updateWireSize(u));
    }
  });

  test("fuzz: random bytes, truncations and bit flips only ever raise SwimDecodeError", () => {
    const r = new Rng(9);
    let typed = 0;
    let ok = 0;
    for (let i = 0; i < 3000; i++) {
      const bytes = new Uint8Array(r.int(0, 80));
      for (let j = 0; j < bytes.length; j++) bytes[j] = r.int(0, 256);
      if (bytes.length > 0 && r.chance(0.5)) bytes[0] = 1; // get past the version byte
      if (bytes.length > 1 && r.chance(0.5)) bytes[1] = r.int(1, 7);
      const res = decodeOrTyped(bytes);
      if (res instanceof SwimDecodeError) typed++;
      else ok++;
    }
    for (let i = 0; i < 3000; i++) {
      const good = encodeSwim(randMessage(r));
      const bad = good.slice(0, r.int(0, good.length + 1));
      if (bad.length === good.length && bad.length > 0) {
        for (let k = r.int(1, 4); k > 0; k--) bad[r.int(0, bad.length)] ^= 1 << r.int(0, 8);
      }
      const res = decodeOrTyped(bad);
      if (res instanceof SwimDecodeError) typed++;
      else ok++;
    }
    expect(typed).toBeGreaterThan(1000);
    expect(ok + typed).toBe(6000);
  });

  test("specific hostile inputs are refused with typed errors", () => {
    const good = encodeSwim({ type: "nack", from: 1, fromIncarnation: 2, seq: 3 });
    const cases: Uint8Array[] = [
      new Uint8Array(0),
      Uint8Array.of(2, ...good.subarray(1)), // unknown version
      Uint8Array.of(1, 99, ...good.subarray(2)), // unknown type
      Uint8Array.of(...good, 0), // trailing byte
      Uint8Array.of(1, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1), // negative id
    ];
    // Push-pull claiming 2^32-1 members in a tiny message.
    cases.push(Uint8Array.of(1, 6, 0, 0, 0, 1, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff));
    // Push-pull with unknown flag bits.
    cases.push(Uint8Array.of(1, 6, 0, 0, 0, 1, 0, 0, 0, 0, 0x80, 0, 0, 0, 0));
    // Gossip with an invalid UTF-8 address and an unknown state.
    const g = encodeSwim({
      type: "gossip",
      from: 1,
      fromIncarnation: 0,
      updates: [{
        id: 1,
        incarnation: 0,
        state: "alive",
        addrs: { cluster: "ab", kafka: "", http: "" },
        from: 1,
      }],
    });
    const badUtf8 = g.slice();
    badUtf8[11 + 9 + 1] = 0xff;
    cases.push(badUtf8);
    const badState = g.slice();
    badState[11 + 8] = 9;
    cases.push(badState);
    // Too many updates.
    cases.push(Uint8Array.of(1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 200));
    cases.push(new Uint8Array(MAX_MESSAGE_BYTES + 1));
    for (const c of cases) expect(() => decodeSwim(c)).toThrow(SwimDecodeError);
    expect(() => decodeSwim("x" as unknown as Uint8Array)).toThrow(SwimDecodeError);
  });

  test("the encoder refuses values the wire cannot hold", () => {
    const base = { from: 1, fromIncarnation: 0 };
    const addrs = { cluster: "a", kafka: "b", http: "c" };
    expect(() => encodeSwim({ type: "nack", ...base, seq: -1 })).toThrow(SwimEncodeError);
    expect(() => encodeSwim({ type: "nack", ...base, from: 2 ** 31, seq: 1 })).toThrow(
      SwimEncodeError,
    );
    expect(() =>
      encodeSwim({
        type: "gossip",
        ...base,
        updates: [{
          id: 1,
          incarnation: 0,
          state: "alive",
          addrs: { ...addrs, http: "x".repeat(256) },
          from: 1,
        }],
      })
    ).toThrow(SwimEncodeError);
    const many: Update[] = Array.from({ length: 65 }, (_, i) => ({
      id: i,
      incarnation: 0,
      state: "alive" as const,
      addrs,
      from: i,
    }));
    expect(() => encodeSwim({ type: "gossip", ...base, updates: many })).toThrow(SwimEncodeError);
  });
});

describe("BroadcastQueue", () => {
  const addrs = { cluster: "c:1", kafka: "k:1", http: "h:1" };
  const up = (id: number, incarnation = 0): Update => ({
    id,
    incarnation,
    state: "alive",
    addrs,
    from: id,
  });

  test("bounds count and bytes, least-sent first, retires after the limit", () => {
    const q = new BroadcastQueue();
    for (let i = 0; i < 10; i++) q.enqueue(up(i));
    const size = updateWireSize(up(0));
    const first = q.take(3, 10 * size, 2);
    expect(first.length).toBe(3);
    const byBytes = q.take(10, 2 * size, 2);
    expect(byBytes.length).toBe(2);
    // The 5 never-sent ones go before any sent once.
    const next = q.take(5, 100 * size, 2);
    const sentIds = new Set([...first, ...byBytes].map((u) => u.id));
    expect(next.every((u) => !sentIds.has(u.id))).toBe(true);
    // Everything has now been sent once; a second round retires them all.
    expect(q.take(20, 100 * size, 2).length).toBe(10);
    expect(q.size).toBe(0);
  });

  test("a newer update about a member replaces the pending one", () => {
    const q = new BroadcastQueue();
    q.enqueue(up(1, 0));
    q.enqueue(up(1, 3));
    expect(q.size).toBe(1);
    expect(q.take(5, 1000, 3)).toEqual([up(1, 3)]);
    expect(q.take(5, 1000, 3, new Set([1]))).toEqual([]);
  });
});
