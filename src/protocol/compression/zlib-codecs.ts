/**
 * gzip and zstd through node:zlib (Bun 1.4.5 ships both natively). zlib enforces the output
 * limit itself (maxOutputLength stops inflating early, so bombs cost milliseconds). zstd input is
 * walked frame by frame first: Bun's zstdDecompressSync returns partial output for a truncated
 * frame instead of failing, and the walk also rejects absurd declared sizes before decoding.
 */
import * as zlib from "node:zlib";
import { CompressionError, type CompressionErrorCode } from "./errors.ts";
import { le32, skippableFrameEnd } from "./skippable-frame.ts";

interface ZlibError {
  code?: string;
  message?: string;
}

function mapError(codec: string, e: unknown, max = 0): CompressionError {
  if (e instanceof CompressionError) return e;
  const err = e as ZlibError;
  const code = String(err?.code ?? "");
  const msg = String(err?.message ?? e);
  let c: CompressionErrorCode = "CORRUPT";
  if (code === "ERR_BUFFER_TOO_LARGE") {
    return new CompressionError(
      "OUTPUT_LIMIT",
      codec,
      `decoded size exceeds limit of ${max} bytes`,
    );
  }
  if (code === "Z_BUF_ERROR" || /unexpected end/i.test(msg)) c = "TRUNCATED";
  else if (/checksum|incorrect data check/i.test(code + " " + msg)) c = "BAD_CHECKSUM";
  return new CompressionError(c, codec, `${code ? code + ": " : ""}${msg}`);
}

/**
 * zlib returns Buffers; hand out plain Uint8Array views so `.slice()` copies as callers expect
 * (Buffer#slice shares memory).
 */
function plain(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function inflateLimit(max: number): number {
  // zlib rejects a 0 limit; an empty result is still checked against `max` by the caller.
  return Math.max(1, max);
}

function finish(codec: string, out: Uint8Array, max: number): Uint8Array {
  if (out.length > max) {
    throw new CompressionError("OUTPUT_LIMIT", codec, `decoded size exceeds limit of ${max} bytes`);
  }
  return out;
}

// ---- gzip ---------------------------------------------------------------------------------

export function gzipDecompress(data: Uint8Array, maxOutputBytes: number): Uint8Array {
  if (data.length === 0) throw new CompressionError("TRUNCATED", "gzip", "empty input");
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) {
    throw new CompressionError("BAD_MAGIC", "gzip", "missing gzip magic 1f 8b");
  }
  let out: Uint8Array;
  try {
    // Concatenated members are decoded and joined (RFC 1952 §2.2; checked in tests).
    out = zlib.gunzipSync(data, { maxOutputLength: inflateLimit(maxOutputBytes) });
  } catch (e) {
    throw mapError("gzip", e, maxOutputBytes);
  }
  return finish("gzip", plain(out), maxOutputBytes);
}

export interface GzipCompressOptions {
  /** zlib level 0..9; default 6. */
  level?: number;
}

export function gzipCompress(data: Uint8Array, opts: GzipCompressOptions = {}): Uint8Array {
  try {
    return plain(zlib.gzipSync(data, { level: opts.level ?? 6 }));
  } catch (e) {
    throw mapError("gzip", e);
  }
}

// ---- zstd ---------------------------------------------------------------------------------

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_BLOCK_MAX = 128 * 1024;
/**
 * Without a content size the decoder allocates a full window. Frames from streaming encoders at
 * levels up to 19 use at most 8 MiB; anything larger must also fit the caller's output limit.
 */
const ZSTD_WINDOW_FLOOR = 8 * 1024 * 1024;

function zfail(code: CompressionErrorCode, msg: string): never {
  throw new CompressionError(code, "zstd", msg);
}

/**
 * Checks that `data` is a complete sequence of zstd (and skippable) frames with sane sizes.
 * Block contents are left to libzstd. Returns the summed declared content size (or -1 if
 * some frame omits it).
 */
export function validateZstdFrames(data: Uint8Array, maxOutputBytes: number): number {
  if (data.length === 0) zfail("TRUNCATED", "empty input");
  let p = 0;
  let declared = 0;
  let frames = 0;
  while (p < data.length) {
    if (p + 4 > data.length) zfail("TRUNCATED", "truncated frame magic");
    const skipped = skippableFrameEnd(data, p, "zstd");
    if (skipped >= 0) {
      p = skipped;
      continue;
    }
    const magic = le32(data, p);
    if (magic !== ZSTD_MAGIC) zfail("BAD_MAGIC", `bad frame magic 0x${magic.toString(16)}`);
    p += 4;
    if (p >= data.length) zfail("TRUNCATED", "truncated frame header");
    const fhd = data[p++];
    const fcsFlag = fhd >>> 6;
    const single = (fhd & 0x20) !== 0;
    const checksum = (fhd & 0x04) !== 0;
    const dictFlag = fhd & 3;
    if (fhd & 0x08) zfail("CORRUPT", "reserved frame header bit set");
    let window = 0;
    if (!single) {
      if (p >= data.length) zfail("TRUNCATED", "truncated window descriptor");
      const wd = data[p++];
      const base = 2 ** (10 + (wd >>> 3));
      window = base + (base / 8) * (wd & 7);
    }
    const dictLen = [0, 1, 2, 4][dictFlag];
    const fcsLen = [single ? 1 : 0, 2, 4, 8][fcsFlag];
    if (p + dictLen + fcsLen > data.length) zfail("TRUNCATED", "truncated frame header");
    let dictId = 0;
    for (let i = dictLen - 1; i >= 0; i--) dictId = dictId * 256 + data[p + i];
    p += dictLen;
    if (dictId !== 0) zfail("UNSUPPORTED_FEATURE", "frames needing a dictionary are not supported");
    let fcs = -1;
    if (fcsLen > 0) {
      fcs = 0;
      for (let i = fcsLen - 1; i >= 0; i--) fcs = fcs * 256 + data[p + i];
      if (fcsLen === 2) fcs += 256;
      p += fcsLen;
    }
    if (single) window = fcs;
    if (fcs >= 0) {
      if (declared >= 0) declared += fcs;
      if (fcs > maxOutputBytes) zfail("OUTPUT_LIMIT", `declared content size ${fcs} exceeds limit`);
    } else {
      declared = -1;
    }
    const effectiveWindow = fcs >= 0 ? Math.min(window, fcs) : window;
    if (effectiveWindow > Math.max(maxOutputBytes, ZSTD_WINDOW_FLOOR)) {
      zfail("OUTPUT_LIMIT", `window of ${window} bytes exceeds limit`);
    }
    for (;;) {
      if (p + 3 > data.length) zfail("TRUNCATED", "truncated block header");
      const bh = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16);
      p += 3;
      const last = (bh & 1) !== 0;
      const type = (bh >>> 1) & 3;
      const size = bh >>> 3;
      if (type === 3) zfail("CORRUPT", "reserved block type");
      // libzstd applies the tighter min(window, 128 KiB) bound itself.
      if (size > ZSTD_BLOCK_MAX) zfail("CORRUPT", `block size ${size} exceeds 128 KiB`);
      const stored = type === 1 ? 1 : size; // RLE blocks store one byte
      if (p + stored > data.length) zfail("TRUNCATED", "truncated block");
      p += stored;
      if (last) break;
    }
    if (checksum) {
      if (p + 4 > data.length) zfail("TRUNCATED", "truncated content checksum");
      p += 4;
    }
    frames++;
    if (declared > maxOutputBytes) zfail("OUTPUT_LIMIT", "declared content sizes exceed limit");
  }
  if (frames === 0) zfail("TRUNCATED", "no zstd frame in input");
  return declared;
}

export function zstdDecompress(data: Uint8Array, maxOutputBytes: number): Uint8Array {
  const declared = validateZstdFrames(data, maxOutputBytes);
  const viaZlib = () =>
    zlib.zstdDecompressSync(data, { maxOutputLength: inflateLimit(maxOutputBytes) });
  let out: Uint8Array;
  try {
    // Every frame declares its size and the sum fits the limit (libzstd rejects a frame whose
    // output differs from its declared size): Bun's one-shot decoder is ~1.5x faster here.
    out = declared >= 0 ? Bun.zstdDecompressSync(data) : viaZlib();
  } catch (e) {
    if (declared < 0) throw mapError("zstd", e, maxOutputBytes);
    // Bun's error does not say why; node:zlib's does (checksum, truncation, ...).
    try {
      viaZlib();
    } catch (precise) {
      throw mapError("zstd", precise, maxOutputBytes);
    }
    throw mapError("zstd", e, maxOutputBytes);
  }
  return finish("zstd", plain(out), maxOutputBytes);
}

export interface ZstdCompressOptions {
  /** zstd level 1..22; default 3 (the library default, as librdkafka uses). */
  level?: number;
  /** Append the xxh64-based content checksum. Default false. */
  checksum?: boolean;
}

export function zstdCompress(data: Uint8Array, opts: ZstdCompressOptions = {}): Uint8Array {
  try {
    const out = zlib.zstdCompressSync(data, {
      params: {
        [zlib.constants.ZSTD_c_compressionLevel]: opts.level ?? 3,
        [zlib.constants.ZSTD_c_checksumFlag]: opts.checksum ? 1 : 0,
        // Record the content size so decoders size their window to it.
        [zlib.constants.ZSTD_c_contentSizeFlag]: 1,
      },
    });
    return plain(out);
  } catch (e) {
    throw mapError("zstd", e);
  }
}
