// Retention's two boundaries, as a consumer sees them: a segment is as old as its newest record
// (not its first), and size retention never takes the log below retention.bytes. (Both were
// planted bugs the other retention test did not catch: docs/mutation.md, the test suite.)
import { expect, test } from "bun:test";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { batch, FakeClock } from "./helpers.ts";

const T0 = 1_700_000_000_000;

async function openLog(retentionMs: number) {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  const clock = new FakeClock(T0);
  const store = await SegmentLogStore.open({
    dataDir: "/data",
    io,
    clock,
    checkpointIntervalMs: 0,
  });
  const log = await store.openLog({
    topic: "r",
    partition: 0,
    topicId: "X",
    config: { segmentBytes: 500, retentionMs },
  });
  const segments = () => io.readdir("/data/logs/r-0").filter((n) => n.endsWith(".log")).length;
  return { store, log, clock, segments };
}

test("time retention keeps a segment whose newest record is younger than retention.ms", async () => {
  const { store, log, clock, segments } = await openLog(60_000);
  // One old record, then young ones: the first segment starts old but ends young.
  log.append(batch({ count: 1, valueSize: 150, ts: T0, tag: 0 }), { leaderEpoch: 0 });
  const young = T0 + 100_000;
  for (let i = 1; i < 10; i++) {
    log.append(batch({ count: 1, valueSize: 150, ts: young, tag: i }), { leaderEpoch: 0 });
  }
  expect(segments()).toBeGreaterThan(2);
  clock.t = young + 1000; // the old record is 101 s old, every segment's newest 1 s
  const r = await log.enforceRetention();
  expect(r.deletedSegments).toBe(0);
  expect(log.logStartOffset()).toBe(0);
  // Once the newest record of the first segment is old too, it goes.
  clock.t = young + 61_000;
  expect((await log.enforceRetention()).deletedSegments).toBeGreaterThan(0);
  await store.closeAll();
});

test("size retention deletes only while the log stays at or above retention.bytes", async () => {
  const { store, log, segments } = await openLog(-1);
  for (let i = 0; i < 10; i++) {
    log.append(batch({ count: 1, valueSize: 150, ts: T0, tag: i }), { leaderEpoch: 0 });
  }
  const before = segments();
  expect(before).toBeGreaterThan(2);
  const size = log.sizeBytes();
  // One byte under the size: deleting any segment would take the log below the limit.
  log.updateConfig({ retentionBytes: size - 1 });
  const r = await log.enforceRetention();
  expect(r.deletedSegments).toBe(0);
  expect(log.logStartOffset()).toBe(0);
  expect(log.sizeBytes()).toBe(size);
  // Zero: everything but the active segment goes.
  log.updateConfig({ retentionBytes: 0 });
  expect((await log.enforceRetention()).deletedSegments).toBe(before - 1);
  await store.closeAll();
});
