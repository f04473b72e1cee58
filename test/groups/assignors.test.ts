import { describe, expect, test } from "bun:test";
import {
  assignorFor,
  type AssignorMember,
  rangeAssignor,
  roundRobinAssignor,
} from "../../src/groups/index.ts";

const member = (
  memberId: string,
  topics: string[],
  instance: string | null = null,
): AssignorMember => ({
  memberId,
  groupInstanceId: instance,
  subscription: {
    version: 0,
    topics,
    userData: null,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  },
});
const counts: Record<string, number> = { a: 3, b: 2, c: 7 };
const parts = (t: string) => counts[t];
const flat = (plan: Map<string, { topic: string; partitions: number[] }[]>, id: string) =>
  plan.get(id)!.flatMap((tp) => tp.partitions.map((p) => `${tp.topic}${p}`));

describe("range", () => {
  test("consecutive ranges per topic, first members get the remainder", () => {
    const plan = rangeAssignor.assign([member("m2", ["a", "b"]), member("m1", ["a", "b"])], parts);
    expect(flat(plan, "m1")).toEqual(["a0", "a1", "b0"]);
    expect(flat(plan, "m2")).toEqual(["a2", "b1"]);
  });

  test("static members sort first by instance id; non-subscribers and unknown topics get nothing", () => {
    const plan = rangeAssignor.assign([
      member("a-dyn", ["c"]),
      member("z", ["c"], "i1"),
      member("q", ["zzz"]),
    ], parts);
    expect(flat(plan, "z")).toEqual(["c0", "c1", "c2", "c3"]);
    expect(flat(plan, "a-dyn")).toEqual(["c4", "c5", "c6"]);
    expect(flat(plan, "q")).toEqual([]);
  });
});

describe("roundrobin", () => {
  test("deals all partitions round the members in order", () => {
    const plan = roundRobinAssignor.assign(
      [member("m1", ["a", "b"]), member("m2", ["a", "b"])],
      parts,
    );
    expect(flat(plan, "m1")).toEqual(["a0", "a2", "b1"]);
    expect(flat(plan, "m2")).toEqual(["a1", "b0"]);
  });

  test("skips members not subscribed to a topic", () => {
    const plan = roundRobinAssignor.assign([member("m1", ["a"]), member("m2", ["a", "b"])], parts);
    expect(flat(plan, "m1")).toEqual(["a0", "a2"]);
    expect(flat(plan, "m2")).toEqual(["a1", "b0", "b1"]);
  });

  test("names: kafkajs RoundRobinAssigner maps to roundrobin; unknown names are undefined", () => {
    expect(assignorFor("RoundRobinAssigner")).toBe(roundRobinAssignor);
    expect(assignorFor("range")).toBe(rangeAssignor);
    expect(assignorFor("cooperative-sticky")).toBeUndefined();
  });
});

test("property: every subscribed partition goes to exactly one subscriber", () => {
  let seed = 99;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed % n;
  };
  const topics = ["a", "b", "c"];
  for (let round = 0; round < 200; round++) {
    const members = Array.from(
      { length: 1 + rnd(6) },
      (_, i) =>
        member(
          `m${rnd(100)}-${i}`,
          topics.filter(() => rnd(2) === 0),
          rnd(3) === 0 ? `i${i}` : null,
        ),
    );
    for (const assignor of [rangeAssignor, roundRobinAssignor]) {
      const plan = assignor.assign(members, parts);
      const owner = new Map<string, string>();
      for (const m of members) {
        for (const tp of plan.get(m.memberId)!) {
          expect(m.subscription.topics).toContain(tp.topic);
          for (const p of tp.partitions) {
            const key = `${tp.topic}-${p}`;
            expect(owner.has(key)).toBe(false);
            owner.set(key, m.memberId);
          }
        }
      }
      let expected = 0;
      for (const t of topics) {
        if (members.some((m) => m.subscription.topics.includes(t))) expected += counts[t];
      }
      expect(owner.size).toBe(expected);
    }
  }
});
