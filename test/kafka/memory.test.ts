// Memory stays bounded: a client pipelining 1000 produce requests of 1 MiB without reading
// responses leaves the broker's anonymous memory under 512 MiB, and another client is served;
// one pipelining 500 fetches of 16 MiB each without reading stays under 256 MiB.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { encodeRequestFrame } from "../../src/protocol/kafka/index.ts";
import { rssAnonMiB, type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBrokerProcess();
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

test(
  "1000 pipelined 1 MiB produce requests keep RssAnon under 512 MiB; others are served",
  async () => {
    const admin = await RawClient.connect(broker.kafkaPort);
    const created = await admin.call(19, 4, {
      topics: [{
        name: "mem",
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: [
          { name: "max.message.bytes", value: String(2 * 1024 * 1024) },
          { name: "segment.bytes", value: String(64 * 1024 * 1024) },
          { name: "retention.bytes", value: String(128 * 1024 * 1024) },
        ],
      }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    // deno-lint-ignore no-explicit-any
    expect((created.topics as any)[0].errorCode).toBe(0);

    const value = new Uint8Array(1024 * 1024 - 200);
    for (let i = 0; i < value.length; i += 4096) value[i] = i & 0xff;
    const records = encodeRecordBatch({ records: [{ value }], baseTimestamp: Date.now() });
    const frame = encodeRequestFrame({
      apiKey: 0,
      apiVersion: 7,
      correlationId: 0,
      clientId: "mem",
    }, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 30_000,
      topicData: [{ name: "mem", partitionData: [{ index: 0, records }] }],
    });

    const pusher = await RawClient.connect(broker.kafkaPort);
    // The pusher never reads: its socket is paused, so responses pile up on the broker's side.
    pusher.socket.pause();
    let peak = rssAnonMiB(broker.proc.pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssAnonMiB(broker.proc.pid));
    }, 20);
    const served: number[] = [];
    let stop = false;
    const other = (async () => {
      const c = await RawClient.connect(broker.kafkaPort);
      for (let i = 0; i < 10_000 && !stop; i++) {
        const t0 = performance.now();
        const r = await c.call(3, 1, { topics: [{ name: "mem" }] }, 5000);
        expect(r.topics).toBeDefined();
        served.push(performance.now() - t0);
        await Bun.sleep(50);
      }
      c.close();
    })();
    const view = new DataView(frame.buffer, frame.byteOffset);
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      view.setInt32(8, i + 1); // correlation id
      await pusher.write(frame);
    }
    const writeMs = performance.now() - started;
    pusher.socket.resume();
    await pusher.waitFrames(1000, 60_000);
    stop = true;
    await other;
    clearInterval(sampler);
    peak = Math.max(peak, rssAnonMiB(broker.proc.pid));
    console.log(
      `memory test: 1000 x 1 MiB in ${Math.round(writeMs)} ms, peak RssAnon ${
        Math.round(peak)
      } MiB, ` +
        `other client served ${served.length} times, slowest ${Math.round(Math.max(...served))} ms`,
    );
    expect(pusher.frames.length).toBe(1000);
    expect(pusher.frames.map((f) => f.correlationId)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i + 1),
    );
    expect(peak).toBeLessThan(512);
    expect(served.length).toBeGreaterThan(0);
    expect(Math.max(...served)).toBeLessThan(5000);
    pusher.close();
    admin.close();
  },
  120_000,
);

test(
  "500 pipelined 16 MiB fetches that are never read keep RssAnon under 256 MiB",
  async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    const lo = await c.call(2, 1, {
      replicaId: -1,
      topics: [{ name: "mem", partitions: [{ partitionIndex: 0, timestamp: -2 }] }],
    });
    // deno-lint-ignore no-explicit-any
    const start = (lo.topics as any)[0].partitions[0].offset as number;
    const fetch = encodeRequestFrame({
      apiKey: 1,
      apiVersion: 11,
      correlationId: 0,
      clientId: "mem-fetch",
    }, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 16 * 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{
        topic: "mem",
        partitions: [{
          partition: 0,
          currentLeaderEpoch: -1,
          fetchOffset: start,
          logStartOffset: -1,
          partitionMaxBytes: 16 * 1024 * 1024,
        }],
      }],
      forgottenTopicsData: [],
      rackId: "",
    });
    const reader = await RawClient.connect(broker.kafkaPort);
    reader.socket.pause();
    let peak = rssAnonMiB(broker.proc.pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssAnonMiB(broker.proc.pid));
    }, 20);
    const view = new DataView(fetch.buffer, fetch.byteOffset);
    for (let i = 0; i < 500; i++) {
      view.setInt32(8, i + 1);
      await reader.write(fetch);
    }
    await Bun.sleep(2000); // the broker answers into its output queue meanwhile
    peak = Math.max(peak, rssAnonMiB(broker.proc.pid));
    // Still served while that connection holds its answers.
    const md = await c.call(3, 1, { topics: [{ name: "mem" }] }, 5000);
    expect(md.topics).toBeDefined();
    reader.close();
    await Bun.sleep(300);
    clearInterval(sampler);
    console.log(`memory test: 500 unread 16 MiB fetches, peak RssAnon ${Math.round(peak)} MiB`);
    // Lent fetch buffers are capped at 64 MiB; without the cap this reached ~500 MiB.
    expect(peak).toBeLessThan(256);
    c.close();
  },
  60_000,
);
