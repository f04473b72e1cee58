// Skippable frames, common to the LZ4 and zstd frame formats: magic 0x184D2A50-5F, a u32 size
// and that many bytes of payload, which a decoder passes over.
import { CompressionError } from "./errors.ts";

/** The little-endian u32 at `p` (both formats' byte order). */
export function le32(a: Uint8Array, p: number): number {
  return (a[p] | (a[p + 1] << 8) | (a[p + 2] << 16) | (a[p + 3] << 24)) >>> 0;
}

/** Where the skippable frame at `p` ends; -1 when the frame at `p` is not a skippable one. */
export function skippableFrameEnd(data: Uint8Array, p: number, codec: string): number {
  if ((le32(data, p) & 0xfffffff0) !== 0x184d2a50) return -1;
  const truncated = () => new CompressionError("TRUNCATED", codec, "truncated skippable frame");
  if (p + 8 > data.length) throw truncated();
  const end = p + 8 + le32(data, p + 4);
  if (end > data.length) throw truncated();
  return end;
}
