// Index lookups (offset and timestamp) checked against a brute-force scan, before and after a
// clean reopen and with index files deleted (rebuilt).
import { expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO, seededRandom } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { PartitionLog } from "../../src/storage/types.ts";
import { batch, FakeClock } from "./helpers.ts";

const T0 = 1_700_000_000_000;
const spec = {
  topic: "t",
  partition: 0,
  topicId: "X",
  config: { segmentBytes: 4000, indexIntervalBytes: 300 },
};

function check(log: PartitionLog, recs: { offset: number; ts: number }[], rnd: () => number): void {
  const end = log.logEndOffset();
  for (let off = 0; off < end; off++) {
    const b = decodeRecordBatches(log.read(off, 1).records)[0];
    expect(b.header.baseOffset).toBeLessThanOrEqual(off);
    expect(b.header.baseOffset + b.header.lastOffsetDelta).toBeGreaterThanOrEqual(off);
  }
  for (let i = 0; i < 300; i++) {
    const t = T0 - 50 + Math.floor(rnd() * 3000);
    const brute = recs.find((r) => r.ts >= t) ?? null;
    const got = log.offsetForTimestamp(t);
    expect(got).toEqual(brute ? { offset: brute.offset, timestamp: brute.ts } : null);
  }
}

test("offset and time index lookups equal a brute-force scan", async () => {
  const rnd = seededRandom(99);
  const io = new CrashFileIO();
  io.mkdirp("/data");
  const open = () =>
    SegmentLogStore.open({
      dataDir: "/data",
      io,
      clock: new FakeClock(T0),
      checkpointIntervalMs: 0,
    });
  let store = await open();
  let log = await store.openLog(spec);
  const recs: { offset: number; ts: number }[] = [];
  for (let i = 0; i < 150; i++) {
    const count = 1 + Math.floor(rnd() * 5);
    // timestamps wander, sometimes backwards, mostly forwards
    const timestamps = Array.from(
      { length: count },
      (_, k) => T0 + i * 15 + Math.floor(rnd() * 400) - 200 + k,
    );
    const r = log.append(batch({ count, timestamps, valueSize: Math.floor(rnd() * 200) }), {
      leaderEpoch: 0,
    });
    timestamps.forEach((ts, k) => recs.push({ offset: r.baseOffset + k, ts }));
  }
  check(log, recs, rnd);
  await store.closeAll();
  store = await open();
  log = await store.openLog(spec);
  check(log, recs, rnd);
  await store.closeAll();
  for (const n of io.readdir("/data/logs/t-0")) {
    if (/index$/.test(n)) io.unlink(`/data/logs/t-0/${n}`);
  }
  store = await open();
  log = await store.openLog(spec);
  check(log, recs, rnd);
  await store.closeAll();
});
