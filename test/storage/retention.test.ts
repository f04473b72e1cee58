// Retention on segment files with an injected clock: time and size, active segment kept,
// log start advanced and persisted, files unlinked while a read slice is still held.
import { expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { batch, FakeClock } from "./helpers.ts";

const T0 = 1_700_000_000_000;

test("retention by time and bytes on segment files", async () => {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  const clock = new FakeClock(T0);
  const open = () => SegmentLogStore.open({ dataDir: "/data", io, clock, checkpointIntervalMs: 0 });
  const store = await open();
  const spec = {
    topic: "r",
    partition: 0,
    topicId: "X",
    config: { segmentBytes: 500, retentionMs: 60_000 },
  };
  const log = await store.openLog(spec);
  for (let i = 0; i < 20; i++) {
    clock.t = T0 + i * 10_000;
    log.append(batch({ count: 1, valueSize: 150, ts: clock.t, tag: i }), { leaderEpoch: 0 });
  }
  const segFiles = () => io.readdir("/data/logs/r-0").filter((n) => n.endsWith(".log"));
  const before = segFiles().length;
  expect(before).toBeGreaterThan(5);
  const held = log.read(0, 1 << 20).records; // a slice of the oldest segment
  clock.t = T0 + 19 * 10_000 + 1000;
  const r = await log.enforceRetention();
  expect(r.deletedSegments).toBeGreaterThan(0);
  expect(segFiles().length).toBe(before - r.deletedSegments);
  // every remaining closed segment is young enough; the newest record survives
  const start = log.logStartOffset();
  expect(start).toBe(r.logStartOffset);
  const first = decodeRecordBatches(log.read(start, 1).records)[0];
  expect(first.header.maxTimestamp).toBeGreaterThanOrEqual(clock.t - 60_000 - 30_000);
  expect(decodeRecordBatches(held)[0].records![0].value![0]).toBe(0);
  // bytes: shrink to ~one segment; the active segment always remains
  log.updateConfig({ retentionMs: -1, retentionBytes: 0 });
  await log.enforceRetention();
  expect(segFiles().length).toBe(1);
  expect(log.logEndOffset()).toBe(20);
  expect(log.read(log.logStartOffset(), 1).records.length).toBeGreaterThan(0);
  const start2 = log.logStartOffset();
  await store.closeAll();
  const s2 = await open();
  const l2 = await s2.openLog(spec);
  expect(l2.logStartOffset()).toBe(start2);
  await s2.closeAll();
});
