// Every append acknowledged under acks=all survives a simulated power loss at seeded points.
import { expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO, seededRandom } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { batch, FakeClock } from "./helpers.ts";

const spec = {
  topic: "t",
  partition: 0,
  topicId: "X",
  config: { segmentBytes: 600, indexIntervalBytes: 100 },
};

async function openStore(io: CrashFileIO) {
  return await SegmentLogStore.open({
    dataDir: "/data",
    io,
    clock: new FakeClock(),
    checkpointIntervalMs: 0,
  });
}

test("acks=all appends survive power loss at 60 seeded crash points", async () => {
  let lost = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const rnd = seededRandom(seed);
    let io = new CrashFileIO();
    io.mkdirp("/data");
    await io.syncDir("/");
    io.syncDelayMs = 0;
    const acked = new Map<number, number>(); // offset -> tag
    const written = new Map<number, number>();
    // Two rounds: crash, recover, keep appending, crash again.
    for (let round = 0; round < 2; round++) {
      const store = await openStore(io);
      const log = await store.openLog(spec);
      const steps = 5 + Math.floor(rnd() * 40);
      for (let i = 0; i < steps; i++) {
        const tag = seed * 1000 + round * 100 + i;
        const r = log.append(batch({ count: 1 + (i % 2), valueSize: 30, tag }), {
          leaderEpoch: round,
          requireDurable: rnd() < 0.7,
        });
        written.set(r.baseOffset, tag);
        r.ack.then(() => {
          if (r.ack !== r.durable) return; // acks=1: not promised
          acked.set(r.baseOffset, tag);
        }, () => {});
        if (rnd() < 0.3) await new Promise((res) => setTimeout(res, 0));
      }
      if (rnd() < 0.5) await new Promise((res) => setTimeout(res, 0));
      io = io.crash({ seed: seed * 7 + round, keepUnsyncedProb: 0.5 });
      io.syncDelayMs = 0;
      const s2 = await openStore(io);
      const l2 = await s2.openLog(spec);
      for (const [off, tag] of acked) {
        expect(off).toBeLessThan(l2.logEndOffset());
        const b = decodeRecordBatches(l2.read(off, 1).records)[0];
        expect(b.header.baseOffset).toBe(off);
        expect(b.records![0].value![0]).toBe(tag & 0xff);
      }
      // Nothing that was never written appears, and unacknowledged data is a prefix at most.
      for (let off = l2.logStartOffset(); off < l2.logEndOffset();) {
        const b = decodeRecordBatches(l2.read(off, 1).records)[0];
        expect(written.get(off)).toBe(tag0(b.records![0].value![0], written.get(off)));
        off = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      }
      lost += written.size - acked.size;
      // Forget what the log lost; continue from its end.
      for (const off of [...written.keys()]) if (off >= l2.logEndOffset()) written.delete(off);
      for (const off of [...acked.keys()]) if (off >= l2.logEndOffset()) acked.delete(off);
      await s2.closeAll();
    }
  }
  expect(lost).toBeGreaterThan(0); // the crash points really dropped unsynced data
}, 30000);

function tag0(firstByte: number, tag: number | undefined): number | undefined {
  return tag !== undefined && (tag & 0xff) === firstByte ? tag : -1;
}
