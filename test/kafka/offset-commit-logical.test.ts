// Committed offsets below -1 are stored and returned as Kafka does: kafkajs's
// admin.resetOffsets({ earliest: true }) commits -2 and resolves it when it reads it back. Such a
// commit used to go unanswered (blocking the connection behind it), and once in
// __consumer_offsets it stopped the broker from starting again.
import { afterAll, expect, test } from "bun:test";
import type { Struct } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

const running: RunningBroker[] = [];
const clients: RawClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const b of running) {
    b.kill();
    await b.exited;
  }
});

async function start(dataDir?: string): Promise<{ b: RunningBroker; c: RawClient }> {
  const b = await startBrokerProcess({ dataDir });
  running.push(b);
  const c = await RawClient.connect(b.kafkaPort);
  clients.push(c);
  return { b, c };
}

/** A simple (generation -1) OffsetCommit v2 of `offsets` on partitions 0.. of `topic`. */
function commit(c: RawClient, group: string, topic: string, offsets: number[]) {
  return c.call(8, 2, {
    groupId: group,
    generationIdOrMemberEpoch: -1,
    memberId: "",
    retentionTimeMs: -1,
    topics: [{
      name: topic,
      partitions: offsets.map((o, i) => ({
        partitionIndex: i,
        committedOffset: o,
        committedMetadata: "",
      })),
    }],
  });
}

async function fetched(c: RawClient, group: string, topic: string, n: number) {
  const r = await c.call(9, 1, {
    groupId: group,
    topics: [{ name: topic, partitionIndexes: [...Array(n).keys()] }],
  });
  return (r.topics as { partitions: Struct[] }[])[0].partitions.map((p) => p.committedOffset);
}

const codes = (r: Struct) =>
  (r.topics as { partitions: { errorCode: number }[] }[]).flatMap((t) =>
    t.partitions.map((p) => p.errorCode)
  );

test("offsets -2 and -1 are committed, fetched back, and survive a restart", async () => {
  const { b, c } = await start();
  const made = await c.call(19, 4, {
    topics: [{ name: "lc", numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  expect((made.topics as Struct[])[0].errorCode).toBe(0);

  // Answered (it used to be never answered, and nothing after it on the connection either).
  const r = await commit(c, "reset-g", "lc", [-2, -1, 7]);
  const versions = await c.call(18, 0, {});
  expect(codes(r)).toEqual([0, 0, 0]);
  expect(versions.errorCode).toBe(0);
  expect(await fetched(c, "reset-g", "lc", 3)).toEqual([-2, -1, 7]);
  // The group's next commit is served normally.
  expect(codes(await commit(c, "reset-g", "lc", [5, 6, 8]))).toEqual([0, 0, 0]);
  expect(codes(await commit(c, "reset-g", "lc", [-2, 3, -3]))).toEqual([0, 0, 0]);

  // The records are in __consumer_offsets; a restart replays them.
  b.kill("SIGTERM");
  expect(await b.exited).toBe(0);
  const again = await start(b.dataDir);
  expect(await fetched(again.c, "reset-g", "lc", 3)).toEqual([-2, 3, -3]);
  expect(codes(await commit(again.c, "reset-g", "lc", [1, 2, 3]))).toEqual([0, 0, 0]);
  expect(await fetched(again.c, "reset-g", "lc", 3)).toEqual([1, 2, 3]);
}, 60_000);
