// Compatibility suite: every codec (gzip, snappy, lz4, zstd) produced by one client and consumed by
// another. The clients form a ring, so each one produces and consumes every codec once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

/**
 * The codec of every batch stored for partition 0 of `topic`: clients really compressed (librdkafka
 * before 2.10 silently sends gzip, snappy and lz4 uncompressed unless Produce v0 is advertised).
 */
function storedCodecs(topic: string): Set<number> {
  const codecs = new Set<number>();
  const dir = join(broker.dataDir, "logs", `${topic}-0`);
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".log"))) {
    const b = readFileSync(join(dir, f));
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    // Batches up to the end of the records (the zero-ahead window after them is all zeros).
    for (let p = 0; p + 23 <= b.length && v.getInt32(p + 8) > 0; p += 12 + v.getInt32(p + 8)) {
      codecs.add(v.getInt16(p + 21) & 7);
    }
  }
  return codecs;
}

const CODEC_ID: Record<string, number> = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

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
      expect([...storedCodecs(topic)]).toEqual([CODEC_ID[codec]]);
      const got = await consumer.consume(topic, COUNT);
      expect(got.length).toBe(COUNT);
      got.sort((a, b) => a.o - b.o);
      got.forEach((r, j) => checkRecord(r, "c", j, SIZE, producer.name));
      seen.push(`${codec}: ${producer.name} -> ${consumer.name}`);
    }
  }
  expect(seen.length).toBe(16);
}, 240_000);
