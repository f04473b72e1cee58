// Metadata changes on a full disk: a change that was committed before a later step of applying it
// hit ENOSPC is reported done, not retried into a misleading error.
import { expect, test } from "bun:test";
import { MetadataStore } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import { PartitionManager } from "../../src/core/partition-manager.ts";
import type { SpaceReserve } from "../../src/core/space-reserve.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { registerSelf } from "../helpers/meta.ts";

test("a topic delete committed before ENOSPC is done (no 'unknown topic' from a retry)", async () => {
  const dataDir = tempDir();
  const meta = MetadataStore.open(dataDir);
  const store = await SegmentLogStore.open({ dataDir, checkpointIntervalMs: 0 });
  let released = 0;
  const reserve = {
    release: () => (released++, true),
    freeBytes: () => null,
  } as unknown as SpaceReserve;
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"), reserve);
  try {
    await registerSelf(meta);
    await pm.createTopic("full", 2, 1, {});
    const original = meta.deleteTopic.bind(meta);
    meta.deleteTopic = async (name: string) => {
      await original(name);
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    };
    await pm.deleteTopic("full");
    expect(meta.getTopic("full")).toBeUndefined();
    expect(released).toBe(0); // nothing retried, so the reserve was kept
    // A delete that did not take effect still fails as a full disk.
    await pm.createTopic("other", 1, 1, {});
    meta.deleteTopic = () =>
      Promise.reject(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
    await expect(pm.deleteTopic("other")).rejects.toThrow(/disk is full/);
    expect(meta.getTopic("other")).toBeDefined();
  } finally {
    await pm.close();
    await meta.close();
  }
});
