// A text/plain produce body (a record per line) encoded straight into RecordBatch v2 bytes, in
// one pass over the body: no record objects, no per-record subarrays. Large bodies bound for one
// partition take this path (`broker produce` sends 1 MiB of lines per request); the records are
// the ones textRecords (produce.ts) makes, and a body that fits one batch encodes to the same
// bytes as encodeRecordBatch of them.
import {
  BATCH_HEADER_SIZE,
  BATCH_LOG_OVERHEAD,
  OFF_ATTRIBUTES,
  OFF_BASE_OFFSET,
  OFF_BASE_SEQUENCE,
  OFF_BASE_TIMESTAMP,
  OFF_BATCH_LENGTH,
  OFF_LAST_OFFSET_DELTA,
  OFF_LEADER_EPOCH,
  OFF_MAGIC,
  OFF_MAX_TIMESTAMP,
  OFF_PRODUCER_EPOCH,
  OFF_PRODUCER_ID,
  OFF_RECORDS_COUNT,
  rewriteBatchCrc,
  writeI64,
} from "../protocol/record-batch.ts";

const NL = 0x0a;
const CR = 0x0d;

/** The first index of `needle` in hay[from, to), or -1. */
export function indexIn(hay: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  const first = needle[0];
  outer: for (let i = from; i + needle.length <= to; i++) {
    if (hay[i] !== first) continue;
    for (let j = 1; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Lines in the body (a final line needs no newline). */
export function countLines(body: Uint8Array): number {
  let n = 0;
  for (let p = body.indexOf(NL); p >= 0; p = body.indexOf(NL, p + 1)) n++;
  return body.length > 0 && body[body.length - 1] !== NL ? n + 1 : n;
}

/** Bytes of the zigzag varint of n (n ≥ -1 here). */
function vsize(n: number): number {
  const raw = n < 0 ? 1 : n * 2;
  return raw < 0x80 ? 1 : raw < 0x4000 ? 2 : raw < 0x200000 ? 3 : raw < 0x10000000 ? 4 : 5;
}

function putVarint(buf: Uint8Array, pos: number, n: number): number {
  let raw = n < 0 ? 1 : n * 2;
  while (raw >= 0x80) {
    buf[pos++] = (raw & 0x7f) | 0x80;
    raw = Math.floor(raw / 128);
  }
  buf[pos++] = raw;
  return pos;
}

export interface TextBatches {
  /** One or more whole batches, offsets from 0 in each, for one append. */
  bytes: Uint8Array;
  records: number;
  /** Key and value bytes, as the produce metrics count them. */
  payload: number;
}

/**
 * The lines of `body` as record batches of at most `maxBatchBytes` each (a single record over it
 * still gets a batch of its own: the log refuses it as it would any other). Each line is a
 * record (a trailing \r dropped); with `sep`, the bytes before its first separator are the key
 * (none without one), else `key` for all. Timestamps are `ts`. `alloc` gives the output buffer.
 */
export function encodeTextBatches(
  body: Uint8Array,
  key: Uint8Array | null,
  sep: Uint8Array | undefined,
  maxBatchBytes: number,
  ts: number,
  alloc: (size: number) => Uint8Array = (n) => new Uint8Array(n),
): TextBatches {
  const lines = countLines(body);
  // Keys and values are copied by Buffer.copy: one native call per record and no view of it (a
  // subarray per record was the largest cost of a bulk produce in the broker).
  const src = Buffer.from(body.buffer, body.byteOffset, body.length);
  // Per record at most: length 5, attributes 1, timestamp delta 1, offset delta 5, key length 5,
  // value length 5, header count 1, a fixed key's bytes, and a batch header of its own.
  const perRecord = 23 + (key?.length ?? 0) + BATCH_HEADER_SIZE;
  // Every byte returned is written: a reused (dirty) buffer will do.
  const out = alloc(body.length + lines * perRecord + BATCH_HEADER_SIZE);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let batchStart = 0;
  let pos = BATCH_HEADER_SIZE;
  let inBatch = 0;
  let payload = 0;
  const close = () => {
    const size = pos - batchStart;
    writeI64(v, batchStart + OFF_BASE_OFFSET, 0);
    v.setInt32(batchStart + OFF_BATCH_LENGTH, size - BATCH_LOG_OVERHEAD);
    v.setInt32(batchStart + OFF_LEADER_EPOCH, 0);
    v.setInt8(batchStart + OFF_MAGIC, 2);
    v.setInt16(batchStart + OFF_ATTRIBUTES, 0);
    v.setInt32(batchStart + OFF_LAST_OFFSET_DELTA, inBatch - 1);
    writeI64(v, batchStart + OFF_BASE_TIMESTAMP, ts);
    writeI64(v, batchStart + OFF_MAX_TIMESTAMP, ts);
    writeI64(v, batchStart + OFF_PRODUCER_ID, -1);
    v.setInt16(batchStart + OFF_PRODUCER_EPOCH, -1);
    v.setInt32(batchStart + OFF_BASE_SEQUENCE, -1);
    v.setInt32(batchStart + OFF_RECORDS_COUNT, inBatch);
    rewriteBatchCrc(out, batchStart, size, v);
  };
  for (let start = 0; start < body.length;) {
    const nl = body.indexOf(NL, start);
    const lineEnd = nl < 0 ? body.length : nl;
    const end = lineEnd > start && body[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
    let kStart = -1;
    let kLen = -1;
    let valueStart = start;
    if (sep !== undefined) {
      const at = indexIn(body, sep, start, end);
      if (at >= 0) {
        kStart = start;
        kLen = at - start;
        valueStart = at + sep.length;
      }
    } else if (key !== null) kLen = key.length;
    const vLen = end - valueStart;
    const keyPart = kLen < 0 ? 1 : vsize(kLen) + kLen;
    // Record length as encodeRecordBatch computes it, with this batch's offset delta.
    let len = 3 + vsize(inBatch) + keyPart + vsize(vLen) + vLen;
    if (inBatch > 0 && pos - batchStart + vsize(len) + len > maxBatchBytes) {
      close();
      batchStart = pos;
      pos += BATCH_HEADER_SIZE;
      inBatch = 0;
      len = 3 + 1 + keyPart + vsize(vLen) + vLen;
    }
    pos = putVarint(out, pos, len);
    out[pos++] = 0; // attributes
    out[pos++] = 0; // timestamp delta
    pos = putVarint(out, pos, inBatch);
    if (kLen < 0) out[pos++] = 1; // null key
    else {
      pos = putVarint(out, pos, kLen);
      if (kStart >= 0) src.copy(out, pos, kStart, kStart + kLen);
      else out.set(key!, pos);
      pos += kLen;
    }
    pos = putVarint(out, pos, vLen);
    if (vLen > 0) src.copy(out, pos, valueStart, end);
    pos += vLen;
    out[pos++] = 0; // no headers
    inBatch++;
    payload += Math.max(0, kLen) + vLen;
    start = lineEnd + 1;
  }
  if (inBatch > 0) close();
  else pos = 0;
  return { bytes: out.subarray(0, pos), records: lines, payload };
}
