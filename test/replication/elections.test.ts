// Controller decisions (src/replication/elections.ts): who leads, who stays in the ISR, and which
// ISR changes a leader may make.
import { describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import {
  checkIsrChange,
  NO_LEADER,
  onFenced,
  onShutdown,
  onUnfenced,
  type PartitionChange,
  type PartitionView,
  pickLeader,
  preferredElections,
} from "../../src/replication/elections.ts";

function part(o: Partial<PartitionView> = {}): PartitionView {
  return {
    topicId: "t1",
    topic: "t",
    partition: 0,
    leader: 1,
    leaderEpoch: 4,
    partitionEpoch: 9,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    unclean: false,
    ...o,
  };
}
const liveSet = (...ids: number[]) => (id: number) => ids.includes(id);
const isChange = (c: object): c is PartitionChange => !("errorCode" in c);

describe("pickLeader", () => {
  test("the first replica in assignment order that is in the ISR and live", () => {
    expect(pickLeader([3, 1, 2], [1, 2, 3], liveSet(1, 2, 3))).toBe(3);
    expect(pickLeader([3, 1, 2], [1, 2, 3], liveSet(1, 2))).toBe(1);
    expect(pickLeader([3, 1, 2], [2, 1], liveSet(1, 2, 3))).toBe(1);
  });

  test("never one outside the ISR, never a dead one", () => {
    expect(pickLeader([1, 2, 3], [2], liveSet(1, 3))).toBe(NO_LEADER);
    expect(pickLeader([1, 2, 3], [], liveSet(1, 2, 3))).toBe(NO_LEADER);
  });
});

describe("onFenced", () => {
  test("a fenced leader: the next ISR member in assignment order leads, in a new epoch", () => {
    const [c] = onFenced([part({ replicas: [1, 3, 2] })], 1, liveSet(1, 2, 3));
    expect(c.leader).toBe(3);
    expect(c.leaderEpoch).toBe(5);
    expect(c.isr).toEqual([2, 3]);
    expect(c.partitionEpoch).toBe(9);
  });

  test("`keep`: a partition that would go offline stays led by the broker, same epochs", () => {
    const sole = part({ replicas: [1], isr: [1] });
    const other = part({ partition: 1, replicas: [1], isr: [1] });
    const keep = (p: PartitionView) => p.partition === 0;
    const cs = onFenced([sole, other], 1, liveSet(1, 2, 3), keep);
    expect(cs.map((c) => [c.partition, c.leader])).toEqual([[1, NO_LEADER]]);
    // Only what would go offline is kept: a leadership another ISR member can take still moves.
    const [moved] = onFenced([part()], 1, liveSet(1, 2, 3), () => true);
    expect(moved.leader).toBe(2);
  });

  test("never elects the fenced broker itself, even if `live` still says so", () => {
    const cs = onFenced([part({ isr: [1] })], 1, liveSet(1, 2, 3));
    expect(cs).toHaveLength(1);
    expect(cs[0].leader).toBe(NO_LEADER);
  });

  test("never elects a fenced ISR member or one outside the ISR (unclean off)", () => {
    const [c] = onFenced([part({ isr: [1, 2] })], 1, liveSet(3));
    expect(c.leader).toBe(NO_LEADER);
    expect(c.leaderEpoch).toBe(5);
    // Offline keeps the last ISR (never empty): 2 is fenced too, so both stay, each holding every
    // committed record, and whichever returns first may lead.
    expect(c.isr).toEqual([1, 2]);
  });

  test("offline with the fenced broker as last member keeps it as the ISR", () => {
    const [c] = onFenced([part({ isr: [1] })], 1, liveSet(2, 3));
    expect(c.leader).toBe(NO_LEADER);
    expect(c.isr).toEqual([1]);
  });

  test("unclean election (when enabled) takes any live replica, alone in the ISR", () => {
    const [c] = onFenced([part({ isr: [1], unclean: true, replicas: [1, 2, 3] })], 1, liveSet(3));
    expect(c.leader).toBe(3);
    expect(c.isr).toEqual([3]);
  });

  test("a fenced follower leaves the ISR; the leader and its epoch stay", () => {
    const [c] = onFenced([part()], 2, liveSet(1, 3));
    expect(c.leader).toBeUndefined();
    expect(c.leaderEpoch).toBeUndefined();
    expect(c.isr).toEqual([1, 3]);
  });

  test("partitions the broker has no part in are untouched; an offline last member stays", () => {
    expect(onFenced([part({ isr: [1, 3] })], 2, liveSet(1, 3))).toEqual([]);
    expect(onFenced([part({ leader: NO_LEADER, isr: [2] })], 2, liveSet(1, 3))).toEqual([]);
  });
});

describe("onUnfenced", () => {
  test("an offline partition whose ISR holds the broker gets it back as leader", () => {
    const [c] = onUnfenced([part({ leader: NO_LEADER, isr: [2] })], 2, liveSet(2));
    expect(c.leader).toBe(2);
    expect(c.leaderEpoch).toBe(5);
    expect(c.isr).toEqual([2]);
  });

  test("the first live ISR member in assignment order, which may not be the returning broker", () => {
    const [c] = onUnfenced(
      [part({ leader: NO_LEADER, isr: [3, 2], replicas: [1, 3, 2] })],
      2,
      liveSet(2, 3),
    );
    expect(c.leader).toBe(3);
  });

  test("no live ISR member: stays offline (unclean off), or the broker leads alone (unclean on)", () => {
    expect(onUnfenced([part({ leader: NO_LEADER, isr: [1] })], 2, liveSet(2))).toEqual([]);
    const [c] = onUnfenced([part({ leader: NO_LEADER, isr: [1], unclean: true })], 2, liveSet(2));
    expect(c.leader).toBe(2);
    expect(c.isr).toEqual([2]);
  });

  test("online partitions are left alone", () => {
    expect(onUnfenced([part({ isr: [1] })], 2, liveSet(1, 2))).toEqual([]);
  });
});

describe("onShutdown", () => {
  test("leadership moves to another live ISR member; the broker leaves the ISR", () => {
    const [c] = onShutdown([part()], 1, liveSet(1, 2, 3));
    expect(c.leader).toBe(2);
    expect(c.isr).toEqual([2, 3]);
    const [d] = onShutdown([part()], 3, liveSet(1, 2, 3));
    expect(d.leader).toBeUndefined();
    expect(d.isr).toEqual([1, 2]);
  });

  test("the only ISR member stays; no live successor means no move", () => {
    expect(onShutdown([part({ isr: [1] })], 1, liveSet(1, 2, 3))).toEqual([]);
    expect(onShutdown([part({ isr: [1, 2] })], 1, liveSet(1))).toEqual([]);
  });
});

describe("preferredElections", () => {
  const parts = [
    part({ partition: 0, leader: 2, replicas: [1, 2, 3] }),
    part({ partition: 1, leader: 2, replicas: [2, 1, 3] }),
  ];

  test("the first replica leads again when live and in the ISR", () => {
    const cs = preferredElections(parts, liveSet(1, 2, 3));
    expect(cs).toHaveLength(1);
    expect(cs[0].partition).toBe(0);
    expect(cs[0].leader).toBe(1);
    expect(cs[0].leaderEpoch).toBe(5);
    expect(cs[0].isr).toEqual([1, 2, 3]);
  });

  test("not when it is outside the ISR or dead", () => {
    expect(preferredElections([part({ leader: 2, isr: [2, 3] })], liveSet(1, 2, 3))).toEqual([]);
    expect(preferredElections([part({ leader: 2 })], liveSet(2, 3))).toEqual([]);
  });

  test("below the imbalance threshold only when forced", () => {
    const many = Array.from(
      { length: 10 },
      (_, i) => part({ partition: i, leader: i === 0 ? 2 : 1 }),
    );
    expect(preferredElections(many, liveSet(1, 2, 3), 0.1)).toEqual([]);
    expect(preferredElections(many, liveSet(1, 2, 3), 0.1, true)).toHaveLength(1);
  });
});

describe("checkIsrChange", () => {
  const req = (
    o: Partial<{ from: number; leaderEpoch: number; partitionEpoch: number; isr: number[] }>,
  ) => ({
    from: 1,
    leaderEpoch: 4,
    partitionEpoch: 9,
    isr: [1, 2],
    ...o,
  });
  const live = liveSet(1, 2, 3);
  const code = (r: ReturnType<typeof checkIsrChange>) => ("errorCode" in r ? r.errorCode : 0);

  test("accepts the current leader's change, carrying the current partition epoch", () => {
    const r = checkIsrChange(part(), req({}), live);
    expect(isChange(r)).toBe(true);
    const c = r as PartitionChange;
    expect(c.isr).toEqual([1, 2]);
    expect(c.partitionEpoch).toBe(9);
    expect(c.leader).toBeUndefined();
  });

  test("refuses a non-leader", () => {
    expect(code(checkIsrChange(part(), req({ from: 2 }), live))).toBe(
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
    );
  });

  test("refuses a stale (or future) leader epoch", () => {
    expect(code(checkIsrChange(part(), req({ leaderEpoch: 3 }), live))).toBe(
      ErrorCode.FENCED_LEADER_EPOCH,
    );
    expect(code(checkIsrChange(part(), req({ leaderEpoch: 5 }), live))).toBe(
      ErrorCode.FENCED_LEADER_EPOCH,
    );
  });

  test("refuses a stale partition epoch", () => {
    expect(code(checkIsrChange(part(), req({ partitionEpoch: 8 }), live))).toBe(
      ErrorCode.INVALID_UPDATE_VERSION,
    );
  });

  test("refuses a malformed ISR", () => {
    for (const isr of [[], [1, 1], [2, 3], [1, 4]]) {
      expect(code(checkIsrChange(part(), req({ isr }), live))).toBe(ErrorCode.INVALID_REQUEST);
    }
  });

  test("refuses adding a fenced broker; removing one is fine", () => {
    const p = part({ isr: [1, 2] });
    expect(code(checkIsrChange(p, req({ isr: [1, 2, 3] }), liveSet(1, 2)))).toBe(
      ErrorCode.INELIGIBLE_REPLICA,
    );
    expect(code(checkIsrChange(p, req({ isr: [1] }), liveSet(1)))).toBe(0);
  });
});
