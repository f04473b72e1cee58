// Time-ordered event queue (binary min-heap). Ties on time break by insertion order, so a
// simulation is deterministic without relying on sort stability.

export interface Scheduled<E> {
  readonly at: number;
  readonly seq: number;
  readonly event: E;
  cancelled: boolean;
}

export class EventQueue<E> {
  #heap: Scheduled<E>[] = [];
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  push(at: number, event: E): Scheduled<E> {
    if (!Number.isFinite(at)) throw new RangeError(`event time must be finite, got ${at}`);
    const s: Scheduled<E> = { at, seq: this.#seq++, event, cancelled: false };
    const h = this.#heap;
    let i = h.length;
    h.push(s);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(s, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = s;
    return s;
  }

  /** Marks an event so pop() skips it. */
  cancel(s: Scheduled<E>): void {
    s.cancelled = true;
  }

  /** Time of the earliest live event, or Infinity. */
  peekTime(): number {
    this.#dropCancelled();
    return this.#heap.length === 0 ? Infinity : this.#heap[0].at;
  }

  pop(): Scheduled<E> | undefined {
    this.#dropCancelled();
    return this.#popRaw();
  }

  clear(): void {
    this.#heap = [];
  }

  #dropCancelled(): void {
    while (this.#heap.length > 0 && this.#heap[0].cancelled) this.#popRaw();
  }

  #popRaw(): Scheduled<E> | undefined {
    const h = this.#heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!;
    const n = h.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && less(h[r], h[l]) ? r : l;
        if (!less(h[c], last)) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function less<E>(a: Scheduled<E>, b: Scheduled<E>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
