// Message sets of format v0/v1 written as clients before Kafka 0.11 write them (for the
// up-conversion tests): offset, size, CRC-32 (IEEE) of magic..end, magic, attributes,
// [timestamp], key, value.
import { compress } from "../../src/protocol/compression/index.ts";

const te = new TextEncoder();

export interface Msg {
  key: string | null;
  value: string | null;
  timestamp?: number;
}

/** One v0/v1 message (with its offset and size prefix), written as a pre-0.11 client does. */
export function message(
  magic: 0 | 1,
  codec: number,
  key: Uint8Array | null,
  value: Uint8Array | null,
  ts = -1,
  offset = 0,
) {
  const body: number[] = [];
  const i32 = (n: number) =>
    body.push((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
  body.push(magic, codec);
  if (magic === 1) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigInt64(0, BigInt(ts));
    body.push(...b);
  }
  for (const f of [key, value]) {
    if (f === null) i32(-1);
    else {
      i32(f.length);
      body.push(...f);
    }
  }
  const m = new Uint8Array(8 + 4 + 4 + body.length);
  const v = new DataView(m.buffer);
  v.setBigInt64(0, BigInt(offset));
  v.setInt32(8, 4 + body.length);
  m.set(body, 16);
  v.setUint32(12, Bun.hash.crc32(m.subarray(16)) >>> 0);
  return m;
}

export function set(magic: 0 | 1, msgs: Msg[]): Uint8Array {
  const parts = msgs.map((m, i) =>
    message(
      magic,
      0,
      m.key === null ? null : te.encode(m.key),
      m.value === null ? null : te.encode(m.value),
      m.timestamp ?? -1,
      i,
    )
  );
  return Buffer.concat(parts);
}

export function wrapped(magic: 0 | 1, codec: number, msgs: Msg[], ts = -1): Uint8Array {
  return message(magic, codec, null, compress(codec, set(magic, msgs)), ts);
}
