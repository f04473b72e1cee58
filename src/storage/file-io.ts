// The small file layer every storage module goes through, so tests can inject a crash-simulating
// or space-limited implementation. The real one uses pwrite/pread, async fdatasync and Bun.mmap.
import * as fs from "node:fs";
import * as path from "node:path";
import { dlopen, FFIType } from "bun:ffi";

export interface FileHandle {
  readonly path: string;
  /** Write all of `buf` at `position`; throws the OS error (ENOSPC, EIO...) possibly after a partial write. */
  pwrite(buf: Uint8Array, position: number): void;
  /** As pwrite, in the thread pool; `buf` must not change until it settles. */
  pwriteAsync(buf: Uint8Array, position: number): Promise<void>;
  /** Read up to buf.length bytes at `position`; returns bytes read. */
  pread(buf: Uint8Array, position: number): number;
  size(): number;
  /** Off the event loop. */
  fdatasync(): Promise<void>;
  /** Map the whole file as it is now (must be non-empty). Never truncate a mapped file. */
  mmap(): Uint8Array;
  close(): void;
}

export interface FileIO {
  open(path: string, create: boolean): FileHandle;
  exists(path: string): boolean;
  mkdirp(path: string): void;
  readdir(path: string): string[];
  /** Whole file or null if absent. */
  readFile(path: string): Uint8Array | null;
  /** Create/replace (not synced). */
  writeFile(path: string, data: Uint8Array): void;
  unlink(path: string): void;
  rename(from: string, to: string): void;
  /** Remove a directory tree. */
  rmrf(path: string): void;
  /** fsync a directory so creates, renames and unlinks in it are durable. */
  syncDir(path: string): Promise<void>;
  /**
   * Make everything written so far on the file system holding `path` durable (syncfs(2)): one
   * journal commit for many files. Absent where not available (callers sync file by file).
   */
  syncFs?(path: string): Promise<void>;
}

function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e
    ? String((e as { code: unknown }).code)
    : undefined;
}

class RealHandle implements FileHandle {
  #closed = false;
  readonly #fdNumber: number;
  constructor(readonly path: string, fd: number) {
    this.#fdNumber = fd;
  }
  /** The descriptor, never after close: its number may belong to another file or socket by then. */
  private get fd(): number {
    if (this.#closed) throw Object.assign(new Error(`${this.path} is closed`), { code: "EBADF" });
    return this.#fdNumber;
  }
  pwrite(buf: Uint8Array, position: number): void {
    let done = 0;
    while (done < buf.length) {
      const n = fs.writeSync(this.fd, buf, done, buf.length - done, position + done);
      if (n <= 0) throw Object.assign(new Error("short write"), { code: "EIO" });
      done += n;
    }
  }
  pwriteAsync(buf: Uint8Array, position: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const fd = this.fd; // throws (rejects) once closed
      const more = (done: number) => {
        if (done >= buf.length) return resolve();
        fs.write(fd, buf, done, buf.length - done, position + done, (e, n) => {
          if (e) reject(e);
          else if (n <= 0) reject(Object.assign(new Error("short write"), { code: "EIO" }));
          else more(done + n);
        });
      };
      more(0);
    });
  }
  pread(buf: Uint8Array, position: number): number {
    return fs.readSync(this.fd, buf, 0, buf.length, position);
  }
  size(): number {
    return fs.fstatSync(this.fd).size;
  }
  fdatasync(): Promise<void> {
    return new Promise((resolve, reject) => {
      const fd = this.fd; // throws (rejects) once closed
      fs.fdatasync(fd, (e) => (e ? reject(e) : resolve()));
    });
  }
  mmap(): Uint8Array {
    return Bun.mmap(this.path, { shared: true });
  }
  /**
   * Idempotent: a second close(2) of the same number could close whatever reused it since
   * (another file, or a client's socket), so the number is closed exactly once.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      fs.closeSync(this.#fdNumber);
    } catch {
      // already gone
    }
  }
}

let libc: { symbols: { syncfs: (fd: number) => number } } | null | undefined;
/** syncfs(2) through libc, or null where it cannot be loaded (then files are synced one by one). */
function syncfsCall(): ((fd: number) => number) | null {
  if (libc === undefined) {
    try {
      libc = dlopen("libc.so.6", { syncfs: { args: [FFIType.i32], returns: FFIType.i32 } });
    } catch {
      libc = null;
    }
  }
  return libc === null ? null : libc.symbols.syncfs;
}

export const realFileIO: FileIO = {
  open(p, create) {
    const flags = fs.constants.O_RDWR | (create ? fs.constants.O_CREAT : 0);
    return new RealHandle(p, fs.openSync(p, flags, 0o644));
  },
  exists: (p) => fs.existsSync(p),
  mkdirp: (p) => void fs.mkdirSync(p, { recursive: true }),
  readdir: (p) => fs.readdirSync(p),
  readFile(p) {
    try {
      return new Uint8Array(fs.readFileSync(p));
    } catch (e) {
      if (errnoCode(e) === "ENOENT") return null;
      throw e;
    }
  },
  writeFile: (p, d) => fs.writeFileSync(p, d),
  unlink(p) {
    try {
      fs.unlinkSync(p);
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw e;
    }
  },
  rename: (a, b) => fs.renameSync(a, b),
  rmrf: (p) => fs.rmSync(p, { recursive: true, force: true }),
  syncDir(p) {
    return new Promise((resolve, reject) => {
      fs.open(p, "r", (e, fd) => {
        if (e) return reject(e);
        fs.fsync(fd, (e2) => {
          fs.close(fd, () => (e2 ? reject(e2) : resolve()));
        });
      });
    });
  },
  // Blocks the event loop for the length of the sync: meant for shutdown, where nothing else runs.
  syncFs(p) {
    const call = syncfsCall();
    if (call === null) return Promise.reject(new Error("syncfs is not available"));
    const fd = fs.openSync(p, "r");
    try {
      if (call(fd) !== 0) throw Object.assign(new Error(`syncfs ${p} failed`), { code: "EIO" });
    } finally {
      fs.closeSync(fd);
    }
    return Promise.resolve();
  },
};

/** Replace `p` atomically, not synced (a later file-system sync makes it durable). */
export function writeFileReplacing(io: FileIO, p: string, data: Uint8Array): void {
  const tmp = p + ".tmp";
  io.writeFile(tmp, data);
  io.rename(tmp, p);
}

/** Replace `p` atomically and durably: temp file, fdatasync, rename, directory sync. */
export async function writeFileDurable(io: FileIO, p: string, data: Uint8Array): Promise<void> {
  const tmp = p + ".tmp";
  io.writeFile(tmp, data);
  const h = io.open(tmp, false);
  try {
    await h.fdatasync();
  } finally {
    h.close();
  }
  io.rename(tmp, p);
  await io.syncDir(path.dirname(p));
}

export { errnoCode };
