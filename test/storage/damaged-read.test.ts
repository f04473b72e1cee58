// Bytes damaged on disk after a clean shutdown (no recovery scan runs) are caught when read: the
// batches before the damage are served, the damaged one is a CorruptLogError (Kafka error 56),
// never bytes that fail their CRC. Both read paths (map views and pread into a buffer).
import { expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { CorruptLogError, type PartitionLog } from "../../src/storage/types.ts";
import { batch } from "./helpers.ts";

const spec = {
  topic: "t",
  partition: 0,
  topicId: "x",
  config: { segmentBytes: 1 << 20, segmentMs: Number.MAX_SAFE_INTEGER },
};

/** Ten batches of 3 records; returns each batch's [file position, base offset]. */
async function writeLog(dir: string): Promise<[number, number][]> {
  const store = await SegmentLogStore.open({ dataDir: dir, checkpointIntervalMs: 0 });
  const log = await store.openLog(spec);
  const at: [number, number][] = [];
  let pos = 0;
  for (let i = 0; i < 10; i++) {
    const b = batch({ count: 3, valueSize: 200, tag: i });
    const r = log.append(b, { leaderEpoch: 0 });
    at.push([pos, r.baseOffset]);
    pos += b.length;
  }
  await store.closeAll();
  return at;
}

function poke(dir: string, pos: number, bytes: number[]): void {
  const logDir = join(dir, "logs", "t-0");
  const seg = readdirSync(logDir).find((f) => f.endsWith(".log"))!;
  const fd = openSync(join(logDir, seg), "r+");
  writeSync(fd, new Uint8Array(bytes), 0, bytes.length, pos);
  closeSync(fd);
}

async function reopen(dir: string): Promise<{ store: SegmentLogStore; log: PartitionLog }> {
  const store = await SegmentLogStore.open({ dataDir: dir, checkpointIntervalMs: 0 });
  return { store, log: await store.openLog(spec) };
}

function expectCorrupt(fn: () => unknown): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CorruptLogError);
  expect((err as CorruptLogError).errorCode).toBe(56);
  expect((err as Error).message).toContain("damaged");
}

for (
  const [name, damage] of [
    // A flipped byte in the records: the CRC no longer matches.
    ["a flipped payload byte", (at: number): [number, number[]] => [at + 100, [0xff, 0x00, 0xff]]],
    // A length field turned negative: the header itself is unusable.
    ["a negative batch length", (at: number): [number, number[]] => [at + 8, [0x80, 0, 0, 0]]],
    // lastOffsetDelta (bytes 23..26, 2 for 3 records) flipped far past the log end: the read must
    // not take it for a batch not yet committed ("no data yet" below the log end, for ever).
    ["a lastOffsetDelta past the log end", (at: number): [number, number[]] => [at + 24, [0x40]]],
    // ... or to 3, still inside the log: the CRC catches it.
    ["a lastOffsetDelta off by one", (at: number): [number, number[]] => [at + 26, [0x03]]],
  ] as const
) {
  test(`${name}: earlier batches are served, the damaged one is a storage error`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "damaged-"));
    try {
      const at = await writeLog(dir);
      const [pos, base] = at[5];
      const [p, bytes] = damage(pos);
      poke(dir, p, bytes);
      const { store, log } = await reopen(dir);
      try {
        const into = new Uint8Array(64 * 1024);
        for (
          const read of [
            (o: number) => log.read(o, 1 << 20),
            (o: number) => log.readInto(o, 1 << 20, into),
          ]
        ) {
          const r = read(0);
          expect(r.firstOffset).toBe(0);
          expect(r.nextOffset).toBe(base);
          expect(r.records.length).toBe(pos);
          expectCorrupt(() => read(base));
          expectCorrupt(() => read(base + 1));
          // Past the damage the log is whole again, or the damage is reported: never a hang
          // and never the damaged bytes.
          for (const [, b] of at.slice(6)) {
            try {
              expect(read(b).firstOffset).toBe(b);
            } catch (e) {
              expect(e).toBeInstanceOf(CorruptLogError);
            }
          }
        }
      } finally {
        await store.closeAll();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
