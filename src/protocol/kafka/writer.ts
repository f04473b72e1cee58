/**
 * Growable big-endian writer that emits a list of chunks. Large raw slices (record data) are
 * appended by reference, never copied, so a Fetch response can carry log segment slices as-is.
 */
import { ProtocolEncodeError } from "./errors.ts";

const utf8 = new TextEncoder();
const TWO_32 = 4294967296;
/** Raw slices at least this long are referenced instead of copied. */
const REFERENCE_THRESHOLD = 512;
const MIN_BLOCK = 1024;
const MAX_BLOCK = 1 << 20;

export class Writer {
  private readonly chunks: Uint8Array[] = [];
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  /** Start of the part of `buf` not yet moved to `chunks`. */
  private start = 0;
  private blockSize: number;
  private total = 0;

  constructor(initial = MIN_BLOCK) {
    this.blockSize = Math.max(64, initial);
    this.buf = new Uint8Array(this.blockSize);
    this.view = new DataView(this.buf.buffer);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.total;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    this.blockSize = Math.min(MAX_BLOCK, this.blockSize * 2);
    this.buf = new Uint8Array(Math.max(this.blockSize, n));
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    this.start = 0;
  }

  private flush(): void {
    if (this.pos > this.start) this.chunks.push(this.buf.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  int8(v: number): void {
    this.ensure(1);
    this.view.setInt8(this.pos, v);
    this.pos += 1;
    this.total += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.view.setInt16(this.pos, v);
    this.pos += 2;
    this.total += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v);
    this.pos += 2;
    this.total += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v);
    this.pos += 4;
    this.total += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v);
    this.pos += 4;
    this.total += 4;
  }

  int64(v: number): void {
    if (!Number.isSafeInteger(v)) {
      throw new ProtocolEncodeError(`int64 value ${v} is not a safe integer`);
    }
    this.ensure(8);
    const hi = Math.floor(v / TWO_32);
    this.view.setInt32(this.pos, hi);
    this.view.setUint32(this.pos + 4, v - hi * TWO_32);
    this.pos += 8;
    this.total += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
    this.total += 8;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    this.total += 1;
  }

  uvarint(v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new ProtocolEncodeError(`unsigned varint out of range: ${v}`);
    }
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      this.total += 1;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
    this.total += 1;
  }

  /** Appends bytes; large slices are kept by reference (the caller must not mutate them). */
  raw(bytes: Uint8Array): void {
    if (bytes.length >= REFERENCE_THRESHOLD) {
      this.flush();
      this.chunks.push(bytes);
    } else {
      this.ensure(bytes.length);
      this.buf.set(bytes, this.pos);
      this.pos += bytes.length;
    }
    this.total += bytes.length;
  }

  uuid(hex: string): void {
    if (typeof hex !== "string" || !/^[0-9a-fA-F]{32}$/.test(hex)) {
      throw new ProtocolEncodeError(`uuid must be 32 hex digits, got ${String(hex)}`);
    }
    this.ensure(16);
    for (let i = 0; i < 16; i++) this.buf[this.pos++] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    this.total += 16;
  }

  /** Reserves `n` bytes to be patched later (e.g. a frame size); returns a handle. */
  reserve(n: number): { buf: Uint8Array; at: number } {
    this.ensure(n);
    const handle = { buf: this.buf, at: this.pos };
    this.pos += n;
    this.total += n;
    return handle;
  }

  /** The written bytes as a list of chunks (no concatenation). */
  chunksOut(): Uint8Array[] {
    this.flush();
    return this.chunks;
  }

  /** The written bytes as one contiguous array. */
  bytes(): Uint8Array {
    return concatChunks(this.chunksOut());
  }
}

export function utf8Bytes(s: string): Uint8Array {
  return utf8.encode(s);
}

export function concatChunks(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  let n = 0;
  for (const c of chunks) n += c.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
