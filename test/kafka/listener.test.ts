// The Kafka listener at the byte level, against a real broker process: framing, ordering,
// the ApiVersions fallback, produce rules, fetch long-poll and limits, idempotent duplicates.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { ADVERTISED } from "../../src/kafka/handlers/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";
import { set as legacySet, wrapped as legacyWrapped } from "../helpers/legacy-messages.ts";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { decompress } from "../../src/protocol/compression/index.ts";

let broker: RunningBroker;
const te = new TextEncoder();

function batch(
  n: number,
  opts: { pid?: number; seq?: number; value?: string; codec?: 0 | 4 } = {},
) {
  return encodeRecordBatch({
    records: Array.from({ length: n }, (_, i) => ({
      key: te.encode(`k${i}`),
      value: te.encode(`${opts.value ?? "v"}${i}`),
    })),
    baseTimestamp: Date.now(),
    producerId: opts.pid ?? -1,
    producerEpoch: opts.pid !== undefined ? 0 : -1,
    baseSequence: opts.seq ?? -1,
  });
}

function produceBody(topic: string, records: Uint8Array | null, acks = 1, partition = 0) {
  return {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  };
}

// deno-lint-ignore no-explicit-any
const part = (r: any) => r.responses[0].partitionResponses[0];

async function createTopic(
  c: RawClient,
  name: string,
  partitions = 1,
  configs: Record<string, string> = {},
) {
  const r = await c.call(19, 4, {
    topics: [{
      name,
      numPartitions: partitions,
      replicationFactor: 1,
      assignments: [],
      configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
    }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  // deno-lint-ignore no-explicit-any
  expect((r.topics as any)[0].errorCode).toBe(0);
}

beforeAll(async () => {
  broker = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

test("ADVERTISED lists the declared APIs, SASL included (as Kafka's brokers do on every listener)", () => {
  expect(ADVERTISED.get(17)).toEqual([0, 1]);
  expect(ADVERTISED.get(36)).toEqual([0, 2]);
  expect(ADVERTISED.get(33)).toEqual([0, 2]);
  expect(ADVERTISED.get(44)).toEqual([0, 1]);
});

describe("framing", () => {
  test("ApiVersions above our range gets error 35 with a v0 body listing our range", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    // v5 is above our max (4): header v2 with an empty tagged-field section and an empty body.
    const frame = new Uint8Array([0, 0, 0, 14, 0, 18, 0, 5, 0, 0, 0, 7, 0, 3, 0x61, 0x62, 0x63, 0]);
    await c.write(frame);
    await c.waitFrames(1);
    const f = c.frames[0].frame;
    const v = new DataView(f.buffer);
    expect(v.getInt32(0)).toBe(7);
    expect(v.getInt16(4)).toBe(35);
    expect(v.getInt32(6)).toBe(1);
    expect([v.getInt16(10), v.getInt16(12), v.getInt16(14)]).toEqual([18, 0, 4]);
    c.close();
  });

  test("pipelined requests are answered in order, one response each", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(await c.send(i % 2 ? 3 : 18, i % 2 ? 1 : 0, i % 2 ? { topics: [] } : {}, 1000 + i));
    }
    await c.waitFrames(50);
    expect(c.frames.map((f) => f.correlationId)).toEqual(ids);
    c.close();
  });

  test("a frame above socket.request.max.bytes is refused from its size alone", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await c.write(new Uint8Array([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
    expect(await c.waitClosed()).toBe(true);
    const other = await RawClient.connect(broker.kafkaPort);
    expect((await other.call(18, 0, {})).errorCode).toBe(0);
    other.close();
  });

  test("an unknown API or unadvertised version closes the connection", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await c.write(new Uint8Array([0, 0, 0, 10, 0, 99, 0, 0, 0, 0, 0, 1, 0xff, 0xff]));
    expect(await c.waitClosed()).toBe(true);
    const c2 = await RawClient.connect(broker.kafkaPort);
    // Fetch v3 (below the advertised 4-12) is not served.
    await c2.send(1, 3, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1, topics: [] });
    expect(await c2.waitClosed()).toBe(true);
  });
});

describe("produce", () => {
  test("acks, CRC, batch count, zstd before v7, transactional ids", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "p1");
    expect(part(await c.call(0, 7, produceBody("p1", batch(3)))).errorCode).toBe(0);
    expect(part(await c.call(0, 7, produceBody("p1", batch(1), 2))).errorCode).toBe(21);
    const bad = batch(2);
    bad[bad.length - 1] ^= 0xff;
    expect(part(await c.call(0, 7, produceBody("p1", bad))).errorCode).toBe(2);
    const two = new Uint8Array([...batch(1), ...batch(1)]);
    expect(part(await c.call(0, 7, produceBody("p1", two))).errorCode).toBe(87);
    const z = batch(1);
    new DataView(z.buffer).setInt16(21, 4); // claims zstd (CRC is checked after this rule)
    expect(part(await c.call(0, 6, produceBody("p1", z))).errorCode).toBe(76);
    expect(part(await c.call(0, 7, produceBody("nope", batch(1)))).errorCode).toBe(3);
    expect(
      part(await c.call(0, 7, { ...produceBody("p1", batch(1)), transactionalId: "tx" })).errorCode,
    )
      .toBe(53);
    const ip = await c.call(22, 1, { transactionalId: "tx", transactionTimeoutMs: 1000 });
    expect(ip.errorCode).toBe(53);
    c.close();
  });

  test("max.message.bytes gives MESSAGE_TOO_LARGE and LogAppendTime is returned", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "p2", 1, {
      "max.message.bytes": "200",
      "message.timestamp.type": "LogAppendTime",
    });
    const big = encodeRecordBatch({
      records: [{ value: new Uint8Array(400) }],
      baseTimestamp: Date.now(),
    });
    expect(part(await c.call(0, 7, produceBody("p2", big))).errorCode).toBe(10);
    const before = Date.now();
    const ok = part(await c.call(0, 7, produceBody("p2", batch(1))));
    expect(ok.errorCode).toBe(0);
    expect(ok.logAppendTimeMs).toBeGreaterThanOrEqual(before - 5);
    c.close();
  });

  test("acks=0 gets no response; a failed acks=0 produce closes the connection", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "p3");
    await c.send(0, 7, produceBody("p3", batch(1), 0));
    const r = await c.call(18, 0, {});
    expect(r.errorCode).toBe(0);
    expect(c.frames.length).toBe(0);
    await c.send(0, 7, produceBody("missing-topic", batch(1), 0));
    expect(await c.waitClosed()).toBe(true);
  });

  test("an idempotent retry is answered with the original offset; a gap with 45", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "idem");
    const ip = await c.call(22, 1, { transactionalId: null, transactionTimeoutMs: 1000 });
    const pid = ip.producerId as number;
    expect(pid).toBeGreaterThanOrEqual(0);
    const b0 = batch(2, { pid, seq: 0 });
    const b1 = batch(2, { pid, seq: 2 });
    // Pipelined: both in flight at once, then b0 retried.
    await c.send(0, 7, produceBody("idem", b0));
    await c.send(0, 7, produceBody("idem", b1));
    await c.waitFrames(2);
    c.frames.length = 0;
    const dup = part(await c.call(0, 7, produceBody("idem", b0)));
    expect(dup.errorCode).toBe(0);
    expect(dup.baseOffset).toBe(0);
    const gap = part(await c.call(0, 7, produceBody("idem", batch(1, { pid, seq: 9 }))));
    expect(gap.errorCode).toBe(45);
    const lo = await c.call(2, 1, {
      replicaId: -1,
      topics: [{ name: "idem", partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
    });
    // deno-lint-ignore no-explicit-any
    expect((lo.topics as any)[0].partitions[0].offset).toBe(4);
    c.close();
  });
});

test("Produce v0-v2 with v0/v1 messages: up-converted, read back as one v2 batch", async () => {
  const c = await RawClient.connect(broker.kafkaPort);
  const versions = await c.call(18, 0, {});
  // deno-lint-ignore no-explicit-any
  const produceRange = (versions.apiKeys as any[]).find((k) => k.apiKey === 0);
  expect([produceRange.minVersion, produceRange.maxVersion]).toEqual([0, 11]);
  await createTopic(c, "legacy", 1);
  const msgs = [
    { key: "a", value: "1", timestamp: Date.now() - 5 },
    { key: null, value: "2", timestamp: Date.now() },
  ];
  const body = (records: Uint8Array) => ({
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: "legacy", partitionData: [{ index: 0, records }] }],
  });
  expect(part(await c.call(0, 2, body(legacyWrapped(1, 1, msgs, msgs[1].timestamp)))))
    .toMatchObject(
      { errorCode: 0, baseOffset: 0 },
    );
  expect(part(await c.call(0, 0, body(legacySet(0, msgs))))).toMatchObject({
    errorCode: 0,
    baseOffset: 2,
  });
  // A v0/v1 message set in Produce v3+ is refused, as Kafka refuses it.
  expect(part(await c.call(0, 3, { ...body(legacySet(1, msgs)), transactionalId: null })).errorCode)
    .toBe(87);
  const f = await c.call(1, 4, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    topics: [{
      topic: "legacy",
      partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }],
    }],
  });
  // deno-lint-ignore no-explicit-any
  const records = (f as any).responses[0].partitions[0].records as Uint8Array;
  const batches = decodeRecordBatches(records, (codec, b) => decompress(codec, b));
  expect(batches.map((b) => b.header.attributes & 7)).toEqual([1, 0]);
  const td = new TextDecoder();
  expect(
    batches.flatMap((b) =>
      b.records!.map((r) => [r.offset, r.key && td.decode(r.key), td.decode(r.value!)])
    ),
  )
    .toEqual([[0, "a", "1"], [1, null, "2"], [2, "a", "1"], [3, null, "2"]]);
  expect(batches[0].records!.map((r) => r.timestamp)).toEqual(msgs.map((m) => m.timestamp));
  c.close();
});

test("acks=all honours timeout_ms: a zero timeout answers REQUEST_TIMED_OUT, records still land", async () => {
  const c = await RawClient.connect(broker.kafkaPort);
  await createTopic(c, "tmo");
  const zero = { ...produceBody("tmo", batch(3), -1), timeoutMs: 0 };
  const r = part(await c.call(0, 7, zero));
  expect(r.errorCode).toBe(7);
  // acks=1 does not wait for durability, so its timeout does not apply.
  expect(part(await c.call(0, 7, { ...produceBody("tmo", batch(1), 1), timeoutMs: 0 })).errorCode)
    .toBe(0);
  const ok = part(await c.call(0, 7, produceBody("tmo", batch(2), -1)));
  expect(ok.errorCode).toBe(0);
  // The timed-out batch was written (Kafka gives the same warning): 3 + 1 records before.
  expect(ok.baseOffset).toBe(4);
  // A batch the log refuses gets the log's error, not the timeout's.
  await createTopic(c, "tmo-small", 1, { "max.message.bytes": "200" });
  const big = encodeRecordBatch({
    records: [{ value: new Uint8Array(400) }],
    baseTimestamp: Date.now(),
  });
  const refused = part(await c.call(0, 7, { ...produceBody("tmo-small", big, -1), timeoutMs: 0 }));
  expect(refused.errorCode).toBe(10);
  c.close();
});

describe("fetch", () => {
  // deno-lint-ignore no-explicit-any
  const fp = (r: any) => r.responses[0].partitions[0];
  const fetchBody = (
    topic: string,
    offset: number,
    maxWaitMs: number,
    opts: { maxBytes?: number; partMax?: number } = {},
  ) => ({
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: opts.maxBytes ?? 1 << 20,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic,
      partitions: [{
        partition: 0,
        currentLeaderEpoch: -1,
        fetchOffset: offset,
        logStartOffset: -1,
        partitionMaxBytes: opts.partMax ?? 1 << 20,
      }],
    }],
    forgottenTopicsData: [],
    rackId: "",
  });

  test("a long-poll returns within 1 s of the append that satisfies it", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    const p = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "f1");
    const started = Date.now();
    const pending = c.call(1, 11, fetchBody("f1", 0, 30_000), 40_000);
    await Bun.sleep(300);
    const appended = Date.now();
    expect(part(await p.call(0, 7, produceBody("f1", batch(2)))).errorCode).toBe(0);
    const r = await pending;
    expect(Date.now() - appended).toBeLessThan(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(fp(r).highWatermark).toBe(2);
    expect(fp(r).lastStableOffset).toBe(2);
    expect(fp(r).preferredReadReplica).toBe(-1);
    expect(r.sessionId).toBe(0);
    expect((fp(r).records as Uint8Array).length).toBeGreaterThan(61);
    c.close();
    p.close();
  });

  test("a Kafka fetch naming a replica id is refused: followers copy over the cluster port", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "frep");
    expect(part(await c.call(0, 7, produceBody("frep", batch(2)))).errorCode).toBe(0);
    const consumer = await c.call(1, 11, fetchBody("frep", 0, 0));
    expect(fp(consumer).errorCode).toBe(0);
    expect((fp(consumer).records as Uint8Array).length).toBeGreaterThan(61);
    // Even this broker's own id or a replica's: a typed-in replica id would read past the high
    // watermark. CLUSTER_AUTHORIZATION_FAILED (31), as Kafka answers an unauthorised replica.
    for (const replicaId of [0, 1, 7]) {
      const r = await c.call(1, 11, { ...fetchBody("frep", 0, 0), replicaId });
      expect(fp(r).errorCode).toBe(31);
      expect((fp(r).records as Uint8Array).length).toBe(0);
    }
    c.close();
  });

  test("max_wait_ms bounds an empty fetch; out of range offsets; max_bytes", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    await createTopic(c, "f2");
    const t0 = Date.now();
    const empty = await c.call(1, 11, fetchBody("f2", 0, 300));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect((fp(empty).records as Uint8Array).length).toBe(0);
    expect(fp(await c.call(1, 11, fetchBody("f2", 5, 0))).errorCode).toBe(1);
    for (let i = 0; i < 5; i++) {
      await c.call(0, 7, produceBody("f2", batch(20, { value: "x".repeat(100) })));
    }
    const one = await c.call(1, 11, fetchBody("f2", 0, 0, { maxBytes: 10 }));
    const size = (fp(one).records as Uint8Array).length;
    // At least one whole batch even above max_bytes, and no more than one.
    expect(size).toBeGreaterThan(61);
    const all = await c.call(1, 11, fetchBody("f2", 0, 0));
    expect((fp(all).records as Uint8Array).length).toBe(size * 5);
    const capped = await c.call(1, 11, fetchBody("f2", 0, 0, { maxBytes: size * 2 + 10 }));
    expect((fp(capped).records as Uint8Array).length).toBe(size * 2);
    c.close();
  });
});
