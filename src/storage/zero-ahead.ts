// When to write zeros ahead of the active segment's end (sans-IO: the log and segment do the IO).
//
// Why: on ext4, an fdatasync after appending must commit the file's new size and block allocation
// to the journal; after overwriting blocks that are already allocated and written, it only writes
// the data and flushes the disk cache. Measured on this project's host (8 × 16 KiB per round,
// alternating blocks): a round appended to a growing file p50 0.36–0.42 ms; the same round
// overwriting zeros written and synced earlier p50 0.21–0.25 ms; one 16 KiB append + fdatasync
// p50 0.25–0.33 ms. fallocate does not help (unwritten extents are converted in the journal too:
// p50 0.41 ms).
//
// The price is writing every byte twice, so the window is kept only while a log's sync rounds are
// small and frequent, i.e. acks=all (or flush=always) producers are waiting on them, never for
// bulk appends that end with one sync or for the interval flusher. And the zeros are written
// only while no round is running or due, in steps of a few MiB each followed by its own
// fdatasync: a round's fdatasync waits for every dirty page of the file, so zeros written during
// a round would make that round pay for them. Under load with no pause at all the window is not
// refilled, and rounds cost what appends to a growing file cost.

const ALPHA = 1 / 8;
/** Rounds seen before the window is used (one acks=all append is not a pattern). */
const WARMUP_ROUNDS = 8;
/** Above this average round size the journal commit is a small part of a round: no window. */
export const MAX_ROUND_BYTES = 1 << 20;
/** Above this average time between rounds nobody is waiting on them closely: no window. */
export const MAX_ROUND_GAP_MS = 50;
/**
 * The window holds about this many rounds' bytes, to ride out a burst with no pause, and no more
 * than the segment's own size (see step).
 */
const ROUNDS_AHEAD = 256;
export const MIN_WINDOW = 1 << 20;
export const MAX_WINDOW = 32 << 20;
/** Zeros written per step (then synced): a round that arrives during a step waits for it. */
export const STEP = 4 << 20;
/**
 * Zeros this close to the end are written synchronously, and zeros are written in the
 * background only this far past the end (Segment.zeroAhead; the log also keeps it above two of
 * its largest batches).
 */
export const MIN_MARGIN = 1 << 20;
/** After a failed zero write (ENOSPC, EIO), wait this long before trying again. */
const PAUSE_AFTER_ERROR_MS = 60_000;

export interface ZeroStep {
  /** Zero the file up to this position. */
  to: number;
}

export class ZeroAheadPolicy {
  private rounds = 0;
  private lastAt = -1;
  private lastBase = -1;
  private lastSize = 0;
  private avgBytes = 0;
  private avgGapMs = 0;
  private pausedUntil = -1;

  /** A sync round starts; `base` and `size` are the active segment's. */
  noteRound(now: number, base: number, size: number): void {
    const first = this.lastAt < 0;
    const bytes = base === this.lastBase ? Math.max(0, size - this.lastSize) : size;
    const gap = now - this.lastAt;
    this.lastAt = now;
    this.lastBase = base;
    this.lastSize = size;
    this.rounds++;
    // The first round only sets the marks: what it carries is unknown (a log opened with data).
    if (first) return;
    if (this.rounds === 2) {
      this.avgBytes = bytes;
      this.avgGapMs = gap;
    } else {
      this.avgBytes += (bytes - this.avgBytes) * ALPHA;
      this.avgGapMs += (gap - this.avgGapMs) * ALPHA;
    }
  }

  /**
   * The next step of zeros to write, or null. A window below half its size starts a refill;
   * `refilling` continues one up to the full size. `prepared` is where the zeros end, `limit`
   * the segment's size limit (segment.bytes).
   */
  step(
    now: number,
    size: number,
    prepared: number,
    limit: number,
    refilling: boolean,
  ): ZeroStep | null {
    if (this.rounds < WARMUP_ROUNDS || now < this.pausedUntil || size === 0) return null;
    if (this.avgBytes > MAX_ROUND_BYTES || this.avgGapMs > MAX_ROUND_GAP_MS) return null;
    // Never more zeros than the segment holds records (beyond MIN_WINDOW): a partition that
    // took a few MiB and went quiet does not keep tens of MiB of zeros.
    const window = Math.min(windowFor(this.avgBytes), Math.max(MIN_WINDOW, size));
    const from = Math.max(prepared, size);
    if (from - size >= (refilling ? window : window / 2)) return null;
    const to = Math.min(from + STEP, size + window, limit);
    return to > from ? { to } : null;
  }

  /** A zero write failed: the data path does not need it, so stop for a while. */
  failed(now: number): void {
    this.pausedUntil = now + PAUSE_AFTER_ERROR_MS;
  }
}

/** About ROUNDS_AHEAD rounds' bytes, a power of two between MIN_WINDOW and MAX_WINDOW. */
export function windowFor(avgRoundBytes: number): number {
  let c = MIN_WINDOW;
  while (c < avgRoundBytes * ROUNDS_AHEAD && c < MAX_WINDOW) c *= 2;
  return c;
}
