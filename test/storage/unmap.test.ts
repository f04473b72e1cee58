// A deleted segment's disk space comes back promptly: its memory map is released (only the GC
// can unmap in Bun), not kept until some later collection.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { PartitionLog } from "../../src/storage/types.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { batch } from "./helpers.ts";

const mappings = (dir: string) =>
  readFileSync("/proc/self/maps", "utf8").split("\n").filter((l) => l.includes(dir)).length;

/** Bytes read through the map; in its own frame, so no view of the map outlives it. */
function readAll(log: PartitionLog): number {
  let read = 0;
  for (let off = 0; off < log.logEndOffset();) {
    const r = log.read(off, 64 * 1024);
    read += r.records.length;
    off = r.nextOffset;
  }
  return read;
}

test("deleting a log that was read through a map unmaps it within a moment", async () => {
  const dataDir = tempDir();
  const store = await SegmentLogStore.open({ dataDir, checkpointIntervalMs: 0 });
  const log = await store.openLog({ topic: "gone", partition: 0, topicId: "G" });
  for (let i = 0; i < 50; i++) {
    log.append(batch({ count: 10, valueSize: 1000 }), { leaderEpoch: 0 });
  }
  await log.flush();
  expect(readAll(log)).toBeGreaterThan(0);
  expect(mappings(`${dataDir}/logs/gone-0`)).toBeGreaterThan(0);
  await store.deleteLog("gone", 0);
  for (let i = 0; i < 50 && mappings(`${dataDir}/logs/gone-0`) > 0; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(mappings(`${dataDir}/logs/gone-0`)).toBe(0);
  await store.closeAll();
});
