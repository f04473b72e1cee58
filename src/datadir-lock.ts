// Exclusive lock on the data dir, taken before anything in it is read or repaired.
// flock(2) via bun:ffi: the kernel drops it when the process dies, so a kill -9 leaves no stale lock.
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, ftruncateSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

const LOCK_EX = 2;
const LOCK_NB = 4;

let libc: { symbols: { flock: (fd: number, op: number) => number } } | undefined;
function flock(fd: number, op: number): number {
  libc ??= dlopen("libc.so.6", {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  });
  return libc.symbols.flock(fd, op);
}

export class DataDirLockedError extends Error {}

export interface DataDirLock {
  path: string;
  release(): void;
}

/** Create the dir if needed and lock it; throws DataDirLockedError if another process holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, ".lock");
  const fd = openSync(path, "a+");
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    throw new DataDirLockedError(
      `data dir ${dataDir} is in use by another broker (lock ${path} is held)`,
    );
  }
  // The pid is informational only; the flock is the lock.
  ftruncateSync(fd, 0);
  writeSync(fd, `${process.pid}\n`, 0);
  return {
    path,
    release() {
      try {
        closeSync(fd); // closing drops the flock
      } catch { /* already closed */ }
    },
  };
}
