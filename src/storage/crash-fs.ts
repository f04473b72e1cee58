// An in-memory FileIO that simulates power loss, for tests.
//
// Durability rules (modelled on POSIX + ext4 without relying on its extras):
// - File contents become durable only through fdatasync: a sync makes durable exactly the bytes
//   the file held when the sync STARTED, once it finishes. Writes after that start are not covered.
// - Creating, renaming or unlinking a file, and creating or removing a directory, becomes durable
//   only when its parent directory is synced (syncDir). A durable entry inside a directory that is
//   not durable itself is lost.
// - crash() returns a new file system holding the durable state (optionally plus a random,
//   possibly torn, prefix of the unsynced writes, as a disk may persist some of them); the old
//   instance then fails every operation with EIO and its in-flight syncs reject.
// Faults: a byte capacity (ENOSPC after a partial write, like a real disk) and injected EIO.
import * as path from "node:path";
import type { FileHandle, FileIO } from "./file-io.ts";

interface Inode {
  data: Uint8Array;
  size: number;
  durable: Uint8Array;
  /** Writes since the durable snapshot was taken (for torn-write simulation). */
  pending: { pos: number; bytes: Uint8Array }[];
  syncSeq: number;
  appliedSeq: number;
  /**
   * Views handed out by mmap. A real shared map shows later writes within its length, but
   * `data` is replaced when the file grows: writes are copied into every view made before.
   */
  maps: Uint8Array[];
}

function errno(code: string, msg: string): Error {
  return Object.assign(new Error(`${code}: ${msg}`), { code });
}

function newInode(): Inode {
  return {
    data: new Uint8Array(64),
    size: 0,
    durable: new Uint8Array(0),
    pending: [],
    syncSeq: 0,
    appliedSeq: 0,
    maps: [],
  };
}

/** Small seeded PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface CrashOptions {
  /** Probability that some unsynced writes of a file survive (as a prefix, last one torn). */
  keepUnsyncedProb?: number;
  seed?: number;
}

export class CrashFileIO implements FileIO {
  private files = new Map<string, Inode>();
  private durableFiles = new Map<string, Inode>();
  private dirs = new Set<string>(["/"]);
  private durableDirs = new Set<string>(["/"]);
  private dead = false;
  /** Total bytes the "disk" holds; pwrite past it fails with ENOSPC after a partial write. */
  capacity = Number.POSITIVE_INFINITY;
  /** Delay of every fdatasync/syncDir, in ms (0 = next macrotask). */
  syncDelayMs = 0;
  /** Delay of every pwriteAsync before its bytes land, in ms (0 = next macrotask). */
  writeDelayMs = 0;
  /** fdatasync calls issued. */
  syncCount = 0;
  /** Return an error code to fail an operation ("pwrite" | "fdatasync" | "mmap"...), or null. */
  fault: ((op: string, p: string) => string | null) | null = null;

  private check(op: string, p: string): void {
    if (this.dead) throw errno("EIO", `${op} after crash`);
    const f = this.fault?.(op, p);
    if (f) throw errno(f, `injected on ${op} ${p}`);
  }

  private inode(p: string): Inode {
    const n = this.files.get(p);
    if (!n) throw errno("ENOENT", p);
    return n;
  }

  usedBytes(): number {
    let s = 0;
    for (const n of new Set(this.files.values())) s += n.size;
    return s;
  }

  private write(n: Inode, buf: Uint8Array, pos: number): void {
    const end = pos + buf.length;
    const growth = Math.max(0, end - n.size);
    let len = buf.length;
    let full = false;
    if (growth > 0 && this.usedBytes() + growth > this.capacity) {
      const allowedGrowth = Math.max(0, this.capacity - this.usedBytes());
      len = Math.max(0, Math.min(buf.length, n.size - pos + allowedGrowth));
      full = true;
    }
    if (pos > n.size) throw errno("EINVAL", "write past end would leave a hole");
    if (pos + len > n.data.length) {
      let cap = n.data.length;
      while (cap < pos + len) cap *= 2;
      const nd = new Uint8Array(cap);
      nd.set(n.data.subarray(0, n.size));
      n.data = nd;
    }
    n.data.set(buf.subarray(0, len), pos);
    for (const m of n.maps) {
      if (m.buffer === n.data.buffer || pos >= m.length) continue;
      m.set(buf.subarray(0, Math.min(len, m.length - pos)), pos);
    }
    n.size = Math.max(n.size, pos + len);
    if (len > 0) n.pending.push({ pos, bytes: buf.slice(0, len) });
    if (full) throw errno("ENOSPC", "no space left on device");
  }

  private delay(): Promise<void> {
    return new Promise((r) => setTimeout(r, this.syncDelayMs));
  }

  open(p: string, create: boolean): FileHandle {
    this.check("open", p);
    if (!this.dirs.has(path.dirname(p))) throw errno("ENOENT", path.dirname(p));
    let n = this.files.get(p);
    if (!n) {
      if (!create) throw errno("ENOENT", p);
      n = newInode();
      this.files.set(p, n);
    }
    const node = n;
    // deno-lint-ignore no-this-alias -- the handle object outlives this call and needs the fs
    const io = this;
    let closed = false;
    const guard = (op: string) => {
      io.check(op, p);
      if (closed) throw errno("EBADF", p);
    };
    return {
      path: p,
      pwrite(buf, position) {
        guard("pwrite");
        io.write(node, buf, position);
      },
      async pwriteAsync(buf, position) {
        guard("pwrite");
        await new Promise((r) => setTimeout(r, io.writeDelayMs));
        guard("pwrite");
        io.write(node, buf, position);
      },
      pread(buf, position) {
        guard("pread");
        const len = Math.max(0, Math.min(buf.length, node.size - position));
        buf.set(node.data.subarray(position, position + len));
        return len;
      },
      size() {
        guard("size");
        return node.size;
      },
      async fdatasync() {
        guard("fdatasync");
        io.syncCount++;
        const seq = ++node.syncSeq;
        const snapshot = node.data.slice(0, node.size);
        const mark = node.pending.length;
        const before = io.dead;
        await io.delay();
        if (io.dead || before) throw errno("EIO", "crashed during fdatasync");
        if (seq > node.appliedSeq) {
          node.appliedSeq = seq;
          node.durable = snapshot;
          node.pending = node.pending.slice(mark);
        }
      },
      mmap() {
        guard("mmap");
        if (node.size === 0) throw errno("EINVAL", "cannot map an empty file");
        const m = node.data.subarray(0, node.size);
        // The newest maps only (a segment keeps its latest): bounded for long runs.
        if (node.maps.length >= 16) node.maps.shift();
        node.maps.push(m);
        return m;
      },
      close() {
        closed = true;
      },
    };
  }

  exists(p: string): boolean {
    return this.files.has(p) || this.dirs.has(p);
  }
  mkdirp(p: string): void {
    this.check("mkdir", p);
    const parts: string[] = [];
    for (let d = p; d !== "/" && d !== "."; d = path.dirname(d)) parts.unshift(d);
    for (const d of parts) this.dirs.add(d);
  }
  readdir(p: string): string[] {
    this.check("readdir", p);
    if (!this.dirs.has(p)) throw errno("ENOENT", p);
    const out = new Set<string>();
    for (const f of this.files.keys()) if (path.dirname(f) === p) out.add(path.basename(f));
    for (const d of this.dirs) if (d !== p && path.dirname(d) === p) out.add(path.basename(d));
    return [...out].sort();
  }
  readFile(p: string): Uint8Array | null {
    this.check("read", p);
    const n = this.files.get(p);
    return n ? n.data.slice(0, n.size) : null;
  }
  writeFile(p: string, data: Uint8Array): void {
    this.check("write", p);
    if (!this.dirs.has(path.dirname(p))) throw errno("ENOENT", path.dirname(p));
    let n = this.files.get(p);
    if (!n) {
      n = newInode();
      this.files.set(p, n);
    }
    n.size = 0;
    n.pending = [];
    this.write(n, data, 0);
  }
  unlink(p: string): void {
    this.check("unlink", p);
    this.files.delete(p);
  }
  rename(a: string, b: string): void {
    this.check("rename", a);
    const n = this.inode(a);
    this.files.delete(a);
    this.files.set(b, n);
  }
  rmrf(p: string): void {
    this.check("rmrf", p);
    for (const f of [...this.files.keys()]) {
      if (f === p || f.startsWith(p + "/")) this.files.delete(f);
    }
    for (const d of [...this.dirs]) if (d === p || d.startsWith(p + "/")) this.dirs.delete(d);
  }
  async syncDir(p: string): Promise<void> {
    this.check("syncdir", p);
    const files = [...this.files].filter(([f]) => path.dirname(f) === p);
    const dirs = [...this.dirs].filter((d) => d !== p && path.dirname(d) === p);
    await this.delay();
    if (this.dead) throw errno("EIO", "crashed during syncDir");
    for (const f of [...this.durableFiles.keys()]) {
      if (path.dirname(f) === p) this.durableFiles.delete(f);
    }
    for (const [f, n] of files) this.durableFiles.set(f, n);
    for (const d of [...this.durableDirs]) {
      if (d !== p && path.dirname(d) === p) this.durableDirs.delete(d);
    }
    for (const d of dirs) this.durableDirs.add(d);
  }

  /**
   * Everything written so far made durable, file contents and directory entries, as syncfs(2)
   * does. Not FileIO.syncFs itself, so stores on this disk sync file by file unless a test
   * attaches it as syncFs.
   */
  async syncAll(): Promise<void> {
    this.check("syncfs", "/");
    const files = [...this.files];
    const dirs = [...this.dirs];
    const snaps = files.map(([, n]) => ({
      n,
      data: n.data.slice(0, n.size),
      mark: n.pending.length,
      seq: ++n.syncSeq,
    }));
    await this.delay();
    if (this.dead) throw errno("EIO", "crashed during syncfs");
    for (const x of snaps) {
      if (x.seq <= x.n.appliedSeq) continue;
      x.n.appliedSeq = x.seq;
      x.n.durable = x.data;
      x.n.pending = x.n.pending.slice(x.mark);
    }
    this.durableFiles = new Map(files);
    this.durableDirs = new Set(dirs);
  }

  /** Bytes of `p` that are durable right now (tests). */
  durableSize(p: string): number {
    return this.files.get(p)?.durable.length ?? 0;
  }

  /** Copy of the current (live) state, all of it durable, leaving this instance alive. */
  clone(): CrashFileIO {
    const next = new CrashFileIO();
    next.dirs = new Set(this.dirs);
    next.durableDirs = new Set(this.dirs);
    for (const [f, n] of this.files) {
      const c = newInode();
      c.data = n.data.slice(0, Math.max(64, n.size));
      c.size = n.size;
      c.durable = n.data.slice(0, n.size);
      next.files.set(f, c);
      next.durableFiles.set(f, c);
    }
    return next;
  }

  /** Power loss: the returned file system holds what was durable; this one dies. */
  crash(opts: CrashOptions = {}): CrashFileIO {
    const rnd = seededRandom(opts.seed ?? 1);
    const keep = opts.keepUnsyncedProb ?? 0;
    this.dead = true;
    const next = new CrashFileIO();
    const dirOk = (d: string): boolean => {
      for (let x = d; x !== "/" && x !== "."; x = path.dirname(x)) {
        if (!this.durableDirs.has(x)) return false;
      }
      return true;
    };
    for (const d of this.durableDirs) if (dirOk(d)) next.dirs.add(d);
    const copies = new Map<Inode, Inode>();
    for (const [f, n] of this.durableFiles) {
      if (!dirOk(path.dirname(f))) continue;
      let c = copies.get(n);
      if (!c) {
        c = newInode();
        c.data = new Uint8Array(Math.max(64, n.durable.length));
        c.data.set(n.durable);
        c.size = n.durable.length;
        if (keep > 0 && rnd() < keep && n.pending.length > 0) {
          const count = 1 + Math.floor(rnd() * n.pending.length);
          for (let i = 0; i < count; i++) {
            const w = n.pending[i];
            const torn = i === count - 1
              ? Math.floor(rnd() * (w.bytes.length + 1))
              : w.bytes.length;
            if (w.pos > c.size) break;
            next.write(c, w.bytes.subarray(0, torn), w.pos);
          }
        }
        c.durable = c.data.slice(0, c.size);
        c.pending = [];
        copies.set(n, c);
      }
      next.files.set(f, c);
      next.durableFiles.set(f, c);
    }
    next.durableDirs = new Set(next.dirs);
    next.capacity = this.capacity;
    return next;
  }
}
