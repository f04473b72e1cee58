// readInto (pread into the caller's buffer) against read (views of the map) on segment files:
// a whole log streamed through one reused buffer equals the log read through the map, also for
// bytes appended after the segment was mapped; a failed pread is a StorageError.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { type PartitionLog, type ReadResult, StorageError } from "../../src/storage/types.ts";
import { batch, simulatedStore } from "./helpers.ts";

const spec = {
  topic: "t",
  partition: 0,
  topicId: "x",
  config: { segmentBytes: 200_000, segmentMs: Number.MAX_SAFE_INTEGER },
};

function stream(log: PartitionLog, next: (off: number) => ReadResult): Buffer {
  const parts: Buffer[] = [];
  for (let off = log.logStartOffset(); off < log.logEndOffset();) {
    const r = next(off);
    expect(r.records.length).toBeGreaterThan(0);
    parts.push(Buffer.from(r.records)); // a copy: the next readInto overwrites the buffer
    off = r.nextOffset;
  }
  return Buffer.concat(parts);
}

test("a log streamed through one reused buffer equals the log read through the map", async () => {
  const dir = mkdtempSync(join(tmpdir(), "readinto-"));
  try {
    const store = await SegmentLogStore.open({ dataDir: dir, checkpointIntervalMs: 0 });
    const log = await store.openLog(spec);
    const add = (n: number) => {
      for (let i = 0; i < n; i++) {
        log.append(batch({ count: 1 + (i % 5), valueSize: 100 + ((i * 53) % 3000), tag: i }), {
          leaderEpoch: 0,
        });
      }
    };
    add(150);
    const via = (into: Uint8Array) => stream(log, (off) => log.readInto(off, 50_000, into));
    const viaMap = () => stream(log, (off) => log.read(off, 50_000));
    const into = new Uint8Array(64 * 1024);
    expect(via(into).equals(viaMap())).toBe(true);
    // Bytes appended after the active segment was mapped (the map does not grow).
    add(40);
    const all = viaMap();
    expect(via(into).equals(all)).toBe(true);
    expect(via(new Uint8Array(100)).equals(all)).toBe(true); // every batch larger than `into`
    expect(all.length).toBeGreaterThan(2 * spec.config.segmentBytes);
    await store.closeAll();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a failed pread is a StorageError and read through the map still works", async () => {
  const { io, store } = await simulatedStore();
  const log = await store.openLog(spec);
  log.append(batch({ count: 3 }), { leaderEpoch: 0 });
  expect(log.read(0, 1000).records.length).toBeGreaterThan(0); // maps the segment
  io.fault = (op) => (op === "pread" ? "EIO" : null);
  expect(() => log.readInto(0, 1000, new Uint8Array(4096))).toThrow(StorageError);
  expect(log.read(0, 1000).nextOffset).toBe(3);
  io.fault = null;
  expect(log.readInto(0, 1000, new Uint8Array(4096)).nextOffset).toBe(3);
  await store.closeAll();
});
