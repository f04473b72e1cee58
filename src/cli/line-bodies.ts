// `broker produce`'s input: stdin cut into request bodies of whole lines, read with read(2) into
// two buffers used in turn. Reading through Bun.stdin.stream() handed out small fresh chunks that
// were then concatenated into each body (a fresh megabyte, a page fault per 4 KiB) and scanned
// for newlines three times; here each byte is read once into memory that is reused, and each
// line is found once.
import { readSync } from "node:fs";

const NL = 10;
/** Pause when a non-blocking stdin (set so by another process sharing it) has nothing yet. */
const EMPTY_PIPE_MS = 1;
/** Bytes read past a body's size at most, and at least per read. */
const READ_BYTES = 64 * 1024;

export interface LineBody {
  /** Whole lines (the last line of the input needs no newline). */
  bytes: Uint8Array;
  /** Records: the lines in `bytes`. */
  lines: number;
}

/**
 * Bodies of about `bodyBytes` and at most `maxLines` lines; a line longer than `bodyBytes` makes a
 * body of its own. A body's bytes stay as they are until `next` has been called twice more (the
 * caller sends one body while the next is read).
 */
export class LineBodies {
  #bufs: Uint8Array[];
  /** The buffer the last body is in; the next is read into the other. */
  #cur = 1;
  /** Bytes read past the last body, at [#restAt, #restEnd) of the current buffer. */
  #restAt = 0;
  #restEnd = 0;
  #eof = false;

  constructor(
    readonly fd: number,
    readonly bodyBytes: number,
    readonly maxLines: number,
  ) {
    this.#bufs = [new Uint8Array(2 * bodyBytes), new Uint8Array(2 * bodyBytes)];
  }

  async next(): Promise<LineBody | undefined> {
    const from = this.#bufs[this.#cur];
    this.#cur ^= 1;
    let buf = this.#bufs[this.#cur];
    let filled = this.#restEnd - this.#restAt;
    if (filled > buf.length) buf = this.#bufs[this.#cur] = new Uint8Array(2 * filled);
    buf.set(from.subarray(this.#restAt, this.#restEnd));
    let lines = 0;
    let end = 0; // past the last newline that fits the body
    let scanned = 0;
    // Bounded: each round reads more input, grows the buffer or returns.
    for (let round = 0; round < 100_000_000; round++) {
      // Lines in what is read so far, until the body is full.
      const read = buf.subarray(0, filled);
      for (let p = read.indexOf(NL, scanned); p >= 0; p = read.indexOf(NL, p + 1)) {
        if (p + 1 > this.bodyBytes && end > 0) return this.#cut(buf, end, filled, lines);
        end = p + 1;
        if (++lines >= this.maxLines || end >= this.bodyBytes) {
          return this.#cut(buf, end, filled, lines);
        }
      }
      scanned = filled;
      if (this.#eof) {
        if (filled > end) return this.#cut(buf, filled, filled, lines + 1);
        return end > 0 ? this.#cut(buf, end, filled, lines) : undefined;
      }
      if (filled === buf.length) {
        // One line longer than the buffer: a larger one (the line becomes a body of its own).
        const bigger = new Uint8Array(2 * buf.length);
        bigger.set(buf);
        buf = this.#bufs[this.#cur] = bigger;
      }
      // About a body's worth: what is read past the cut is copied to the other buffer.
      const want = Math.max(READ_BYTES, this.bodyBytes + READ_BYTES - filled);
      const n = await readSome(
        this.fd,
        buf.subarray(0, Math.min(buf.length, filled + want)),
        filled,
      );
      if (n === 0) this.#eof = true;
      filled += n;
    }
    throw new Error("stdin: no progress");
  }

  #cut(buf: Uint8Array, end: number, filled: number, lines: number): LineBody {
    this.#restAt = end;
    this.#restEnd = filled;
    return { bytes: buf.subarray(0, end), lines };
  }
}

/** Reads what `fd` has into buf[at…]: at least one byte, or 0 at the end of the input. */
async function readSome(fd: number, buf: Uint8Array, at: number): Promise<number> {
  // Bounded: each round reads, ends or waits for the writer.
  for (let round = 0; round < 100_000_000; round++) {
    try {
      return readSync(fd, buf, at, buf.length - at, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") await Bun.sleep(EMPTY_PIPE_MS);
      else if (code === "EBADF") return 0; // no stdin at all (`<&-`): nothing to send
      else if (code !== "EINTR") throw e;
    }
  }
  throw new Error("stdin: no progress");
}
