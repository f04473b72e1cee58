// The group coordinator's shell: a member joins (broker-run assignment), commits, and after a
// restart the offsets come back from __consumer_offsets and are materialised in SQLite.
import { afterEach, expect, setSystemTime, test } from "bun:test";
import { MetadataStore } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import { LONE, PartitionManager } from "../../src/core/partition-manager.ts";
import {
  GroupService,
  type GroupServiceOptions,
  steadyWallClock,
} from "../../src/core/group-service.ts";
import {
  BROKER_ASSIGNOR_NAMES,
  decodeAssignment,
  encodeSubscription,
  OFFSETS_TOPIC,
} from "../../src/groups/index.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../helpers/broker-process.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(
  dataDir: string,
  compaction: GroupServiceOptions["offsetsCompaction"] = {},
  tamper?: (meta: MetadataStore) => void,
  extra: GroupServiceOptions = {},
) {
  const meta = MetadataStore.open(dataDir);
  tamper?.(meta);
  const store = await SegmentLogStore.open({ dataDir, checkpointIntervalMs: 0 });
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"));
  await meta.registerBroker({
    nodeId: 0,
    host: "127.0.0.1",
    kafkaPort: 9092,
    httpPort: 8080,
    clusterPort: 9093,
  });
  await pm.openAll();
  const groups = new GroupService(pm, meta, createLogger("error"), {
    initialRebalanceDelayMs: 0,
    offsetsPartitions: 4,
    offsetsCompaction: compaction,
    ...extra,
  });
  await groups.start();
  const close = async () => {
    await groups.stop();
    await pm.close();
    await meta.close();
  };
  return { meta, pm, groups, close };
}

/** A simple (generation -1) commit of one offset of topic "t". */
function simpleCommit(groups: GroupService, groupId: string, partition: number, offset: number) {
  return groups.request({
    type: "offsetCommit",
    groupId,
    generationId: -1,
    memberId: "",
    groupInstanceId: null,
    retentionTimeMs: -1,
    topics: [{ name: "t", partitions: [{ partition, offset, leaderEpoch: 0, metadata: null }] }],
  });
}

test("join, sync, commit; offsets survive a restart and are in SQLite", async () => {
  const dataDir = tempDir();
  const a = await open(dataDir);
  await a.pm.createTopic("orders", 3, 1, {});
  // The produce path refuses internal topics from memory, without a metadata query.
  expect(a.pm.isInternal(OFFSETS_TOPIC)).toBe(true);
  expect(a.pm.isInternal("orders")).toBe(false);
  const subscription = encodeSubscription({
    version: 0,
    topics: ["orders"],
    userData: null,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  });
  const join = await a.groups.request({
    type: "join",
    groupId: "g1",
    memberId: "",
    groupInstanceId: null,
    clientId: "http",
    clientHost: "127.0.0.1",
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    protocolType: "consumer",
    protocols: BROKER_ASSIGNOR_NAMES.map((name) => ({ name, metadata: subscription })),
    requireKnownMemberId: false,
    brokerAssigns: true,
  });
  expect(join.kind).toBe("join");
  if (join.kind !== "join") return;
  expect(join.errorCode).toBe(0);
  const sync = await a.groups.request({
    type: "sync",
    groupId: "g1",
    generationId: join.generationId,
    memberId: join.memberId,
    groupInstanceId: null,
    protocolType: null,
    protocolName: null,
    assignments: [],
  });
  if (sync.kind !== "sync") throw new Error("expected sync");
  expect(sync.errorCode).toBe(0);
  const assignment = decodeAssignment(sync.assignment);
  if (!assignment.ok) throw new Error("bad assignment");
  expect(assignment.value.assignedPartitions[0].partitions.sort()).toEqual([0, 1, 2]);

  const commitOrders1 = (offset: number, metadata: string | null) =>
    a.groups.request({
      type: "offsetCommit",
      groupId: "g1",
      generationId: join.generationId,
      memberId: join.memberId,
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [{
        name: "orders",
        partitions: [{ partition: 1, offset, leaderEpoch: 0, metadata }],
      }],
    });
  const commit = await commitOrders1(42, "m");
  if (commit.kind !== "offsetCommit") throw new Error("expected commit");
  expect(commit.topics[0].partitions[0].errorCode).toBe(0);
  // The commit is a record in __consumer_offsets and a row in SQLite.
  const p = a.groups.partitionFor("g1");
  expect(a.pm.partition(OFFSETS_TOPIC, p).log.logEndOffset()).toBeGreaterThan(0);
  expect(a.meta.fetchOffsets("g1").map((o) => [o.topic, o.partition, o.offset])).toEqual([[
    "orders",
    1,
    42,
  ]]);
  // OffsetFetch waits on commitsSettled: a commit accepted but still being written is seen.
  const fetch1 = () =>
    a.groups.coordinator.fetchOffsets("g1", [{ name: "orders", partitions: [1] }]).topics[0]
      .partitions[0].offset;
  const inFlight = commitOrders1(43, null);
  expect(fetch1()).toBe(42); // its record is not written yet
  await a.groups.commitsSettled("g1");
  expect(fetch1()).toBe(43);
  await inFlight;
  await a.groups.commitsSettled("nobody"); // no appends: resolves at once
  await a.close();

  const b = await open(dataDir);
  cleanups.push(b.close);
  const fetched = b.groups.coordinator.fetchOffsets("g1", [{ name: "orders", partitions: [0, 1] }]);
  expect(fetched.topics[0].partitions.map((x) => x.offset)).toEqual([-1, 43]);
  expect(b.meta.fetchOffsets("g1")[0].offset).toBe(43);
  expect(b.groups.coordinator.listGroups().map((g) => g.groupId)).toEqual(["g1"]);
});

test("__consumer_offsets compaction keeps the latest commit of every key, drops the rest", async () => {
  const dataDir = tempDir();
  // Checked by hand below, not by the timer.
  const a = await open(dataDir, { minBytes: 1, checkIntervalMs: 3_600_000 });
  await a.pm.createTopic("t", 4, 1, {});
  const groups = ["ga", "gb", "gc", "gd", "ge", "gf"];
  const expected = new Map<string, number>();
  const commit = (groupId: string, partition: number, offset: number) => {
    expected.set(`${groupId}/${partition}`, offset);
    return simpleCommit(a.groups, groupId, partition, offset);
  };
  for (let round = 0; round < 60; round++) {
    await Promise.all(groups.flatMap((g) => [0, 1, 2, 3].map((p) => commit(g, p, round * 10 + p))));
  }
  // A deleted group leaves only tombstones behind, which compaction drops.
  const del = await a.groups.request({ type: "deleteGroups", groupIds: ["gf"] });
  expect(del.kind).toBe("deleteGroups");
  for (const p of [0, 1, 2, 3]) expected.delete(`gf/${p}`);

  const results = [];
  for (let p = 0; p < 4; p++) {
    const log = a.pm.partition(OFFSETS_TOPIC, p).log;
    if (log.logEndOffset() === 0) continue;
    // A commit arriving while the compaction gathers keys must survive it.
    const g = groups.find((x) => a.groups.partitionFor(x) === p && x !== "gf")!;
    const compacting = a.groups.compactor.compact(p);
    const late = g ? commit(g, 3, 9999) : Promise.resolve();
    const r = await compacting;
    await late;
    expect(r).not.toBeNull();
    results.push(r!);
    expect(r!.recordsCopied).toBeLessThan(r!.recordsBefore);
    expect(r!.bytesAfter).toBeLessThan(r!.bytesBefore);
    expect(log.logStartOffset()).toBe(r!.logStartOffset);
    expect(log.logStartOffset()).toBeGreaterThan(0);
  }
  expect(results.length).toBeGreaterThan(0);
  // Nothing left to drop: a second pass declines.
  for (const r of results) expect(await a.groups.compactor.compact(r.partition)).toBeNull();
  await a.close();

  const b = await open(dataDir);
  cleanups.push(b.close);
  for (const g of groups) {
    const got = b.groups.coordinator.fetchOffsets(g, [{ name: "t", partitions: [0, 1, 2, 3] }]);
    const offsets = got.topics[0].partitions.map((x) => x.offset);
    expect(offsets).toEqual([0, 1, 2, 3].map((p) => expected.get(`${g}/${p}`) ?? -1));
  }
  expect(b.groups.coordinator.listGroups().map((x) => x.groupId).sort()).toEqual(
    groups.filter((g) => g !== "gf"),
  );
});

test("a record the SQLite view refuses neither fails its commit nor the next start", async () => {
  const dataDir = tempDir();
  // The view refuses group "bad" (as it refused offsets below -1 before they were accepted).
  const refuseBad = (meta: MetadataStore) => {
    const apply = meta.applyGroupOffsetCommit.bind(meta);
    meta.applyGroupOffsetCommit = (offsets) => {
      if (offsets.some((o) => o.groupId === "bad")) throw new Error("refused by the view");
      apply(offsets);
    };
  };
  const a = await open(dataDir, {}, refuseBad);
  await a.pm.createTopic("t", 2, 1, {});
  const commit = (groupId: string, partition: number, offset: number) =>
    simpleCommit(a.groups, groupId, partition, offset);
  for (const [g, p, o] of [["bad", 0, 5], ["good", 0, 6], ["bad", 1, 7], ["good", 1, 8]] as const) {
    const r = await commit(g, p, o);
    if (r.kind !== "offsetCommit") throw new Error("expected commit");
    // Durable in __consumer_offsets, so acknowledged; the coordinator serves it.
    expect(r.topics[0].partitions[0].errorCode).toBe(0);
  }
  expect(a.meta.fetchOffsets("good").map((o) => o.offset)).toEqual([6, 8]);
  expect(a.meta.fetchOffsets("bad")).toEqual([]);
  await a.close();

  // The replay at start meets the refused records again: logged and skipped, the start goes on.
  const b = await open(dataDir, {}, refuseBad);
  cleanups.push(b.close);
  expect(b.meta.fetchOffsets("good").map((o) => o.offset)).toEqual([6, 8]);
  const fetched = b.groups.coordinator.fetchOffsets("bad", null);
  expect(fetched.topics[0].partitions.map((p) => p.offset)).toEqual([5, 7]);
});

test("retention.ms set on __consumer_offsets deletes no committed offsets (it is compacted)", async () => {
  const dataDir = tempDir();
  const a = await open(dataDir);
  await a.pm.createTopic("t", 1, 1, {});
  // Kafka accepts this too; with cleanup.policy=compact it has no effect there either.
  await a.pm.alterTopicConfigs(OFFSETS_TOPIC, { "retention.ms": "1", "segment.bytes": "14" });
  const groups = Array.from({ length: 12 }, (_, i) => `ret-${i}`);
  for (const [i, groupId] of groups.entries()) {
    const r = await simpleCommit(a.groups, groupId, 0, i);
    if (r.kind !== "offsetCommit") throw new Error("expected commit");
    expect(r.topics[0].partitions[0].errorCode).toBe(0);
  }
  await Bun.sleep(20);
  await a.pm.enforceRetention();
  await a.close();
  const b = await open(dataDir);
  cleanups.push(b.close);
  for (const [i, groupId] of groups.entries()) {
    const f = b.groups.coordinator.fetchOffsets(groupId, null);
    expect(f.topics[0]?.partitions[0]?.offset).toBe(i);
  }
});

test("a leader whose session lease ran out does not coordinate: no OffsetFetch from stale offsets", async () => {
  const { pm, groups, close } = await open(tempDir());
  cleanups.push(close);
  let lease = true;
  pm.setReplication({ ...LONE, mayAppend: () => lease });
  expect(groups.coordinates("g")).toBe(true);
  // Cut off from the controller past its session: it may have been fenced and replaced.
  lease = false;
  expect(groups.coordinates("g")).toBe(false);
  lease = true;
  expect(groups.coordinates("g")).toBe(true);
});

test("the coordinator's clock ignores wall-clock steps: member deadlines run on monotonic time", () => {
  let wall = 1_000_000;
  let mono = 50;
  const now = steadyWallClock(() => wall, () => mono);
  expect(now()).toBe(1_000_000);
  mono += 2_500; // 2.5 s pass
  wall -= 3_600_000; // and the wall clock is stepped back an hour
  expect(now()).toBe(1_002_500);
  wall += 7_200_000; // then forward two hours
  mono += 500;
  expect(now()).toBe(1_003_000);
});

test("a member's session ends on time though the wall clock is stepped back an hour", async () => {
  const { groups, close } = await open(tempDir(), {}, undefined, { minSessionTimeoutMs: 100 });
  cleanups.push(close);
  const join = await groups.request({
    type: "join",
    groupId: "g",
    memberId: "",
    groupInstanceId: null,
    clientId: "c",
    clientHost: "127.0.0.1",
    sessionTimeoutMs: 200,
    rebalanceTimeoutMs: 200,
    protocolType: "consumer",
    protocols: [{ name: "range", metadata: new Uint8Array(0) }],
    requireKnownMemberId: false,
    brokerAssigns: false,
  });
  if (join.kind !== "join") throw new Error("expected join");
  expect(join.errorCode).toBe(0);
  expect(groups.coordinator.describeGroup("g").members.length).toBe(1);
  // The wall clock goes back an hour (and stays there: Bun's system time does not advance).
  setSystemTime(new Date(Date.now() - 3_600_000));
  try {
    // The member never heartbeats: its session (200 ms) ends though the wall clock went back.
    const since = performance.now();
    while (groups.coordinator.describeGroup("g").members.length > 0) {
      if (performance.now() - since > 5_000) throw new Error("the session never ended");
      await Bun.sleep(50);
    }
  } finally {
    setSystemTime();
  }
});
