// The kafkajs stop race (test/helpers/kafkajs-stop-fix.ts) with kafkajs' own Runner, fetch
// manager and fetchers over a fake consumer group: two brokers, one answering its fetches after
// 300 ms (a long poll), the broker list growing to three (the fetchers are rebuilt), and the
// consumer stopped while the rebuild waits for that long poll.
import { afterAll, expect, test } from "bun:test";
import { installKafkajsStopFix, Runner } from "./kafkajs-stop-fix.ts";

afterAll(() => installKafkajsStopFix(true));

async function stopDuringRebuild(): Promise<{ stopMs: number; nodeIdCalls: number }> {
  const log = {
    debug() {},
    info() {},
    warn() {},
    error() {},
    namespace: () => log,
  };
  let nodeIds = [1, 2];
  let nodeIdCalls = 0;
  const group = {
    groupId: "g",
    memberId: "m",
    connect: () => Promise.resolve(),
    joinAndSync: () => Promise.resolve(),
    leave: () => Promise.resolve(),
    heartbeat: () => Promise.resolve(),
    // Each fetcher asks before each fetch; the spin asks without end, so a bound breaks it.
    getNodeIds() {
      if (++nodeIdCalls > 50_000) throw new Error("spinning");
      return nodeIds;
    },
    async fetch(node: number) {
      await Bun.sleep(node === 2 ? 300 : 5);
      return [];
    },
  };
  const r = new Runner({
    logger: log,
    consumerGroup: group,
    instrumentationEmitter: { emit() {} },
    concurrency: 1,
    eachBatch: () => Promise.resolve(),
    onCrash: () => {},
    retry: { retries: 5, initialRetryTime: 20 },
    heartbeatInterval: 3000,
  }) as InstanceType<typeof Runner> & { heartbeat(): Promise<void> };
  r.heartbeat = () => Promise.resolve();
  await r.start();
  await Bun.sleep(50);
  nodeIds = [1, 2, 3]; // broker 1's next fetch sees it: the fetchers are rebuilt
  await Bun.sleep(20);
  const t = performance.now();
  await r.stop();
  const stopMs = performance.now() - t;
  await Bun.sleep(100); // nothing may still be fetching
  return { stopMs, nodeIdCalls };
}

test("kafkajs as published: the rebuilt fetchers spin once the consumer stopped", async () => {
  installKafkajsStopFix(false);
  const { nodeIdCalls } = await stopDuringRebuild();
  expect(nodeIdCalls).toBeGreaterThan(50_000);
});

test("with the fix: the consumer stops, nothing loops", async () => {
  installKafkajsStopFix(true);
  const { stopMs, nodeIdCalls } = await stopDuringRebuild();
  expect(nodeIdCalls).toBeLessThan(100);
  expect(stopMs).toBeLessThan(2000);
});
