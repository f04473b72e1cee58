// A create the disk cannot hold is refused before it is committed (partition-manager.ts
// #checkRoom, issue 20): the metadata never names partitions whose logs could not be made here.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MetadataStore } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import { PARTITION_CREATE_BYTES, PartitionManager } from "../../src/core/partition-manager.ts";
import type { SpaceReserve } from "../../src/core/space-reserve.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { registerSelf } from "../helpers/meta.ts";

const RESERVE = 2 * 1024 * 1024;

test("creates and added partitions past the free disk are refused, nothing committed", async () => {
  const dataDir = tempDir();
  const meta = MetadataStore.open(dataDir);
  const store = await SegmentLogStore.open({ dataDir, checkpointIntervalMs: 0 });
  // Room for exactly 10 new partitions beside the reserve.
  let free = RESERVE + 10 * PARTITION_CREATE_BYTES;
  const reserve = {
    bytes: RESERVE,
    freeBytes: () => free,
    release: () => false,
    ensure: () => true,
  } as unknown as SpaceReserve;
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"), reserve);
  try {
    await registerSelf(meta);
    await expect(pm.createTopic("big", 11, 1, {})).rejects.toThrow(/disk is full: 11 new/);
    expect(meta.getTopic("big")).toBeUndefined();
    expect(existsSync(join(dataDir, "logs", "big-0"))).toBe(false);
    await expect(pm.createTopic("big", 11, 1, {}, true)).rejects.toThrow(/disk is full/);

    const t = await pm.createTopic("fits", 10, 1, {});
    expect(t.partitions).toHaveLength(10);
    expect(pm.has("fits", 9)).toBe(true);
    // Only the partitions added count: 10 more fit again once the disk has that room.
    await expect(pm.createPartitions("fits", 21)).rejects.toThrow(/disk is full: 11 new/);
    expect(meta.getTopic("fits")!.partitions).toHaveLength(10);
    await pm.createPartitions("fits", 20);
    expect(meta.getTopic("fits")!.partitions).toHaveLength(20);
    free = RESERVE; // nothing left beside the reserve
    await expect(pm.createTopic("one", 1, 1, {})).rejects.toThrow(/disk is full/);
    expect(meta.getTopic("one")).toBeUndefined();
  } finally {
    await pm.close();
    await meta.close();
  }
});
