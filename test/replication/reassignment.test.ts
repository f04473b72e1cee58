// Reassignment decisions (src/replication/reassignment.ts) walked through the metadata rules
// apply.ts runs (partition-rules.ts): submit, start, completion, cancel, the concurrency bound,
// and the replica sets the rules refuse; plus the plan generator (reassign-plan.ts).
import { describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import { changedPartition, type PartitionRow } from "../../src/meta/partition-rules.ts";
import { parseRecord } from "../../src/meta/records.ts";
import { partitionChangeRecord } from "../../src/replication/change-record.ts";
import type { PartitionChange } from "../../src/replication/elections.ts";
import {
  cancelReassignment,
  completion,
  type MovingPartition,
  progressOf,
  reassignmentSteps,
  type Refusal,
  start,
  submitReassignment,
} from "../../src/replication/reassignment.ts";
import {
  parseReassignRequest,
  planReassignRequest,
} from "../../src/replication/reassign-requests.ts";
import { proposeAssignment } from "../../src/replication/reassign-plan.ts";
import { planted } from "../../src/replication/planted.ts";

const BROKERS = new Set([1, 2, 3, 4, 5]);
const none = { has: () => false };
const all = (id: number) => BROKERS.has(id);

function part(o: Partial<MovingPartition> = {}): MovingPartition {
  return {
    topicId: "00000000-0000-4000-8000-000000000001",
    topic: "t",
    partition: 0,
    leader: 1,
    leaderEpoch: 4,
    partitionEpoch: 9,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    unclean: false,
    reassignment: null,
    ...o,
  };
}

/** Applies a change as a committed record would be (encoded, parsed, partition-rules). */
function apply(
  p: MovingPartition,
  c: PartitionChange | Refusal | null | undefined,
): MovingPartition {
  if (c === null || c === undefined || "errorCode" in c) {
    throw new Error(`no change: ${JSON.stringify(c)}`);
  }
  const rec = parseRecord(JSON.stringify(partitionChangeRecord(c)));
  if (rec.type !== "PartitionChanged") throw new Error("not a PartitionChanged");
  const cur: PartitionRow = { ...p, replicas: [...p.replicas], isr: [...p.isr] };
  const row = changedPartition(cur, rec, BROKERS, none, "t-0");
  return { ...p, ...row };
}

describe("a move from [1,2,3] to [2,3,4]", () => {
  test("submit queues, start adds 4 outside the ISR, completion waits for it, then leader moves", () => {
    let p = part();
    p = apply(p, submitReassignment(p, [2, 3, 4], all));
    expect(p.replicas).toEqual([1, 2, 3]);
    expect(p.reassignment).toMatchObject({
      target: [2, 3, 4],
      original: [1, 2, 3],
      started: false,
    });
    expect(completion(p, all, 2)).toBeUndefined(); // queued: not started
    p = apply(p, start(p));
    expect(p.replicas).toEqual([1, 2, 3, 4]);
    expect(p.isr).toEqual([1, 2, 3]);
    expect(completion(p, all, 2)).toBeUndefined(); // 4 not in sync yet
    p = { ...p, isr: [1, 2, 3, 4], partitionEpoch: p.partitionEpoch + 1 }; // leader's AlterPartition
    const done = completion(p, all, 2)!;
    expect(done.leader).toBe(2); // 1 leaves: the target's first in-sync replica leads
    expect(done.leaderEpoch).toBe(5);
    p = apply(p, done);
    expect(p).toMatchObject({ replicas: [2, 3, 4], isr: [2, 3, 4], leader: 2, reassignment: null });
  });

  test("a leader that stays keeps leading (no epoch bump)", () => {
    let p = part({ leader: 2 });
    p = apply(p, submitReassignment(p, [2, 3, 4], all));
    p = apply(p, start(p));
    p = { ...p, isr: [1, 2, 3, 4] };
    const done = completion(p, all, 2)!;
    expect(done.leader).toBeUndefined();
    expect(apply(p, done)).toMatchObject({ leader: 2, leaderEpoch: 4, isr: [2, 3, 4] });
  });

  test("completion waits while the target's ISR would be under min.insync and a target replica could still join", () => {
    let p = part({ replicas: [1, 2], isr: [1, 2] });
    p = apply(p, submitReassignment(p, [3, 4], all));
    p = apply(p, start(p));
    p = { ...p, isr: [1, 2, 3] }; // 3 caught up, 4 not
    expect(completion(p, all, 2)).toBeUndefined();
    p = { ...p, isr: [1, 2, 3, 4] };
    expect(apply(p, completion(p, all, 2))).toMatchObject({
      replicas: [3, 4],
      isr: [3, 4],
      leader: 3,
    });
  });

  test("replication factor down: [1,2,3] -> [1,2] completes once 1 and 2 are in sync", () => {
    let p = part({ isr: [1, 3] });
    p = apply(p, submitReassignment(p, [1, 2], all));
    p = apply(p, start(p));
    expect(p.replicas).toEqual([1, 2, 3]);
    expect(completion(p, all, 2)).toBeUndefined(); // ISR ∩ target = [1] < 2 while 2 is live
    p = { ...p, isr: [1, 2, 3] };
    expect(apply(p, completion(p, all, 2))).toMatchObject({ replicas: [1, 2], isr: [1, 2] });
  });

  test("replication factor up: [1] -> [1,2,3]", () => {
    let p = part({ replicas: [1], isr: [1] });
    p = apply(p, submitReassignment(p, [1, 2, 3], all));
    p = apply(p, start(p));
    p = { ...p, isr: [1, 2, 3] };
    expect(apply(p, completion(p, all, 1))).toMatchObject({ replicas: [1, 2, 3], isr: [1, 2, 3] });
  });
});

describe("refusals", () => {
  test("bad targets, a different target while moving, a retried identical request is a no-op", () => {
    const p = part();
    const code = (c: unknown) => (c as Refusal).errorCode;
    expect(code(submitReassignment(p, [], all))).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    expect(code(submitReassignment(p, [2, 2], all))).toBe(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    );
    expect(code(submitReassignment(p, [2, 9], all))).toBe(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    );
    expect(submitReassignment(p, [1, 2, 3], all)).toBeNull();
    const moving = apply(p, submitReassignment(p, [2, 3, 4], all));
    expect(submitReassignment(moving, [2, 3, 4], all)).toBeNull();
    expect(code(submitReassignment(moving, [3, 4, 5], all))).toBe(
      ErrorCode.REASSIGNMENT_IN_PROGRESS,
    );
  });

  test("cancel of a finished (or never submitted) reassignment is refused with a clear message", () => {
    const c = cancelReassignment(part(), all) as Refusal;
    expect(c.errorCode).toBe(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
    expect(c.message).toMatch(/no reassignment in progress \(finished or never submitted\)/);
  });

  test("the metadata rules refuse a replica set a move does not pass through", () => {
    let p = part();
    p = apply(p, submitReassignment(p, [2, 3, 4], all));
    // Replicas changed while queued, or to the target before the copy: refused.
    const bad = { ...start(p)!, replicas: [2, 3, 4] };
    expect(() => apply(p, bad)).toThrow(MetaError);
    const early = { ...start(p)!, reassignment: p.reassignment };
    expect(() => apply(p, early)).toThrow(/do not fit the reassignment/);
    // A stale step (computed from an older partition epoch) is refused too.
    const stale = { ...start(p)!, partitionEpoch: p.partitionEpoch - 1 };
    expect(() => apply(p, stale)).toThrow(/stale/);
  });
});

describe("cancel", () => {
  test("returns to the original replicas, drops the adding ones from the ISR, leader back", () => {
    let p = part();
    p = apply(p, submitReassignment(p, [4, 5, 3], all));
    p = apply(p, start(p));
    // 4 caught up and (after a failover) leads; 1 is back in sync.
    p = { ...p, isr: [1, 3, 4], leader: 4, leaderEpoch: 6 };
    const c = cancelReassignment(p, all);
    p = apply(p, c);
    expect(p).toMatchObject({ replicas: [1, 2, 3], isr: [1, 3], leader: 1, leaderEpoch: 7 });
    expect(p.reassignment).toBeNull();
  });

  test("a queued move is just forgotten", () => {
    let p = part();
    p = apply(p, submitReassignment(p, [4, 5, 3], all));
    p = apply(p, cancelReassignment(p, all));
    expect(p).toMatchObject({ replicas: [1, 2, 3], isr: [1, 2, 3], leader: 1, reassignment: null });
  });

  test("refused when no original replica is in sync", () => {
    let p = part({ replicas: [1], isr: [1] });
    p = apply(p, submitReassignment(p, [2], all));
    p = apply(p, start(p));
    p = { ...p, isr: [2], leader: 2, leaderEpoch: 5 };
    expect((cancelReassignment(p, all) as Refusal).message).toMatch(/no original replica/);
  });

  test("planted cancel-isr-is-original puts a lagging original replica back in the ISR", () => {
    let p = part();
    p = apply(p, submitReassignment(p, [4, 2, 3], all));
    p = apply(p, start(p));
    p = { ...p, isr: [2, 3] }; // 1 fell behind
    expect((cancelReassignment(p, all) as PartitionChange).isr).toEqual([2, 3]);
    planted.add("cancel-isr-is-original");
    try {
      expect((cancelReassignment(p, all) as PartitionChange).isr).toEqual([1, 2, 3]);
    } finally {
      planted.clear();
    }
  });
});

describe("reassignmentSteps", () => {
  test("starts queued moves up to the bound, completes caught-up ones, skips offline ones", () => {
    const queued = (i: number, o: Partial<MovingPartition> = {}) => {
      const p = part({ partition: i, ...o });
      return apply(p, submitReassignment(p, [2, 3, 4], all));
    };
    const ps = [queued(0), queued(1), queued(2), queued(3, { leader: -1, isr: [1] })];
    const first = reassignmentSteps(ps, all, () => 2, 2);
    expect(first.map((c) => c.partition)).toEqual([0, 1]);
    const after = ps.map((p) => {
      const c = first.find((x) => x.partition === p.partition);
      return c ? apply(p, c) : p;
    });
    expect(reassignmentSteps(after, all, () => 2, 2)).toEqual([]); // both copying: bound reached
    after[0] = { ...after[0], isr: [1, 2, 3, 4] };
    const next = reassignmentSteps(after, all, () => 2, 2);
    expect(next.map((c) => [c.partition, c.reassignment === null ? "done" : "start"])).toEqual([
      [0, "done"],
      [2, "start"],
    ]);
  });
});

describe("requests", () => {
  test("parse refuses malformed input and plans per partition", () => {
    expect(() => parseReassignRequest({ op: "x", items: [] })).toThrow();
    expect(() => parseReassignRequest({ op: "alter", items: [{ topic: "t", partition: -1 }] }))
      .toThrow();
    expect(() => parseReassignRequest({ op: "alter", items: [{ topic: "t", partition: 0 }] }))
      .toThrow(/replicas missing/);
    expect(() => parseReassignRequest({ op: "alter", items: [], throttle: -5 })).toThrow();
    const req = parseReassignRequest({
      op: "alter",
      throttle: 1000,
      items: [
        { topic: "t", partition: 0, target: [2, 3, 4] },
        { topic: "t", partition: 9, target: [2] },
        { topic: "t", partition: 0, target: [2, 3, 4] },
      ],
    });
    const plan = planReassignRequest(req, [part()], all, all);
    expect(plan.results.map((r) => r.errorCode)).toEqual([0, 3, 0]);
    expect(plan.changes.size).toBe(1);
    expect(plan.changes.get(0)!.reassignment!.throttle).toBe(1000);
  });

  test("keepReplicationFactor (KIP-860 false): a target of another size is refused with 38", () => {
    expect(() => parseReassignRequest({ op: "alter", items: [], keepReplicationFactor: "yes" }))
      .toThrow(/boolean/);
    const queued = apply(part(), submitReassignment(part(), [2, 3, 4], all));
    const moving = apply(queued, start(queued)); // replicas [1,2,3,4] while it copies
    const req = parseReassignRequest({
      op: "alter",
      keepReplicationFactor: true,
      items: [
        { topic: "t", partition: 0, target: [1, 2] }, // 3 -> 2
        { topic: "t", partition: 3, target: [1, 2, 3, 4] }, // 3 -> 4
        { topic: "t", partition: 2, target: [2, 3, 4] }, // same factor: accepted
        { topic: "t", partition: 1, target: [2, 3, 4] }, // moving: its original's factor (3)
        { topic: "t", partition: 1, target: null }, // a cancel is no factor change
      ],
    });
    const view = [
      part(),
      { ...moving, partition: 1 },
      part({ partition: 2 }),
      part({ partition: 3 }),
    ];
    const plan = planReassignRequest(req, view, all, all);
    expect(plan.results.map((r) => r.errorCode)).toEqual([38, 38, 0, 0, 0]);
    expect(plan.results[0].message).toMatch(/replication factor would change from 3 to 2/);
    // Allowed (the default, as Kafka's), the same items change factors.
    const open = planReassignRequest({ ...req, keepReplicationFactor: false }, view, all, all);
    expect(open.results.slice(0, 2).map((r) => r.errorCode)).toEqual([0, 0]);
  });
});

describe("progress", () => {
  test("rate from two samples, ETA from what is left", () => {
    const a = progressOf(4, false, 100, 1000);
    expect(a).toMatchObject({
      copiedBytes: 100,
      totalBytes: 1000,
      rateBytesPerSec: null,
      etaSec: null,
    });
    const b = progressOf(4, false, 300, 1000, { atMs: 0, copied: 100 }, 1000);
    expect(b).toMatchObject({ rateBytesPerSec: 200, etaSec: 3.5 });
    expect(progressOf(4, true, 1000, 1000).etaSec).toBe(0);
  });
});

describe("proposeAssignment", () => {
  const topic = (n: number, replicas: (i: number) => number[]) =>
    Array.from({ length: n }, (_, i) => ({ topic: "t", partition: i, replicas: replicas(i) }));

  test("a fourth broker takes its share; most replicas stay; never two on one broker", () => {
    const parts = topic(6, (i) => [1 + (i % 3), 1 + ((i + 1) % 3)]);
    const out = proposeAssignment(parts, [1, 2, 3, 4]);
    const load = new Map<number, number>();
    let kept = 0;
    out.forEach((p, i) => {
      expect(new Set(p.replicas).size).toBe(p.replicas.length);
      expect(p.replicas.length).toBe(2);
      for (const id of p.replicas) load.set(id, (load.get(id) ?? 0) + 1);
      kept += p.replicas.filter((id) => parts[i].replicas.includes(id)).length;
    });
    expect([...load.values()].sort()).toEqual([3, 3, 3, 3]);
    expect(kept).toBe(9); // only the 3 replicas broker 4 takes move
    const leaders = new Map<number, number>();
    for (const p of out) leaders.set(p.replicas[0], (leaders.get(p.replicas[0]) ?? 0) + 1);
    expect(Math.max(...leaders.values())).toBeLessThanOrEqual(2);
  });

  test("preferred leaders end within one of each other (a fourth broker after 19 partitions)", () => {
    // The shape seen on real processes: 16 empty partitions rotating [1,2,3], [2,1,3], [3,1,2]
    // and 3 larger ones; the greedy pass alone left leaders at 6, 5, 5, 3.
    const rot = [[1, 2, 3], [2, 1, 3], [3, 1, 2]];
    const parts = [
      ...topic(16, (i) => rot[i % 3]).map((p) => ({ ...p, topic: "o", sizeBytes: 0 })),
      ...[[2, 1, 3], [3, 2, 1], [1, 3, 2]].map((replicas, i) => ({
        topic: "t",
        partition: i,
        replicas,
        sizeBytes: 14_000,
      })),
    ];
    const out = proposeAssignment(parts, [1, 2, 3, 4]);
    const leaders = new Map([1, 2, 3, 4].map((id) => [id, 0]));
    for (const p of out) leaders.set(p.replicas[0], leaders.get(p.replicas[0])! + 1);
    expect(Math.max(...leaders.values()) - Math.min(...leaders.values())).toBeLessThanOrEqual(1);
    for (const p of out) expect(new Set(p.replicas).size).toBe(3);
  });

  test("decommission: nothing stays on a broker outside the list", () => {
    const parts = topic(8, (i) => [1 + (i % 4), 1 + ((i + 1) % 4), 1 + ((i + 2) % 4)]);
    const out = proposeAssignment(parts, [1, 2, 3]);
    for (const p of out) {
      expect(p.replicas).not.toContain(4);
      expect(p.replicas.sort()).toEqual([1, 2, 3]);
    }
  });

  test("racks: a partition spreads over racks when it can; small partitions move first", () => {
    const racks = new Map([[1, "a"], [2, "a"], [3, "b"], [4, "b"]]);
    const parts = topic(4, () => [1, 2]).map((p, i) => ({ ...p, sizeBytes: (i + 1) * 100 }));
    const out = proposeAssignment(parts, [1, 2, 3, 4], { racks });
    for (const p of out) expect(new Set(p.replicas.map((id) => racks.get(id))).size).toBe(2);
  });

  test("refuses a replication factor larger than the broker list", () => {
    expect(() => proposeAssignment(topic(1, () => [1, 2, 3]), [1, 2])).toThrow(/larger than/);
  });
});
