/**
 * LZ4 frame format (magic 04 22 4D 18), pure TS. Kafka magic-2 batches carry standard frames:
 * librdkafka writes FLG 0x60, kafka-python 0x68 (content size). The decoder handles linked and
 * independent blocks, uncompressed blocks, block/content checksums and concatenated frames.
 */
import { CompressionError, type CompressionErrorCode } from "./errors.ts";
import { OutputBuffer } from "./output-buffer.ts";
import { le32, skippableFrameEnd } from "./skippable-frame.ts";
import { xxh32 } from "./xxhash32.ts";

const CODEC = "lz4";
const FRAME_MAGIC = 0x184d2204;
const MIN_MATCH = 4;
const BLOCK_SIZES = [0, 0, 0, 0, 1 << 16, 1 << 18, 1 << 20, 1 << 22];

function fail(code: CompressionErrorCode, msg: string): never {
  throw new CompressionError(code, CODEC, msg);
}

/**
 * Decodes one LZ4 block src[ip, end) into out at op (bounded by opLimit). Matches may reach back
 * to `dictStart` (the frame start for linked blocks, the block start for independent ones).
 * Returns the new output position.
 */
function decodeBlock(
  src: Uint8Array,
  ip: number,
  end: number,
  out: Uint8Array,
  op: number,
  opLimit: number,
  dictStart: number,
): number {
  if (ip === end) fail("CORRUPT", "empty compressed block");
  for (;;) {
    if (ip >= end) fail("TRUNCATED", "block ends inside a sequence");
    const token = src[ip++];
    let lit = token >>> 4;
    if (lit === 15) {
      let b: number;
      do {
        if (ip >= end) fail("TRUNCATED", "truncated literal length");
        b = src[ip++];
        lit += b;
      } while (b === 255);
    }
    if (lit > 0) {
      if (ip + lit > end) fail("TRUNCATED", "literals run past end of block");
      if (op + lit > opLimit) fail("OUTPUT_LIMIT", "block decodes past its size limit");
      if (lit <= 32) {
        for (let i = 0; i < lit; i++) out[op + i] = src[ip + i];
      } else {
        out.set(src.subarray(ip, ip + lit), op);
      }
      ip += lit;
      op += lit;
    }
    // The last sequence is literals only and ends exactly at the block end.
    if (ip === end) return op;
    if (ip + 2 > end) fail("TRUNCATED", "truncated match offset");
    const off = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    if (off === 0 || off > op - dictStart) fail("CORRUPT", `match offset ${off} out of range`);
    let len = token & 15;
    if (len === 15) {
      let b: number;
      do {
        if (ip >= end) fail("TRUNCATED", "truncated match length");
        b = src[ip++];
        len += b;
      } while (b === 255);
    }
    len += MIN_MATCH;
    if (op + len > opLimit) fail("OUTPUT_LIMIT", "block decodes past its size limit");
    let s = op - off;
    if (off >= len && len > 32) {
      out.copyWithin(op, s, s + len);
      op += len;
    } else {
      // Overlapping (off < len) copies repeat a pattern: copy forward byte by byte.
      const stop = op + len;
      while (op < stop) out[op++] = out[s++];
    }
  }
}

export interface Lz4DecompressOptions {
  /**
   * Also accept the header checksum pre-0.10 Kafka wrote for magic 0/1 (KAFKA-3160: xxh32 taken
   * over the magic bytes too). Off by default; magic-2 batches always use the correct one.
   */
  legacyHeaderChecksum?: boolean;
}

export function lz4Decompress(
  data: Uint8Array,
  maxOutputBytes: number,
  opts: Lz4DecompressOptions = {},
): Uint8Array {
  if (data.length === 0) fail("TRUNCATED", "empty input");
  const out = new OutputBuffer(Math.min(data.length * 4, 1 << 20), maxOutputBytes, CODEC);
  let p = 0;
  let frames = 0;
  while (p < data.length) {
    if (p + 4 > data.length) fail("TRUNCATED", "truncated frame magic");
    const skipped = skippableFrameEnd(data, p, CODEC);
    if (skipped >= 0) {
      p = skipped;
      continue;
    }
    const magic = le32(data, p);
    if (magic !== FRAME_MAGIC) {
      fail("BAD_MAGIC", `bad frame magic 0x${magic.toString(16)} at byte ${p}`);
    }
    p = decodeFrame(data, p, out, opts);
    frames++;
  }
  if (frames === 0) fail("TRUNCATED", "no lz4 frame in input");
  return out.result();
}

function decodeFrame(
  data: Uint8Array,
  frameStart: number,
  out: OutputBuffer,
  opts: Lz4DecompressOptions,
): number {
  let p = frameStart + 4;
  if (p + 3 > data.length) fail("TRUNCATED", "truncated frame descriptor");
  const flg = data[p];
  const bd = data[p + 1];
  if (flg >>> 6 !== 1) fail("CORRUPT", `unsupported frame version ${flg >>> 6}`);
  if (flg & 0x02) fail("CORRUPT", "reserved FLG bit set");
  if (bd & 0x8f) fail("CORRUPT", "reserved BD bits set");
  const blockMax = BLOCK_SIZES[(bd >>> 4) & 7];
  if (blockMax === 0) fail("CORRUPT", `invalid block max size id ${(bd >>> 4) & 7}`);
  const independent = (flg & 0x20) !== 0;
  const blockChecksum = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const hasDict = (flg & 0x01) !== 0;
  const descEnd = p + 2 + (hasContentSize ? 8 : 0) + (hasDict ? 4 : 0);
  if (descEnd + 1 > data.length) fail("TRUNCATED", "truncated frame descriptor");
  const hc = data[descEnd];
  if (((xxh32(data, p, descEnd) >>> 8) & 0xff) !== hc) {
    const legacy = opts.legacyHeaderChecksum &&
      ((xxh32(data, frameStart, descEnd) >>> 8) & 0xff) === hc;
    if (!legacy) fail("BAD_CHECKSUM", "frame header checksum mismatch");
  }
  let contentSize = -1;
  if (hasContentSize) {
    const lo = le32(data, p + 2);
    const hi = le32(data, p + 6);
    contentSize = hi * 2 ** 32 + lo;
    if (contentSize > out.limit - out.pos) {
      fail("OUTPUT_LIMIT", `declared content size ${contentSize} exceeds limit`);
    }
    out.reserve(contentSize);
  }
  if (hasDict) fail("UNSUPPORTED_FEATURE", "frames needing a dictionary are not supported");
  p = descEnd + 1;

  const frameOut = out.pos;
  for (;;) {
    if (p + 4 > data.length) fail("TRUNCATED", "truncated block size");
    const word = le32(data, p);
    p += 4;
    if (word === 0) break; // EndMark
    const raw = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > blockMax) fail("CORRUPT", `block of ${size} bytes exceeds max ${blockMax}`);
    if (p + size + (blockChecksum ? 4 : 0) > data.length) fail("TRUNCATED", "truncated block");
    if (blockChecksum && xxh32(data, p, p + size) !== le32(data, p + size)) {
      fail("BAD_CHECKSUM", "block checksum mismatch");
    }
    if (raw) {
      out.reserve(size);
      out.buf.set(data.subarray(p, p + size), out.pos);
      out.pos += size;
    } else {
      out.reserveUpTo(blockMax);
      const limit = Math.min(out.buf.length, out.pos + blockMax);
      if (independent) {
        // Zero-based views: JSC runs the loop much faster than with large offsets (measured).
        const dst = out.buf.subarray(out.pos, limit);
        out.pos += decodeBlock(data.subarray(p, p + size), 0, size, dst, 0, dst.length, 0);
      } else {
        out.pos = decodeBlock(data, p, p + size, out.buf, out.pos, limit, frameOut);
      }
    }
    p += size + (blockChecksum ? 4 : 0);
  }
  if (contentSize >= 0 && out.pos - frameOut !== contentSize) {
    fail("CORRUPT", `frame decoded to ${out.pos - frameOut} bytes, header says ${contentSize}`);
  }
  if (contentChecksum) {
    if (p + 4 > data.length) fail("TRUNCATED", "truncated content checksum");
    if (xxh32(out.buf, frameOut, out.pos) !== le32(data, p)) {
      fail("BAD_CHECKSUM", "content checksum mismatch");
    }
    p += 4;
  }
  return p;
}

// ---- encoder ----------------------------------------------------------------------------

const HASH_LOG = 16;
/** Reused across calls (compress is synchronous). Holds position + 1; 0 means empty. */
const hashTable = new Int32Array(1 << HASH_LOG);
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_OFFSET = 65535;
const ENC_BLOCK = 1 << 16;

function writeLen(out: Uint8Array, op: number, n: number): number {
  while (n >= 255) {
    out[op++] = 255;
    n -= 255;
  }
  out[op++] = n;
  return op;
}

function emitSequence(
  src: Uint8Array,
  litFrom: number,
  litTo: number,
  out: Uint8Array,
  op: number,
  off: number,
  matchLen: number,
): number {
  const lit = litTo - litFrom;
  const ml = matchLen - MIN_MATCH;
  const tokenAt = op++;
  let token = 0;
  if (lit >= 15) {
    token = 0xf0;
    op = writeLen(out, op, lit - 15);
  } else {
    token = lit << 4;
  }
  if (lit <= 32) {
    for (let i = litFrom; i < litTo; i++) out[op++] = src[i];
  } else {
    out.set(src.subarray(litFrom, litTo), op);
    op += lit;
  }
  if (matchLen > 0) {
    out[op++] = off & 0xff;
    out[op++] = off >>> 8;
    if (ml >= 15) {
      token |= 15;
      op = writeLen(out, op, ml - 15);
    } else {
      token |= ml;
    }
  }
  out[tokenAt] = token;
  return op;
}

/** Greedy single-probe hash matcher for one independent block. Returns bytes written. */
function compressBlock(src: Uint8Array, start: number, end: number, out: Uint8Array, op0: number) {
  let op = op0;
  let anchor = start;
  const matchLimit = end - LAST_LITERALS;
  const mfLimit = end - MF_LIMIT;
  if (end - start >= MF_LIMIT + 1) {
    // No clearing between blocks or calls: stale entries are rejected by the range check and
    // every candidate is verified against the actual bytes.
    let ip = start;
    let misses = 0;
    while (ip <= mfLimit) {
      const seq = src[ip] | (src[ip + 1] << 8) | (src[ip + 2] << 16) | (src[ip + 3] << 24);
      const h = Math.imul(seq, 2654435761) >>> (32 - HASH_LOG);
      const ref = hashTable[h] - 1;
      hashTable[h] = ip + 1;
      if (
        ref < start || ref >= ip || ip - ref > MAX_OFFSET ||
        (src[ref] | (src[ref + 1] << 8) | (src[ref + 2] << 16) | (src[ref + 3] << 24)) !== seq
      ) {
        // Step further the longer nothing matches, so incompressible data is skipped fast.
        ip += 1 + (misses++ >> 6);
        continue;
      }
      misses = 0;
      // Extend backwards over pending literals, then forwards up to the last-literals margin.
      let mStart = ip;
      let r = ref;
      while (mStart > anchor && r > start && src[mStart - 1] === src[r - 1]) {
        mStart--;
        r--;
      }
      let mEnd = ip + MIN_MATCH;
      let r2 = ref + MIN_MATCH;
      while (mEnd < matchLimit && src[mEnd] === src[r2]) {
        mEnd++;
        r2++;
      }
      op = emitSequence(src, anchor, mStart, out, op, mStart - r, mEnd - mStart);
      anchor = mEnd;
      // Seed the table inside the match sparsely so later data can refer to it.
      if (mEnd - 2 > ip) {
        const q = mEnd - 2;
        if (q <= mfLimit) {
          const s2 = src[q] | (src[q + 1] << 8) | (src[q + 2] << 16) | (src[q + 3] << 24);
          hashTable[Math.imul(s2, 2654435761) >>> (32 - HASH_LOG)] = q + 1;
        }
      }
      ip = mEnd;
    }
  }
  op = emitSequence(src, anchor, end, out, op, 0, 0);
  return op - op0;
}

export interface Lz4CompressOptions {
  /** Write the 8-byte content size (FLG 0x68, as kafka-python does). Default false (0x60). */
  contentSize?: boolean;
  /** Append xxh32 of the whole content. Default false, like librdkafka. */
  contentChecksum?: boolean;
  /** Append xxh32 after every block. Default false. */
  blockChecksum?: boolean;
}

export function lz4Compress(data: Uint8Array, opts: Lz4CompressOptions = {}): Uint8Array {
  const blocks = Math.ceil(data.length / ENC_BLOCK);
  const bound = 4 + 3 + 8 + blocks * (4 + 4 + ENC_BLOCK + (ENC_BLOCK >>> 8) + 16) + 4 + 4;
  const out = new Uint8Array(bound);
  const view = new DataView(out.buffer);
  view.setUint32(0, FRAME_MAGIC, true);
  let flg = 0x60; // version 01, independent blocks
  if (opts.blockChecksum) flg |= 0x10;
  if (opts.contentSize) flg |= 0x08;
  if (opts.contentChecksum) flg |= 0x04;
  out[4] = flg;
  out[5] = 0x40; // 64 KiB max block
  let op = 6;
  if (opts.contentSize) {
    view.setUint32(6, data.length >>> 0, true);
    view.setUint32(10, Math.floor(data.length / 2 ** 32), true);
    op = 14;
  }
  out[op] = (xxh32(out, 4, op) >>> 8) & 0xff;
  op++;
  for (let s = 0; s < data.length; s += ENC_BLOCK) {
    const e = Math.min(data.length, s + ENC_BLOCK);
    const n = compressBlock(data, s, e, out, op + 4);
    if (n >= e - s) {
      // Incompressible: store it raw (high bit of the size word).
      view.setUint32(op, (e - s) | 0x80000000, true);
      out.set(data.subarray(s, e), op + 4);
      op += 4 + (e - s);
      if (opts.blockChecksum) {
        view.setUint32(op, xxh32(data, s, e), true);
        op += 4;
      }
    } else {
      view.setUint32(op, n, true);
      op += 4;
      if (opts.blockChecksum) {
        view.setUint32(op + n, xxh32(out, op, op + n), true);
      }
      op += n + (opts.blockChecksum ? 4 : 0);
    }
  }
  view.setUint32(op, 0, true);
  op += 4;
  if (opts.contentChecksum) {
    view.setUint32(op, xxh32(data), true);
    op += 4;
  }
  return out.slice(0, op);
}
