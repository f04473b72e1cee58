// ListOffsets v0 (Kafka 0.8's form; Burrow sends it on every refresh), checked with frames
// written and read by hand from the spec rather than through our codec.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { encodeRecordBatch } from "../../../src/protocol/record-batch.ts";
import { type RunningBroker, startBrokerProcess } from "../../helpers/broker-process.ts";
import { RawClient } from "../raw-client.ts";

let broker: RunningBroker;
beforeAll(async () => {
  broker = await startBrokerProcess({});
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

/** A v0 request (header v1) for partition 0 of `topic` at `timestamp`. */
function listOffsetsV0(correlationId: number, topic: string, timestamp: bigint, max: number) {
  const name = new TextEncoder().encode(topic);
  const body = 4 + 4 + 2 + name.length + 4 + 4 + 8 + 4;
  const header = 2 + 2 + 4 + 2;
  const buf = new Uint8Array(4 + header + body);
  const v = new DataView(buf.buffer);
  let o = 0;
  v.setInt32(o, header + body), o += 4;
  v.setInt16(o, 2), o += 2; // api key
  v.setInt16(o, 0), o += 2; // version
  v.setInt32(o, correlationId), o += 4;
  v.setInt16(o, -1), o += 2; // null client id
  v.setInt32(o, -1), o += 4; // replica id: a consumer
  v.setInt32(o, 1), o += 4; // one topic
  v.setInt16(o, name.length), o += 2;
  buf.set(name, o), o += name.length;
  v.setInt32(o, 1), o += 4; // one partition
  v.setInt32(o, 0), o += 4;
  v.setBigInt64(o, timestamp), o += 8;
  v.setInt32(o, max);
  return buf;
}

/** correlation id, error code and offsets of the one partition in a v0 response. */
function parse(f: Uint8Array) {
  const v = new DataView(f.buffer, f.byteOffset, f.byteLength);
  let o = 0;
  const correlationId = v.getInt32(o);
  o += 4;
  expect(v.getInt32(o)).toBe(1); // topics
  o += 4;
  o += 2 + v.getInt16(o); // name
  expect(v.getInt32(o)).toBe(1); // partitions
  o += 4;
  expect(v.getInt32(o)).toBe(0); // partition index
  o += 4;
  const errorCode = v.getInt16(o);
  o += 2;
  const n = v.getInt32(o);
  o += 4;
  const offsets = Array.from({ length: n }, (_, i) => Number(v.getBigInt64(o + 8 * i)));
  expect(o + 8 * n).toBe(f.length); // nothing after: no v1+ fields
  return { correlationId, errorCode, offsets };
}

test("ListOffsets v0: latest and earliest as one-offset lists, errors per partition", async () => {
  const c = await RawClient.connect(broker.kafkaPort);
  await c.call(19, 4, {
    topics: [{ name: "lo0", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  const te = new TextEncoder();
  const records = encodeRecordBatch({
    baseOffset: 0,
    records: Array.from({ length: 3 }, (_, i) => ({ key: null, value: te.encode(`v${i}`) })),
    baseTimestamp: Date.now(),
  });
  await c.call(0, 7, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: "lo0", partitionData: [{ index: 0, records }] }],
  });
  const before = c.frames.length;
  await c.write(listOffsetsV0(101, "lo0", -1n, 1));
  await c.write(listOffsetsV0(102, "lo0", -2n, 5));
  await c.write(listOffsetsV0(103, "lo0", -1n, 0));
  await c.write(listOffsetsV0(104, "missing", -1n, 1));
  await c.waitFrames(before + 4);
  const [latest, earliest, none, missing] = c.frames.slice(before).map((f) => parse(f.frame));
  expect(latest).toEqual({ correlationId: 101, errorCode: 0, offsets: [3] });
  expect(earliest).toEqual({ correlationId: 102, errorCode: 0, offsets: [0] });
  expect(none).toEqual({ correlationId: 103, errorCode: 0, offsets: [] });
  expect(missing).toEqual({ correlationId: 104, errorCode: 3, offsets: [] });
  c.close();
});
