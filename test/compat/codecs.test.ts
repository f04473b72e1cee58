// Compatibility suite: every codec (gzip, snappy, lz4, zstd) produced by one client and consumed by
// another. The clients form a ring, so each one produces and consumes every codec once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RunningBroker } from "../helpers/broker-process.ts";
import {
  checkRecord,
  type Client,
  CODECS,
  confluent,
  createTopic,
  kafkaPython,
  kcat,
  platformatic,
  startCompatBroker,
} from "./harness.ts";

let broker: RunningBroker;
let clients: Client[];
beforeAll(async () => {
  const b = await startCompatBroker();
  broker = b.broker;
  clients = [kcat, confluent, kafkaPython, platformatic].map((make) => make(b.bootstrap));
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

const COUNT = 300;
const SIZE = 120;

test("each codec produced by one client is read back by the next", async () => {
  const seen: string[] = [];
  for (const [ci, codec] of CODECS.entries()) {
    for (let i = 0; i < clients.length; i++) {
      // Shift the ring per codec so every (producer, consumer) pairing differs.
      const producer = clients[i];
      const consumer = clients[(i + 1 + (ci % 3)) % clients.length];
      const topic = `codec-${codec}-${producer.name}`;
      await createTopic(broker, topic, 1);
      await producer.produce({
        topic,
        count: COUNT,
        acks: "all",
        codec,
        prefix: "c",
        size: SIZE,
        partition: 0,
      });
      const got = await consumer.consume(topic, COUNT);
      expect(got.length).toBe(COUNT);
      got.sort((a, b) => a.o - b.o);
      got.forEach((r, j) => checkRecord(r, "c", j, SIZE, producer.name));
      seen.push(`${codec}: ${producer.name} -> ${consumer.name}`);
    }
  }
  expect(seen.length).toBe(16);
}, 240_000);
