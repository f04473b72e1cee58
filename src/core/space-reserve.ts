// A few MiB of real (non-sparse) blocks held in the data dir, given back when the disk is full
// so that metadata writes (e.g. lowering retention to free space) still succeed. Recreated once
// the disk has room again.
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.ts";

export const RESERVE_FILE = "space-reserve";
export const RESERVE_BYTES = 2 * 1024 * 1024;

export class SpaceReserve {
  readonly path: string;

  constructor(dataDir: string, readonly log: Logger, readonly bytes = RESERVE_BYTES) {
    this.path = join(dataDir, RESERVE_FILE);
  }

  held(): boolean {
    try {
      return statSync(this.path).size >= this.bytes;
    } catch {
      return false;
    }
  }

  /** Create the reserve if missing and the disk has room for it twice over. Never throws. */
  ensure(): boolean {
    if (this.held()) return true;
    try {
      const fs = statfsSync(join(this.path, ".."));
      if (fs.bavail * fs.bsize < 2 * this.bytes) return false;
    } catch {
      return false;
    }
    let fd = -1;
    try {
      fd = openSync(this.path, "w");
      const zeros = new Uint8Array(64 * 1024);
      for (let off = 0; off < this.bytes; off += zeros.length) {
        writeSync(fd, zeros, 0, zeros.length, off);
      }
      fsyncSync(fd);
      return true;
    } catch (e) {
      this.log.warn("could not create the disk space reserve", { path: this.path, error: e });
      try {
        unlinkSync(this.path);
      } catch { /* nothing to remove */ }
      return false;
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }

  /** Bytes free to this process on the data dir's file system, or null when unknown. */
  freeBytes(): number | null {
    try {
      const fs = statfsSync(join(this.path, ".."));
      return fs.bavail * fs.bsize;
    } catch {
      return null;
    }
  }

  /** Give the space back; true if there was a reserve to release. */
  release(): boolean {
    if (!existsSync(this.path)) return false;
    try {
      unlinkSync(this.path);
      this.log.warn("disk full: released the space reserve so metadata changes can proceed", {
        bytes: this.bytes,
      });
      return true;
    } catch {
      return false;
    }
  }
}

/** SQLite's "database or disk is full" (SQLITE_FULL), as bun:sqlite reports it. */
export function isDiskFull(e: unknown): boolean {
  const err = e as { code?: unknown; errno?: unknown; message?: unknown };
  return err?.code === "SQLITE_FULL" || err?.code === "ENOSPC" || err?.errno === 13 ||
    (typeof err?.message === "string" && /disk is full|ENOSPC/.test(err.message));
}
