import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "bun:test";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import { MemoryLogStore } from "../../src/storage/memory-store.ts";
import { logStoreContract } from "./contract.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let lastDir = "";
logStoreContract({
  name: "segment files (real disk)",
  make(clock) {
    lastDir = mkdtempSync(join(tmpdir(), "logstore-"));
    dirs.push(lastDir);
    return SegmentLogStore.open({ dataDir: lastDir, clock, checkpointIntervalMs: 0 });
  },
  reopen(clock) {
    return SegmentLogStore.open({ dataDir: lastDir, clock, checkpointIntervalMs: 0 });
  },
});

let crashFs = new CrashFileIO();
logStoreContract({
  name: "segment files (simulated file system)",
  make(clock) {
    crashFs = new CrashFileIO();
    crashFs.mkdirp("/data");
    return SegmentLogStore.open({ dataDir: "/data", clock, io: crashFs, checkpointIntervalMs: 0 });
  },
  reopen(clock) {
    return SegmentLogStore.open({ dataDir: "/data", clock, io: crashFs, checkpointIntervalMs: 0 });
  },
});

let mem = new MemoryLogStore();
logStoreContract({
  name: "in-memory",
  make(clock) {
    mem = new MemoryLogStore({ clock });
    return Promise.resolve(mem);
  },
  reopen() {
    return Promise.resolve(mem);
  },
});
