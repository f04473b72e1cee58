// Buffered stdout for commands that print many lines: text and bytes gather in one buffer that is
// written once it holds 1 MiB (not once per record), and a closed pipe (`| head`) ends the
// command quietly. The buffer is written with write(2) on fd 1 until all of it is out, then
// reused (a fresh megabyte per write cost a page fault per 4 KiB, a third of `broker consume`'s
// time). Not through process.stdout or Bun.write: touching process.stdout makes a piped stdout
// non-blocking, and Bun.write then sometimes wrote a 64 KiB piece of a pipe write twice (500,809
// lines out of 500,000 records, about one run in three under load).
import { writeSync } from "node:fs";

const FLUSH_AT = 1 << 20;
/** Pause when a non-blocking stdout (set so by another process sharing it) is full. */
const FULL_PIPE_MS = 1;

/** The file descriptor written (tests point it elsewhere). */
let fd = 1;
export function setOutputFd(n: number): void {
  fd = n;
}

/** Writes all of `b`, waiting out a full non-blocking pipe; a closed pipe ends the process. */
async function writeAll(b: Uint8Array): Promise<void> {
  let at = 0;
  // Bounded: each round writes something or waits for the reader.
  for (let round = 0; at < b.length && round < 100_000_000; round++) {
    try {
      at += writeSync(fd, b, at, b.length - at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") await Bun.sleep(FULL_PIPE_MS);
      else if (code === "EPIPE") process.exit(0);
      else if (code !== "EINTR") throw e;
    }
  }
}

const utf8 = new TextEncoder();

const CHUNK = 2 * FLUSH_AT;

export class Output {
  #buf = new Uint8Array(CHUNK);
  #pos = 0;
  /** Full chunks waiting for the next flush (a caller may push a page of records at once). */
  #full: Uint8Array<ArrayBuffer>[] = [];
  #fullBytes = 0;

  /** Bytes gathered so far and not written yet. */
  get size(): number {
    return this.#fullBytes + this.#pos;
  }

  /** Chunks written out, kept for reuse: a fresh chunk costs a page fault per 4 KiB. */
  #spare: Uint8Array<ArrayBuffer>[] = [];
  #allocated = 0;

  /** Bytes of chunks allocated so far (tests: steady output reuses them). */
  get allocated(): number {
    return this.#allocated;
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    // The chunk is set aside, never copied; a record larger than a chunk gets one of its own.
    if (this.#pos > 0) {
      this.#full.push(this.#buf.subarray(0, this.#pos));
      this.#fullBytes += this.#pos;
    } else this.#keep(this.#buf);
    const want = Math.max(CHUNK, n);
    const i = this.#spare.findIndex((c) => c.length >= want);
    if (i >= 0) this.#buf = this.#spare.splice(i, 1)[0];
    else {
      this.#buf = new Uint8Array(want);
      this.#allocated += want;
    }
    this.#pos = 0;
  }

  /** Keeps a written chunk for reuse (two at most: a page needs no more). */
  #keep(c: Uint8Array<ArrayBuffer>): void {
    if (c.length === CHUNK && this.#spare.length < 2) this.#spare.push(c);
  }

  /**
   * Room for `n` more bytes, for a caller that writes many small pieces itself: the buffer to
   * write into from `at`; `commit` says how far it wrote.
   */
  reserve(n: number): Uint8Array {
    this.#ensure(n);
    return this.#buf;
  }

  /** Where the next byte goes in the buffer `reserve` returned. */
  get at(): number {
    return this.#pos;
  }

  /** The bytes up to `end` of the reserved buffer are written. */
  commit(end: number): void {
    this.#pos = end;
  }

  push(s: string): void {
    // At most 3 bytes per UTF-16 unit.
    this.#ensure(s.length * 3);
    this.#pos += utf8.encodeInto(s, this.#buf.subarray(this.#pos)).written;
  }

  /**
   * src[start, end) when it is all ASCII (copied and checked in one pass, without a view of it);
   * false, with nothing written, when it is not.
   */
  pushAscii(src: Uint8Array, start: number, end: number): boolean {
    const n = end - start;
    this.#ensure(n);
    const buf = this.#buf;
    let pos = this.#pos;
    let any = 0;
    if (n < 256) {
      for (let i = start; i < end; i++) {
        const c = src[i];
        any |= c;
        buf[pos++] = c;
      }
    } else {
      for (let i = start; i < end; i++) any |= src[i];
      if (any < 0x80) buf.set(src.subarray(start, end), pos);
      pos += n;
    }
    if (any >= 0x80) return false;
    this.#pos = pos;
    return true;
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
    for (const c of this.#full) this.#keep(new Uint8Array(c.buffer));
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
    if (this.size === 0) return;
    for (const c of this.#full) await writeAll(c);
    if (this.#pos > 0) await writeAll(this.#buf.subarray(0, this.#pos));
    for (const c of this.#full) this.#keep(new Uint8Array(c.buffer));
    this.#full = [];
    this.#fullBytes = 0;
    this.#pos = 0;
  }
}
