import { describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import { decodeAssignment, encodeAssignment, type GroupEvent } from "../../src/groups/index.ts";
import { Harness, protocols } from "./harness.ts";

const A1 = encodeAssignment({
  version: 0,
  assignedPartitions: [{ topic: "t1", partitions: [0, 1] }],
  userData: null,
});
const A2 = encodeAssignment({
  version: 0,
  assignedPartitions: [{ topic: "t1", partitions: [2] }],
  userData: null,
});

/** A one-member Stable group; returns the member id. */
function stableOne(h: Harness): string {
  const { token, memberId } = h.joinNew();
  expect(h.joinResp(token)!.generationId).toBe(1);
  expect(h.syncResp(h.sync(memberId, 1, [{ memberId, assignment: A1 }]))!.errorCode).toBe(0);
  return memberId;
}

/** Two-member Stable group at generation 2: [leader, follower]. */
function stableTwo(h: Harness): [string, string] {
  const a = stableOne(h);
  const b = h.joinNew({ client: "d" });
  expect(h.state()).toBe("PreparingRebalance");
  const ra = h.join({ memberId: a });
  const ja = h.joinResp(ra)!;
  const jb = h.joinResp(b.token)!;
  expect(ja.generationId).toBe(2);
  expect(ja.leader).toBe(a);
  const sb = h.sync(b.memberId, 2);
  h.sync(a, 2, [{ memberId: a, assignment: A1 }, { memberId: b.memberId, assignment: A2 }]);
  expect(h.syncResp(sb)!.assignment).toEqual(A2);
  expect(jb.members).toEqual([]);
  return [a, b.memberId];
}

describe("JoinGroup", () => {
  test("v4 first join gets MEMBER_ID_REQUIRED with an id, the rejoin completes generation 1", () => {
    const h = new Harness();
    const first = h.joinResp(h.join({ client: "cli" }))!;
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect(first.memberId).toBe("cli-1");
    expect(h.state()).toBe("Empty");
    const r = h.joinResp(h.join({ memberId: "cli-1" }))!;
    expect(r.errorCode).toBe(0);
    expect(r.generationId).toBe(1);
    expect(r.leader).toBe("cli-1");
    expect(r.protocolName).toBe("range");
    expect(r.members.map((m) => m.memberId)).toEqual(["cli-1"]);
    expect(h.state()).toBe("CompletingRebalance");
  });

  test("below v4 a new member is assigned an id in the same request", () => {
    const h = new Harness();
    const r = h.joinResp(h.join({ v4: false }))!;
    expect(r.errorCode).toBe(0);
    expect(r.memberId).toBe("c-1");
    expect(r.generationId).toBe(1);
  });

  test("invalid group id, session timeout bounds, unknown member", () => {
    const h = new Harness();
    expect(h.joinResp(h.join({ group: "" }))!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect(h.joinResp(h.join({ session: 5999 }))!.errorCode).toBe(
      ErrorCode.INVALID_SESSION_TIMEOUT,
    );
    expect(h.joinResp(h.join({ session: 1_800_001 }))!.errorCode).toBe(
      ErrorCode.INVALID_SESSION_TIMEOUT,
    );
    expect(h.joinResp(h.join({ memberId: "ghost" }))!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(h.c.listGroups()).toEqual([]);
    stableOne(h);
    expect(h.joinResp(h.join({ memberId: "ghost" }))!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test("INCONSISTENT_GROUP_PROTOCOL: empty offer, other type, no common protocol", () => {
    const h = new Harness();
    expect(h.joinResp(h.join({ protocols: [] }))!.errorCode).toBe(
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    expect(h.joinResp(h.join({ protocolType: "" }))!.errorCode).toBe(
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    stableOne(h);
    expect(h.joinResp(h.join({ protocolType: "connect" }))!.errorCode).toBe(
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    const kafkajs = protocols(["RoundRobinAssigner"]);
    expect(h.joinResp(h.join({ protocols: kafkajs }))!.errorCode).toBe(
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    expect(h.state()).toBe("Stable");
  });

  test("protocol selection: the common protocol with the most first-choice votes", () => {
    const h = new Harness({ initialRebalanceDelayMs: 100 });
    h.join({ v4: false, client: "a", protocols: protocols(["range", "roundrobin", "x"]) });
    h.join({ v4: false, client: "b", protocols: protocols(["roundrobin", "range"]) });
    const t = h.join({ v4: false, client: "c", protocols: protocols(["roundrobin", "range"]) });
    h.advance(100);
    expect(h.joinResp(t)!.protocolName).toBe("roundrobin");
    expect(h.joinResp(t)!.generationId).toBe(1);
  });

  test("a second member triggers a rebalance; held joins complete when all rejoined", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    expect(h.state()).toBe("Stable");
    expect(h.generation()).toBe(2);
    expect(h.c.describeGroup("g").members.map((m) => m.memberId)).toEqual([a, b]);
  });

  test("follower rejoining Stable with the same metadata gets the current generation", () => {
    const h = new Harness();
    const [, b] = stableTwo(h);
    const r = h.joinResp(h.join({ memberId: b, client: "d" }))!;
    expect(r.generationId).toBe(2);
    expect(r.members).toEqual([]);
    expect(h.state()).toBe("Stable");
  });

  test("the leader rejoining, or changed metadata, triggers a rebalance", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)).toBeUndefined();
    expect(h.state()).toBe("PreparingRebalance");
    const tb = h.join({ memberId: b, client: "d", protocols: protocols(["range"], ["t1", "t2"]) });
    expect(h.joinResp(ta)!.generationId).toBe(3);
    expect(h.joinResp(tb)!.generationId).toBe(3);
    expect(h.joinResp(ta)!.members.length).toBe(2);
  });

  test("initial rebalance delay holds the first generation and is extended by newcomers", () => {
    const h = new Harness({ initialRebalanceDelayMs: 3000 });
    const a = h.joinNew({ client: "a" });
    h.advance(1000);
    const b = h.joinNew({ client: "b" });
    h.advance(2500); // 3500: past the first delay, but b extended it to 4000
    expect(h.joinResp(a.token)).toBeUndefined();
    h.advance(500);
    expect(h.joinResp(a.token)!.generationId).toBe(1);
    expect(h.joinResp(b.token)!.generationId).toBe(1);
    expect(h.joinResp(a.token)!.members.length).toBe(2);
  });

  test("GROUP_MAX_SIZE_REACHED", () => {
    const h = new Harness({ maxGroupSize: 1 });
    stableOne(h);
    expect(h.joinResp(h.join({ client: "x" }))!.errorCode).toBe(ErrorCode.GROUP_MAX_SIZE_REACHED);
  });

  test("a pending member id that never rejoins expires after its session timeout", () => {
    const h = new Harness();
    const a = stableOne(h);
    const pend = h.joinResp(h.join({ client: "p", session: 6000 }))!;
    expect(pend.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect(h.state()).toBe("Stable");
    const b = h.joinNew({ client: "b" });
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)).toBeUndefined(); // waits for the pending id
    h.advance(6000);
    expect(h.joinResp(ta)!.generationId).toBe(2);
    expect(h.joinResp(b.token)!.generationId).toBe(2);
    expect(h.joinResp(h.join({ memberId: pend.memberId }))!.errorCode).toBe(
      ErrorCode.UNKNOWN_MEMBER_ID,
    );
  });

  test("rebalance timeout removes members that did not rejoin", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    const ta = h.join({ memberId: a, rebalance: 20_000 }); // leader rejoin starts a rebalance
    h.heartbeat(b, 2); // b keeps its session alive but never rejoins
    h.advance(9000);
    expect(h.heartbeat(b, 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    h.advance(9000);
    expect(h.heartbeat(b, 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(h.joinResp(ta)).toBeUndefined();
    h.advance(2000);
    const r = h.joinResp(ta)!;
    expect(r.generationId).toBe(3);
    expect(r.members.map((m) => m.memberId)).toEqual([a]);
    expect(h.events).toContainEqual({
      kind: "memberRemoved",
      groupId: "g",
      memberId: b,
      reason: "rebalanceTimeout",
    });
    expect(h.heartbeat(b, 3)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test("a second JoinGroup while one is held answers the first with REBALANCE_IN_PROGRESS", () => {
    const h = new Harness();
    const [a] = stableTwo(h);
    const t1 = h.join({ memberId: a });
    const t2 = h.join({ memberId: a });
    expect(h.joinResp(t1)!.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(h.joinResp(t2)).toBeUndefined();
  });
});

describe("SyncGroup", () => {
  test("error order and states", () => {
    const h = new Harness();
    const a = h.joinNew().memberId;
    expect(h.syncResp(h.sync("ghost", 1))!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(h.syncResp(h.sync(a, 0))!.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(h.syncResp(h.sync(a, 1, [], { protocolName: "roundrobin" }))!.errorCode).toBe(
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    expect(h.syncResp(h.sync(a, 1, [], { group: "" }))!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect(h.syncResp(h.sync(a, 1, [], { group: "nope" }))!.errorCode).toBe(
      ErrorCode.UNKNOWN_MEMBER_ID,
    );
    const s = h.syncResp(
      h.sync(a, 1, [{ memberId: a, assignment: A1 }], { protocolName: "range" }),
    )!;
    expect(s.errorCode).toBe(0);
    expect(s.protocolName).toBe("range");
    expect(s.assignment).toEqual(A1);
    // Stable: the current assignment again.
    expect(h.syncResp(h.sync(a, 1))!.assignment).toEqual(A1);
    h.joinNew({ client: "b" });
    expect(h.syncResp(h.sync(a, 1))!.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  test("followers wait for the leader; a member left out gets empty bytes", () => {
    const h = new Harness();
    const a = stableOne(h);
    const b = h.joinNew({ client: "b" });
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)!.leader).toBe(a);
    const sb = h.sync(b.memberId, 2);
    expect(h.syncResp(sb)).toBeUndefined();
    expect(h.state()).toBe("CompletingRebalance");
    h.sync(a, 2, [{ memberId: a, assignment: A1 }, { memberId: "stranger", assignment: A2 }]);
    expect(h.syncResp(sb)!.errorCode).toBe(0);
    expect(h.syncResp(sb)!.assignment.length).toBe(0);
    expect(decodeAssignment(h.syncResp(sb)!.assignment).ok).toBe(true);
    expect(h.state()).toBe("Stable");
  });

  test("a held SyncGroup is answered REBALANCE_IN_PROGRESS when the group rebalances", () => {
    const h = new Harness();
    const a = stableOne(h);
    const b = h.joinNew({ client: "b" });
    h.join({ memberId: a });
    const sb = h.sync(b.memberId, 2);
    h.joinNew({ client: "c" });
    expect(h.syncResp(sb)!.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });
});

describe("Heartbeat and sessions", () => {
  test("heartbeat results by state", () => {
    const h = new Harness();
    const { memberId: a } = h.joinNew();
    expect(h.heartbeat(a, 1)).toBe(0); // CompletingRebalance
    h.sync(a, 1, [{ memberId: a, assignment: A1 }]);
    expect(h.heartbeat(a, 1)).toBe(0);
    expect(h.heartbeat(a, 0)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(h.heartbeat(a, 2)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(h.heartbeat("ghost", 1)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(h.heartbeat(a, 1, "")).toBe(ErrorCode.INVALID_GROUP_ID);
    h.joinNew({ client: "b" });
    expect(h.heartbeat(a, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  test("heartbeats keep a member; silence expires it and the group rebalances or empties", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    for (let i = 0; i < 2; i++) {
      h.advance(4000);
      expect(h.heartbeat(a, 2)).toBe(0);
    }
    h.advance(4000);
    // b sent nothing for 12 s (session 10 s): gone, and a must rejoin.
    expect(h.events).toContainEqual({
      kind: "memberRemoved",
      groupId: "g",
      memberId: b,
      reason: "sessionTimeout",
    });
    expect(h.heartbeat(a, 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)!.generationId).toBe(3);
    h.sync(a, 3, [{ memberId: a, assignment: A1 }]);
    h.advance(10_000);
    expect(h.events).toContainEqual({
      kind: "stateChanged",
      groupId: "g",
      from: "Stable",
      to: "PreparingRebalance",
      generation: 3,
    });
    expect(h.events).toContainEqual({
      kind: "stateChanged",
      groupId: "g",
      from: "PreparingRebalance",
      to: "Empty",
      generation: 4,
    });
    // An Empty group without offsets is removed at the next retention check.
    expect(h.state()).toBe("Dead");
    expect(h.heartbeat(a, 4)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test("nextDeadlineMs points at the earliest session expiry", () => {
    const h = new Harness({ offsetsRetentionCheckIntervalMs: 1e12 });
    h.advance(0);
    const a = stableOne(h);
    h.advance(1000);
    h.heartbeat(a, 1);
    expect(h.c.nextDeadlineMs()).toBe(11_000);
  });

  test("a disconnected member's held join is never answered but it stays in the generation", () => {
    const h = new Harness();
    const a = stableOne(h);
    const b = h.joinNew({ client: "b" });
    h.apply(h.c.handle({ type: "disconnected", tokens: [b.token] }, h.now));
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)!.members.map((m) => m.memberId)).toEqual([a, b.memberId]);
    expect(h.joinResp(b.token)).toBeUndefined();
  });
});

describe("LeaveGroup", () => {
  test("batch with an unknown member; leaving members trigger a rebalance, the last empties", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    const r = h.leave([{ memberId: b }, { memberId: "ghost" }]);
    expect(r.errorCode).toBe(0);
    expect(r.members.map((m) => m.errorCode)).toEqual([0, ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(h.state()).toBe("PreparingRebalance");
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)!.generationId).toBe(3);
    h.leave([{ memberId: a }]);
    expect(h.state()).toBe("Empty");
    expect(h.generation()).toBe(4);
    const leftNoGroup = h.leave([{ memberId: a }], "other");
    expect(leftNoGroup.members[0].errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test("a member leaving while others' joins are held completes the rebalance without it", () => {
    const h = new Harness();
    const [a, b] = stableTwo(h);
    const ta = h.join({ memberId: a });
    expect(h.joinResp(ta)).toBeUndefined();
    h.leave([{ memberId: b }]);
    expect(h.joinResp(ta)!.members.map((m) => m.memberId)).toEqual([a]);
  });
});

describe("broker-run assignment for HTTP leaders", () => {
  test("an HTTP leader's generation is assigned by the broker and becomes Stable", () => {
    const h = new Harness();
    const a = h.joinNew({
      client: "http",
      http: true,
      protocols: protocols(["range"], ["t1", "t3"]),
    });
    expect(h.state()).toBe("Stable");
    const evs = h.events.filter((e): e is Extract<GroupEvent, { kind: "brokerAssigned" }> =>
      e.kind === "brokerAssigned"
    );
    expect(evs).toEqual([{
      kind: "brokerAssigned",
      groupId: "g",
      generation: 1,
      assignor: "range",
      fallback: false,
    }]);
    const s = h.syncResp(h.sync(a.memberId, 1))!;
    const asg = decodeAssignment(s.assignment);
    expect(asg.ok && asg.value.assignedPartitions).toEqual([
      { topic: "t1", partitions: [0, 1, 2] },
      { topic: "t3", partitions: [0, 1, 2, 3, 4] },
    ]);
    // A Kafka member joins; the HTTP member stays leader and the broker splits the partitions.
    const b = h.joinNew({ client: "k", protocols: protocols(["range"], ["t1"]) });
    h.join({
      memberId: a.memberId,
      client: "http",
      http: true,
      protocols: protocols(["range"], ["t1", "t3"]),
    });
    expect(h.joinResp(b.token)!.leader).toBe(a.memberId);
    expect(h.state()).toBe("Stable");
    const sb = decodeAssignment(h.syncResp(h.sync(b.memberId, 2))!.assignment);
    const sa = decodeAssignment(h.syncResp(h.sync(a.memberId, 2))!.assignment);
    expect(sa.ok && sb.ok).toBe(true);
    const all = [sa, sb].flatMap((x) => (x.ok ? x.value.assignedPartitions : [])).flatMap((tp) =>
      tp.partitions.map((p) => `${tp.topic}-${p}`)
    ).sort();
    expect(all).toEqual(["t1-0", "t1-1", "t1-2", "t3-0", "t3-1", "t3-2", "t3-3", "t3-4"]);
  });
});
