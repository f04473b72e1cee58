/**
 * Record-batch compression codecs (attributes bits 0-2): 0 none, 1 gzip, 2 snappy, 3 lz4,
 * 4 zstd. Every failure is a CompressionError; decoding never exceeds maxOutputBytes.
 */
import { checkLimit, CompressionError } from "./errors.ts";
import { lz4Compress, type Lz4CompressOptions, lz4Decompress } from "./lz4.ts";
import { snappyCompress, snappyDecompress } from "./snappy.ts";
import { gzipCompress, gzipDecompress, zstdCompress, zstdDecompress } from "./zlib-codecs.ts";

export { CompressionError, type CompressionErrorCode, DEFAULT_MAX_OUTPUT_BYTES } from "./errors.ts";
export { xxh32 } from "./xxhash32.ts";

export const Codec = { None: 0, Gzip: 1, Snappy: 2, Lz4: 3, Zstd: 4 } as const;
export type CodecId = (typeof Codec)[keyof typeof Codec];

const NAMES = ["none", "gzip", "snappy", "lz4", "zstd"] as const;
export type CodecName = (typeof NAMES)[number];

/** Codec name for logs and topic config (`compression.type`); undefined for unknown ids. */
export function codecName(codec: number): CodecName | undefined {
  return NAMES[codec];
}

/** Codec id for a `compression.type` value such as "lz4"; undefined if unknown. */
export function codecFromName(name: string): CodecId | undefined {
  const i = (NAMES as readonly string[]).indexOf(name);
  return i < 0 ? undefined : (i as CodecId);
}

export interface DecompressOptions {
  /** Ceiling on decoded bytes (default 64 MiB); beyond it: CompressionError OUTPUT_LIMIT. */
  maxOutputBytes?: number;
  /** lz4: also accept the KAFKA-3160 header checksum of magic 0/1 messages. */
  lz4LegacyHeaderChecksum?: boolean;
}

export interface CompressOptions {
  /** gzip 0..9 (default 6), zstd 1..22 (default 3); ignored by snappy and lz4. */
  level?: number;
  /** snappy: write the xerial stream (as Java and kafka-python do) instead of a raw block. */
  xerial?: boolean;
  /** lz4 frame flags; defaults give FLG 0x60 like librdkafka. */
  lz4?: Lz4CompressOptions;
  /** zstd: append the content checksum. */
  zstdChecksum?: boolean;
}

function unsupported(codec: number): never {
  throw new CompressionError("UNSUPPORTED_CODEC", "codec", `unknown compression codec ${codec}`);
}

/**
 * Decodes a compressed records section. Codec 0 returns `data` itself (no copy). The result is
 * a fresh array the caller owns, except for codec 0.
 */
export function decompress(
  codec: number,
  data: Uint8Array,
  opts: DecompressOptions = {},
): Uint8Array {
  const max = checkLimit(opts.maxOutputBytes);
  switch (codec) {
    case Codec.None:
      if (data.length > max) {
        throw new CompressionError("OUTPUT_LIMIT", "none", `size exceeds limit of ${max} bytes`);
      }
      return data;
    case Codec.Gzip:
      return gzipDecompress(data, max);
    case Codec.Snappy:
      return snappyDecompress(data, max);
    case Codec.Lz4:
      return lz4Decompress(data, max, { legacyHeaderChecksum: opts.lz4LegacyHeaderChecksum });
    case Codec.Zstd:
      return zstdDecompress(data, max);
    default:
      unsupported(codec);
  }
}

/** Encodes a records section. Codec 0 returns `data` itself. */
export function compress(codec: number, data: Uint8Array, opts: CompressOptions = {}): Uint8Array {
  switch (codec) {
    case Codec.None:
      return data;
    case Codec.Gzip:
      return gzipCompress(data, { level: opts.level });
    case Codec.Snappy:
      return snappyCompress(data, { xerial: opts.xerial });
    case Codec.Lz4:
      return lz4Compress(data, opts.lz4);
    case Codec.Zstd:
      return zstdCompress(data, { level: opts.level, checksum: opts.zstdChecksum });
    default:
      unsupported(codec);
  }
}
