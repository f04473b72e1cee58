// HTTP and Kafka clients on the same broker process: compressed batches written by kafkajs read
// over HTTP, and a group of 2 HTTP members and 1 kafkajs member.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CompressionTypes, Kafka, logLevel } from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

let b: RunningBroker;
let kafka: Kafka;
beforeAll(async () => {
  b = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
  kafka = new Kafka({
    brokers: [`127.0.0.1:${b.kafkaPort}`],
    clientId: "mix",
    logLevel: logLevel.NOTHING,
  });
});
afterAll(() => b?.kill("SIGKILL"));

test("gzip batches from kafkajs are decoded by the HTTP read", async () => {
  await api(b.httpUrl, "POST", "/topics", { name: "gz", partitions: 1 });
  const p = kafka.producer();
  await p.connect();
  await p.send({
    topic: "gz",
    compression: CompressionTypes.GZIP,
    messages: [{ key: "k", value: "v1", headers: { h: "x" } }, { value: "v2" }],
  });
  await p.disconnect();
  const recs = await readAll(b.httpUrl, "gz", 0);
  expect(recs.map((r) => r.value)).toEqual(["v1", "v2"]);
  expect(recs[0].headers).toEqual([{ key: "h", value: "x" }]);
}, 30_000);

test(
  "2 HTTP members and 1 kafkajs member: disjoint, complete assignments, nothing skipped",
  async () => {
    await api(b.httpUrl, "POST", "/topics", { name: "mix", partitions: 6 });
    const values = Array.from({ length: 60 }, (_, i) => ({ value: `v${i}`, partition: i % 6 }));
    await api(b.httpUrl, "POST", "/topics/mix/records", values);
    const seenKafka: string[] = [];
    const consumer = kafka.consumer({
      groupId: "mixed",
      sessionTimeout: 10_000,
      heartbeatInterval: 500,
    });
    await consumer.connect();
    await consumer.subscribe({ topic: "mix", fromBeginning: true });
    let kafkaAssigned: number[] = [];
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      kafkaAssigned = (e.payload.memberAssignment["mix"] ?? []).slice().sort();
    });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seenKafka.push(message.value!.toString());
      },
    });
    const join = (memberId?: string) =>
      api(b.httpUrl, "POST", "/groups/mixed/members", { topics: ["mix"], member_id: memberId });
    const [h1, h2] = await Promise.all([join(), join()]);
    expect(h1.status).toBe(200);
    expect(h2.status).toBe(200);
    let m1 = h1.json;
    let m2 = h2.json;
    const seenHttp: string[] = [];
    // Keep the HTTP members fetching (rejoining on rebalance) until the group is stable with 3.
    const deadline = Date.now() + 20_000;
    let stable = false;
    while (Date.now() < deadline) {
      for (const [i, m] of [m1, m2].entries()) {
        const f = await api(
          b.httpUrl,
          "GET",
          `/groups/mixed/records?member_id=${m.member_id}&generation_id=${m.generation_id}&format=text&max_wait_ms=100`,
        );
        if (f.status === 409) {
          const again = join(m.member_id);
          const other = i === 0 ? m2 : m1;
          // Both HTTP members must rejoin for the rebalance to complete.
          const [a, o] = await Promise.all([again, join(other.member_id)]);
          if (i === 0) [m1, m2] = [a.json, o.json];
          else [m2, m1] = [a.json, o.json];
          break;
        }
        if (f.status !== 200) continue;
        for (const r of f.json.records) seenHttp.push(r.value);
        if (f.json.records.length > 0) {
          await api(b.httpUrl, "POST", "/groups/mixed/offsets", {
            member_id: m.member_id,
            generation_id: m.generation_id,
            cursor: f.json.cursor,
          });
        }
      }
      const d = await api(b.httpUrl, "GET", "/groups/mixed");
      if (d.json.state === "Stable" && d.json.members.length === 3 && d.json.lag === 0) {
        stable = true;
        const parts = d.json.members.flatMap((m: { assignment: { partitions: number[] }[] }) =>
          m.assignment.flatMap((a) => a.partitions)
        ).sort();
        expect(parts).toEqual([0, 1, 2, 3, 4, 5]);
        expect(d.json.members.every((m: { assignment: unknown[] }) => m.assignment.length > 0))
          .toBe(true);
        break;
      }
      await Bun.sleep(100);
    }
    await consumer.disconnect();
    expect(stable).toBe(true);
    expect(kafkaAssigned.length).toBeGreaterThan(0);
    const all = new Set([...seenHttp, ...seenKafka]);
    expect(all.size).toBe(60); // nothing skipped (duplicates across rebalances allowed)
  },
  40_000,
);
