/** Typed failure of a compression codec. Never thrown for anything but bad input or limits. */
export type CompressionErrorCode =
  | "UNSUPPORTED_CODEC" // attributes bits 0-2 hold 5..7 or garbage
  | "UNSUPPORTED_FEATURE" // valid format feature we deliberately do not handle (dictionaries)
  | "BAD_MAGIC"
  | "TRUNCATED"
  | "CORRUPT"
  | "BAD_CHECKSUM"
  | "OUTPUT_LIMIT"; // decoded size would exceed maxOutputBytes

export class CompressionError extends Error {
  override readonly name = "CompressionError";
  constructor(
    readonly code: CompressionErrorCode,
    readonly codec: string,
    message: string,
  ) {
    super(`${codec}: ${message}`);
  }
}

/** Default ceiling on decoded bytes per call: a zip bomb must fail, not exhaust memory. */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export function checkLimit(maxOutputBytes: number | undefined): number {
  const m = maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isSafeInteger(m) || m < 0) throw new RangeError(`bad maxOutputBytes ${m}`);
  return m;
}
