// Buffered stdout for commands that print many lines: text and bytes gather in one buffer that is
// written once it holds 1 MiB (not once per record), and a closed pipe (`| head`) ends the
// command quietly. Each write is awaited to the end (Bun.write waits out a full pipe itself), so
// the buffer is reused: a fresh megabyte per write, or the stream's copy of it, cost a page fault
// per 4 KiB, a third of `broker consume`'s time.
const FLUSH_AT = 1 << 20;

let pipeClosed = false;
process.stdout.on?.("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") {
    pipeClosed = true;
    process.exit(0);
  }
});

async function writeAll(b: Uint8Array): Promise<void> {
  try {
    await Bun.write(Bun.stdout, b);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPIPE") throw e;
    pipeClosed = true;
    process.exit(0);
  }
}

const utf8 = new TextEncoder();

const CHUNK = 2 * FLUSH_AT;

export class Output {
  #buf = new Uint8Array(CHUNK);
  #pos = 0;
  /** Full chunks waiting for the next flush (a caller may push a page of records at once). */
  #full: Uint8Array[] = [];
  #fullBytes = 0;

  /** Bytes gathered so far and not written yet. */
  get size(): number {
    return this.#fullBytes + this.#pos;
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    // The chunk is set aside, never copied; a record larger than a chunk gets one of its own.
    if (this.#pos > 0) {
      this.#full.push(this.#buf.subarray(0, this.#pos));
      this.#fullBytes += this.#pos;
    }
    this.#buf = new Uint8Array(Math.max(CHUNK, n));
    this.#pos = 0;
  }

  push(s: string): void {
    // At most 3 bytes per UTF-16 unit.
    this.#ensure(s.length * 3);
    this.#pos += utf8.encodeInto(s, this.#buf.subarray(this.#pos)).written;
  }

  /** src[start, end), without making a view of it. */
  pushRange(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.#ensure(n);
    const buf = this.#buf;
    let pos = this.#pos;
    if (n < 256) { for (let i = start; i < end; i++) buf[pos++] = src[i]; }
    else {
      buf.set(src.subarray(start, end), pos);
      pos += n;
    }
    this.#pos = pos;
  }

  pushBytes(b: Uint8Array): void {
    this.#ensure(b.length);
    const buf = this.#buf;
    let pos = this.#pos;
    // Short copies byte by byte: cheaper than set() for the typical record value.
    if (b.length < 64) { for (let i = 0; i < b.length; i++) buf[pos++] = b[i]; }
    else {
      buf.set(b, pos);
      pos += b.length;
    }
    this.#pos = pos;
  }

  /** The bytes gathered, taken out instead of written (tests, other sinks). */
  take(): Uint8Array {
    const all = Buffer.concat([...this.#full, this.#buf.subarray(0, this.#pos)]);
    this.#full = [];
    this.#fullBytes = 0;
    this.#pos = 0;
    return all;
  }

  /** Write when a buffer's worth has gathered. */
  async maybeFlush(): Promise<void> {
    if (this.size >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.size === 0 || pipeClosed) return;
    for (const c of this.#full) await writeAll(c);
    if (this.#pos > 0) await writeAll(this.#buf.subarray(0, this.#pos));
    this.#full = [];
    this.#fullBytes = 0;
    this.#pos = 0;
  }
}
