// `broker consume` output straight from stored record batches: each record's fields are copied
// as bytes into the output buffer, with no record objects, no UTF-8 decoding into strings and no
// re-encoding on the way out (that was most of the CLI's time on a bulk read). The text is the
// same as formatting decoded records (consume.ts `formatter`): a key or value that is valid
// UTF-8 is shown as is (a leading BOM dropped, as TextDecoder does), anything else as base64.
import { isAscii, isUtf8 } from "node:buffer";
import {
  ATTR_CONTROL,
  ATTR_TIMESTAMP_TYPE,
  BATCH_HEADER_SIZE,
  batchSizeAt,
  readBatchHeader,
  Reader,
  RecordFormatError,
  recordsSection,
} from "../protocol/record-batch.ts";
import { decompress } from "../protocol/compression/index.ts";
import type { Output } from "./output.ts";

type Field = "topic" | "partition" | "offset" | "timestamp" | "key" | "value";

/** A --format template split into literal text and fields, ready for byte output. */
export interface ByteTemplate {
  /** UTF-8 text before each field, and after the last (with the newline). */
  literals: Uint8Array[];
  fields: Field[];
}

const utf8 = new TextEncoder();
const FIELDS = /\{(topic|partition|offset|timestamp|key|value|headers)\}/g;

/**
 * The template as literals and fields, or undefined when it needs decoded records (--json, or
 * {headers}, which formatter renders from decoded headers).
 */
export function byteTemplate(
  template: string | undefined,
  asJson: boolean,
): ByteTemplate | undefined {
  if (asJson) return undefined;
  const t = (template ?? "{value}").replaceAll("\\n", "\n").replaceAll("\\t", "\t");
  const pieces = (t + "\n").split(FIELDS);
  const literals: Uint8Array[] = [];
  const fields: Field[] = [];
  for (let i = 0; i < pieces.length; i++) {
    if (i % 2 === 0) literals.push(utf8.encode(pieces[i]));
    else if (pieces[i] === "headers") return undefined;
    else fields.push(pieces[i] as Field);
  }
  return { literals, fields };
}

/** Key or value bytes as text: UTF-8 as is (without a BOM), else base64. */
function putText(out: Output, buf: Uint8Array, start: number, len: number): void {
  if (len <= 0) return;
  const end = start + len;
  // ASCII (the common case) is copied as it is checked, without a view per record: half a
  // million small views cost more in garbage collection than the copying.
  if (out.pushAscii(buf, start, end)) return;
  const b = buf.subarray(start, end);
  if (!isUtf8(b)) {
    out.push(Buffer.from(b.buffer, b.byteOffset, b.length).toString("base64"));
    return;
  }
  if (len >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) out.pushBytes(b.subarray(3));
  else out.pushBytes(b);
}

/** Where the last `varint` ended (module scope: a value and a position without an object). */
let varintEnd = 0;

/** The zigzag varint at `p` of `b` (int32); sets varintEnd. */
function varint(b: Uint8Array, p: number): number {
  let raw = 0;
  for (let shift = 0; shift <= 28; shift += 7) {
    if (p >= b.length) throw new RecordFormatError("unexpected end of records");
    const c = b[p++];
    if (shift === 28 && (c & 0xf0) !== 0) throw new RecordFormatError("varint too long");
    raw |= (c & 0x7f) << shift;
    if (c < 0x80) {
      varintEnd = p;
      return (raw >>> 1) ^ -(raw & 1);
    }
  }
  throw new RecordFormatError("varint too long");
}

/** Past the varlong at `p` (a timestamp delta not shown). */
function skipVarlong(b: Uint8Array, p: number): number {
  for (let i = 0; i < 10; i++) {
    if (p >= b.length) throw new RecordFormatError("unexpected end of records");
    if (b[p++] < 0x80) return p;
  }
  throw new RecordFormatError("varlong too long");
}

/** The record `nextRecord` read last (module scope: no object per record). */
let recOffsetDelta = 0;
let recValueStart = 0;
let recValueLen = 0;

/** Reads the record at `p` of a records section (its offset delta and value); where it ends. */
function nextRecord(s: Uint8Array, p: number): number {
  const len = varint(s, p);
  p = varintEnd;
  const end = p + len;
  if (len < 0 || end > s.length) throw new RecordFormatError("record length past end");
  p = skipVarlong(s, p + 1); // attributes, timestamp delta
  recOffsetDelta = varint(s, p);
  const kl = varint(s, varintEnd);
  p = varintEnd + (kl > 0 ? kl : 0);
  recValueLen = varint(s, p);
  recValueStart = varintEnd;
  if (recValueStart + (recValueLen > 0 ? recValueLen : 0) > end) {
    throw new RecordFormatError("record length past end");
  }
  return end; // headers: not shown
}

/** One batch's records section for the default template, and what to print of it. */
interface Values {
  s: Uint8Array;
  count: number;
  baseOffset: number;
  from: number;
  max: number;
  suffix: Uint8Array;
  out: Output;
}

interface Printed {
  records: number;
  /** The offset printing stopped at when `max` was reached. */
  stoppedAt?: number;
}

/**
 * The default template (`{value}` and a suffix, the newline) over one batch's records section,
 * for the common case of ASCII values: each value is copied by one native call into room reserved
 * once per batch (a value is never longer than the section holding it), and what was written is
 * checked once (isAscii) rather than byte by byte in JavaScript. Undefined, with nothing
 * written, when something is not ASCII (printValues then does it value by value).
 */
function copyAsciiValues(v: Values): Printed | undefined {
  const { s, count, baseOffset, from, max, suffix, out } = v;
  const src = Buffer.from(s.buffer, s.byteOffset, s.length);
  const buf = out.reserve(s.length + count * suffix.length);
  const w0 = out.at;
  let w = w0;
  let n = 0;
  let p = 0;
  for (let i = 0; i < count; i++) {
    p = nextRecord(s, p);
    const offset = baseOffset + recOffsetDelta;
    if (offset < from) continue;
    if (n >= max) {
      if (!isAscii(buf.subarray(w0, w))) return undefined;
      out.commit(w);
      return { records: n, stoppedAt: offset };
    }
    n++;
    if (recValueLen > 0) w += src.copy(buf, w, recValueStart, recValueStart + recValueLen);
    for (let k = 0; k < suffix.length; k++) buf[w++] = suffix[k];
  }
  if (p !== s.length) throw new RecordFormatError("trailing bytes after records");
  if (!isAscii(buf.subarray(w0, w))) return undefined;
  out.commit(w);
  return { records: n };
}

/**
 * The default template over one batch's records section, value by value: each ASCII value is
 * copied as it is checked, others go through putText. Returns how many were printed, and the
 * offset it stopped at when `max` did.
 */
function printValues(v: Values): Printed {
  const { s, count, baseOffset, from, max, suffix, out } = v;
  let n = 0;
  let p = 0;
  let buf = out.reserve(s.length + count * suffix.length);
  let w = out.at;
  for (let i = 0; i < count; i++) {
    p = nextRecord(s, p);
    const offset = baseOffset + recOffsetDelta;
    if (offset < from) continue;
    if (n >= max) {
      out.commit(w);
      return { records: n, stoppedAt: offset };
    }
    n++;
    const vStart = recValueStart;
    const vl = recValueLen;
    const w0 = w;
    let any = 0;
    for (let k = vStart; k < vStart + vl; k++) {
      const c = s[k];
      any |= c;
      buf[w++] = c;
    }
    if (any >= 0x80) {
      out.commit(w0);
      putText(out, s, vStart, vl);
      buf = out.reserve(s.length - p + (count - i) * suffix.length);
      w = out.at;
    }
    for (let k = 0; k < suffix.length; k++) buf[w++] = suffix[k];
  }
  if (p !== s.length) throw new RecordFormatError("trailing bytes after records");
  out.commit(w);
  return { records: n };
}

/**
 * Writes the records of whole batches in `buf` at or after offset `from` (at most `max`; control
 * batches skipped) to `out`; returns how many were written and where the next read starts (past
 * every whole batch, or past the last record written when `max` stopped it).
 */
export function printBatches(
  buf: Uint8Array,
  topic: string,
  partition: number,
  from: number,
  max: number,
  t: ByteTemplate,
  out: Output,
): { records: number; next: number } {
  let n = 0;
  let next = from;
  const partText = String(partition);
  const asciiSuffix = t.fields.length === 1 && isAscii(t.literals[1]);
  for (let pos = 0; pos + BATCH_HEADER_SIZE <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
    const h = readBatchHeader(buf, pos);
    if (h.magic !== 2) throw new RecordFormatError(`unsupported magic ${h.magic}`);
    const batch = buf.subarray(pos, pos + size);
    pos += size;
    const batchNext = h.baseOffset + h.lastOffsetDelta + 1;
    if ((h.attributes & ATTR_CONTROL) !== 0 || batchNext <= from) {
      next = Math.max(next, batchNext);
      continue;
    }
    const section = recordsSection(batch, decompress)!;
    if (t.fields.length === 1 && t.fields[0] === "value" && t.literals[0].length === 0) {
      const v: Values = {
        s: section,
        count: h.recordsCount,
        baseOffset: h.baseOffset,
        from,
        max: max - n,
        suffix: t.literals[1],
        out,
      };
      const done = (asciiSuffix ? copyAsciiValues(v) : undefined) ?? printValues(v);
      n += done.records;
      if (done.stoppedAt !== undefined) return { records: n, next: Math.max(next, done.stoppedAt) };
      next = Math.max(next, batchNext);
      continue;
    }
    const logAppend = (h.attributes & ATTR_TIMESTAMP_TYPE) !== 0;
    const r = new Reader(section);
    for (let i = 0; i < h.recordsCount; i++) {
      const len = r.varint();
      const end = r.pos + len;
      if (len < 0 || end > section.length) throw new RecordFormatError("record length past end");
      r.pos++; // attributes
      const tsDelta = r.varlong();
      const offset = h.baseOffset + r.varint();
      const kl = r.varint();
      const kStart = r.pos;
      if (kl > 0) r.pos += kl;
      const vl = r.varint();
      const vStart = r.pos;
      if (vl > 0) r.pos += vl;
      if (r.pos > end) throw new RecordFormatError("record length past end");
      r.pos = end; // headers: not shown by byte templates
      if (offset < from) continue;
      if (n >= max) return { records: n, next: Math.max(next, offset) };
      n++;
      for (let f = 0; f < t.fields.length; f++) {
        if (t.literals[f].length > 0) out.pushBytes(t.literals[f]);
        switch (t.fields[f]) {
          case "value":
            putText(out, section, vStart, vl);
            break;
          case "key":
            putText(out, section, kStart, kl);
            break;
          case "offset":
            out.push(String(offset));
            break;
          case "partition":
            out.push(partText);
            break;
          case "timestamp":
            out.push(String(logAppend ? h.maxTimestamp : h.baseTimestamp + tsDelta));
            break;
          case "topic":
            out.push(topic);
            break;
        }
      }
      out.pushBytes(t.literals[t.fields.length]);
    }
    if (r.pos !== section.length) throw new RecordFormatError("trailing bytes after records");
    next = Math.max(next, batchNext);
  }
  return { records: n, next };
}

/** Where the read after these whole batches starts: past the last of them (or `from`). */
export function batchesEnd(buf: Uint8Array, from: number): number {
  let next = from;
  for (let pos = 0; pos + BATCH_HEADER_SIZE <= buf.length;) {
    const size = batchSizeAt(buf, pos);
    if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
    const h = readBatchHeader(buf, pos);
    next = Math.max(next, h.baseOffset + h.lastOffsetDelta + 1);
    pos += size;
  }
  return next;
}
