// The one-pass text/plain encoder (text-batches.ts) against the record path it stands in for:
// a body that fits one batch encodes to exactly encodeRecordBatch(textRecords(body)); a larger
// one splits into batches under the limit that decode to the same records, in order.
import { expect, test } from "bun:test";
import { textRecords } from "../../src/http/produce.ts";
import { countLines, encodeTextBatches } from "../../src/http/text-batches.ts";
import {
  batchSizeAt,
  checkBatchStructure,
  decodeRecordBatches,
  encodeRecordBatch,
} from "../../src/protocol/record-batch.ts";
import { seededRandom } from "../../src/storage/crash-fs.ts";

const enc = new TextEncoder();

function randomBody(rnd: () => number, lines: number): Uint8Array {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    const k = rnd();
    const len = k < 0.1 ? 0 : k < 0.9 ? Math.floor(rnd() * 90) : 100 + Math.floor(rnd() * 300);
    let s = "";
    for (let j = 0; j < len; j++) s += "ab:c::xé\r"[Math.floor(rnd() * 9)];
    parts.push(s + (rnd() < 0.2 ? "\r" : ""));
  }
  return enc.encode(parts.join("\n") + (rnd() < 0.5 ? "\n" : ""));
}

const bytesOf = (a: Uint8Array | null | undefined) => (a == null ? null : [...a]);

test("a body that fits one batch: the bytes encodeRecordBatch makes of its lines", () => {
  const rnd = seededRandom(180);
  for (let round = 0; round < 200; round++) {
    const body = randomBody(rnd, 1 + Math.floor(rnd() * 40));
    const mode = Math.floor(rnd() * 3);
    const key = mode === 1 ? enc.encode("fixed-key") : null;
    const sep = mode === 2 ? (rnd() < 0.5 ? ":" : "::") : undefined;
    const records = textRecords(body, mode === 1 ? "fixed-key" : undefined, sep);
    const got = encodeTextBatches(
      body,
      key,
      sep === undefined ? undefined : enc.encode(sep),
      1 << 20,
      1234,
    );
    expect(got.records).toBe(records.length);
    expect(countLines(body)).toBe(records.length);
    const want = encodeRecordBatch({ records: records.map((r) => r.input), baseTimestamp: 1234 });
    expect([...got.bytes]).toEqual([...want]);
    expect(got.payload).toBe(
      records.reduce((n, r) => n + (r.input.key?.length ?? 0) + (r.input.value?.length ?? 0), 0),
    );
  }
});

test("a larger body: batches within the limit, valid, holding every line in order", () => {
  const rnd = seededRandom(181);
  for (const limit of [200, 1000, 4096]) {
    const body = randomBody(rnd, 500);
    const records = textRecords(body, undefined, ":");
    // A dirty buffer: every byte returned must be written.
    const got = encodeTextBatches(
      body,
      null,
      enc.encode(":"),
      limit,
      99,
      (n) => new Uint8Array(n).fill(0xaa),
    );
    let batches = 0;
    for (let pos = 0; pos < got.bytes.length; batches++) {
      const size = batchSizeAt(got.bytes, pos);
      expect(checkBatchStructure(got.bytes, pos)).toBeNull();
      // Over the limit only when the batch is a single record that alone exceeds it.
      const count = new DataView(got.bytes.buffer, got.bytes.byteOffset).getInt32(pos + 57);
      if (size > limit) expect(count).toBe(1);
      pos += size;
    }
    expect(batches).toBeGreaterThan(1);
    const decoded = decodeRecordBatches(got.bytes).flatMap((b) => b.records!);
    expect(decoded.length).toBe(records.length);
    decoded.forEach((r, i) => {
      expect(bytesOf(r.key)).toEqual(bytesOf(records[i].input.key));
      expect([...r.value!]).toEqual([...records[i].input.value!]);
      expect(r.timestamp).toBe(99);
    });
  }
});

test("an empty body has no records and no bytes", () => {
  const got = encodeTextBatches(new Uint8Array(0), null, undefined, 1 << 20, 1);
  expect(got.records).toBe(0);
  expect(got.bytes.length).toBe(0);
});
