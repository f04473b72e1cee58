// Every topic config the broker accepts changes behaviour: one test each, through the broker core
// (metadata validation -> partition log), on real files with an injected clock.
import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { MetadataStore, TOPIC_CONFIGS } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import { PartitionManager } from "../../src/core/partition-manager.ts";
import { createLogger } from "../../src/log.ts";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { registerSelf } from "../helpers/meta.ts";
import { batch, FakeClock } from "../storage/helpers.ts";

const opened: PartitionManager[] = [];
afterEach(async () => {
  for (const pm of opened.splice(0)) {
    await pm.close();
    await pm.meta.close();
  }
});

async function setup(configs: Record<string, string>, partitions = 1) {
  const dataDir = tempDir();
  const clock = new FakeClock(Date.now());
  const meta = MetadataStore.open(dataDir, { now: () => clock.now() });
  const store = await SegmentLogStore.open({ dataDir, clock, checkpointIntervalMs: 0 });
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"));
  opened.push(pm);
  await registerSelf(meta);
  await pm.createTopic("t", partitions, 1, configs);
  return { pm, clock, dir: join(dataDir, "logs", "t-0") };
}

const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".log")).length;

describe("topic config behaviour", () => {
  const tested = new Set<string>();
  const covers = (name: string) => tested.add(name);

  test("segment.bytes rolls segments by size", async () => {
    covers("segment.bytes");
    const { pm, clock, dir } = await setup({ "segment.bytes": "4096" });
    for (let i = 0; i < 10; i++) {
      await pm.append("t", 0, batch({ count: 2, valueSize: 1000, ts: clock.now() }), 1);
    }
    expect(segments(dir)).toBeGreaterThanOrEqual(4);
  });

  test("segment.ms rolls segments by age", async () => {
    covers("segment.ms");
    const { pm, clock, dir } = await setup({ "segment.ms": "1000" });
    await pm.append("t", 0, batch({ ts: clock.now() }), 1);
    await pm.append("t", 0, batch({ ts: clock.now() }), 1);
    expect(segments(dir)).toBe(1);
    clock.advance(1500);
    await pm.append("t", 0, batch({ ts: clock.now() }), 1);
    expect(segments(dir)).toBe(2);
  });

  test("segment.ms counts record time, as Kafka does: a backfill of old records keeps one segment", async () => {
    const { pm, clock, dir } = await setup({ "segment.ms": "60000" });
    const monthAgo = clock.now() - 30 * 86_400_000;
    // 20 batches a second apart, a month old: comparing with the wall clock rolled every one.
    for (let i = 0; i < 20; i++) {
      await pm.append("t", 0, batch({ ts: monthAgo + i * 1000 }), 1);
    }
    expect(segments(dir)).toBe(1);
    // A minute of record time later, it rolls.
    await pm.append("t", 0, batch({ ts: monthAgo + 61_000 }), 1);
    expect(segments(dir)).toBe(2);
  });

  test("retention.ms deletes closed segments by age and advances the log start", async () => {
    covers("retention.ms");
    const { pm, clock, dir } = await setup({ "retention.ms": "10000", "segment.bytes": "4096" });
    for (let i = 0; i < 8; i++) {
      await pm.append("t", 0, batch({ count: 2, valueSize: 1000, ts: clock.now() }), 1);
    }
    const before = segments(dir);
    clock.advance(5000);
    await pm.enforceRetention();
    expect(pm.partition("t", 0).log.logStartOffset()).toBe(0);
    clock.advance(6000);
    await pm.enforceRetention();
    expect(pm.partition("t", 0).log.logStartOffset()).toBeGreaterThan(0);
    expect(segments(dir)).toBeLessThan(before);
    expect(segments(dir)).toBeGreaterThanOrEqual(1); // the active segment stays
  });

  test("retention.bytes deletes the oldest closed segments beyond the size", async () => {
    covers("retention.bytes");
    const { pm, clock } = await setup({ "retention.bytes": "8192", "segment.bytes": "4096" });
    for (let i = 0; i < 12; i++) {
      await pm.append("t", 0, batch({ count: 2, valueSize: 1000, ts: clock.now() }), 1);
    }
    const log = pm.partition("t", 0).log;
    expect(log.sizeBytes()).toBeGreaterThan(8192);
    await pm.enforceRetention();
    expect(log.logStartOffset()).toBeGreaterThan(0);
    expect(log.sizeBytes()).toBeLessThanOrEqual(8192 + 4096);
  });

  test("max.message.bytes refuses larger batches with MESSAGE_TOO_LARGE", async () => {
    covers("max.message.bytes");
    const { pm, clock } = await setup({ "max.message.bytes": "2000" });
    await pm.append("t", 0, batch({ valueSize: 500, ts: clock.now() }), 1);
    await expect(pm.append("t", 0, batch({ valueSize: 3000, ts: clock.now() }), 1)).rejects
      .toMatchObject({ errorCode: 10 });
  });

  test("min.insync.replicas above the ISR refuses acks=all with NOT_ENOUGH_REPLICAS, acks=1 still works", async () => {
    covers("min.insync.replicas");
    const { pm, clock } = await setup({ "min.insync.replicas": "2" });
    await expect(pm.append("t", 0, batch({ ts: clock.now() }), -1)).rejects.toMatchObject({
      errorCode: 19,
    });
    const r = await pm.append("t", 0, batch({ ts: clock.now() }), 1);
    expect(r.baseOffset).toBe(0);
    await pm.alterTopicConfigs("t", {}, ["min.insync.replicas"]);
    expect((await pm.append("t", 0, batch({ ts: clock.now() }), -1)).baseOffset).toBe(1);
  });

  test("message.timestamp.type=LogAppendTime stamps batches with the broker's time", async () => {
    covers("message.timestamp.type");
    const { pm, clock } = await setup({ "message.timestamp.type": "LogAppendTime" });
    const r = await pm.append("t", 0, batch({ ts: 1_000 }), 1);
    expect(r.logAppendTime).toBe(clock.now());
    const read = pm.read("t", 0, 0, 1 << 20);
    const [b] = decodeRecordBatches(read.records);
    expect(b.header.maxTimestamp).toBe(clock.now());
    expect(b.header.attributes & 0x08).toBe(0x08);
  });

  test("message.timestamp.before.max.ms refuses records too far in the past", async () => {
    covers("message.timestamp.before.max.ms");
    const { pm, clock } = await setup({ "message.timestamp.before.max.ms": "60000" });
    await pm.append("t", 0, batch({ ts: clock.now() - 30_000 }), 1);
    await expect(pm.append("t", 0, batch({ ts: clock.now() - 120_000 }), 1)).rejects.toMatchObject({
      errorCode: 32,
    });
  });

  test("message.timestamp.after.max.ms refuses records too far in the future", async () => {
    covers("message.timestamp.after.max.ms");
    const { pm, clock } = await setup({ "message.timestamp.after.max.ms": "60000" });
    await pm.append("t", 0, batch({ ts: clock.now() + 30_000 }), 1);
    await expect(pm.append("t", 0, batch({ ts: clock.now() + 120_000 }), 1)).rejects.toMatchObject({
      errorCode: 32,
    });
  });

  test("cleanup.policy=delete is the retention behaviour above; compact is refused", async () => {
    covers("cleanup.policy");
    const { pm } = await setup({ "cleanup.policy": "delete" });
    await expect(pm.alterTopicConfigs("t", { "cleanup.policy": "compact" })).rejects.toMatchObject({
      errorCode: 40,
    });
  });

  test("a config changed on a live topic applies to its open log", async () => {
    const { pm, clock } = await setup({});
    await pm.append("t", 0, batch({ valueSize: 3000, ts: clock.now() }), 1);
    await pm.alterTopicConfigs("t", { "max.message.bytes": "1000" });
    await expect(pm.append("t", 0, batch({ valueSize: 3000, ts: clock.now() }), 1)).rejects
      .toMatchObject({ errorCode: 10 });
  });

  test("every accepted topic config has a behaviour test here", () => {
    expect([...tested].sort()).toEqual(TOPIC_CONFIGS.map((c) => c.name).sort());
  });
});
