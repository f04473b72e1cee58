import { describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import { encodeAssignment } from "../../src/groups/index.ts";
import { Harness, protocols } from "./harness.ts";

const A1 = encodeAssignment({
  version: 0,
  assignedPartitions: [{ topic: "t1", partitions: [0] }],
  userData: null,
});
const A2 = encodeAssignment({
  version: 0,
  assignedPartitions: [{ topic: "t1", partitions: [1, 2] }],
  userData: null,
});

/** Static leader "i1" and static follower "i2", Stable at generation 1 with delay-batched joins. */
function stableStatic(h: Harness): { a: string; b: string } {
  const ta = h.join({ instance: "i1", client: "a" });
  const tb = h.join({ instance: "i2", client: "b" });
  h.advance(100);
  const ja = h.joinResp(ta)!;
  const jb = h.joinResp(tb)!;
  expect(ja.errorCode).toBe(0);
  expect(ja.generationId).toBe(1);
  const a = ja.memberId;
  const b = jb.memberId;
  h.sync(a, 1, [{ memberId: a, assignment: A1 }, { memberId: b, assignment: A2 }], {
    instance: "i1",
  });
  expect(h.state()).toBe("Stable");
  return { a, b };
}

describe("static membership", () => {
  test("a static member gets its id at once (no MEMBER_ID_REQUIRED round)", () => {
    const h = new Harness();
    const r = h.joinResp(h.join({ instance: "i1", v4: true }))!;
    expect(r.errorCode).toBe(0);
    expect(r.memberId).toBe("c-1");
    expect(r.generationId).toBe(1);
  });

  test("rejoin with unchanged metadata replaces the member id without a rebalance; the old id is fenced", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a, b } = stableStatic(h);
    const r = h.joinResp(h.join({ instance: "i2", client: "b" }))!;
    expect(r.errorCode).toBe(0);
    expect(r.memberId).not.toBe(b);
    expect(r.generationId).toBe(1);
    expect(r.members).toEqual([]);
    expect(h.state()).toBe("Stable");
    expect(h.generation()).toBe(1);
    // The new id inherits the assignment.
    expect(h.syncResp(h.sync(r.memberId, 1, [], { instance: "i2" }))!.assignment).toEqual(A2);
    expect(h.heartbeat(r.memberId, 1, "g", "i2")).toBe(0);
    // The stale id is fenced everywhere.
    expect(h.heartbeat(b, 1, "g", "i2")).toBe(ErrorCode.FENCED_INSTANCE_ID);
    expect(h.syncResp(h.sync(b, 1, [], { instance: "i2" }))!.errorCode).toBe(
      ErrorCode.FENCED_INSTANCE_ID,
    );
    expect(h.joinResp(h.join({ memberId: b, instance: "i2" }))!.errorCode).toBe(
      ErrorCode.FENCED_INSTANCE_ID,
    );
    expect(h.commitCodes(h.commit({ generation: 1, memberId: b, instance: "i2" }))).toEqual([
      ErrorCode.FENCED_INSTANCE_ID,
    ]);
    expect(h.leave([{ memberId: b, groupInstanceId: "i2" }]).members[0].errorCode).toBe(
      ErrorCode.FENCED_INSTANCE_ID,
    );
    expect(h.heartbeat(a, 1, "g", "i1")).toBe(0);
    // The replacement is recorded so a restart knows the new id.
    const last = h.appends[h.appends.length - 1].records[0].record;
    expect(last.type === "group" && last.value?.members.map((m) => m.memberId)).toEqual([
      a,
      r.memberId,
    ]);
  });

  test("a static leader rejoining unchanged keeps the assignment (SkipAssignment)", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { b } = stableStatic(h);
    const r = h.joinResp(h.join({ instance: "i1", client: "a" }))!;
    expect(r.skipAssignment).toBe(true);
    expect(r.leader).toBe(r.memberId);
    expect(r.members.map((m) => m.memberId)).toEqual([r.memberId, b]);
    expect(h.state()).toBe("Stable");
    expect(h.syncResp(h.sync(r.memberId, 1, [], { instance: "i1" }))!.assignment).toEqual(A1);
  });

  test("rejoin with changed metadata triggers a rebalance", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a } = stableStatic(h);
    const t = h.join({
      instance: "i2",
      client: "b",
      protocols: protocols(["range"], ["t1", "t2"]),
    });
    expect(h.joinResp(t)).toBeUndefined();
    expect(h.state()).toBe("PreparingRebalance");
    const ta = h.join({ memberId: a, instance: "i1", client: "a" });
    expect(h.joinResp(ta)!.generationId).toBe(2);
    expect(h.joinResp(t)!.generationId).toBe(2);
  });

  test("a replaced member's held join is answered FENCED_INSTANCE_ID", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { b } = stableStatic(h);
    const old = h.join({
      memberId: b,
      instance: "i2",
      client: "b",
      protocols: protocols(["range"], ["t2"]),
    });
    expect(h.joinResp(old)).toBeUndefined();
    const fresh = h.join({ instance: "i2", client: "b" });
    expect(h.joinResp(old)!.errorCode).toBe(ErrorCode.FENCED_INSTANCE_ID);
    expect(h.joinResp(fresh)).toBeUndefined(); // still rebalancing, waits for i1
  });

  test("static members survive the rebalance timeout but not their session timeout", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a, b } = stableStatic(h);
    const c = h.joinNew({ client: "dyn", session: 60_000, rebalance: 5000 });
    h.heartbeat(a, 1, "g", "i1");
    h.advance(5000); // rebalance timeout (max over members = 20 s)... not yet
    expect(h.joinResp(c.token)).toBeUndefined();
    h.advance(5000); // a and b (session 10 s) expire now
    expect(
      h.events.filter((e) => e.kind === "memberRemoved" && e.reason === "sessionTimeout").length,
    ).toBe(2);
    expect(h.joinResp(c.token)!.members.map((m) => m.memberId)).toEqual([c.memberId]);
    expect(h.heartbeat(b, 1, "g", "i2")).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test("static members not rejoined in time stay in the generation", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a, b } = stableStatic(h);
    const ta = h.join({
      memberId: a,
      instance: "i1",
      client: "a",
      rebalance: 3000,
      session: 30_000,
    });
    h.advance(2000);
    h.heartbeat(b, 1, "g", "i2");
    h.advance(1000);
    // The rebalance timeout is the group's maximum (b's 20 s), so it is still waiting.
    expect(h.joinResp(ta)).toBeUndefined();
    h.heartbeat(b, 1, "g", "i2");
    h.advance(9000);
    h.heartbeat(b, 1, "g", "i2");
    h.advance(8000);
    const r = h.joinResp(ta)!;
    expect(r.generationId).toBe(2);
    expect(r.members.map((m) => m.memberId)).toEqual([a, b]);
  });

  test("LeaveGroup v3 by instance id removes a static member", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a } = stableStatic(h);
    const r = h.leave([{ memberId: "", groupInstanceId: "i2" }, {
      memberId: "",
      groupInstanceId: "nope",
    }]);
    expect(r.members.map((m) => m.errorCode)).toEqual([0, ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(h.state()).toBe("PreparingRebalance");
    const t = h.join({ memberId: a, instance: "i1", client: "a" });
    expect(h.joinResp(t)!.members.map((m) => m.memberId)).toEqual([a]);
  });
  test("a member id joining under another group.instance.id is FENCED_INSTANCE_ID", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    const { a } = stableStatic(h);
    // "i9" is no member's instance: only the member id ties the request to i1's member.
    expect(h.joinResp(h.join({ memberId: a, instance: "i9", client: "a" }))!.errorCode).toBe(
      ErrorCode.FENCED_INSTANCE_ID,
    );
    expect(h.state()).toBe("Stable");
    expect(h.generation()).toBe(1);
    expect(h.heartbeat(a, 1, "g", "i1")).toBe(0);
  });
});
