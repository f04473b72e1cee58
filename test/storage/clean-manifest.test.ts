// The clean-shutdown manifest and lazily opened logs (clean-manifest.ts, lazy-log.ts, issue 20):
// after a clean stop a start reads one file and opens no log until it is used; a log changed
// after such a start is named in the journal before the change is acknowledged, so after a crash
// it is recovered (its unsynced tail cut) rather than trusted from the stale manifest.
import { expect, test } from "bun:test";
import {
  decodeJournal,
  decodeManifest,
  encodeManifest,
  JOURNAL_FILE,
  MANIFEST_FILE,
} from "../../src/storage/clean-manifest.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { LazyPartitionLog } from "../../src/storage/lazy-log.ts";
import { StorageError } from "../../src/storage/types.ts";
import { batch, storeOn as storeOnEager } from "./helpers.ts";

const storeOn = (io: CrashFileIO) => storeOnEager(io, { lazyOpen: true });

const spec = (p: number, topicId = "id-t") => ({ topic: "t", partition: p, topicId });

/** Three logs of 4 records each (acknowledged and synced), then a clean close. */
async function cleanlyStopped(): Promise<CrashFileIO> {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  await io.syncDir("/");
  const store = await storeOn(io);
  for (let p = 0; p < 3; p++) {
    const log = await store.openLog(spec(p));
    for (let i = 0; i < 2; i++) {
      log.append(batch({ count: 2, tag: p * 10 + i }), { leaderEpoch: 3 });
    }
    await log.flush();
  }
  await store.closeAll();
  return io.crash(); // only what the close made durable
}

/** Every batch from offset 0, as bytes, and the offset after them. */
function readAll(
  log: { read(o: number, max: number): { records: Uint8Array; nextOffset: number } },
) {
  const r = log.read(0, 1 << 20);
  return { bytes: [...r.records], next: r.nextOffset };
}

test("a start after a clean stop opens no log until it is used, then reads it right", async () => {
  const io = await cleanlyStopped();
  const m = decodeManifest(io.readFile(`/data/${MANIFEST_FILE}`));
  expect(m?.map((e) => [e.name, e.logEnd, e.epoch])).toEqual([
    ["t-0", 4, 3],
    ["t-1", 4, 3],
    ["t-2", 4, 3],
  ]);
  const opened: string[] = [];
  const open = io.open.bind(io);
  io.open = (p, create) => {
    opened.push(p);
    return open(p, create);
  };
  const store = await storeOn(io);
  const logs = await Promise.all([0, 1, 2].map((p) => store.openLog(spec(p))));
  for (const l of logs) {
    expect(l).toBeInstanceOf(LazyPartitionLog);
    expect([l.logStartOffset(), l.logEndOffset(), l.latestEpoch(), l.openedClean()]).toEqual([
      0,
      4,
      3,
      true,
    ]);
  }
  // A follower's divergence check asks the latest epoch (and maybe a later one) of every log.
  const ends = [3, 4].map((e) => logs[2].endOffsetForEpoch(e));
  expect(opened).toEqual([]); // no segment, index or checkpoint opened
  expect(store.listLogs().map((i) => i.topicId)).toEqual(["id-t", "id-t", "id-t"]);
  const got = readAll(logs[1]);
  expect((logs[1] as LazyPartitionLog).opened).not.toBeNull();
  expect((logs[0] as LazyPartitionLog).opened).toBeNull();
  await store.closeAll();
  // The reference: the same files opened the ordinary way.
  const eager = await storeOnEager(io);
  const log1 = await eager.openLog(spec(1));
  expect(log1).not.toBeInstanceOf(LazyPartitionLog);
  expect(got.next).toBe(4);
  expect(got).toEqual(readAll(log1));
  const eager2 = await eager.openLog(spec(2));
  expect(ends).toEqual([3, 4].map((e) => eager2.endOffsetForEpoch(e)));
  expect(ends[0]).toEqual({ leaderEpoch: 3, endOffset: 4 });
  await eager.closeAll();
});

test("kill -9 after a change to a lazily opened log: it is recovered, not trusted", async () => {
  const io = await cleanlyStopped();
  const store = await storeOn(io);
  const log = await store.openLog(spec(0));
  // Acknowledged (synced), then an unsynced tail the crash loses.
  const acked = log.append(batch({ count: 2, tag: 100 }), { leaderEpoch: 3 });
  await log.flush();
  await acked.ack;
  log.append(batch({ count: 5, tag: 101 }), { leaderEpoch: 3 });
  expect(decodeJournal(io.readFile(`/data/${JOURNAL_FILE}`))).toEqual(new Set(["t-0"]));
  const after = io.crash();
  const again = await storeOn(after);
  const l0 = await again.openLog(spec(0));
  expect(l0).not.toBeInstanceOf(LazyPartitionLog); // named in the journal: opened and recovered
  expect(l0.openedClean()).toBe(false);
  expect(l0.logEndOffset()).toBe(6); // 4 from before + the 2 synced; the unsynced 5 are gone
  expect(l0.read(4, 1 << 20).nextOffset).toBe(6);
  const l1 = await again.openLog(spec(1));
  expect(l1).toBeInstanceOf(LazyPartitionLog); // untouched: still trusted
  expect(l1.logEndOffset()).toBe(4);
  await again.closeAll();
  // The clean stop after it vouches for every log again, and empties the journal.
  const disk = after.crash();
  expect(disk.readFile(`/data/${JOURNAL_FILE}`)).toBeNull();
  const third = await storeOn(disk);
  const l0b = await third.openLog(spec(0));
  expect(l0b).toBeInstanceOf(LazyPartitionLog);
  expect(l0b.logEndOffset()).toBe(6);
  await third.closeAll();
});

test("the first change waits for the journal: a change never outruns its journal entry", async () => {
  const io = await cleanlyStopped();
  const store = await storeOn(io);
  const log = await store.openLog(spec(2));
  const a = log.append(batch({ count: 1, tag: 7 }), { leaderEpoch: 3 });
  // Crash while the acknowledgement is still pending: either the journal names the log, or the
  // clean checkpoint is still the one on disk (then the new bytes are past its size and dropped).
  const mid = io.crash();
  await a.ack.catch(() => {}); // the crash failed it: never acknowledged
  const again = await storeOn(mid);
  const l = await again.openLog(spec(2));
  expect(l.logEndOffset()).toBe(4);
  expect(l.read(0, 1 << 20).nextOffset).toBe(4);
  await again.closeAll();
});

test("a deleted and recreated topic's log is not taken from the manifest", async () => {
  const io = await cleanlyStopped();
  const store = await storeOn(io);
  await store.deleteLog("t", 0);
  const fresh = await store.openLog(spec(0, "id-new"));
  expect(fresh).not.toBeInstanceOf(LazyPartitionLog);
  expect(fresh.logEndOffset()).toBe(0);
  const again = await storeOn(io.crash());
  expect((await again.openLog(spec(0, "id-new"))).logEndOffset()).toBe(0);
  await again.closeAll();
});

test("a log changed on disk behind the manifest's back is refused once, then recovered", async () => {
  const io = await cleanlyStopped();
  io.unlink("/data/logs/t-1/recovery-checkpoint.json");
  const store = await storeOn(io);
  const log = await store.openLog(spec(1));
  expect(() => log.read(0, 1 << 20)).toThrow(StorageError);
  for (let i = 0; i < 50 && (log as LazyPartitionLog).opened === null; i++) await Bun.sleep(1);
  expect(log.logEndOffset()).toBe(4);
  expect(log.openedClean()).toBe(false);
  await store.closeAll();
});

test("a damaged manifest is ignored: every log opens as before", async () => {
  const io = await cleanlyStopped();
  const b = io.readFile(`/data/${MANIFEST_FILE}`)!;
  b[b.length - 10] ^= 1;
  io.writeFile(`/data/${MANIFEST_FILE}`, b);
  expect(decodeManifest(b)).toBeNull();
  const store = await storeOn(io);
  const log = await store.openLog(spec(0));
  expect(log).not.toBeInstanceOf(LazyPartitionLog);
  expect(log.logEndOffset()).toBe(4);
  await store.closeAll();
  expect(decodeManifest(encodeManifest([]))).toEqual([]);
});

test("an eager open drops the manifest: a lazy open after it never trusts a stale one", async () => {
  const io = await cleanlyStopped();
  const eager = await storeOnEager(io);
  const log = await eager.openLog(spec(0));
  log.append(batch({ count: 3, tag: 9 }), { leaderEpoch: 3 });
  await log.flush();
  await eager.closeAll();
  const lazy = await storeOn(io);
  const again = await lazy.openLog(spec(0));
  expect(again).not.toBeInstanceOf(LazyPartitionLog);
  expect(again.logEndOffset()).toBe(7);
  await lazy.closeAll();
});
