// The descriptor bound (handle-cache.ts): a tiny capacity under many partitions keeps the open
// descriptors at the capacity while every append, read, sync and restart still sees all data;
// descriptors pinned by operations in flight are never closed under them.
import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { type FileHandle, type FileIO, realFileIO } from "../../src/storage/file-io.ts";
import { cachedFileIO, HandleCache } from "../../src/storage/handle-cache.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { PartitionLog } from "../../src/storage/types.ts";
import { batch, FakeClock } from "./helpers.ts";

/** A FileIO over `base` that counts the descriptors open through it. */
function counting(base: FileIO) {
  const c = { open: 0, max: 0, opens: [] as { path: string; create: boolean }[] };
  const io: FileIO = {
    exists: (p) => base.exists(p),
    mkdirp: (p) => base.mkdirp(p),
    readdir: (p) => base.readdir(p),
    readFile: (p) => base.readFile(p),
    writeFile: (p, d) => base.writeFile(p, d),
    unlink: (p) => base.unlink(p),
    rename: (a, b) => base.rename(a, b),
    rmrf: (p) => base.rmrf(p),
    syncDir: (p) => base.syncDir(p),
    open(p, create) {
      const h = base.open(p, create);
      c.opens.push({ path: p, create });
      c.open++;
      c.max = Math.max(c.max, c.open);
      let closed = false;
      const wrapped: FileHandle = {
        path: h.path,
        pwrite: (b, at) => h.pwrite(b, at),
        pwriteAsync: (b, at) => h.pwriteAsync(b, at),
        pread: (b, at) => h.pread(b, at),
        size: () => h.size(),
        fdatasync: () => h.fdatasync(),
        mmap: () => h.mmap(),
        close() {
          if (!closed) c.open--;
          closed = true;
          h.close();
        },
      };
      return wrapped;
    },
  };
  return { io, c };
}

test("least recently used descriptors close beyond the capacity and reopen without O_CREAT", () => {
  const mem = new CrashFileIO();
  mem.mkdirp("/d");
  const { io, c } = counting(mem);
  const cache = new HandleCache(2);
  const cio = cachedFileIO(io, cache);
  const hs = ["a", "b", "c"].map((n) => cio.open(`/d/${n}`, true));
  hs[0].pwrite(new Uint8Array([1, 2, 3]), 0); // a reopened: b is now the oldest
  expect(c.open).toBe(2);
  expect(cache.stats).toEqual({ open: 2, reopens: 1, evictions: 2 });
  expect(c.opens.at(-1)).toEqual({ path: "/d/a", create: false });
  const buf = new Uint8Array(3);
  expect(hs[0].pread(buf, 0)).toBe(3);
  expect([...buf]).toEqual([1, 2, 3]);
  // A file gone while its descriptor was closed is an error, never a new empty file.
  mem.unlink("/d/b");
  expect(() => hs[1].size()).toThrow();
  expect(mem.exists("/d/b")).toBe(false);
  for (const h of hs) h.close();
  expect(c.open).toBe(0);
  expect(() => hs[0].size()).toThrow(/closed/);
});

test("a descriptor pinned by a sync in flight is not closed under it, even by close()", async () => {
  const mem = new CrashFileIO();
  mem.mkdirp("/d");
  const { io, c } = counting(mem);
  const cache = new HandleCache(1);
  const cio = cachedFileIO(io, cache);
  const a = cio.open("/d/a", true);
  a.pwrite(new Uint8Array([7]), 0);
  const sync = a.fdatasync();
  const b = cio.open("/d/b", true); // over capacity, but a is pinned
  expect(c.open).toBe(2);
  a.close();
  expect(c.open).toBe(2); // a's descriptor stays until its sync returns
  await sync;
  expect(c.open).toBe(1);
  b.close();
  expect(c.open).toBe(0);
});

test("many partitions under a tiny descriptor bound: appends, reads, syncs and a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "handle-cache-"));
  const fds = () => readdirSync("/proc/self/fd").length;
  try {
    const { io, c } = counting(realFileIO);
    const open = () =>
      SegmentLogStore.open({
        dataDir: dir,
        io,
        clock: new FakeClock(),
        maxOpenFiles: 8,
        // Small segments: each partition holds several files.
        flush: { kind: "interval", ms: 0 },
      });
    const before = fds();
    let store = await open();
    const N = 40;
    const spec = (p: number) => ({
      topic: "t",
      partition: p,
      topicId: "X",
      config: { segmentBytes: 600 },
    });
    const logs: PartitionLog[] = [];
    for (let p = 0; p < N; p++) logs.push(await store.openLog(spec(p)));
    for (let round = 0; round < 6; round++) {
      const acks = [];
      for (let p = 0; p < N; p++) {
        const r = logs[p].append(batch({ count: 2, tag: p + round, valueSize: 60 }), {
          leaderEpoch: 0,
          requireDurable: round % 2 === 0,
        });
        acks.push(r.ack);
      }
      await Promise.all(acks);
      // Syncs in flight pin at most maxInFlight (2 here) more than the bound, never one each.
      expect(c.max).toBeLessThanOrEqual(8 + 2);
    }
    expect(c.open).toBeLessThanOrEqual(8);
    expect(fds() - before).toBeLessThanOrEqual(8 + 4);
    expect(store.handleStats()!.reopens).toBeGreaterThan(0);
    const readAll = (log: PartitionLog) => {
      const out: number[] = [];
      for (let off = 0; off < log.logEndOffset();) {
        const bs = decodeRecordBatches(log.read(off, 1 << 20).records);
        for (const b of bs) out.push(b.records![0].value![0]);
        off = bs.at(-1)!.header.baseOffset + bs.at(-1)!.header.lastOffsetDelta + 1;
      }
      return out;
    };
    for (let p = 0; p < N; p++) {
      expect(logs[p].logEndOffset()).toBe(12);
      expect(readAll(logs[p])).toEqual([0, 1, 2, 3, 4, 5].map((r) => (p + r) & 0xff));
    }
    await store.closeAll();
    expect(c.open).toBe(0);
    store = await open();
    for (let p = 0; p < N; p++) {
      const log = await store.openLog(spec(p));
      expect(log.logEndOffset()).toBe(12);
      expect(readAll(log)).toEqual([0, 1, 2, 3, 4, 5].map((r) => (p + r) & 0xff));
    }
    expect(c.open).toBeLessThanOrEqual(8);
    await store.closeAll();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
