// A bound on the descriptors segment files hold. Every partition keeps its segments' handles for
// as long as it is open, so without a bound the partition count was capped by the open-file limit
// (one descriptor each: the 20th topic of 1,000 partitions hit EMFILE at a 20,000 limit). Handles
// from `cachedFileIO` keep their path and close their descriptor when the least recently used
// ones exceed the capacity; the next operation on one opens the file again (never with O_CREAT, so
// a file gone meanwhile is an error, not a new empty file).
//
// Why closing and reopening is safe here: fsync and fdatasync act on the file, not on the
// descriptor, so a sync through a new descriptor covers what was written through an old one; a
// writeback error nobody has seen yet is reported to a descriptor opened after it (Linux 4.16+,
// errseq). Memory maps are made from the path (Bun.mmap) and do not hold a descriptor. An
// operation in flight on the thread pool (fdatasync, a background pwrite) pins its descriptor:
// it is never closed under the operation. Such operations run at most `maxInFlight` at a time
// (the others wait for a turn holding no pinned descriptor, and the thread pool would run them a
// few at a time anyway), so acks=all writes to thousands of partitions at once cannot pin
// thousands of descriptors: at most capacity + maxInFlight are open, plus directory syncs, which
// take turns the same way.
import type { FileHandle, FileIO } from "./file-io.ts";

export interface HandleCacheStats {
  /** Descriptors open now through the cache. */
  open: number;
  /** Files opened again after their descriptor was closed for room. */
  reopens: number;
  /** Descriptors closed for room. */
  evictions: number;
}

export class HandleCache {
  /** Handles holding a descriptor, least recently used first. */
  readonly #lru = new Map<CachedHandle, true>();
  #reopens = 0;
  #evictions = 0;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly maxInFlight: number;

  constructor(readonly capacity: number, maxInFlight?: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`handle cache capacity must be a positive integer, not ${capacity}`);
    }
    this.maxInFlight = maxInFlight ?? Math.max(1, Math.min(64, Math.floor(capacity / 4)));
  }

  /** Run a thread-pool operation in its turn (at most maxInFlight at once). */
  async inTurn<T>(op: () => Promise<T>): Promise<T> {
    if (this.#running >= this.maxInFlight) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#running++;
    try {
      return await op();
    } finally {
      const next = this.#waiting.shift();
      if (next !== undefined) next(); // the turn passes on: #running stays
      else this.#running--;
    }
  }

  get stats(): HandleCacheStats {
    return { open: this.#lru.size, reopens: this.#reopens, evictions: this.#evictions };
  }

  /** `h` holds a descriptor and was just used: most recent; older ones close while over capacity. */
  touch(h: CachedHandle): void {
    this.#lru.delete(h);
    this.#lru.set(h, true);
    if (this.#lru.size > this.capacity) this.#evict(h);
  }

  forget(h: CachedHandle): void {
    this.#lru.delete(h);
  }

  noteReopen(): void {
    this.#reopens++;
  }

  #evict(keep: CachedHandle): void {
    for (const h of this.#lru.keys()) {
      if (this.#lru.size <= this.capacity) return;
      if (h === keep || !h.releasable) continue; // pinned by an operation in flight
      this.#lru.delete(h);
      h.release();
      this.#evictions++;
    }
  }
}

class CachedHandle implements FileHandle {
  #fd: FileHandle | null;
  #pins = 0;
  #closed = false;

  constructor(
    readonly path: string,
    first: FileHandle,
    private readonly base: FileIO,
    private readonly cache: HandleCache,
  ) {
    this.#fd = first;
    cache.touch(this);
  }

  get releasable(): boolean {
    return this.#pins === 0;
  }

  /** Close the descriptor (the cache needs room); the handle stays usable. */
  release(): void {
    const fd = this.#fd;
    this.#fd = null;
    fd?.close();
  }

  #get(): FileHandle {
    if (this.#closed) {
      throw Object.assign(new Error(`${this.path} is closed`), { code: "EBADF" });
    }
    let fd = this.#fd;
    if (fd === null) {
      fd = this.base.open(this.path, false);
      this.#fd = fd;
      this.cache.noteReopen();
    }
    this.cache.touch(this);
    return fd;
  }

  /** Run an operation that completes on the thread pool, in its turn, with the descriptor pinned. */
  #pinned<T>(op: (fd: FileHandle) => Promise<T>): Promise<T> {
    return this.cache.inTurn(() => this.#pinnedNow(op));
  }

  async #pinnedNow<T>(op: (fd: FileHandle) => Promise<T>): Promise<T> {
    const fd = this.#get();
    this.#pins++;
    try {
      return await op(fd);
    } finally {
      this.#pins--;
      if (this.#closed) {
        // Closed while the operation ran: its descriptor number must not be reused under it.
        if (this.#pins === 0) this.release();
      } else if (this.#fd !== null) this.cache.touch(this); // eviction skipped it while pinned
    }
  }

  pwrite(buf: Uint8Array, position: number): void {
    this.#get().pwrite(buf, position);
  }

  pwriteAsync(buf: Uint8Array, position: number): Promise<void> {
    return this.#pinned((fd) => fd.pwriteAsync(buf, position));
  }

  pread(buf: Uint8Array, position: number): number {
    return this.#get().pread(buf, position);
  }

  size(): number {
    return this.#get().size();
  }

  fdatasync(): Promise<void> {
    return this.#pinned((fd) => fd.fdatasync());
  }

  mmap(): Uint8Array {
    return this.#get().mmap();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.cache.forget(this);
    if (this.#pins === 0) this.release();
  }
}

/** `base` with every opened file's descriptor under `cache`'s bound. */
export function cachedFileIO(base: FileIO, cache: HandleCache): FileIO {
  return {
    open: (p, create) => new CachedHandle(p, base.open(p, create), base, cache),
    exists: (p) => base.exists(p),
    mkdirp: (p) => base.mkdirp(p),
    readdir: (p) => base.readdir(p),
    readFile: (p) => base.readFile(p),
    writeFile: (p, d) => base.writeFile(p, d),
    unlink: (p) => base.unlink(p),
    rename: (a, b) => base.rename(a, b),
    rmrf: (p) => base.rmrf(p),
    syncDir: (p) => cache.inTurn(() => base.syncDir(p)),
    ...(base.syncFs ? { syncFs: (p: string) => cache.inTurn(() => base.syncFs!(p)) } : {}),
  };
}
