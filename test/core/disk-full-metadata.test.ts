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

test("a topic create committed before ENOSPC is done (no 'already exists' for its own topic)", async () => {
  const dataDir = tempDir();
  const meta = MetadataStore.open(dataDir);
  const store = await SegmentLogStore.open({ dataDir, checkpointIntervalMs: 0 });
  const reserve = { release: () => true, freeBytes: () => null } as unknown as SpaceReserve;
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"), reserve);
  try {
    await registerSelf(meta);
    const original = meta.createTopic.bind(meta);
    const full = () =>
      Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    meta.createTopic = async (...args: Parameters<typeof original>) => {
      const t = await original(...args);
      if (args[4]?.validateOnly) return t;
      throw full();
    };
    const t = await pm.createTopic("made", 2, 1, {});
    expect(t.name).toBe("made");
    expect(meta.getTopic("made")?.topicId).toBe(t.topicId);
    expect(pm.has("made", 1)).toBe(true);
    // A create that did not take effect still fails as a full disk, and one of an existing
    // topic is still "already exists".
    meta.createTopic = async (...args: Parameters<typeof original>) => {
      if (args[4]?.validateOnly) return await original(...args);
      throw full();
    };
    await expect(pm.createTopic("never", 1, 1, {})).rejects.toThrow(/disk is full/);
    expect(meta.getTopic("never")).toBeUndefined();
    meta.createTopic = original;
    await expect(pm.createTopic("made", 1, 1, {})).rejects.toThrow(/exists/);
  } finally {
    await pm.close();
    await meta.close();
  }
});
