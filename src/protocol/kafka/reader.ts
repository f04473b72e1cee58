/** Bounds-checked big-endian reader over one byte slice. Every failure is a ProtocolDecodeError. */
import { ProtocolDecodeError } from "./errors.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const TWO_32 = 4294967296;

export class Reader {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  pos: number;
  readonly end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  fail(message: string): never {
    throw new ProtocolDecodeError(message, this.pos);
  }

  need(n: number, what: string): void {
    if (n > this.end - this.pos) {
      this.fail(`truncated ${what}: need ${n} bytes, have ${this.remaining}`);
    }
  }

  int8(): number {
    this.need(1, "int8");
    return this.view.getInt8(this.pos++);
  }

  uint8(): number {
    this.need(1, "uint8");
    return this.bytes[this.pos++];
  }

  int16(): number {
    this.need(2, "int16");
    const v = this.view.getInt16(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    this.need(2, "uint16");
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4, "int32");
    const v = this.view.getInt32(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4, "uint32");
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  /** int64 as a JS number; values outside the safe-integer range are rejected, not rounded. */
  int64(): number {
    this.need(8, "int64");
    const hi = this.view.getInt32(this.pos);
    const lo = this.view.getUint32(this.pos + 4);
    if (hi > 0x1fffff || hi < -0x200000) this.fail("int64 outside the safe integer range");
    this.pos += 8;
    return hi * TWO_32 + lo;
  }

  float64(): number {
    this.need(8, "float64");
    const v = this.view.getFloat64(this.pos);
    this.pos += 8;
    return v;
  }

  bool(): boolean {
    const b = this.uint8();
    if (b > 1) this.fail(`invalid boolean ${b}`);
    return b === 1;
  }

  /** Unsigned base-128 varint, at most 32 bits (5 bytes). */
  uvarint(): number {
    let result = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.uint8();
      if (i === 4 && b > 0x0f) this.fail("unsigned varint exceeds 32 bits");
      result += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) return result;
    }
    return this.fail("unsigned varint too long");
  }

  /** A raw slice (no copy) of n bytes, n already validated non-negative. */
  slice(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  utf8(n: number): string {
    const raw = this.slice(n, "string");
    try {
      return utf8.decode(raw);
    } catch {
      return this.fail("string is not valid UTF-8");
    }
  }

  uuid(): string {
    const raw = this.slice(16, "uuid");
    let s = "";
    for (let i = 0; i < 16; i++) s += raw[i].toString(16).padStart(2, "0");
    return s;
  }
}
