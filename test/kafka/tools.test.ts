// What common Kafka tools see: DescribeLogDirs sizes (as Kafka UIs and kafka-log-dirs.sh ask
// for them, here through @platformatic/kafka's admin and raw v0/v4 frames), and kafkajs'
// transactional producer failing at once with a transactions error, not after minutes of
// "Failed to find group coordinator".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { Admin } from "@platformatic/kafka";
import { Kafka, logLevel } from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import { RawClient } from "./raw-client.ts";

let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess();
  expect((await api(b.httpUrl, "POST", "/topics", { name: "sized", partitions: 2 })).status)
    .toBe(201);
  const big = "x".repeat(1000);
  const recs = Array.from({ length: 50 }, () => ({ value: big, partition: 0 }));
  expect((await api(b.httpUrl, "POST", "/topics/sized/records", recs)).status).toBe(200);
});
afterAll(async () => {
  b.kill();
  await b.exited;
});

/** Partition sizes as GET /topics/{t} reports them (bytes on disk). */
async function httpSizes(topic: string): Promise<number[]> {
  const t = await api(b.httpUrl, "GET", `/topics/${topic}`);
  // deno-lint-ignore no-explicit-any
  return t.json.partitions.map((p: any) => p.size_bytes);
}

describe("DescribeLogDirs", () => {
  test("@platformatic/kafka's admin gets the log dir and each partition's size", async () => {
    const admin = new Admin({ clientId: "t", bootstrapBrokers: [`127.0.0.1:${b.kafkaPort}`] });
    try {
      const dirs = await admin.describeLogDirs({ topics: [{ name: "sized", partitions: [0, 1] }] });
      expect(dirs.length).toBe(1);
      const [dir] = dirs[0].results;
      expect(dir.logDir).toBe(resolve(b.dataDir, "logs"));
      const parts = dir.topics.find((t) => t.name === "sized")!.partitions;
      const sizes = parts.sort((x, y) => x.partitionIndex - y.partitionIndex).map((p) =>
        Number(p.partitionSize)
      );
      expect(sizes).toEqual(await httpSizes("sized"));
      expect(sizes[0]).toBeGreaterThan(50_000);
      expect(parts.every((p) => Number(p.offsetLag) === 0 && !p.isFutureKey)).toBe(true);
      // v4 carries the file system's figures.
      expect(Number(dir.totalBytes)).toBeGreaterThan(Number(dir.usableBytes));
      expect(Number(dir.usableBytes)).toBeGreaterThan(0);
    } finally {
      await admin.close();
    }
  });

  test("v0 with null topics: every partition held here; unknown partitions left out", async () => {
    const c = await RawClient.connect(b.kafkaPort);
    try {
      const all = await c.call(35, 0, { topics: null });
      // deno-lint-ignore no-explicit-any
      const results = all.results as any[];
      expect(results.length).toBe(1);
      expect(results[0].errorCode).toBe(0);
      // deno-lint-ignore no-explicit-any
      const names = results[0].topics.map((t: any) => t.name);
      expect(names).toContain("sized");
      expect(names).toContain("__consumer_offsets");
      const some = await c.call(35, 1, {
        topics: [{ topic: "sized", partitions: [1, 7] }, { topic: "nope", partitions: [0] }],
      });
      // deno-lint-ignore no-explicit-any
      const topics = (some.results as any[])[0].topics;
      expect(topics.length).toBe(1);
      // deno-lint-ignore no-explicit-any
      expect(topics[0].partitions.map((p: any) => p.partitionIndex)).toEqual([1]);
    } finally {
      c.close();
    }
  });
});

describe("transactions", () => {
  test("kafkajs' transactional producer fails at connect with a transactions error", async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${b.kafkaPort}`],
      logLevel: logLevel.NOTHING,
    });
    // As kafkajs' documentation sets up a transactional producer.
    const producer = kafka.producer({
      transactionalId: "tx-1",
      maxInFlightRequests: 1,
      idempotent: true,
    });
    const t0 = Date.now();
    const err = await producer.connect().then(
      async () => {
        await producer.transaction();
        return null;
      },
    ).catch((e) => e as Error & { type?: string });
    await producer.disconnect().catch(() => {});
    expect(err).not.toBeNull();
    // Before: KafkaJSGroupCoordinatorNotFound "Failed to find group coordinator", after retries.
    expect(err!.name).toBe("KafkaJSProtocolError");
    expect(err!.type).toBe("TRANSACTIONAL_ID_AUTHORIZATION_FAILED");
    expect(Date.now() - t0).toBeLessThan(5000);
    // The broker's stderr is read asynchronously: its line may land after the answer.
    const find = () => b.logs.find((l) => l.includes("refused a transactional producer"));
    for (let i = 0; i < 100 && find() === undefined; i++) await Bun.sleep(20);
    const logged = find();
    expect(logged).toContain("transactions are not supported");
  });
});
