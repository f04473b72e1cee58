// What a Kafka client sees from Fetch, ListOffsets, DeleteRecords and Produce at their edges, in
// raw frames: per-partition byte limits, a long-poll woken by one record, offsets below the log
// start after DeleteRecords, current_leader_epoch checks, one batch per partition, the internal
// topic, a version above the advertised range, OffsetForLeaderEpoch's epoch check, control
// batches from clients and max.message.bytes at its edge. (Each was a planted bug no test
// caught: docs/mutation.md, the test suite.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeRecordBatches, encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { encodeRequestFrame, ErrorCode, type Struct } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;
let c: RawClient;
const TOPIC = "edges";

// deno-lint-ignore no-explicit-any
type Any = any;

function fetchBody(
  parts: { partition: number; offset: number; max?: number; epoch?: number }[],
  o: { maxWaitMs?: number; minBytes?: number; topic?: string } = {},
): Struct {
  return {
    replicaId: -1,
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: o.minBytes ?? 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic: o.topic ?? TOPIC,
      partitions: parts.map((p) => ({
        partition: p.partition,
        currentLeaderEpoch: p.epoch ?? -1,
        fetchOffset: p.offset,
        logStartOffset: -1,
        partitionMaxBytes: p.max ?? 1 << 20,
      })),
    }],
    forgottenTopicsData: [],
    rackId: "",
  };
}

function batch(values: string[]): Uint8Array {
  return encodeRecordBatch({
    records: values.map((v) => ({ value: new TextEncoder().encode(v) })),
    baseTimestamp: Date.now(),
  });
}

async function produce(topic: string, partition: number, records: Uint8Array): Promise<Any> {
  const r = await c.call(0, 7, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  return (r.responses as Any)[0].partitionResponses[0];
}

function batchesOf(records: Uint8Array) {
  return records.length === 0 ? [] : decodeRecordBatches(records);
}

beforeAll(async () => {
  broker = await startBrokerProcess();
  c = await RawClient.connect(broker.kafkaPort);
  const created = await c.call(19, 4, {
    topics: [{
      name: TOPIC,
      numPartitions: 3,
      replicationFactor: 1,
      assignments: [],
      configs: [],
    }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  expect((created.topics as Any)[0].errorCode).toBe(0);
  // Partitions 0 and 1: three batches of ~1 KiB each.
  const filler = "x".repeat(1000);
  for (const p of [0, 1]) {
    for (let i = 0; i < 3; i++) {
      expect((await produce(TOPIC, p, batch([`${p}-${i}-${filler}`]))).errorCode).toBe(0);
    }
  }
});
afterAll(async () => {
  c?.close();
  broker.kill();
  await broker.exited;
});

describe("Fetch", () => {
  test("partition_max_bytes bounds each partition: one 1 KiB batch each at 1500 bytes", async () => {
    const r = await c.call(
      1,
      11,
      fetchBody([
        { partition: 0, offset: 0, max: 1500 },
        { partition: 1, offset: 0, max: 1500 },
      ]),
    );
    const parts = (r.responses as Any)[0].partitions;
    for (const p of parts) {
      expect(p.errorCode).toBe(0);
      expect(p.highWatermark).toBe(3);
      expect(p.records.length).toBeLessThanOrEqual(1500);
      expect(batchesOf(p.records).map((b) => b.header.baseOffset)).toEqual([0]);
    }
  });

  test("max_bytes bounds the response: a second partition's batch that does not fit waits", async () => {
    const body = fetchBody([{ partition: 0, offset: 0 }, { partition: 1, offset: 0 }]);
    body.maxBytes = 1500;
    const r = await c.call(1, 11, body);
    const [p0, p1] = (r.responses as Any)[0].partitions;
    expect(p0.errorCode).toBe(0);
    expect(p1.errorCode).toBe(0);
    // KIP-74: the first batch goes out whatever the limit; after it, only what fits.
    expect(batchesOf(p0.records).map((b) => b.header.baseOffset)).toEqual([0]);
    expect(p1.records.length).toBe(0);
    expect(p1.highWatermark).toBe(3);
  });

  test("a long-poll at the log end is answered as soon as one record arrives", async () => {
    const c2 = await RawClient.connect(broker.kafkaPort);
    try {
      const t0 = performance.now();
      const waiting = c2.call(
        1,
        11,
        fetchBody([{ partition: 2, offset: 0 }], {
          maxWaitMs: 8000,
          minBytes: 1,
        }),
        15_000,
      );
      await Bun.sleep(300);
      expect((await produce(TOPIC, 2, batch(["wake"]))).errorCode).toBe(0);
      const r = await waiting;
      const ms = performance.now() - t0;
      const p = (r.responses as Any)[0].partitions[0];
      expect(p.errorCode).toBe(0);
      const recs = batchesOf(p.records).flatMap((b) => b.records!);
      expect(recs.map((x) => new TextDecoder().decode(x.value!))).toEqual(["wake"]);
      expect(ms).toBeLessThan(4000); // not max_wait_ms (8 s)
    } finally {
      c2.close();
    }
  });

  test("current_leader_epoch: newer than the leader's is UNKNOWN, older is FENCED", async () => {
    const md = await c.call(3, 9, {
      topics: [{ name: TOPIC }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const epoch = (md.topics as Any)[0].partitions.find((p: Any) => p.partitionIndex === 0)
      .leaderEpoch as number;
    expect(epoch).toBeGreaterThanOrEqual(0);
    const ahead = await c.call(1, 11, fetchBody([{ partition: 0, offset: 0, epoch: epoch + 1 }]));
    expect((ahead.responses as Any)[0].partitions[0].errorCode).toBe(
      ErrorCode.UNKNOWN_LEADER_EPOCH,
    );
    const same = await c.call(1, 11, fetchBody([{ partition: 0, offset: 0, epoch }]));
    expect((same.responses as Any)[0].partitions[0].errorCode).toBe(0);
    if (epoch > 0) {
      const behind = await c.call(
        1,
        11,
        fetchBody([{ partition: 0, offset: 0, epoch: epoch - 1 }]),
      );
      expect((behind.responses as Any)[0].partitions[0].errorCode).toBe(
        ErrorCode.FENCED_LEADER_EPOCH,
      );
    }
  });
});

describe("DeleteRecords, then Fetch and ListOffsets below the new log start", () => {
  test("an offset past the high watermark is OFFSET_OUT_OF_RANGE", async () => {
    const r = await c.call(21, 1, {
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, offset: 4 }] }],
      timeoutMs: 5000,
    });
    expect((r.topics as Any)[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  test("deleted offsets are out of range; EARLIEST is the new log start", async () => {
    const d = await c.call(21, 1, {
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, offset: 2 }] }],
      timeoutMs: 5000,
    });
    const dp = (d.topics as Any)[0].partitions[0];
    expect(dp.errorCode).toBe(0);
    expect(dp.lowWatermark).toBe(2);

    const f = await c.call(1, 11, fetchBody([{ partition: 1, offset: 0 }]));
    const fp = (f.responses as Any)[0].partitions[0];
    expect(fp.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(fp.records.length).toBe(0);
    expect(fp.logStartOffset).toBe(2);

    const lo = await c.call(2, 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{
        name: TOPIC,
        partitions: [
          { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -2 },
        ],
      }],
    });
    const lp = (lo.topics as Any)[0].partitions[0];
    expect(lp.errorCode).toBe(0);
    expect(lp.offset).toBe(2);
  });
});

describe("Produce", () => {
  test("idempotence: a retry older than the five cached batches is OUT_OF_ORDER_SEQUENCE", async () => {
    const ip = await c.call(22, 1, { transactionalId: null, transactionTimeoutMs: 1000 });
    expect(ip.errorCode).toBe(0);
    const pid = ip.producerId as number;
    const idem = (seq: number) =>
      encodeRecordBatch({
        records: [{ value: new TextEncoder().encode(`seq ${seq}`) }],
        baseTimestamp: Date.now(),
        producerId: pid,
        producerEpoch: 0,
        baseSequence: seq,
      });
    for (let seq = 0; seq < 7; seq++) {
      const r = await produce(TOPIC, 2, idem(seq));
      expect(r.errorCode).toBe(0);
    }
    const hw = (await produce(TOPIC, 2, idem(6))).baseOffset as number; // a cached duplicate
    // Sequence 0 left the cache (2..6 remain): neither appended again nor taken as a duplicate.
    const old = await produce(TOPIC, 2, idem(0));
    expect(old.errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    const f = await c.call(1, 11, fetchBody([{ partition: 2, offset: 0 }]));
    expect((f.responses as Any)[0].partitions[0].highWatermark).toBe(hw + 1);
  });

  test("two batches in one partition's records are INVALID_RECORD; nothing is appended", async () => {
    const a = batch(["a"]);
    const b = batch(["b"]);
    const both = new Uint8Array(a.length + b.length);
    both.set(a);
    both.set(b, a.length);
    const r = await produce(TOPIC, 0, both);
    expect(r.errorCode).toBe(ErrorCode.INVALID_RECORD);
    const f = await c.call(1, 11, fetchBody([{ partition: 0, offset: 0 }]));
    expect((f.responses as Any)[0].partitions[0].highWatermark).toBe(3);
  });

  test("the internal __consumer_offsets topic refuses client records", async () => {
    // A group coordinator lookup makes sure the internal topic exists.
    const fc = await c.call(10, 1, { key: "g", keyType: 0 });
    expect(fc.errorCode).toBe(0);
    const r = await produce("__consumer_offsets", 0, batch(["evil"]));
    expect(r.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
  });
});

test("a request one version above the advertised maximum is refused by closing", async () => {
  const av = await c.call(18, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
  const lo = (av.apiKeys as Any).find((k: Any) => k.apiKey === 2);
  const version = lo.maxVersion + 1; // the protocol knows it (ListOffsets v8), we do not serve it
  const c2 = await RawClient.connect(broker.kafkaPort);
  try {
    await c2.write(
      encodeRequestFrame({ apiKey: 2, apiVersion: version, correlationId: 7, clientId: "t" }, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{
          name: TOPIC,
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }],
        }],
      }),
    );
    expect(await c2.waitClosed(5000)).toBe(true);
    expect(c2.frames).toEqual([]);
  } finally {
    c2.close();
  }
});

test("a frame one byte above socket.request.max.bytes (100 MiB) is refused from its size", async () => {
  const c2 = await RawClient.connect(broker.kafkaPort);
  try {
    // A valid request first: before it, a much smaller pre-authentication limit applies.
    expect((await c2.call(18, 0, {})).errorCode).toBe(0);
    const head = new Uint8Array(12);
    new DataView(head.buffer).setInt32(0, 100 * 1024 * 1024 + 1);
    await c2.write(head);
    expect(await c2.waitClosed(5000)).toBe(true);
    expect(c2.frames).toEqual([]);
  } finally {
    c2.close();
  }
});

describe("OffsetForLeaderEpoch and Produce validation", () => {
  const leaderEpoch = async (): Promise<number> => {
    const md = await c.call(3, 9, {
      topics: [{ name: TOPIC }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return (md.topics as Any)[0].partitions.find((p: Any) => p.partitionIndex === 2)
      .leaderEpoch as number;
  };
  const ofle = async (current: number, asked: number): Promise<Any> => {
    const r = await c.call(23, 4, {
      replicaId: -1,
      topics: [{
        topic: TOPIC,
        partitions: [{ partition: 2, currentLeaderEpoch: current, leaderEpoch: asked }],
      }],
    });
    return (r.topics as Any)[0].partitions[0];
  };

  test("OffsetForLeaderEpoch checks current_leader_epoch before answering", async () => {
    const epoch = await leaderEpoch();
    expect(epoch).toBeGreaterThanOrEqual(0);
    const ok = await ofle(epoch, epoch);
    expect(ok.errorCode).toBe(0);
    expect(ok.leaderEpoch).toBe(epoch);
    // A newer epoch than the leader's: the asker knows of a leader this broker has not heard of.
    const ahead = await ofle(epoch + 1, epoch);
    expect({ code: ahead.errorCode, end: ahead.endOffset }).toEqual({
      code: ErrorCode.UNKNOWN_LEADER_EPOCH,
      end: -1,
    });
    if (epoch > 0) {
      expect((await ofle(epoch - 1, epoch)).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    }
  });

  test("a control batch (a transaction marker) from a client is INVALID_RECORD", async () => {
    const control = encodeRecordBatch({
      records: [{ value: new TextEncoder().encode("marker") }],
      baseTimestamp: Date.now(),
      attributes: 0x20,
    });
    const r = await produce(TOPIC, 2, control);
    expect(r.errorCode).toBe(ErrorCode.INVALID_RECORD);
  });

  test("max.message.bytes counts the whole batch: one byte over is MESSAGE_TOO_LARGE", async () => {
    const over = batch(["y".repeat(40)]);
    const fits = batch(["y".repeat(39)]);
    expect(fits.length).toBe(over.length - 1);
    const created = await c.call(19, 4, {
      topics: [{
        name: "max-message",
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: [{ name: "max.message.bytes", value: String(fits.length) }],
      }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    expect((created.topics as Any)[0].errorCode).toBe(0);
    expect((await produce("max-message", 0, over)).errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect((await produce("max-message", 0, fits)).errorCode).toBe(0);
  });
});
