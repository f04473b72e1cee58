// Buffered stdout for commands that print many lines: text and bytes gather in one buffer that is
// written once it holds 1 MiB (not once per record), and a closed pipe (`| head`) ends the
// command quietly. Writes are synchronous, so the buffer is reused: a fresh megabyte per write
// cost a page fault per 4 KiB, a third of `broker consume`'s time. Should stdout refuse to block
// (EAGAIN: a non-blocking descriptor), writing goes through the stream from then on.
import { writeSync } from "node:fs";

const FLUSH_AT = 1 << 20;

let pipeClosed = false;
process.stdout.on?.("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") {
    pipeClosed = true;
    process.exit(0);
  }
});

const utf8 = new TextEncoder();

const CHUNK = 2 * FLUSH_AT;
/** Set once a synchronous write met EAGAIN: later writes must queue behind the stream's. */
let viaStream = false;

/** Writes all of `b` to stdout; false when the rest went to the stream (await drain then). */
function writeAll(b: Uint8Array): boolean {
  let at = 0;
  while (!viaStream && at < b.length) {
    try {
      at += writeSync(1, b, at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EPIPE") {
        pipeClosed = true;
        process.exit(0);
      }
      if (code !== "EAGAIN") throw e;
      viaStream = true;
    }
  }
  // The stream may hold the bytes until the pipe takes them: give it a copy.
  return at >= b.length || process.stdout.write(b.slice(at));
}

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
    let drained = true;
    for (const c of this.#full) drained = writeAll(c) && drained;
    if (this.#pos > 0) drained = writeAll(this.#buf.subarray(0, this.#pos)) && drained;
    this.#full = [];
    this.#fullBytes = 0;
    this.#pos = 0;
    if (!drained) {
      await new Promise<void>((resolve) => {
        const done = () => {
          process.stdout.off("drain", done);
          process.stdout.off("close", done);
          resolve();
        };
        process.stdout.on("drain", done);
        process.stdout.on("close", done);
      });
    }
  }
}
