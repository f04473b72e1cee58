// Memory stays bounded: a client pipelining 1000 produce requests of 1 MiB without reading
// responses leaves the broker's anonymous memory under 512 MiB, and another client is served.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { encodeRequestFrame } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBrokerProcess();
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

function rssAnonMiB(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

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
