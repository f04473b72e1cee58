// Disk full: appends fail with StorageError, reads keep working, appends resume once space is
// freed. Runs on a real 4 MiB tmpfs when mount is permitted (root), and always on the injected
// ENOSPC of the simulated file system.
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import type { FileIO } from "../../src/storage/file-io.ts";
import { realFileIO } from "../../src/storage/file-io.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { StorageError } from "../../src/storage/types.ts";
import { batch, FakeClock } from "./helpers.ts";

const mnt = fs.mkdtempSync(join(tmpdir(), "diskfull-"));
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).status === 0;
afterAll(() => {
  // Lazy unmount: live mappings (freed by the GC later) keep the tmpfs busy.
  if (mounted) spawnSync("umount", ["-l", mnt]);
  fs.rmSync(mnt, { recursive: true, force: true });
});

async function scenario(io: FileIO, dataDir: string, ballast: () => void, freeBallast: () => void) {
  ballast();
  const store = await SegmentLogStore.open({
    dataDir,
    io,
    clock: new FakeClock(),
    checkpointIntervalMs: 0,
  });
  const log = await store.openLog({
    topic: "t",
    partition: 0,
    topicId: "X",
    config: { segmentBytes: 1 << 20 },
  });
  let failures = 0;
  let appended = 0;
  for (let i = 0; i < 200 && failures === 0; i++) {
    try {
      log.append(batch({ count: 4, valueSize: 16 * 1024, tag: i }), { leaderEpoch: 0 });
      appended++;
    } catch (e) {
      expect(e).toBeInstanceOf(StorageError);
      expect((e as StorageError).errorCode).toBe(56);
      failures++;
    }
  }
  expect(failures).toBe(1);
  expect(appended).toBeGreaterThan(10);
  const end = log.logEndOffset();
  expect(end).toBe(appended * 4);
  // Reads still work, never past the logical end.
  let off = 0;
  let n = 0;
  while (off < end) {
    const r = log.read(off, 1 << 20);
    for (const b of decodeRecordBatches(r.records)) {
      expect(b.records![0].value![0]).toBe(n & 0xff);
      n++;
    }
    off = r.nextOffset;
  }
  expect(n).toBe(appended);
  expect(() => log.append(batch({ count: 4, valueSize: 16 * 1024 }), { leaderEpoch: 0 })).toThrow(
    StorageError,
  );
  freeBallast();
  const r = log.append(batch({ count: 4, valueSize: 16 * 1024, tag: appended }), {
    leaderEpoch: 0,
  });
  expect(r.baseOffset).toBe(end);
  await log.flush();
  await store.closeAll();
  // Reopen: the data, including the append after the failure, is intact.
  const s2 = await SegmentLogStore.open({
    dataDir,
    io,
    clock: new FakeClock(),
    checkpointIntervalMs: 0,
  });
  const l2 = await s2.openLog({ topic: "t", partition: 0, topicId: "X" });
  expect(l2.logEndOffset()).toBe(end + 4);
  const last = decodeRecordBatches(l2.read(end, 1 << 20).records)[0];
  expect(last.records![0].value![0]).toBe(appended & 0xff);
  await s2.closeAll();
}

test(`disk full on a real ${mounted ? "4 MiB tmpfs" : "(mount not permitted: injected)"} file system`, async () => {
  if (mounted) {
    const ballastPath = join(mnt, "ballast");
    await scenario(realFileIO, join(mnt, "data"), () => {
      fs.mkdirSync(join(mnt, "data"), { recursive: true });
      fs.writeFileSync(ballastPath, new Uint8Array(1 << 20));
    }, () => fs.rmSync(ballastPath));
  } else {
    console.warn("mount -t tmpfs not permitted here: using the injected ENOSPC instead");
    const io = new CrashFileIO();
    io.mkdirp("/data");
    io.capacity = 4 << 20;
    await scenario(
      io,
      "/data",
      () => io.writeFile("/ballast", new Uint8Array(1 << 20)),
      () => io.unlink("/ballast"),
    );
  }
});

test("disk full with the injected ENOSPC (partial writes)", async () => {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  io.capacity = 2 << 20;
  await scenario(
    io,
    "/data",
    () => io.writeFile("/ballast", new Uint8Array(1 << 20)),
    () => io.unlink("/ballast"),
  );
});
