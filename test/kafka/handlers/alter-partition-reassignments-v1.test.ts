// AlterPartitionReassignments v1 (KIP-860) on a real broker, both ends in a real client's codec:
// the request body is @platformatic/kafka's encoder's, the response is read by its decoder. With
// AllowReplicationFactorChange false a target that changes a partition's replication factor is
// refused with INVALID_REPLICATION_FACTOR (38); one of the same size is accepted; the flag is
// echoed; v0 (no flag) keeps Kafka's default (changes allowed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as plt from "@platformatic/kafka";
import { type RunningBroker, startBrokerProcess } from "../../helpers/broker-process.ts";
import { RawClient } from "../raw-client.ts";

let broker: RunningBroker;
let client: RawClient;
beforeAll(async () => {
  broker = await startBrokerProcess({});
  const r = await fetch(`${broker.httpUrl}/topics`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "moves", partitions: 2, replication_factor: 1 }),
  });
  expect(r.status).toBe(201);
  client = await RawClient.connect(broker.kafkaPort);
});
afterAll(async () => {
  client?.socket.end();
  broker.kill();
  await broker.exited;
});

type Topics = { name: string; partitions: { partitionIndex: number; replicas: number[] }[] }[];
const mods = plt as unknown as Record<string, {
  createRequest: (...a: unknown[]) => { buffer: Uint8Array };
  parseResponse: (c: number, k: number, v: number, r: unknown) => unknown;
}>;

/** One request (header v2, body by platformatic) and its response decoded by platformatic. */
async function call(version: 0 | 1, correlationId: number, allow: boolean, topics: Topics) {
  const mod = mods[`alterPartitionReassignmentsV${version}`];
  // v0's encoder takes the flag too (and leaves it out of the bytes).
  const body = mod.createRequest(10_000, allow, topics).buffer;
  const clientId = new TextEncoder().encode("kip-860");
  const head = new Uint8Array(2 + 2 + 4 + 2 + clientId.length + 1);
  const v = new DataView(head.buffer);
  v.setInt16(0, 45);
  v.setInt16(2, version);
  v.setInt32(4, correlationId);
  v.setInt16(8, clientId.length);
  head.set(clientId, 10); // then an empty tagged-field buffer (0)
  const frame = new Uint8Array(4 + head.length + body.length);
  new DataView(frame.buffer).setInt32(0, head.length + body.length);
  frame.set(head, 4);
  frame.set(body, 4 + head.length);
  const before = client.frames.length;
  await client.write(frame);
  await client.waitFrames(before + 1);
  const f = client.frames[before].frame;
  expect(new DataView(f.buffer, f.byteOffset).getInt32(0)).toBe(correlationId);
  // Past the correlation id, the flexible response header's empty tagged fields.
  const reader = plt.Reader.from(Buffer.from(f.subarray(5)));
  try {
    return mod.parseResponse(correlationId, 45, version, reader) as Record<string, unknown>;
  } catch (e) {
    // platformatic throws for any non-zero code, carrying the decoded response.
    const r = (e as { response?: Record<string, unknown> }).response;
    if (r === undefined) throw e;
    return r;
  }
}

const codes = (r: Record<string, unknown>) =>
  (r.responses as { partitions: { partitionIndex: number; errorCode: number }[] }[])[0]
    .partitions.map((p) => [p.partitionIndex, p.errorCode]);

test("v1 with AllowReplicationFactorChange false: a factor change is refused (38), echoed", async () => {
  const r = await call(1, 7, false, [{
    name: "moves",
    partitions: [{ partitionIndex: 0, replicas: [0, 5] }, { partitionIndex: 1, replicas: [0] }],
  }]);
  expect(r.errorCode).toBe(0);
  expect(r.allowReplicationFactorChange).toBe(false);
  // Partition 1's target is its own replica set: nothing to do, accepted.
  expect(codes(r)).toEqual([[0, 38], [1, 0]]);
  const msg = (r.responses as { partitions: { errorMessage: string | null }[] }[])[0]
    .partitions[0].errorMessage;
  expect(msg).toContain("replication factor would change from 1 to 2");
});

test("allowed (v1 true, or v0): the same target is checked as a move (broker 5 unknown: 39)", async () => {
  const topics = [{ name: "moves", partitions: [{ partitionIndex: 0, replicas: [0, 5] }] }];
  const v1 = await call(1, 8, true, topics);
  expect(v1.allowReplicationFactorChange).toBe(true);
  expect(codes(v1)).toEqual([[0, 39]]);
  const v0 = await call(0, 9, true, topics);
  expect(codes(v0)).toEqual([[0, 39]]);
});
