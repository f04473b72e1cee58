// Shutdown of many logs with file-system syncs (log-store.ts closeTogether, issue 20): two syncs
// in all instead of several per log, every log reopening clean with its records; a crash before
// the second sync leaves the previous (unclean) checkpoints, so logs are recovered, never lost.
import { expect, test } from "bun:test";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { type SegmentLogStore, SYNCFS_MIN_LOGS } from "../../src/storage/log-store.ts";
import { batch, storeOn } from "./helpers.ts";

const LOGS = SYNCFS_MIN_LOGS;

/** A simulated disk whose syncFs is syncAll, counted; `onSync(n)` runs before the n-th. */
function diskWithSyncFs(onSync?: (n: number, io: CrashFileIO) => void) {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  const calls = { syncFs: 0 };
  Object.assign(io, {
    syncFs: async () => {
      calls.syncFs++;
      onSync?.(calls.syncFs, io);
      await io.syncAll();
    },
  });
  return { io, calls };
}

async function fill(store: SegmentLogStore) {
  for (let p = 0; p < LOGS; p++) {
    const log = await store.openLog({ topic: "t", partition: p, topicId: "id-t" });
    for (let i = 0; i < 3; i++) {
      log.append(batch({ count: 2, tag: p * 10 + i }), { leaderEpoch: 0 });
    }
    await log.flush();
  }
}

async function ends(store: SegmentLogStore) {
  const out: { end: number; clean: boolean }[] = [];
  for (let p = 0; p < LOGS; p++) {
    const log = await store.openLog({ topic: "t", partition: p, topicId: "id-t" });
    out.push({ end: log.logEndOffset(), clean: log.openedClean() });
  }
  return out;
}

test("closeAll: two file-system syncs, no per-file sync, every log reopens clean", async () => {
  const { io, calls } = diskWithSyncFs();
  const store = await storeOn(io);
  await fill(store);
  const before = io.syncCount;
  const fsBefore = calls.syncFs; // the creates' shared syncs (one or a few for all the logs)
  expect(fsBefore).toBeLessThanOrEqual(LOGS + 2);
  await store.closeAll();
  expect(io.syncCount - before).toBe(0); // fdatasync calls: the data was synced already
  expect(calls.syncFs - fsBefore).toBe(2);
  const after = io.crash(); // what was durable once closeAll returned
  const again = await storeOn(after);
  expect(await ends(again)).toEqual(Array.from({ length: LOGS }, () => ({ end: 6, clean: true })));
  await again.closeAll();
});

test("a crash before the checkpoints' sync: every log recovered whole, none taken for clean", async () => {
  let crashed: CrashFileIO | undefined;
  let closing = Number.POSITIVE_INFINITY;
  const { io, calls } = diskWithSyncFs((n, disk) => {
    if (n === closing + 2) crashed = disk.crash();
  });
  const store = await storeOn(io);
  await fill(store);
  closing = calls.syncFs;
  await store.closeAll(); // the second sync fails (the disk "lost power"): logged, not thrown
  expect(crashed).toBeDefined();
  const again = await storeOn(crashed!);
  expect(await ends(again)).toEqual(
    Array.from({ length: LOGS }, () => ({ end: 6, clean: false })),
  );
  await again.closeAll();
});

test("without syncFs each log syncs its own files (the simulated disk's default)", async () => {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  await io.syncDir("/");
  const store = await storeOn(io);
  await fill(store);
  const before = io.syncCount;
  await store.closeAll();
  expect(io.syncCount - before).toBeGreaterThanOrEqual(LOGS * 4);
  const again = await storeOn(io.crash());
  expect((await ends(again)).every((e) => e.end === 6 && e.clean)).toBe(true);
  await again.closeAll();
});

test("partitions created together share file-system syncs: no per-file sync, all there after a crash", async () => {
  const { io, calls } = diskWithSyncFs();
  await io.syncDir("/");
  const store = await storeOn(io);
  const before = io.syncCount;
  await Promise.all(
    Array.from(
      { length: LOGS },
      (_, p) => store.openLog({ topic: "n", partition: p, topicId: "id-n" }),
    ),
  );
  expect(io.syncCount - before).toBe(0); // neither partition.meta, nor a directory, file by file
  expect(calls.syncFs).toBeLessThanOrEqual(3); // one running, one covering all who came meanwhile
  const again = await storeOn(io.crash());
  expect(again.listLogs().filter((l) => l.topic === "n").length).toBe(LOGS);
  const log = await again.openLog({ topic: "n", partition: 7, topicId: "id-n" });
  log.append(batch({ count: 2 }), { leaderEpoch: 0 });
  await log.flush();
  expect(log.logEndOffset()).toBe(2);
  await again.closeAll();
});
