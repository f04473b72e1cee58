/**
 * Snappy, pure TS. Kafka carries two framings: a raw snappy block (librdkafka) and the xerial
 * stream (Java, kafka-python): magic 82 'SNAPPY' 00, i32 version, i32 compatible, then repeated
 * (i32 BE length, raw block). The decoder detects the magic; the encoder writes raw by default.
 */
import { CompressionError } from "./errors.ts";

const CODEC = "snappy";
const XERIAL_MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00];
const XERIAL_HEADER_LEN = 16;
/** Java's SnappyOutputStream and kafka-python both chunk at 32 KiB. */
const XERIAL_CHUNK = 32 * 1024;

function fail(code: "TRUNCATED" | "CORRUPT" | "OUTPUT_LIMIT", msg: string): never {
  throw new CompressionError(code, CODEC, msg);
}

export function isXerial(data: Uint8Array): boolean {
  if (data.length < XERIAL_MAGIC.length) return false;
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (data[i] !== XERIAL_MAGIC[i]) return false;
  return true;
}

/** Reads the block's leading varint (uncompressed length, at most 32 bits). */
function readLength(src: Uint8Array, start: number, end: number): [len: number, next: number] {
  let result = 0;
  let shift = 0;
  let p = start;
  for (;;) {
    if (p >= end) fail("TRUNCATED", "truncated length varint");
    const b = src[p++];
    if (shift === 28 && b > 0x0f) fail("CORRUPT", "length varint exceeds 32 bits");
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, p];
    shift += 7;
  }
}

/** Decodes the tag stream of one raw block in src[ip, end) into out[op, op + len). */
function decodeBody(
  src: Uint8Array,
  ip: number,
  end: number,
  out: Uint8Array,
  op: number,
  len: number,
) {
  const base = op;
  const opEnd = op + len;
  while (ip < end) {
    const tag = src[ip++];
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const nb = n - 59;
        if (ip + nb > end) fail("TRUNCATED", "truncated literal length");
        n = src[ip];
        if (nb > 1) n |= src[ip + 1] << 8;
        if (nb > 2) n |= src[ip + 2] << 16;
        if (nb > 3) n = (n | (src[ip + 3] << 24)) >>> 0;
        ip += nb;
      }
      n += 1;
      if (ip + n > end) fail("TRUNCATED", "literal runs past end of input");
      if (op + n > opEnd) fail("CORRUPT", "literal runs past declared length");
      if (n <= 32) {
        for (let i = 0; i < n; i++) out[op + i] = src[ip + i];
      } else {
        out.set(src.subarray(ip, ip + n), op);
      }
      ip += n;
      op += n;
      continue;
    }
    let n: number;
    let off: number;
    if (kind === 1) {
      if (ip >= end) fail("TRUNCATED", "truncated copy");
      n = ((tag >>> 2) & 7) + 4;
      off = ((tag >>> 5) << 8) | src[ip++];
    } else if (kind === 2) {
      if (ip + 2 > end) fail("TRUNCATED", "truncated copy");
      n = (tag >>> 2) + 1;
      off = src[ip] | (src[ip + 1] << 8);
      ip += 2;
    } else {
      if (ip + 4 > end) fail("TRUNCATED", "truncated copy");
      n = (tag >>> 2) + 1;
      off = (src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24)) >>> 0;
      ip += 4;
    }
    if (off === 0 || off > op - base) fail("CORRUPT", `copy offset ${off} out of range`);
    if (op + n > opEnd) fail("CORRUPT", "copy runs past declared length");
    // Overlapping copies (off < n) repeat a pattern, so copy forward byte by byte.
    let s = op - off;
    const stop = op + n;
    while (op < stop) out[op++] = out[s++];
  }
  if (op !== opEnd) fail("TRUNCATED", `block decoded to ${op - base} of ${len} declared bytes`);
}

/**
 * Decodes one block's tag stream into exactly `out`. Callers pass zero-based subarrays: JSC runs
 * the loop several times faster than with large start offsets into a shared buffer (measured).
 */
function decodeBlock(src: Uint8Array, out: Uint8Array): void {
  decodeBody(src, 0, src.length, out, 0, out.length);
}

function decompressRaw(data: Uint8Array, maxOutputBytes: number): Uint8Array {
  const [len, p] = readLength(data, 0, data.length);
  if (len > maxOutputBytes) {
    fail("OUTPUT_LIMIT", `declared length ${len} exceeds limit of ${maxOutputBytes} bytes`);
  }
  const out = new Uint8Array(len);
  decodeBlock(data.subarray(p), out);
  return out;
}

function decompressXerial(data: Uint8Array, maxOutputBytes: number): Uint8Array {
  if (data.length < XERIAL_HEADER_LEN) fail("TRUNCATED", "truncated xerial header");
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  // Pass 1: walk chunk headers and sum declared sizes, so the output is allocated once.
  let total = 0;
  let p = XERIAL_HEADER_LEN;
  while (p < data.length) {
    if (p + 4 > data.length) fail("TRUNCATED", "truncated xerial chunk length");
    const clen = view.getInt32(p);
    p += 4;
    if (clen < 0 || p + clen > data.length) fail("TRUNCATED", `xerial chunk of ${clen} bytes`);
    total += readLength(data, p, p + clen)[0];
    if (total > maxOutputBytes) {
      fail("OUTPUT_LIMIT", `declared length exceeds limit of ${maxOutputBytes} bytes`);
    }
    p += clen;
  }
  const out = new Uint8Array(total);
  let op = 0;
  p = XERIAL_HEADER_LEN;
  while (p < data.length) {
    const clen = view.getInt32(p);
    p += 4;
    const [len, body] = readLength(data, p, p + clen);
    decodeBlock(data.subarray(body, p + clen), out.subarray(op, op + len));
    op += len;
    p += clen;
  }
  return out;
}

export function snappyDecompress(data: Uint8Array, maxOutputBytes: number): Uint8Array {
  return isXerial(data)
    ? decompressXerial(data, maxOutputBytes)
    : decompressRaw(data, maxOutputBytes);
}

// ---- encoder ----------------------------------------------------------------------------

const MAX_TABLE = 1 << 14;
/** Reused across calls: compress() is synchronous, so one table suffices. */
const table = new Uint16Array(MAX_TABLE);
const FRAGMENT = 1 << 16;
/** Bytes at the end of a fragment never searched for matches (4-byte loads stay in range). */
const INPUT_MARGIN = 15;

function load32(a: Uint8Array, i: number): number {
  return a[i] | (a[i + 1] << 8) | (a[i + 2] << 16) | (a[i + 3] << 24);
}

export function maxCompressedLength(n: number): number {
  return 32 + n + Math.floor(n / 6);
}

function writeVarint(out: Uint8Array, op: number, v: number): number {
  while (v >= 0x80) {
    out[op++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[op++] = v;
  return op;
}

function emitLiteral(src: Uint8Array, from: number, to: number, out: Uint8Array, op: number) {
  const n = to - from - 1;
  if (n < 60) {
    out[op++] = n << 2;
  } else if (n < 0x100) {
    out[op++] = 60 << 2;
    out[op++] = n;
  } else if (n < 0x10000) {
    out[op++] = 61 << 2;
    out[op++] = n & 0xff;
    out[op++] = n >>> 8;
  } else if (n < 0x1000000) {
    out[op++] = 62 << 2;
    out[op++] = n & 0xff;
    out[op++] = (n >>> 8) & 0xff;
    out[op++] = n >>> 16;
  } else {
    out[op++] = 63 << 2;
    out[op++] = n & 0xff;
    out[op++] = (n >>> 8) & 0xff;
    out[op++] = (n >>> 16) & 0xff;
    out[op++] = n >>> 24;
  }
  if (to - from <= 32) {
    for (let i = from; i < to; i++) out[op++] = src[i];
    return op;
  }
  out.set(src.subarray(from, to), op);
  return op + (to - from);
}

function emitCopy2(out: Uint8Array, op: number, off: number, n: number): number {
  out[op++] = 2 | ((n - 1) << 2);
  out[op++] = off & 0xff;
  out[op++] = off >>> 8;
  return op;
}

function emitCopy(out: Uint8Array, op: number, off: number, n: number): number {
  while (n >= 68) {
    op = emitCopy2(out, op, off, 64);
    n -= 64;
  }
  if (n > 64) {
    op = emitCopy2(out, op, off, 60);
    n -= 60;
  }
  if (n < 12 && off < 2048) {
    out[op++] = 1 | ((n - 4) << 2) | ((off >>> 8) << 5);
    out[op++] = off & 0xff;
    return op;
  }
  return emitCopy2(out, op, off, n);
}

/** Greedy hash-table matcher over one fragment (< 64 KiB, so offsets fit in 16 bits). */
function compressFragment(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  op: number,
) {
  const len = end - start;
  let nextEmit = start;
  if (len >= INPUT_MARGIN) {
    let size = 256;
    while (size < MAX_TABLE && size < len) size <<= 1;
    const shift = 32 - Math.log2(size);
    table.fill(0, 0, size);
    const ipLimit = end - INPUT_MARGIN;
    let ip = start + 1;
    outer: for (;;) {
      // Probe with a step that grows as matches fail, so incompressible data is skipped fast.
      let skip = 32;
      let cand: number;
      let cur = load32(src, ip);
      for (;;) {
        const h = Math.imul(cur, 0x1e35a7bd) >>> shift;
        cand = start + table[h];
        table[h] = ip - start;
        if (cand < ip && load32(src, cand) === cur) break;
        ip += skip++ >> 5;
        if (ip > ipLimit) break outer;
        cur = load32(src, ip);
      }
      op = emitLiteral(src, nextEmit, ip, out, op);
      // Emit copies for as long as the byte right after a copy starts another match.
      do {
        let a = cand + 4;
        let b = ip + 4;
        while (b < end && src[a] === src[b]) {
          a++;
          b++;
        }
        op = emitCopy(out, op, ip - cand, b - ip);
        ip = b;
        nextEmit = ip;
        if (ip >= ipLimit) break outer;
        table[Math.imul(load32(src, ip - 1), 0x1e35a7bd) >>> shift] = ip - 1 - start;
        cur = load32(src, ip);
        const h = Math.imul(cur, 0x1e35a7bd) >>> shift;
        cand = start + table[h];
        table[h] = ip - start;
      } while (load32(src, cand) === cur);
      ip++;
      if (ip > ipLimit) break;
    }
  }
  if (nextEmit < end) op = emitLiteral(src, nextEmit, end, out, op);
  return op;
}

function compressRawInto(src: Uint8Array, from: number, to: number, out: Uint8Array, op: number) {
  op = writeVarint(out, op, to - from);
  for (let s = from; s < to; s += FRAGMENT) {
    op = compressFragment(src, s, Math.min(to, s + FRAGMENT), out, op);
  }
  return op;
}

export interface SnappyCompressOptions {
  /** Write the xerial stream (Java / kafka-python style) instead of one raw block. */
  xerial?: boolean;
}

export function snappyCompress(data: Uint8Array, opts: SnappyCompressOptions = {}): Uint8Array {
  if (!opts.xerial) {
    const out = new Uint8Array(maxCompressedLength(data.length));
    return out.slice(0, compressRawInto(data, 0, data.length, out, 0));
  }
  // At least one chunk: kafka-python only recognises a stream longer than the 16-byte header.
  const chunks = Math.max(1, Math.ceil(data.length / XERIAL_CHUNK));
  const out = new Uint8Array(
    XERIAL_HEADER_LEN + chunks * 4 + chunks * maxCompressedLength(XERIAL_CHUNK),
  );
  out.set(XERIAL_MAGIC, 0);
  const view = new DataView(out.buffer);
  view.setInt32(8, 1); // version
  view.setInt32(12, 1); // minimum compatible version
  let op = XERIAL_HEADER_LEN;
  for (let s = 0; s === 0 || s < data.length; s += XERIAL_CHUNK) {
    const lenAt = op;
    op = compressRawInto(data, s, Math.min(data.length, s + XERIAL_CHUNK), out, op + 4);
    view.setInt32(lenAt, op - lenAt - 4);
  }
  return out.slice(0, op);
}
