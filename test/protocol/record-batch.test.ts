import { expect, test } from "bun:test";
import {
  checkBatchStructure,
  type CompressionCodec,
  decodeRecordBatch,
  decodeRecordBatches,
  encodeRecordBatch,
  readBatchHeader,
  Reader,
  RecordFormatError,
  type RecordInput,
  walkRecordTimestamps,
  Writer,
} from "../../src/protocol/record-batch.ts";
import { seededRandom } from "../../src/storage/crash-fs.ts";

function randomBytes(rnd: () => number, max: number): Uint8Array {
  return Uint8Array.from({ length: Math.floor(rnd() * max) }, () => Math.floor(rnd() * 256));
}

test("varint and varlong round-trip including extremes", () => {
  const rnd = seededRandom(3);
  const ints = [0, 1, -1, 63, -64, 64, 2147483647, -2147483648];
  const longs = [
    0,
    -1,
    96216540567,
    -96216540567,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ];
  for (let i = 0; i < 500; i++) {
    ints.push(Math.floor(rnd() * 2 ** 32) | 0);
    longs.push(Math.floor((rnd() - 0.5) * 2 ** 53));
  }
  const w = new Writer();
  for (const n of ints) w.varint(n);
  for (const n of longs) w.varlong(n);
  const r = new Reader(w.result());
  for (const n of ints) expect(r.varint()).toBe(n);
  for (const n of longs) expect(r.varlong()).toBe(n);
  expect(r.pos).toBe(w.pos);
  expect(() => new Reader(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01)).varint()).toThrow(
    RecordFormatError,
  );
});

test("seeded property: encode/decode round-trips records (headers, nulls, big deltas)", () => {
  const rnd = seededRandom(11);
  const fakeCodec = (_c: CompressionCodec, b: Uint8Array) => b.slice().reverse();
  for (let iter = 0; iter < 300; iter++) {
    const base = 1_600_000_000_000 + Math.floor(rnd() * 1e11);
    const n = 1 + Math.floor(rnd() * 20);
    const records: RecordInput[] = [];
    for (let i = 0; i < n; i++) {
      const headers = Array.from({ length: Math.floor(rnd() * 3) }, (_, k) => ({
        key: `h${k}-é${Math.floor(rnd() * 100)}`,
        value: rnd() < 0.3 ? null : randomBytes(rnd, 20),
      }));
      records.push({
        key: rnd() < 0.3 ? null : randomBytes(rnd, 40),
        value: rnd() < 0.2 ? null : randomBytes(rnd, 300),
        headers,
        timestamp: base + Math.floor((rnd() - 0.3) * 2e11),
      });
    }
    const codec = (rnd() < 0.3 ? 1 : 0) as CompressionCodec;
    const bytes = encodeRecordBatch({
      records,
      baseOffset: Math.floor(rnd() * 1e12),
      producerId: rnd() < 0.5 ? -1 : Math.floor(rnd() * 1e9),
      producerEpoch: 3,
      baseSequence: 17,
      codec,
      compress: fakeCodec,
      baseTimestamp: records[0].timestamp,
    });
    expect(checkBatchStructure(bytes, 0)).toBeNull();
    const d = decodeRecordBatch(bytes, 0, codec ? fakeCodec : undefined);
    expect(d.header.recordsCount).toBe(n);
    expect(d.header.lastOffsetDelta).toBe(n - 1);
    expect(d.header.maxTimestamp).toBe(Math.max(...records.map((r) => r.timestamp!)));
    d.records!.forEach((r, i) => {
      expect(r.offset).toBe(d.header.baseOffset + i);
      expect(r.timestamp).toBe(records[i].timestamp!);
      expect(r.key).toEqual(records[i].key ?? null);
      expect(r.value).toEqual(records[i].value ?? null);
      expect(r.headers).toEqual(records[i].headers!);
    });
    if (codec) expect(decodeRecordBatch(bytes, 0).records).toBeNull();
    else {
      const ts: number[] = [];
      walkRecordTimestamps(bytes.subarray(61), n, d.header.baseTimestamp, (_o, t) => ts.push(t));
      expect(ts).toEqual(records.map((r) => r.timestamp!));
    }
  }
});

test("damaged batches are detected", () => {
  const b = encodeRecordBatch({ records: [{ value: new Uint8Array(10), timestamp: 5 }] });
  expect(readBatchHeader(b).crc).toBeGreaterThan(0);
  const flipped = b.slice();
  flipped[40] ^= 1;
  expect(checkBatchStructure(flipped, 0)).toBe("CRC mismatch");
  expect(checkBatchStructure(b.subarray(0, b.length - 1), 0)).toMatch(/past the end/);
  const trailing = b.slice();
  trailing[61] = 0x7e; // record length varint now too large
  expect(() => decodeRecordBatch(trailing, 0)).toThrow(RecordFormatError);
  expect(decodeRecordBatches(new Uint8Array([...b, ...b, 0, 0])).length).toBe(2);
});
