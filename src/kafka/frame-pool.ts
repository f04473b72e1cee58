// Reusable buffers for large request frames. A fresh multi-megabyte allocation per produce
// request costs a page fault per 4 KiB on first touch (tens of microseconds each on this kind
// of VM), which profiles showed as a third of the broker's CPU; a reused buffer is already
// mapped. Only frames whose bytes nobody keeps after the handler finishes may come from here
// (Produce: the log copies the batches into its own staging buffer before `append` returns).

/** Smallest pooled class; smaller frames are cheap to allocate on the JS heap. */
const MIN_CLASS_BITS = 15; // 32 KiB
/** Larger frames are rare and would waste up to half a class; they are allocated exactly. */
const MAX_CLASS_BITS = 24; // 16 MiB

export class FramePool {
  readonly #free = new Map<number, Uint8Array[]>();
  #retained = 0;
  #hits = 0;
  #misses = 0;

  /** @param maxRetainedBytes idle buffers kept for reuse, in total; the rest go to the GC. */
  constructor(readonly maxRetainedBytes: number) {}

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
    if (cls !== classOf(cls) || this.#retained + cls > this.maxRetainedBytes) return;
    let list = this.#free.get(cls);
    if (!list) this.#free.set(cls, list = []);
    list.push(whole);
    this.#retained += cls;
  }

  stats(): { retainedBytes: number; hits: number; misses: number } {
    return { retainedBytes: this.#retained, hits: this.#hits, misses: this.#misses };
  }
}

/** The power of two at or above `size` (at least the smallest class). */
function classOf(size: number): number {
  let c = 1 << MIN_CLASS_BITS;
  while (c < size) c *= 2;
  return c;
}
