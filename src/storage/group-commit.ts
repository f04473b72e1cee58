// Group commit: one fdatasync round serves every append written before it started.
// An append waiting for offset O is released by the first sync that STARTED after O was written.
// A requested sync starts at the end of the current microtask burst (no I/O or timer runs in
// between), so appenders resumed together by one settled round are all covered by the next one
// instead of the first of them starting a sync that the other seven just miss.

interface Waiter {
  offset: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export interface SyncTarget {
  /** Offset after the last byte written so far. */
  writtenOffset(): number;
  /** Sync every file holding bytes written so far (data files, directory entries). */
  syncAll(): Promise<void>;
}

export class GroupCommit {
  /** Offsets below this are durable. */
  durableOffset: number;
  private running = false;
  private scheduled = false;
  private waiters: Waiter[] = [];
  /** Sync rounds started (for tests and benchmarks). */
  rounds = 0;
  private closedError: Error | null = null;

  constructor(private readonly target: SyncTarget, initialDurable: number) {
    this.durableOffset = initialDurable;
  }

  /** Resolves once offsets below `offset` are durable. The returned promise is pre-handled. */
  waitDurable(offset: number): Promise<void> {
    if (offset <= this.durableOffset) return Promise.resolve();
    if (this.closedError) return handled(Promise.reject(this.closedError));
    const p = new Promise<void>((resolve, reject) =>
      this.waiters.push({ offset, resolve, reject })
    );
    this.kick();
    return handled(p);
  }

  /** Sync whatever is written now (the interval flusher and close use this). */
  flush(): Promise<void> {
    return this.waitDurable(this.target.writtenOffset());
  }

  /** Lower the durable mark after a truncation. */
  truncated(offset: number): void {
    this.durableOffset = Math.min(this.durableOffset, offset);
  }

  /** Fail pending and future waits (log closed or deleted). */
  fail(e: Error): void {
    this.closedError = e;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w.reject(e);
  }

  /** Start a round at the end of the current microtask burst, unless one is running or due. */
  private kick(): void {
    if (this.running || this.scheduled || this.waiters.length === 0) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    if (this.running || this.waiters.length === 0) return;
    this.running = true;
    // Bytes below `covers` were written (pwrite returned) before this sync is issued.
    const covers = this.target.writtenOffset();
    this.rounds++;
    this.target.syncAll().then(
      () => {
        if (covers > this.durableOffset) this.durableOffset = covers;
        this.settle(null, covers);
      },
      (e) => this.settle(e, covers),
    );
  }

  private settle(err: unknown, covers: number): void {
    this.running = false;
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.offset <= covers) {
        if (err) w.reject(err);
        else w.resolve();
      } else keep.push(w);
    }
    this.waiters = keep;
    this.kick();
  }
}

/** Mark a promise as handled so nobody awaiting it does not cause an unhandled rejection. */
export function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}
