// Progress of long operations on a terminal: one line on stderr, redrawn at most 5 times a
// second (records/s, bytes, and an ETA when the total is known), erased when done. Nothing is
// written when stderr is not a terminal, so pipes and logs stay clean.

export interface ProgressOptions {
  /** "produced", "consumed": the verb before the counts. */
  verb: string;
  /** Whether to draw (default: stderr is a terminal). */
  enabled?: boolean;
  /** Where lines go (default stderr). */
  write?: (s: string) => void;
  now?: () => number;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function formatBytes(n: number): string {
  let i = 0;
  while (n >= 1024 && i < UNITS.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${UNITS[i]}`;
}

export function formatDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return "?";
  s = Math.ceil(s);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
}

const count = (n: number) => n.toLocaleString("en-US");

export class Progress {
  readonly enabled: boolean;
  records = 0;
  bytes = 0;
  /** Known totals: records or bytes, whichever the operation can tell in advance. */
  totalRecords?: number;
  totalBytes?: number;
  readonly #write: (s: string) => void;
  readonly #now: () => number;
  readonly #t0: number;
  #last = -Infinity;
  #drawn = false;

  constructor(readonly o: ProgressOptions) {
    this.enabled = o.enabled ?? process.stderr.isTTY === true;
    this.#write = o.write ?? ((s) => process.stderr.write(s));
    this.#now = o.now ?? (() => performance.now());
    this.#t0 = this.#now();
  }

  /** Count more records and bytes; redraws when the last drawing is 200 ms old. */
  add(records: number, bytes: number): void {
    this.records += records;
    this.bytes += bytes;
    if (!this.enabled) return;
    const now = this.#now();
    if (now - this.#last < 200) return;
    this.#last = now;
    this.#write(`\r\x1b[K${this.line(now)}`);
    this.#drawn = true;
  }

  /** The progress line at time `now`. */
  line(now = this.#now()): string {
    const secs = Math.max((now - this.#t0) / 1000, 1e-3);
    const rate = this.records / secs;
    const parts = [
      `${this.o.verb} ${count(this.records)} records`,
      formatBytes(this.bytes),
      `${count(Math.round(rate))} rec/s`,
    ];
    let eta: number | undefined;
    if (this.totalBytes !== undefined && this.bytes > 0) {
      parts[0] += ` (${Math.min(100, Math.floor(this.bytes * 100 / this.totalBytes))}%)`;
      eta = (this.totalBytes - this.bytes) / (this.bytes / secs);
    } else if (this.totalRecords !== undefined && this.records > 0) {
      parts[0] += ` of ${count(this.totalRecords)}`;
      eta = (this.totalRecords - this.records) / rate;
    }
    if (eta !== undefined) parts.push(`ETA ${formatDuration(Math.max(0, eta))}`);
    return parts.join(", ");
  }

  /** Erase the line (the command prints its own summary, or nothing). */
  done(): void {
    if (this.#drawn) this.#write("\r\x1b[K");
    this.#drawn = false;
  }
}
