import { describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import { encodeAssignment, GroupCoordinator, type OffsetsRecord } from "../../src/groups/index.ts";
import { Harness, TOPICS } from "./harness.ts";

const A = encodeAssignment({
  version: 0,
  assignedPartitions: [{ topic: "t1", partitions: [0] }],
  userData: null,
});
const DAY = 24 * 3600_000;
const RET = 60_000;

function stableMember(h: Harness): string {
  const { memberId } = h.joinNew();
  h.sync(memberId, 1, [{ memberId, assignment: A }]);
  return memberId;
}

const fetched = (h: Harness, group = "g", topic = "t1", partition = 0) =>
  h.c.fetchOffsets(group, [{ name: topic, partitions: [partition] }]).topics[0].partitions[0];

describe("OffsetCommit", () => {
  test("a simple commit creates an Empty group; the answer waits for the append", () => {
    const h = new Harness();
    h.autoAck = false;
    const t = h.commit({ offsets: [{ topic: "t1", partition: 1, offset: 42, metadata: "m" }] });
    expect(h.response(t)).toBeUndefined();
    expect(h.state()).toBe("Empty");
    expect(fetched(h, "g", "t1", 1).offset).toBe(-1); // not durable yet
    const ap = h.appends[0];
    expect(ap.groupId).toBe("g");
    expect(ap.records.map((r) => r.record)).toEqual([{
      type: "offset",
      group: "g",
      topic: "t1",
      partition: 1,
      value: {
        offset: 42,
        leaderEpoch: -1,
        metadata: "m",
        commitTimestamp: 0,
        expireTimestamp: null,
      },
    }]);
    h.ack(ap.appendId);
    expect(h.commitCodes(t)).toEqual([0]);
    expect(fetched(h, "g", "t1", 1)).toEqual({
      partition: 1,
      offset: 42,
      leaderEpoch: -1,
      metadata: "m",
      errorCode: 0,
    });
  });

  test("generation >= 0 for a missing group is ILLEGAL_GENERATION", () => {
    const h = new Harness();
    expect(h.commitCodes(h.commit({ generation: 3, memberId: "m" }))).toEqual([
      ErrorCode.ILLEGAL_GENERATION,
    ]);
    expect(h.c.listGroups()).toEqual([]);
  });

  test("member commits: unknown member, stale generation, rebalance in progress, accepted", () => {
    const h = new Harness();
    // Simple commits are refused once the group has members.
    const { token, memberId } = h.joinNew();
    expect(h.joinResp(token)!.generationId).toBe(1);
    expect(h.commitCodes(h.commit())).toEqual([ErrorCode.UNKNOWN_MEMBER_ID]);
    expect(h.commitCodes(h.commit({ generation: 1, memberId }))).toEqual([
      ErrorCode.REBALANCE_IN_PROGRESS,
    ]);
    h.sync(memberId, 1, [{ memberId, assignment: A }]);
    expect(h.commitCodes(h.commit({ generation: 0, memberId }))).toEqual([
      ErrorCode.ILLEGAL_GENERATION,
    ]);
    expect(h.commitCodes(h.commit({ generation: 1, memberId: "x" }))).toEqual([
      ErrorCode.UNKNOWN_MEMBER_ID,
    ]);
    expect(h.commitCodes(h.commit({ generation: 1, memberId }))).toEqual([0]);
    expect(fetched(h).offset).toBe(10);
    // PreparingRebalance still accepts commits from current members.
    h.joinNew({ client: "b" });
    expect(h.state()).toBe("PreparingRebalance");
    expect(
      h.commitCodes(
        h.commit({ generation: 1, memberId, offsets: [{ topic: "t1", partition: 0, offset: 11 }] }),
      ),
    )
      .toEqual([0]);
    expect(fetched(h).offset).toBe(11);
  });

  test("commits refresh the member's session", () => {
    const h = new Harness();
    const m = stableMember(h);
    for (let i = 0; i < 4; i++) {
      h.advance(5000);
      expect(h.commitCodes(h.commit({ generation: 1, memberId: m }))).toEqual([0]);
    }
    expect(h.state()).toBe("Stable");
  });

  test("per-partition errors: unknown topic or partition, metadata too large", () => {
    const h = new Harness({ offsetMetadataMaxBytes: 8 });
    const t = h.commit({
      offsets: [
        { topic: "t1", partition: 0, offset: 1 },
        { topic: "t1", partition: 3, offset: 1 },
        { topic: "nope", partition: 0, offset: 1 },
        { topic: "t2", partition: 1, offset: 1, metadata: "123456789" },
        { topic: "t2", partition: 0, offset: 5, metadata: "12345678" },
      ],
    });
    expect(h.commitCodes(t)).toEqual([
      0,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.OFFSET_METADATA_TOO_LARGE,
      0,
    ]);
    expect(h.appends[0].records.length).toBe(2);
    expect(fetched(h, "g", "t2", 0).metadata).toBe("12345678");
  });

  test("append failures map to coordinator errors and leave the cache unchanged", () => {
    const h = new Harness();
    h.ackError = ErrorCode.NOT_ENOUGH_REPLICAS;
    expect(h.commitCodes(h.commit())).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE]);
    h.ackError = ErrorCode.NOT_LEADER_OR_FOLLOWER;
    expect(h.commitCodes(h.commit())).toEqual([ErrorCode.NOT_COORDINATOR]);
    h.ackError = ErrorCode.RECORD_LIST_TOO_LARGE;
    expect(h.commitCodes(h.commit())).toEqual([ErrorCode.INVALID_COMMIT_OFFSET_SIZE]);
    expect(fetched(h).offset).toBe(-1);
  });

  test("a commit whose connection closed is applied but not answered", () => {
    const h = new Harness();
    h.autoAck = false;
    const t = h.commit();
    h.apply(h.c.handle({ type: "disconnected", tokens: [t] }, h.now));
    h.ack(h.appends[0].appendId);
    expect(h.response(t)).toBeUndefined();
    expect(fetched(h).offset).toBe(10);
  });
});

describe("OffsetFetch", () => {
  test("unknown groups and partitions answer -1 without error; null topics list everything", () => {
    const h = new Harness();
    expect(fetched(h, "none")).toEqual({
      partition: 0,
      offset: -1,
      leaderEpoch: -1,
      metadata: "",
      errorCode: 0,
    });
    h.commit({
      offsets: [{ topic: "t2", partition: 1, offset: 7 }, { topic: "t1", partition: 2, offset: 3 }],
    });
    const all = h.c.fetchOffsets("g", null);
    expect(all.topics.map((t) => [t.name, t.partitions.map((p) => [p.partition, p.offset])]))
      .toEqual([
        ["t1", [[2, 3]]],
        ["t2", [[1, 7]]],
      ]);
    expect(h.c.fetchOffsets("none", null).topics).toEqual([]);
  });
});

describe("offset retention", () => {
  test("offsets of an Empty group expire after the retention since it emptied, then the group goes", () => {
    const h = new Harness({ offsetsRetentionMs: RET });
    const m = stableMember(h);
    h.commit({ generation: 1, memberId: m });
    // Members keep offsets alive however old (30 × 5 s here against a 60 s retention).
    for (let i = 0; i < 30; i++) {
      h.advance(5000);
      h.heartbeat(m, 1);
    }
    expect(fetched(h).offset).toBe(10);
    h.leave([{ memberId: m }]);
    const emptiedAt = h.now;
    h.advance(RET - 1);
    expect(fetched(h).offset).toBe(10);
    const before = h.appends.length;
    h.advance(1);
    expect(h.now - emptiedAt).toBe(RET);
    expect(fetched(h).offset).toBe(-1);
    const recs = h.appends.slice(before).flatMap((a) => a.records.map((r) => r.record));
    expect(recs).toEqual([
      { type: "offset", group: "g", topic: "t1", partition: 0, value: null },
      { type: "group", group: "g", value: null },
    ]);
    expect(h.appends[before].records[0].value).toBeNull();
    expect(h.c.listGroups()).toEqual([]);
  });

  test("simple-group offsets expire from their commit time; RetentionTimeMs overrides", () => {
    const h = new Harness({ offsetsRetentionMs: DAY });
    h.commit({ offsets: [{ topic: "t1", partition: 0, offset: 1 }] });
    h.advance(1000);
    h.commit({ offsets: [{ topic: "t1", partition: 1, offset: 2 }], retention: 5000 });
    expect(h.appends[1].records[0].value![1]).toBe(1); // value v1 carries the expiry
    h.advance(5000);
    expect(fetched(h, "g", "t1", 1).offset).toBe(-1);
    expect(fetched(h, "g", "t1", 0).offset).toBe(1);
    h.advance(DAY);
    expect(fetched(h, "g", "t1", 0).offset).toBe(-1);
    expect(h.state()).toBe("Dead");
  });
});

describe("OffsetCommit v1 CommitTimestamp", () => {
  test("an explicit one is the stored commit time and expiry counts from it; -1 is now", () => {
    const h = new Harness({ offsetsRetentionMs: DAY });
    h.advance(DAY);
    h.commit({
      offsets: [
        { topic: "t1", partition: 0, offset: 1, commitTimestamp: 1000 },
        { topic: "t1", partition: 1, offset: 2, commitTimestamp: -1 },
      ],
    });
    const stored = h.appends[0].records.map((r) =>
      r.record.type === "offset" ? r.record.value?.commitTimestamp : undefined
    );
    expect(stored).toEqual([1000, DAY]);
    h.advance(1000);
    expect(fetched(h, "g", "t1", 0).offset).toBe(-1);
    expect(fetched(h, "g", "t1", 1).offset).toBe(2);
  });
});

describe("DeleteGroups, ListGroups, DescribeGroups", () => {
  test("delete: not found, non-empty, success with tombstones", () => {
    const h = new Harness();
    stableMember(h);
    h.commit({
      group: "simple",
      offsets: [{ topic: "t1", partition: 0, offset: 5 }, { topic: "t2", partition: 1, offset: 6 }],
    });
    const t = h.send({ type: "deleteGroups", groupIds: ["nope", "g", "simple", ""] });
    const r = h.response<
      { kind: "deleteGroups"; results: { groupId: string; errorCode: number }[] }
    >(t)!;
    expect(r.results.map((x) => x.errorCode)).toEqual([
      ErrorCode.GROUP_ID_NOT_FOUND,
      ErrorCode.NON_EMPTY_GROUP,
      0,
      ErrorCode.INVALID_GROUP_ID,
    ]);
    const recs = h.appends[h.appends.length - 1].records.map((x) => x.record);
    expect(recs).toEqual([
      { type: "offset", group: "simple", topic: "t1", partition: 0, value: null },
      { type: "offset", group: "simple", topic: "t2", partition: 1, value: null },
      { type: "group", group: "simple", value: null },
    ]);
    expect(h.c.fetchOffsets("simple", null).topics).toEqual([]);
    expect(h.c.listGroups().map((g) => g.groupId)).toEqual(["g"]);
  });

  test("a deleted topic's offsets go, with tombstones, in every group; other topics stay", () => {
    const h = new Harness();
    stableMember(h);
    h.commit({ group: "other", offsets: [{ topic: "t1", partition: 0, offset: 7 }] });
    h.commit({
      group: "simple",
      offsets: [{ topic: "t1", partition: 0, offset: 5 }, { topic: "t2", partition: 1, offset: 6 }],
    });
    const before = h.appends.length;
    h.send({ type: "topicDeleted", topic: "t1" });
    const recs = h.appends.slice(before).flatMap((a) => a.records.map((x) => x.record));
    expect(recs).toEqual([
      { type: "offset", group: "other", topic: "t1", partition: 0, value: null },
      { type: "offset", group: "simple", topic: "t1", partition: 0, value: null },
    ]);
    expect(fetched(h, "other", "t1", 0).offset).toBe(-1);
    expect(fetched(h, "simple", "t1", 0).offset).toBe(-1);
    expect(fetched(h, "simple", "t2", 1).offset).toBe(6);
    // The groups themselves stay.
    expect(h.c.listGroups().map((g) => g.groupId).sort()).toEqual(["g", "other", "simple"]);
  });

  test("list with a state filter; describe members only with Stable metadata", () => {
    const h = new Harness();
    const m = stableMember(h);
    h.commit({ group: "s" });
    expect(h.c.listGroups()).toEqual([
      { groupId: "g", protocolType: "consumer", state: "Stable" },
      { groupId: "s", protocolType: "", state: "Empty" },
    ]);
    expect(h.c.listGroups(["Empty"]).map((g) => g.groupId)).toEqual(["s"]);
    const d = h.c.describeGroup("g");
    expect(d.protocolData).toBe("range");
    expect(d.members[0].memberId).toBe(m);
    expect(d.members[0].assignment).toEqual(A);
    expect(d.members[0].metadata.length).toBeGreaterThan(0);
    h.joinNew({ client: "x" });
    const d2 = h.c.describeGroup("g");
    expect(d2.state).toBe("PreparingRebalance");
    expect(d2.protocolData).toBe("");
    expect(d2.members[0].metadata.length).toBe(0);
    expect(h.c.describeGroup("unknown")).toMatchObject({
      errorCode: 0,
      state: "Dead",
      members: [],
    });
    expect(h.c.describeGroup("").errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });
});

describe("restore from __consumer_offsets", () => {
  test("a restart rebuilds generations, offsets and members from the appended records", () => {
    const h = new Harness();
    const m = stableMember(h);
    h.commit({ generation: 1, memberId: m, offsets: [{ topic: "t1", partition: 0, offset: 100 }] });
    h.commit({ group: "gone", offsets: [{ topic: "t1", partition: 0, offset: 1 }] });
    h.send({ type: "deleteGroups", groupIds: ["gone"] });
    h.commit({ group: "s", offsets: [{ topic: "t3", partition: 4, offset: 9 }] });
    // Group "e": two generations, then empty.
    const e = h.joinNew({ group: "e" });
    h.leave([{ memberId: e.memberId }], "e");
    h.commit({ group: "e", offsets: [{ topic: "t2", partition: 1, offset: 3 }] });

    const log = h.appends.flatMap((a) => a.records.map(({ key, value }) => ({ key, value })));
    log.push({ key: new Uint8Array([0, 1, 0, 5, 0x61]), value: null }); // garbage is skipped, not fatal
    log.push({ key: new Uint8Array([0, 5, 0, 0]), value: null }); // unknown record type is ignored
    const c2 = new GroupCoordinator({
      partitionCounts: (t) => TOPICS[t],
      initialRebalanceDelayMs: 0,
    });
    const fx = c2.restore(log, h.now);
    expect(fx.filter((x) => x.type === "event" && x.event.kind === "recordSkipped").length).toBe(1);
    expect(c2.listGroups()).toEqual([
      { groupId: "e", protocolType: "consumer", state: "Empty" },
      { groupId: "g", protocolType: "consumer", state: "Stable" },
      { groupId: "s", protocolType: "", state: "Empty" },
    ]);
    expect(c2.describeGroup("e").generation).toBe(2);
    expect(c2.fetchOffsets("g", [{ name: "t1", partitions: [0] }]).topics[0].partitions[0].offset)
      .toBe(100);
    expect(c2.fetchOffsets("s", null).topics[0].partitions[0].offset).toBe(9);
    expect(c2.fetchOffsets("gone", null).topics).toEqual([]);
    // The restored member carries on with its generation; its assignment is intact.
    const hb = c2.handle({
      type: "heartbeat",
      token: 1,
      groupId: "g",
      generationId: 1,
      memberId: m,
      groupInstanceId: null,
    }, h.now);
    expect(hb).toEqual([{
      type: "respond",
      token: 1,
      response: { kind: "heartbeat", errorCode: 0 },
    }]);
    expect(c2.describeGroup("g").members[0].assignment).toEqual(A);
    // A new member joining the restored group gets generation 2.
    const j = c2.handle({
      type: "join",
      token: 2,
      groupId: "e",
      memberId: "",
      groupInstanceId: null,
      clientId: "z",
      clientHost: "h",
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      protocolType: "consumer",
      protocols: [{ name: "range", metadata: new Uint8Array(0) }],
      requireKnownMemberId: false,
      brokerAssigns: false,
    }, h.now);
    const resp = j.find((x) => x.type === "respond");
    expect(resp?.type === "respond" && resp.response.kind === "join" && resp.response.generationId)
      .toBe(3);
    const recs: OffsetsRecord[] = h.appends.flatMap((a) => a.records.map((r) => r.record));
    expect(recs.some((r) => r.type === "group" && r.group === "e" && r.value?.generation === 2))
      .toBe(true);
  });
});
