// Reusable buffers for large request frames. A fresh multi-megabyte allocation per produce
// request costs a page fault per 4 KiB on first touch (tens of microseconds each on this kind
// of VM), which profiles showed as a third of the broker's CPU; a reused buffer is already
// mapped. Only frames whose bytes nobody keeps after the handler finishes may come from here
// (Produce: the log validates, rewrites and pwrites the batches before `append` returns), and
// Fetch response buffers, which the connection gives back once they are written.

/** Smallest pooled class; smaller frames are cheap to allocate on the JS heap. */
const MIN_CLASS_BITS = 15; // 32 KiB
/** Larger frames are rare and would waste up to half a class; they are allocated exactly. */
const MAX_CLASS_BITS = 24; // 16 MiB

export class FramePool {
  readonly #free = new Map<number, Uint8Array[]>();
  #retained = 0;
  #hits = 0;
  #misses = 0;
  /** Bytes of buffers handed out by `tryTake` and not yet given back. */
  #lent = 0;
  readonly #lentBuffers = new WeakSet<ArrayBufferLike>();
  /** Buffers on the free lists, so a second `give` of one cannot list it twice. */
  readonly #idle = new WeakSet<ArrayBufferLike>();

  /**
   * @param maxRetainedBytes idle buffers kept for reuse, in total; the rest go to the GC.
   * @param maxLentBytes what `tryTake` may have out at once (response buffers).
   */
  constructor(readonly maxRetainedBytes: number, readonly maxLentBytes = Infinity) {}

  /**
   * A buffer of `size` bytes counted against the lending cap, or null when the cap is reached
   * (the caller then uses a path that needs no buffer, e.g. mapped reads).
   */
  tryTake(size: number): Uint8Array | null {
    const cls = classOf(size);
    if (this.#lent + cls > this.maxLentBytes) return null;
    const buf = this.take(size);
    this.#lent += cls;
    this.#lentBuffers.add(buf.buffer);
    return buf;
  }

  /** Whether a frame of this size is served from the pool (else the caller allocates). */
  static pooled(size: number): boolean {
    return size >= 1 << MIN_CLASS_BITS && size <= 1 << MAX_CLASS_BITS;
  }

  /** A buffer of exactly `size` bytes (a view of a pooled buffer of the size class). */
  take(size: number): Uint8Array {
    const cls = classOf(size);
    const list = this.#free.get(cls);
    const buf = list?.pop();
    if (buf) {
      this.#idle.delete(buf.buffer);
      this.#retained -= buf.byteLength;
      this.#hits++;
      return buf.subarray(0, size);
    }
    this.#misses++;
    return new Uint8Array(cls).subarray(0, size);
  }

  /** Return a buffer from `take`; its contents must no longer be referenced. */
  give(frame: Uint8Array): void {
    const whole = new Uint8Array(frame.buffer, 0, frame.buffer.byteLength);
    const cls = whole.byteLength;
    if (this.#lentBuffers.delete(frame.buffer)) this.#lent -= cls;
    if (this.#idle.has(frame.buffer)) return;
    if (cls !== classOf(cls) || this.#retained + cls > this.maxRetainedBytes) return;
    this.#idle.add(frame.buffer);
    let list = this.#free.get(cls);
    if (!list) this.#free.set(cls, list = []);
    list.push(whole);
    this.#retained += cls;
  }

  stats(): { retainedBytes: number; lentBytes: number; hits: number; misses: number } {
    return {
      retainedBytes: this.#retained,
      lentBytes: this.#lent,
      hits: this.#hits,
      misses: this.#misses,
    };
  }
}

/** The power of two at or above `size` (at least the smallest class). */
function classOf(size: number): number {
  let c = 1 << MIN_CLASS_BITS;
  while (c < size) c *= 2;
  return c;
}
