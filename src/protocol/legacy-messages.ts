// Message format v0/v1 (magic 0 and 1, Kafka before 0.11), as Produce v0-v2 carries it, turned into
// one RecordBatch v2 on the way in, as Kafka 3.x up-converts it. The log stores only v2.
//
// MessageSet := (Offset int64, MessageSize int32, Message)*
// Message v0 := Crc int32, Magic int8 (0), Attributes int8, Key bytes, Value bytes
// Message v1 := Crc int32, Magic int8 (1), Attributes int8, Timestamp int64, Key bytes, Value bytes
// Crc is CRC-32 (IEEE) of Magic..end. Attributes bits 0-2: codec; in a compressed message the
// Value is a whole compressed inner MessageSet (one level only).
import {
  compress,
  CompressionError,
  decompress,
  type DecompressOptions,
} from "./compression/index.ts";
import { type CompressionCodec, encodeRecordBatch, type RecordInput } from "./record-batch.ts";

/** Why a legacy message set was refused: a Kafka error code and a message. */
export class LegacyMessageError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}

const CORRUPT_MESSAGE = 2;
const INVALID_RECORD = 87;
const MESSAGE_OVERHEAD_V0 = 4 + 1 + 1 + 4 + 4;

/** The magic byte of the first message of a records field (0, 1, 2 = batch v2), or -1. */
export function recordsMagic(records: Uint8Array): number {
  // Offset (8) + size (4) + crc (4) puts magic at 16 in both formats (v2: offset, length, epoch).
  return records.length > 16 ? (records[16] << 24) >> 24 : -1;
}

interface Options {
  /** CreateTime for v0 messages, which carry none. */
  now: number;
  /** Ceiling on a compressed message's decoded bytes. */
  maxOutputBytes?: number;
}

/**
 * One RecordBatch v2 holding every message of `set`, in order, compressed with the codec the
 * producer used (none if it sent plain messages). Throws LegacyMessageError.
 */
export function upconvertMessageSet(set: Uint8Array, opts: Options): Uint8Array {
  const records: RecordInput[] = [];
  let codec: CompressionCodec = 0;
  for (const m of readMessages(set, false)) {
    if (m.codec === 0) {
      records.push({ key: m.key, value: m.value, timestamp: m.timestamp ?? opts.now });
      continue;
    }
    if (m.value === null) {
      throw new LegacyMessageError(CORRUPT_MESSAGE, "compressed message without a value");
    }
    if (m.codec > 4) throw new LegacyMessageError(CORRUPT_MESSAGE, `unknown codec ${m.codec}`);
    codec = m.codec as CompressionCodec;
    let inner: Uint8Array;
    try {
      const d: DecompressOptions = {
        maxOutputBytes: opts.maxOutputBytes,
        lz4LegacyHeaderChecksum: m.magic === 0,
      };
      inner = decompress(m.codec, m.value, d);
    } catch (e) {
      const why = e instanceof CompressionError ? e.message : String(e);
      throw new LegacyMessageError(CORRUPT_MESSAGE, `compressed message: ${why}`);
    }
    for (const im of readMessages(inner, true)) {
      records.push({
        key: im.key,
        value: im.value,
        // A v1 wrapper with LogAppendTime stamps its inner messages with its own time.
        timestamp: im.timestamp ?? m.timestamp ?? opts.now,
      });
    }
  }
  if (records.length === 0) {
    throw new LegacyMessageError(INVALID_RECORD, "no messages in the message set");
  }
  // A loop, not Math.min(...): a 100 MiB request can hold millions of messages.
  let baseTimestamp = Infinity;
  for (const r of records) if (r.timestamp! < baseTimestamp) baseTimestamp = r.timestamp!;
  return encodeRecordBatch({
    records,
    baseTimestamp,
    codec,
    compress: (c, data) => compress(c, data),
  });
}

interface LegacyMessage {
  magic: number;
  codec: number;
  timestamp: number | null;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

function* readMessages(set: Uint8Array, inner: boolean): Generator<LegacyMessage> {
  const v = new DataView(set.buffer, set.byteOffset, set.byteLength);
  let p = 0;
  while (p < set.length) {
    if (p + 12 > set.length) throw new LegacyMessageError(CORRUPT_MESSAGE, "truncated message set");
    const size = v.getInt32(p + 8);
    const start = p + 12;
    const end = start + size;
    if (size < MESSAGE_OVERHEAD_V0 || end > set.length) {
      throw new LegacyMessageError(CORRUPT_MESSAGE, `message size ${size} does not fit the set`);
    }
    const crc = v.getUint32(start);
    if ((Bun.hash.crc32(set.subarray(start + 4, end)) >>> 0) !== crc) {
      throw new LegacyMessageError(CORRUPT_MESSAGE, "message CRC mismatch");
    }
    const magic = v.getInt8(start + 4);
    if (magic !== 0 && magic !== 1) {
      throw new LegacyMessageError(CORRUPT_MESSAGE, `magic ${magic} inside a v0/v1 message set`);
    }
    const codec = v.getInt8(start + 5) & 0x7;
    if (inner && codec !== 0) {
      throw new LegacyMessageError(CORRUPT_MESSAGE, "a compressed message inside a compressed one");
    }
    let q = start + 6;
    let timestamp: number | null = null;
    if (magic === 1) {
      if (q + 8 > end) throw new LegacyMessageError(CORRUPT_MESSAGE, "truncated message");
      const t = Number(v.getBigInt64(q));
      timestamp = t >= 0 ? t : null;
      q += 8;
    }
    const readBytes = (): Uint8Array | null => {
      if (q + 4 > end) throw new LegacyMessageError(CORRUPT_MESSAGE, "truncated message");
      const n = v.getInt32(q);
      q += 4;
      if (n < 0) return null;
      if (q + n > end) throw new LegacyMessageError(CORRUPT_MESSAGE, "truncated message");
      const b = set.slice(q, q + n);
      q += n;
      return b;
    };
    const key = readBytes();
    const value = readBytes();
    yield { magic, codec, timestamp, key, value };
    p = end;
  }
}
