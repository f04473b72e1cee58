// OffsetCommit v0 and v1 at the byte level, against a real broker process. v0 has no generation
// or member: a simple commit (generation -1, no member id), accepted for an unknown or memberless
// group and refused with UNKNOWN_MEMBER_ID once the group has members, as Kafka's coordinator
// treats generation -1. v1 carries generation and member (checked as in v2+) and CommitTimestamp.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import { decodeResponseFrame, type Struct } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import GOLDEN from "../protocol/kafka/golden/requests.json";
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;
let c: RawClient;

beforeAll(async () => {
  broker = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
  c = await RawClient.connect(broker.kafkaPort);
  for (const name of ["oc-t", "kp-a"]) {
    const r = await c.call(19, 4, {
      topics: [{ name, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    expect((r.topics as Struct[])[0].errorCode).toBe(0);
  }
});
afterAll(async () => {
  c?.close();
  broker.kill();
  await broker.exited;
});

type Part = { partition: number; offset: number; metadata?: string | null; timestamp?: number };

function commitV0(group: string, parts: Part[], topic = "oc-t") {
  return c.call(8, 0, {
    groupId: group,
    topics: [{
      name: topic,
      partitions: parts.map((p) => ({
        partitionIndex: p.partition,
        committedOffset: p.offset,
        committedMetadata: p.metadata ?? "",
      })),
    }],
  });
}

function commitV1(
  group: string,
  generation: number,
  memberId: string,
  parts: Part[],
  topic = "oc-t",
) {
  return c.call(8, 1, {
    groupId: group,
    generationIdOrMemberEpoch: generation,
    memberId,
    topics: [{
      name: topic,
      partitions: parts.map((p) => ({
        partitionIndex: p.partition,
        committedOffset: p.offset,
        commitTimestamp: p.timestamp ?? -1,
        committedMetadata: p.metadata ?? "",
      })),
    }],
  });
}

/** Per-partition error codes of an OffsetCommit response, in order. */
const codes = (r: Struct) =>
  (r.topics as { partitions: { errorCode: number }[] }[]).flatMap((t) =>
    t.partitions.map((p) => p.errorCode)
  );

/** OffsetFetch (v1 unless said): [offset, metadata, errorCode] per partition. */
async function fetched(group: string, partitions: number[], topic = "oc-t", version = 1) {
  const r = await c.call(9, version, {
    groupId: group,
    topics: [{ name: topic, partitionIndexes: partitions }],
  });
  const t = (r.topics as { partitions: Struct[] }[])[0];
  return t.partitions.map((p) => [p.committedOffset, p.metadata, p.errorCode]);
}

/** One member joins (JoinGroup v0) and syncs: the group is Stable at generation 1. */
async function stableGroup(group: string): Promise<{ memberId: string; generation: number }> {
  const j = await c.call(11, 0, {
    groupId: group,
    sessionTimeoutMs: 30_000,
    memberId: "",
    protocolType: "consumer",
    protocols: [{ name: "range", metadata: new Uint8Array(0) }],
  });
  expect(j.errorCode).toBe(0);
  const memberId = j.memberId as string;
  const generation = j.generationId as number;
  const s = await c.call(14, 0, {
    groupId: group,
    generationId: generation,
    memberId,
    assignments: [{ memberId, assignment: new Uint8Array(0) }],
  });
  expect(s.errorCode).toBe(0);
  return { memberId, generation };
}

test("ApiVersions advertises OffsetCommit 0-9 and OffsetFetch 0-9", async () => {
  const r = await c.call(18, 0, {});
  const e = (r.apiKeys as Struct[]).find((k) => k.apiKey === 8);
  expect(e).toMatchObject({ minVersion: 0, maxVersion: 9 });
  const f = (r.apiKeys as Struct[]).find((k) => k.apiKey === 9);
  expect(f).toMatchObject({ minVersion: 0, maxVersion: 9 });
});

test("OffsetFetch v0 reads back what v0 committed (kafka-python pinned to 0.8.1)", async () => {
  expect(codes(await commitV0("of-v0", [{ partition: 1, offset: 5, metadata: "x" }]))).toEqual([0]);
  expect(await fetched("of-v0", [0, 1], "oc-t", 0)).toEqual([[-1, "", 0], [5, "x", 0]]);
});

describe("OffsetCommit v0", () => {
  test("a simple commit to an unknown group is accepted; OffsetFetch returns it", async () => {
    expect(codes(
      await commitV0("oc-v0", [{ partition: 0, offset: 42, metadata: "m0" }, {
        partition: 1,
        offset: 7,
      }]),
    )).toEqual([0, 0]);
    expect(await fetched("oc-v0", [0, 1])).toEqual([[42, "m0", 0], [7, "", 0]]);
    // Again, to the now Empty group: still a simple commit, accepted.
    expect(codes(await commitV0("oc-v0", [{ partition: 0, offset: 43 }]))).toEqual([0]);
    expect(await fetched("oc-v0", [0])).toEqual([[43, "", 0]]);
  });

  test("an unknown partition gets UNKNOWN_TOPIC_OR_PARTITION", async () => {
    expect(codes(await commitV0("oc-v0-bad", [{ partition: 5, offset: 1 }]))).toEqual([
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
  });

  test("against a group with active members: UNKNOWN_MEMBER_ID, offsets unchanged", async () => {
    const { memberId, generation } = await stableGroup("oc-v0-active");
    expect(codes(
      await commitV1("oc-v0-active", generation, memberId, [{
        partition: 0,
        offset: 5,
      }]),
    )).toEqual([0]);
    expect(codes(await commitV0("oc-v0-active", [{ partition: 0, offset: 99 }]))).toEqual([
      ErrorCode.UNKNOWN_MEMBER_ID,
    ]);
    expect(await fetched("oc-v0-active", [0])).toEqual([[5, "", 0]]);
    // Once the member leaves (LeaveGroup v0) the group is Empty and v0 commits are accepted.
    expect((await c.call(13, 0, { groupId: "oc-v0-active", memberId })).errorCode).toBe(0);
    expect(codes(await commitV0("oc-v0-active", [{ partition: 0, offset: 99 }]))).toEqual([0]);
    expect(await fetched("oc-v0-active", [0])).toEqual([[99, "", 0]]);
  });
});

describe("OffsetCommit v1", () => {
  test("a member's commit (CommitTimestamp set or -1) is accepted; OffsetFetch returns it", async () => {
    const { memberId, generation } = await stableGroup("oc-v1");
    expect(generation).toBe(1);
    const r = await commitV1("oc-v1", generation, memberId, [
      { partition: 0, offset: 10, metadata: "m", timestamp: Date.now() - 60_000 },
      { partition: 1, offset: 11 },
    ]);
    expect(codes(r)).toEqual([0, 0]);
    expect(await fetched("oc-v1", [0, 1])).toEqual([[10, "m", 0], [11, "", 0]]);
  });

  test("a wrong generation gets ILLEGAL_GENERATION, an unknown member UNKNOWN_MEMBER_ID", async () => {
    const { memberId, generation } = await stableGroup("oc-v1-gen");
    expect(codes(
      await commitV1("oc-v1-gen", generation, memberId, [{
        partition: 0,
        offset: 3,
      }]),
    )).toEqual([0]);
    expect(codes(
      await commitV1("oc-v1-gen", generation + 1, memberId, [{
        partition: 0,
        offset: 4,
      }]),
    )).toEqual([ErrorCode.ILLEGAL_GENERATION]);
    expect(codes(
      await commitV1("oc-v1-gen", generation, "not-a-member", [{
        partition: 0,
        offset: 4,
      }]),
    )).toEqual([ErrorCode.UNKNOWN_MEMBER_ID]);
    // Generation -1 without a member is a simple commit: refused while the group has members.
    expect(codes(await commitV1("oc-v1-gen", -1, "", [{ partition: 0, offset: 4 }]))).toEqual([
      ErrorCode.UNKNOWN_MEMBER_ID,
    ]);
    expect(await fetched("oc-v1-gen", [0])).toEqual([[3, "", 0]]);
  });

  test("a generation >= 0 for an unknown group gets ILLEGAL_GENERATION", async () => {
    expect(codes(await commitV1("oc-v1-none", 1, "m", [{ partition: 0, offset: 1 }]))).toEqual([
      ErrorCode.ILLEGAL_GENERATION,
    ]);
    expect(await fetched("oc-v1-none", [0])).toEqual([[-1, "", 0]]);
  });
});

test("kafka-python's captured v0 and v1 frames (api_version 0.8.1 / 0.8.2) are served", async () => {
  const frames = (GOLDEN as { client: string; apiKey: number; apiVersion: number; hex: string }[])
    .filter((f) => f.client === "kafka-python" && f.apiKey === 8 && f.apiVersion <= 1);
  expect(frames.map((f) => f.apiVersion).sort()).toEqual([0, 1]);
  for (const f of frames) {
    const raw = Buffer.from(f.hex, "hex");
    const sized = new Uint8Array(4 + raw.length);
    new DataView(sized.buffer).setInt32(0, raw.length);
    sized.set(raw, 4);
    const before = c.frames.length;
    await c.write(sized);
    await c.waitFrames(before + 1);
    const resp = c.frames.splice(before, 1)[0];
    const { body } = decodeResponseFrame(8, f.apiVersion, resp.frame);
    expect(body.topics).toEqual([{
      name: "kp-a",
      partitions: [{ partitionIndex: 0, errorCode: 0 }],
    }]);
  }
  // Both commit offset 2 with metadata "kp-meta" for group kp-old.
  expect(await fetched("kp-old", [0], "kp-a")).toEqual([[2, "kp-meta", 0]]);
});
