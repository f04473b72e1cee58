// Idempotence across kill -9 of a real broker: an idempotent producer (InitProducerId, sequence
// numbers) has acknowledged batches and five more in flight when the broker is killed; every
// producer-state snapshot is deleted; the broker restarts on the same data dir and the client
// retries the in-flight batches on a new connection. Each record is then stored exactly once.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "bun:test";
import { decodeRecordBatches, encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { startBrokerProcess, tempDir } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

const TOPIC = "killed";
const PER_BATCH = 20;
const te = new TextEncoder();

function idemBatch(pid: number, seq: number): Uint8Array {
  return encodeRecordBatch({
    records: Array.from({ length: PER_BATCH }, (_, i) => ({
      key: te.encode(`s${seq}-${i}`),
      value: te.encode(`value ${seq}-${i} `.padEnd(200, "x")),
    })),
    baseTimestamp: Date.now(),
    producerId: pid,
    producerEpoch: 0,
    baseSequence: seq * PER_BATCH,
  });
}

const produceBody = (records: Uint8Array) => ({
  transactionalId: null,
  acks: -1,
  timeoutMs: 5000,
  topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
});
// deno-lint-ignore no-explicit-any
const answer = (r: any) => r.responses[0].partitionResponses[0];

function snapshotsUnder(dir: string, depth = 0): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && depth < 5) out.push(...snapshotsUnder(p, depth + 1));
    else if (e.name.endsWith(".snapshot")) out.push(p);
  }
  return out;
}

test(
  "kill -9 with idempotent batches in flight; retries after restart store each record once",
  async () => {
    const dataDir = tempDir("idem-kill-");
    const args = ["--topic-default", "segment.bytes=16384"];
    const a = await startBrokerProcess({ dataDir, args });
    const c = await RawClient.connect(a.kafkaPort);
    const created = await c.call(19, 4, {
      topics: [{
        name: TOPIC,
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: [],
      }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    // deno-lint-ignore no-explicit-any
    expect((created.topics as any)[0].errorCode).toBe(0);
    const ip = await c.call(22, 1, { transactionalId: null, transactionTimeoutMs: 1000 });
    expect(ip.errorCode).toBe(0);
    const pid = ip.producerId as number;
    const acked = 20;
    for (let s = 0; s < acked; s++) {
      const r = answer(await c.call(0, 7, produceBody(idemBatch(pid, s))));
      expect(r.errorCode).toBe(0);
      expect(r.baseOffset).toBe(s * PER_BATCH);
    }
    // Five pipelined batches, then kill -9 without waiting for their answers.
    const inflight = [0, 1, 2, 3, 4].map((i) => acked + i);
    for (const s of inflight) await c.send(0, 7, produceBody(idemBatch(pid, s)));
    a.kill("SIGKILL");
    expect(await a.exited).not.toBe(0);
    c.close();
    const snapshots = snapshotsUnder(dataDir);
    expect(snapshots.length).toBeGreaterThan(0); // segments rolled: there was state to lose
    for (const f of snapshots) rmSync(f);

    const b = await startBrokerProcess({ dataDir, args });
    try {
      const c2 = await RawClient.connect(b.kafkaPort);
      for (const s of inflight) {
        const r = answer(await c2.call(0, 7, produceBody(idemBatch(pid, s))));
        expect(r.errorCode).toBe(0);
        expect(r.baseOffset).toBe(s * PER_BATCH); // a duplicate gets its original offset
      }
      const total = (acked + inflight.length) * PER_BATCH;
      const keys = new Map<string, number>();
      for (let off = 0, guard = 0; off < total && guard < 1000; guard++) {
        const f = await c2.call(1, 11, {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [{
            topic: TOPIC,
            partitions: [{
              partition: 0,
              currentLeaderEpoch: -1,
              fetchOffset: off,
              logStartOffset: -1,
              partitionMaxBytes: 1 << 20,
            }],
          }],
          forgottenTopicsData: [],
          rackId: "",
        });
        // deno-lint-ignore no-explicit-any
        const p = (f.responses as any)[0].partitions[0];
        expect(p.errorCode).toBe(0);
        expect(p.highWatermark).toBe(total);
        for (const bt of decodeRecordBatches(p.records)) {
          for (const r of bt.records!) {
            const k = new TextDecoder().decode(r.key!);
            keys.set(k, (keys.get(k) ?? 0) + 1);
          }
          off = bt.header.baseOffset + bt.header.lastOffsetDelta + 1;
        }
      }
      expect(keys.size).toBe(total);
      expect([...keys.values()].every((n) => n === 1)).toBe(true);
      c2.close();
    } finally {
      b.kill();
      await b.exited;
    }
  },
  60_000,
);
