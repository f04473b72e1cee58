// RecordBatch v2 (magic 2): header access, structural validation, and a full record
// encoder/decoder with zigzag varints. Pure; compression is delegated to injected hooks.
import { crc32c } from "./crc32c.ts";

export const BATCH_HEADER_SIZE = 61;
/** Bytes before batchLength's coverage starts: baseOffset(8) + batchLength(4). */
export const BATCH_LOG_OVERHEAD = 12;
export const OFF_BASE_OFFSET = 0;
export const OFF_BATCH_LENGTH = 8;
export const OFF_LEADER_EPOCH = 12;
export const OFF_MAGIC = 16;
export const OFF_CRC = 17;
export const OFF_ATTRIBUTES = 21;
export const OFF_LAST_OFFSET_DELTA = 23;
export const OFF_BASE_TIMESTAMP = 27;
export const OFF_MAX_TIMESTAMP = 35;
export const OFF_PRODUCER_ID = 43;
export const OFF_PRODUCER_EPOCH = 51;
export const OFF_BASE_SEQUENCE = 53;
export const OFF_RECORDS_COUNT = 57;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

/** Compression codec ids (attributes bits 0-2). */
export type CompressionCodec = 0 | 1 | 2 | 3 | 4;
/** Decompress a whole `records` section; the hook owner implements the codecs. */
export type DecompressFn = (codec: CompressionCodec, bytes: Uint8Array) => Uint8Array;
export type CompressFn = (codec: CompressionCodec, bytes: Uint8Array) => Uint8Array;

/** Malformed bytes (records section, varints, lengths). */
export class RecordFormatError extends Error {
  override name = "RecordFormatError";
}

export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}

function dv(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

const TWO_32 = 4294967296;

/**
 * Read an i64 as a JS number (exact within +-2^53, rounded beyond). Two 32-bit halves rather than
 * getBigInt64: a BigInt per field was most of the garbage of validating an append.
 */
export function readI64(view: DataView, pos: number): number {
  return view.getInt32(pos) * TWO_32 + view.getUint32(pos + 4);
}

/** Write an integer number (|v| < 2^53) as an i64, without a BigInt. */
export function writeI64(view: DataView, pos: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  view.setInt32(pos, hi);
  view.setUint32(pos + 4, v - hi * TWO_32);
}

/** Total size (12 + batchLength) of the batch at `pos`, or -1 if fewer than 12 bytes remain. */
export function batchSizeAt(buf: Uint8Array, pos: number): number {
  if (pos + BATCH_LOG_OVERHEAD > buf.length) return -1;
  return BATCH_LOG_OVERHEAD + dv(buf).getInt32(pos + OFF_BATCH_LENGTH);
}

/** Decode the 61-byte header at `pos` (caller ensures 61 bytes are available). */
export function readBatchHeader(buf: Uint8Array, pos = 0, v = dv(buf)): BatchHeader {
  return {
    baseOffset: readI64(v, pos + OFF_BASE_OFFSET),
    batchLength: v.getInt32(pos + OFF_BATCH_LENGTH),
    partitionLeaderEpoch: v.getInt32(pos + OFF_LEADER_EPOCH),
    magic: v.getInt8(pos + OFF_MAGIC),
    crc: v.getUint32(pos + OFF_CRC),
    attributes: v.getInt16(pos + OFF_ATTRIBUTES),
    lastOffsetDelta: v.getInt32(pos + OFF_LAST_OFFSET_DELTA),
    baseTimestamp: readI64(v, pos + OFF_BASE_TIMESTAMP),
    maxTimestamp: readI64(v, pos + OFF_MAX_TIMESTAMP),
    producerId: readI64(v, pos + OFF_PRODUCER_ID),
    producerEpoch: v.getInt16(pos + OFF_PRODUCER_EPOCH),
    baseSequence: v.getInt32(pos + OFF_BASE_SEQUENCE),
    recordsCount: v.getInt32(pos + OFF_RECORDS_COUNT),
  };
}

/** CRC-32C over [attributes, end) of the batch at `pos` with total size `size`. */
export function computeBatchCrc(buf: Uint8Array, pos: number, size: number): number {
  return crc32c(buf.subarray(pos + OFF_ATTRIBUTES, pos + size));
}

/** Recompute and store the CRC of the batch at `pos`. */
export function rewriteBatchCrc(buf: Uint8Array, pos: number, size: number, v = dv(buf)): void {
  v.setUint32(pos + OFF_CRC, computeBatchCrc(buf, pos, size));
}

/**
 * Structural check of one batch at `pos` within `buf`: length, magic, CRC.
 * Returns null when fine, else a reason. Does not check header semantics.
 */
export function checkBatchStructure(
  buf: Uint8Array,
  pos: number,
  end = buf.length,
  v = dv(buf),
): string | null {
  if (pos + BATCH_LOG_OVERHEAD > end) return "truncated batch length";
  const batchLength = v.getInt32(pos + OFF_BATCH_LENGTH);
  if (batchLength < BATCH_HEADER_SIZE - BATCH_LOG_OVERHEAD) return `batchLength ${batchLength}`;
  const size = BATCH_LOG_OVERHEAD + batchLength;
  if (pos + size > end) return "batch extends past the end of the buffer";
  const magic = v.getInt8(pos + OFF_MAGIC);
  if (magic !== 2) return `magic ${magic}`;
  if (computeBatchCrc(buf, pos, size) !== v.getUint32(pos + OFF_CRC)) return "CRC mismatch";
  return null;
}

// ---------- zigzag varints ----------

export class Reader {
  pos: number;
  constructor(readonly buf: Uint8Array, pos = 0, readonly end = buf.length) {
    this.pos = pos;
  }
  byte(): number {
    if (this.pos >= this.end) throw new RecordFormatError("unexpected end of records");
    return this.buf[this.pos++];
  }
  /** Zigzag varint (int32). */
  varint(): number {
    let raw = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      if (shift === 28 && (b & 0xf0) !== 0) throw new RecordFormatError("varint too long");
      raw |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    return (raw >>> 1) ^ -(raw & 1);
  }
  /** Zigzag varlong as a JS number (exact within +-2^53; BigInt math past 2^49). */
  varlong(): number {
    const start = this.pos;
    let raw = 0;
    let mult = 1;
    for (let i = 0;; i++) {
      if (i >= 7) return this.bigVarlong(start);
      const b = this.byte();
      raw += (b & 0x7f) * mult;
      if ((b & 0x80) === 0) break;
      mult *= 128;
    }
    return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  }
  private bigVarlong(start: number): number {
    this.pos = start;
    let raw = 0n;
    for (let i = 0;; i++) {
      if (i >= 10) throw new RecordFormatError("varlong too long");
      const b = this.byte();
      raw |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) break;
    }
    const v = (raw >> 1n) ^ -(raw & 1n);
    return Number(BigInt.asIntN(64, v));
  }
  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.end) throw new RecordFormatError("length past end of records");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

export class Writer {
  buf: Uint8Array;
  pos = 0;
  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.pos));
    this.buf = nb;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b & 0xff;
  }
  varint(n: number): void {
    let raw = ((n << 1) ^ (n >> 31)) >>> 0;
    this.ensure(5);
    while (raw >= 0x80) {
      this.buf[this.pos++] = (raw & 0x7f) | 0x80;
      raw >>>= 7;
    }
    this.buf[this.pos++] = raw;
  }
  varlong(n: number): void {
    if (!Number.isSafeInteger(n)) throw new RangeError(`varlong out of range: ${n}`);
    this.ensure(10);
    if (Math.abs(n) >= 2 ** 51) {
      let raw = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) >> 63n));
      while (raw >= 0x80n) {
        this.buf[this.pos++] = Number(raw & 0x7fn) | 0x80;
        raw >>= 7n;
      }
      this.buf[this.pos++] = Number(raw);
      return;
    }
    let raw = n >= 0 ? n * 2 : -n * 2 - 1;
    while (raw >= 0x80) {
      this.buf[this.pos++] = (raw % 128) | 0x80;
      raw = Math.floor(raw / 128);
    }
    this.buf[this.pos++] = raw;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Bytes a zigzag varint of n takes. */
export function varintSize(n: number): number {
  let raw = ((n << 1) ^ (n >> 31)) >>> 0;
  let s = 1;
  while (raw >= 0x80) {
    raw >>>= 7;
    s++;
  }
  return s;
}

// ---------- records ----------

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

export interface KafkaRecord {
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

export interface RecordInput {
  key?: Uint8Array | null;
  value?: Uint8Array | null;
  headers?: RecordHeader[];
  /** Absolute ms timestamp; defaults to the batch's baseTimestamp. */
  timestamp?: number;
}

export interface BatchInput {
  records: RecordInput[];
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  /** Non-compression attribute bits (timestamp type, transactional...). */
  attributes?: number;
  codec?: CompressionCodec;
  compress?: CompressFn;
  baseTimestamp?: number;
  /** Defaults to the max record timestamp. */
  maxTimestamp?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
}

const utf8e = new TextEncoder();
const utf8d = new TextDecoder("utf-8", { fatal: true });

/** Bytes a zigzag varlong of n takes. */
function varlongSize(n: number): number {
  if (Math.abs(n) >= 2 ** 51) {
    scratch.pos = 0;
    scratch.varlong(n);
    return scratch.pos;
  }
  let raw = n >= 0 ? n * 2 : -n * 2 - 1;
  let s = 1;
  while (raw >= 0x80) {
    raw = Math.floor(raw / 128);
    s++;
  }
  return s;
}
const scratch = new Writer(16);

const EMPTY_HEADER_KEYS: Uint8Array[] = [];

/**
 * Each record's length is computed before it is written, so records go straight into one buffer
 * sized for all of them (no per-record buffer and copy: this runs for every HTTP-produced record).
 */
function encodeRecordsSection(records: RecordInput[], baseTimestamp: number): Uint8Array {
  let estimate = 0;
  for (const r of records) estimate += (r.key?.length ?? 0) + (r.value?.length ?? 0) + 24;
  const w = new Writer(Math.max(64, estimate));
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const tsDelta = (r.timestamp ?? baseTimestamp) - baseTimestamp;
    const key = r.key ?? null;
    const value = r.value ?? null;
    const headers = r.headers ?? [];
    const hkeys = headers.length === 0
      ? EMPTY_HEADER_KEYS
      : headers.map((h) => utf8e.encode(h.key));
    let len = 1 + varlongSize(tsDelta) + varintSize(i) +
      (key === null ? 1 : varintSize(key.length) + key.length) +
      (value === null ? 1 : varintSize(value.length) + value.length) + varintSize(headers.length);
    for (let j = 0; j < headers.length; j++) {
      const hv = headers[j].value;
      len += varintSize(hkeys[j].length) + hkeys[j].length +
        (hv === null ? 1 : varintSize(hv.length) + hv.length);
    }
    w.ensure(5 + len);
    w.varint(len);
    w.buf[w.pos++] = 0; // attributes
    w.varlong(tsDelta);
    w.varint(i);
    if (key === null) w.varint(-1);
    else {
      w.varint(key.length);
      w.buf.set(key, w.pos);
      w.pos += key.length;
    }
    if (value === null) w.varint(-1);
    else {
      w.varint(value.length);
      w.buf.set(value, w.pos);
      w.pos += value.length;
    }
    w.varint(headers.length);
    for (let j = 0; j < headers.length; j++) {
      w.varint(hkeys[j].length);
      w.bytes(hkeys[j]);
      const hv = headers[j].value;
      if (hv === null) w.varint(-1);
      else {
        w.varint(hv.length);
        w.bytes(hv);
      }
    }
  }
  return w.result();
}

/** Encode a RecordBatch v2 with a valid CRC. */
export function encodeRecordBatch(input: BatchInput): Uint8Array {
  const n = input.records.length;
  if (n === 0) throw new RangeError("a batch needs at least one record");
  const baseTimestamp = input.baseTimestamp ?? input.records[0].timestamp ?? Date.now();
  let maxTs = -Infinity;
  for (const r of input.records) maxTs = Math.max(maxTs, r.timestamp ?? baseTimestamp);
  const codec = input.codec ?? 0;
  let section = encodeRecordsSection(input.records, baseTimestamp);
  if (codec !== 0) {
    if (!input.compress) throw new RangeError("codec set without a compress hook");
    section = input.compress(codec, section);
  }
  const size = BATCH_HEADER_SIZE + section.length;
  const out = new Uint8Array(size);
  const v = dv(out);
  writeI64(v, OFF_BASE_OFFSET, input.baseOffset ?? 0);
  v.setInt32(OFF_BATCH_LENGTH, size - BATCH_LOG_OVERHEAD);
  v.setInt32(OFF_LEADER_EPOCH, input.partitionLeaderEpoch ?? 0);
  v.setInt8(OFF_MAGIC, 2);
  v.setInt16(OFF_ATTRIBUTES, ((input.attributes ?? 0) & ~ATTR_COMPRESSION_MASK) | codec);
  v.setInt32(OFF_LAST_OFFSET_DELTA, n - 1);
  writeI64(v, OFF_BASE_TIMESTAMP, baseTimestamp);
  writeI64(v, OFF_MAX_TIMESTAMP, input.maxTimestamp ?? maxTs);
  writeI64(v, OFF_PRODUCER_ID, input.producerId ?? -1);
  v.setInt16(OFF_PRODUCER_EPOCH, input.producerEpoch ?? -1);
  v.setInt32(OFF_BASE_SEQUENCE, input.baseSequence ?? -1);
  v.setInt32(OFF_RECORDS_COUNT, n);
  out.set(section, BATCH_HEADER_SIZE);
  rewriteBatchCrc(out, 0, size);
  return out;
}

/** The (decompressed) records section of a batch, or null if compressed and no hook. */
export function recordsSection(
  batch: Uint8Array,
  decompress?: DecompressFn,
): Uint8Array | null {
  const attrs = dv(batch).getInt16(OFF_ATTRIBUTES);
  const codec = (attrs & ATTR_COMPRESSION_MASK) as CompressionCodec;
  const raw = batch.subarray(BATCH_HEADER_SIZE);
  if (codec === 0) return raw;
  if (!decompress) return null;
  return decompress(codec, raw);
}

/**
 * Walk the records' (offsetDelta, timestamp) pairs without materialising keys and values.
 * Used on the append path to compute the true max timestamp. Throws RecordFormatError.
 */
export function walkRecordTimestamps(
  section: Uint8Array,
  count: number,
  baseTimestamp: number,
  visit: (offsetDelta: number, timestamp: number) => void,
): void {
  const r = new Reader(section);
  for (let i = 0; i < count; i++) {
    const len = r.varint();
    const end = r.pos + len;
    if (len < 0 || end > section.length) throw new RecordFormatError("record length past end");
    r.byte(); // attributes
    const tsDelta = r.varlong();
    const offDelta = r.varint();
    visit(offDelta, baseTimestamp + tsDelta);
    r.pos = end;
  }
  if (r.pos !== section.length) throw new RecordFormatError("trailing bytes after records");
}

/**
 * The append path's walk: like walkRecordTimestamps without a callback (a closure per batch was
 * garbage on the hot path). Writes the smallest and largest record timestamp to span[0] and
 * span[1]; returns false when some record's offset delta is not its index (walk again with
 * walkRecordTimestamps to say which). Throws RecordFormatError.
 */
export function scanRecordTimestamps(
  section: Uint8Array,
  count: number,
  baseTimestamp: number,
  span: Float64Array,
): boolean {
  const r = new Reader(section);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let sequential = true;
  for (let i = 0; i < count; i++) {
    const len = r.varint();
    const end = r.pos + len;
    if (len < 0 || end > section.length) throw new RecordFormatError("record length past end");
    r.byte(); // attributes
    const ts = baseTimestamp + r.varlong();
    if (r.varint() !== i) sequential = false;
    if (ts < min) min = ts;
    if (ts > max) max = ts;
    r.pos = end;
  }
  if (r.pos !== section.length) throw new RecordFormatError("trailing bytes after records");
  span[0] = min;
  span[1] = max;
  return sequential;
}

function decodeRecord(r: Reader, baseOffset: number, baseTimestamp: number): KafkaRecord {
  const len = r.varint();
  if (len < 0) throw new RecordFormatError("negative record length");
  const end = r.pos + len;
  if (end > r.end) throw new RecordFormatError("record length past end");
  const sub = new Reader(r.buf, r.pos, end);
  sub.byte();
  const timestamp = baseTimestamp + sub.varlong();
  const offset = baseOffset + sub.varint();
  const kl = sub.varint();
  const key = kl < 0 ? null : sub.bytes(kl);
  const vl = sub.varint();
  const value = vl < 0 ? null : sub.bytes(vl);
  const hc = sub.varint();
  if (hc < 0 || hc > len) throw new RecordFormatError("bad header count");
  const headers: RecordHeader[] = [];
  for (let i = 0; i < hc; i++) {
    const hkl = sub.varint();
    if (hkl < 0) throw new RecordFormatError("null header key");
    let hk: string;
    try {
      hk = utf8d.decode(sub.bytes(hkl));
    } catch {
      throw new RecordFormatError("header key is not UTF-8");
    }
    const hvl = sub.varint();
    headers.push({ key: hk, value: hvl < 0 ? null : sub.bytes(hvl) });
  }
  if (sub.pos !== end) throw new RecordFormatError("record length mismatch");
  r.pos = end;
  return { offset, timestamp, key, value, headers };
}

export interface DecodedBatch {
  header: BatchHeader;
  /** null when the batch is compressed and no decompress hook was given. */
  records: KafkaRecord[] | null;
}

/**
 * Decode one batch at `pos` (structure already checked or not: this checks length and magic,
 * not CRC). Record timestamps follow LogAppendTime (all = maxTimestamp) when bit 3 is set.
 */
export function decodeRecordBatch(
  buf: Uint8Array,
  pos = 0,
  decompress?: DecompressFn,
): DecodedBatch {
  if (pos + BATCH_HEADER_SIZE > buf.length) throw new RecordFormatError("truncated batch header");
  const header = readBatchHeader(buf, pos);
  const size = BATCH_LOG_OVERHEAD + header.batchLength;
  if (header.batchLength < BATCH_HEADER_SIZE - BATCH_LOG_OVERHEAD || pos + size > buf.length) {
    throw new RecordFormatError("bad batch length");
  }
  if (header.magic !== 2) throw new RecordFormatError(`unsupported magic ${header.magic}`);
  if (header.recordsCount < 0) throw new RecordFormatError("negative record count");
  const section = recordsSection(buf.subarray(pos, pos + size), decompress);
  if (section === null) return { header, records: null };
  const r = new Reader(section);
  const records: KafkaRecord[] = [];
  const logAppend = (header.attributes & ATTR_TIMESTAMP_TYPE) !== 0;
  for (let i = 0; i < header.recordsCount; i++) {
    const rec = decodeRecord(r, header.baseOffset, header.baseTimestamp);
    if (logAppend) rec.timestamp = header.maxTimestamp;
    records.push(rec);
  }
  if (r.pos !== section.length) throw new RecordFormatError("trailing bytes after records");
  return { header, records };
}

/** Decode every whole batch in `buf` (e.g. a fetch response's records). Stops at a partial tail. */
export function decodeRecordBatches(buf: Uint8Array, decompress?: DecompressFn): DecodedBatch[] {
  const out: DecodedBatch[] = [];
  let pos = 0;
  while (pos + BATCH_HEADER_SIZE <= buf.length) {
    const size = batchSizeAt(buf, pos);
    if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
    out.push(decodeRecordBatch(buf, pos, decompress));
    pos += size;
  }
  return out;
}
