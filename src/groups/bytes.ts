/** Big-endian helpers for the non-flexible Kafka encodings used by group records and payloads. */
import { ProtocolDecodeError } from "../protocol/kafka/errors.ts";
import { Reader } from "../protocol/kafka/reader.ts";
import { utf8Bytes, Writer } from "../protocol/kafka/writer.ts";

export { Reader, Writer };

/** Decoders of hostile bytes return this instead of throwing. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs a decoder that may throw ProtocolDecodeError and turns the throw into a typed result. */
export function decodeSafely<T>(fn: () => T): Decoded<T> {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    if (e instanceof ProtocolDecodeError) return { ok: false, error: e.message };
    if (e instanceof RangeError) return { ok: false, error: e.message };
    throw e;
  }
}

export function writeString(w: Writer, s: string): void {
  const b = utf8Bytes(s);
  if (b.length > 32767) throw new RangeError(`string of ${b.length} bytes exceeds int16 length`);
  w.int16(b.length);
  w.raw(b);
}

export function writeNullableString(w: Writer, s: string | null): void {
  if (s === null) w.int16(-1);
  else writeString(w, s);
}

export function writeBytes(w: Writer, b: Uint8Array | null): void {
  if (b === null) {
    w.int32(-1);
    return;
  }
  w.int32(b.length);
  w.raw(b);
}

export function readString(r: Reader, what: string): string {
  const n = r.int16();
  if (n < 0) r.fail(`null ${what}`);
  return r.utf8(n);
}

export function readNullableString(r: Reader): string | null {
  const n = r.int16();
  if (n < -1) r.fail(`invalid string length ${n}`);
  return n === -1 ? null : r.utf8(n);
}

/** Copies the bytes out so results never alias (possibly pooled) input buffers. */
export function readNullableBytes(r: Reader): Uint8Array | null {
  const n = r.int32();
  if (n < -1) r.fail(`invalid bytes length ${n}`);
  return n === -1 ? null : r.slice(n, "bytes").slice();
}

export function readBytes(r: Reader, what: string): Uint8Array {
  const b = readNullableBytes(r);
  if (b === null) r.fail(`null ${what}`);
  return b;
}

/** An int32 array count, bounded by what the remaining bytes could hold. */
export function readCount(r: Reader, minElementBytes: number, what: string): number {
  const n = r.int32();
  if (n < 0) r.fail(`invalid ${what} count ${n}`);
  if (n * minElementBytes > r.remaining) r.fail(`${what} count ${n} exceeds the remaining bytes`);
  return n;
}
