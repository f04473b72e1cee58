import { CompressionError } from "./errors.ts";

/**
 * Growable output for decoders whose final size is not declared up front. Growth doubles and
 * is capped by the caller's limit, so a bomb fails with OUTPUT_LIMIT instead of allocating.
 */
export class OutputBuffer {
  buf: Uint8Array;
  pos = 0;
  constructor(
    initial: number,
    readonly limit: number,
    readonly codec: string,
  ) {
    this.buf = new Uint8Array(Math.max(0, Math.min(initial, limit)));
  }

  /** Make room for `n` more bytes, or fail if that would pass the limit. */
  reserve(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    if (need > this.limit) {
      throw new CompressionError(
        "OUTPUT_LIMIT",
        this.codec,
        `decoded size exceeds limit of ${this.limit} bytes`,
      );
    }
    const cap = Math.min(this.limit, Math.max(need, this.buf.length * 2, 1024));
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Room up to `n` more bytes, capped at the limit (the decoder then bounds-checks). */
  reserveUpTo(n: number): void {
    const need = Math.min(this.pos + n, this.limit);
    if (need > this.buf.length) this.reserve(need - this.pos);
  }

  /** The decoded bytes; copies only when the buffer is notably oversized. */
  result(): Uint8Array {
    if (this.pos === this.buf.length) return this.buf;
    if (this.pos >= this.buf.length - (this.buf.length >>> 3)) {
      return this.buf.subarray(0, this.pos);
    }
    return this.buf.slice(0, this.pos);
  }
}
