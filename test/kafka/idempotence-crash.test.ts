// Idempotence across a simulated power loss: the Produce handler appends through the real
// PartitionManager onto storage over CrashFileIO; the machine "loses power" while idempotent
// batches are in flight (acks=all, not yet synced; a random torn prefix of unsynced writes may
// survive); every producer-state snapshot is deleted; the broker state is reopened and the
// client retries the in-flight batches. Each record must then be in the log exactly once.
import { expect, test } from "bun:test";
import { MetadataStore } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { PartitionManager } from "../../src/core/partition-manager.ts";
import { Metrics } from "../../src/core/metrics.ts";
import { createLogger } from "../../src/log.ts";
import { decodeRecordBatches, encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import type { DecodedRequestHeader, ProduceRequest } from "../../src/protocol/kafka/index.ts";
import type { KafkaContext } from "../../src/kafka/context.ts";
import { produce } from "../../src/kafka/handlers/produce.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { registerSelf } from "../helpers/meta.ts";

const TOPIC = "idem";
const PID = 4242;
const PER_BATCH = 10;
const te = new TextEncoder();

function idemBatch(seq: number): Uint8Array {
  return encodeRecordBatch({
    records: Array.from({ length: PER_BATCH }, (_, i) => ({
      key: te.encode(`s${seq}-${i}`),
      value: te.encode(`value ${seq}-${i}`),
    })),
    baseTimestamp: Date.now(),
    producerId: PID,
    producerEpoch: 0,
    baseSequence: seq * PER_BATCH,
  });
}

/** Files under `dir` ending in `suffix`, walking the simulated tree. */
function findFiles(io: CrashFileIO, dir: string, suffix: string, depth = 0): string[] {
  const out: string[] = [];
  if (depth > 6) return out;
  for (const name of io.readdir(dir)) {
    const p = `${dir}/${name}`;
    if (name.endsWith(suffix)) out.push(p);
    else {
      try {
        out.push(...findFiles(io, p, suffix, depth + 1));
      } catch { /* a file, not a directory */ }
    }
  }
  return out;
}

async function openBroker(dataDir: string, io: CrashFileIO) {
  const meta = MetadataStore.open(dataDir);
  const store = await SegmentLogStore.open({ dataDir, io, checkpointIntervalMs: 0 });
  const log = createLogger("error");
  const partitions = new PartitionManager(meta, store, meta.nodeId, log);
  await registerSelf(meta);
  await partitions.openAll();
  // Only what the Produce handler touches; the rest of the context is not reached.
  const ctx = {
    partitions,
    meta,
    log,
    metrics: new Metrics(),
    groupsStarted: Promise.resolve(),
  } as unknown as KafkaContext;
  return { meta, partitions, ctx };
}

/** One Produce v7 request through the handler; the partition's answer. */
async function send(ctx: KafkaContext, records: Uint8Array) {
  const header = {
    apiKey: 0,
    apiVersion: 7,
    correlationId: 1,
    clientId: "crash-test",
  } as unknown as DecodedRequestHeader;
  const body: ProduceRequest = {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
  };
  const r = await produce(ctx, { header, body, connection: {}, clientHost: "/test" });
  return r!.responses[0].partitionResponses[0];
}

/** Across seeds: in-flight batches that survived the power loss, snapshots deleted. */
const tally = { survived: 0, snapshots: 0 };

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(
    `power loss with in-flight idempotent batches, snapshots deleted (seed ${seed})`,
    async () => {
      const dataDir = tempDir("idem-crash-");
      const io = new CrashFileIO();
      // The data dir exists durably before the broker ever runs (as on a real disk).
      io.mkdirp(dataDir);
      for (let d = dataDir; d !== "/"; d = d.slice(0, d.lastIndexOf("/")) || "/") {
        await io.syncDir(d.slice(0, d.lastIndexOf("/")) || "/");
      }
      const a = await openBroker(dataDir, io);
      await a.partitions.createTopic(TOPIC, 1, 1, { "segment.bytes": "2048" });
      // Acknowledged batches: durable before their answer.
      const acked = 10;
      for (let s = 0; s < acked; s++) {
        const r = await send(a.ctx, idemBatch(s));
        expect(r.errorCode).toBe(0);
        expect(r.baseOffset).toBe(s * PER_BATCH);
      }
      // Five more in flight (the client's max in-flight), then the power goes.
      const inflight = [acked, acked + 1, acked + 2, acked + 3, acked + 4];
      const pending = inflight.map((s) => send(a.ctx, idemBatch(s)).catch(() => null));
      const crashed = io.crash({ seed, keepUnsyncedProb: 0.7 });
      await Promise.all(pending);
      await a.partitions.close().catch(() => {});
      await a.meta.close();

      // Any producer-state snapshot is gone: the state must come back from the log itself.
      const snapshots = findFiles(crashed, dataDir, ".snapshot");
      for (const f of snapshots) crashed.unlink(f);
      const b = await openBroker(dataDir, crashed);
      const recovered = b.partitions.highWatermark(TOPIC, 0) - acked * PER_BATCH;
      expect(recovered % PER_BATCH).toBe(0); // a torn batch is cut off whole
      tally.survived += recovered / PER_BATCH;
      tally.snapshots += snapshots.length;
      // The client retries every in-flight batch, in order, with the same sequence numbers.
      for (const s of inflight) {
        const r = await send(b.ctx, idemBatch(s));
        expect(r.errorCode).toBe(0);
        expect(r.baseOffset).toBe(s * PER_BATCH);
      }
      const end = b.partitions.highWatermark(TOPIC, 0);
      expect(end).toBe((acked + inflight.length) * PER_BATCH);
      const keys = new Map<string, number>();
      for (let off = 0; off < end;) {
        const got = b.partitions.read(TOPIC, 0, off, 1 << 20);
        const batches = decodeRecordBatches(got.records);
        expect(batches.length).toBeGreaterThan(0);
        for (const bt of batches) {
          for (const r of bt.records!) {
            const k = new TextDecoder().decode(r.key!);
            keys.set(k, (keys.get(k) ?? 0) + 1);
          }
          off = bt.header.baseOffset + bt.header.lastOffsetDelta + 1;
        }
      }
      expect(keys.size).toBe(end);
      expect([...keys.values()].every((n) => n === 1)).toBe(true);
      await b.partitions.close();
      await b.meta.close();
    },
    30_000,
  );
}

test("the seeds exercised both retry paths: duplicates answered and lost batches re-appended", () => {
  // Some in-flight batches survived (their retry is a recognised duplicate), some did not
  // (their retry is appended), and snapshots existed to delete (segments rolled).
  expect(tally.survived).toBeGreaterThan(0);
  expect(tally.survived).toBeLessThan(8 * 5);
  expect(tally.snapshots).toBeGreaterThan(0);
});
