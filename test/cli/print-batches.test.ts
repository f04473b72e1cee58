// broker consume's byte path (print-batches.ts) against the decoded path it replaces for bulk
// reads: for random batches (binary and UTF-8 values, BOMs, null keys, headers, control batches,
// compression, log-append time) every template must print the same bytes as formatting the
// decoded records, from any start offset and up to any count.
import { expect, test } from "bun:test";
import { decodeBatches, formatter } from "../../src/cli/consume.ts";
import { Output } from "../../src/cli/output.ts";
import { batchesEnd, byteTemplate, printBatches } from "../../src/cli/print-batches.ts";
import { compress } from "../../src/protocol/compression/index.ts";
import {
  ATTR_CONTROL,
  ATTR_TIMESTAMP_TYPE,
  encodeRecordBatch,
  type RecordInput,
} from "../../src/protocol/record-batch.ts";
import { seededRandom } from "../../src/storage/crash-fs.ts";

const enc = new TextEncoder();

function randomBytes(rnd: () => number): Uint8Array | null {
  const kind = Math.floor(rnd() * 8);
  if (kind === 0) return null;
  if (kind === 1) return new Uint8Array(Math.floor(rnd() * 4)).map(() => Math.floor(rnd() * 256));
  if (kind === 2) return enc.encode("\uFEFFbom-" + Math.floor(rnd() * 1000));
  if (kind === 3) return enc.encode("héllo wörld ✓ " + "x".repeat(Math.floor(rnd() * 100)));
  if (kind === 4) return new Uint8Array(0);
  // Long values take the output's bulk copy; one that is not UTF-8 at its end must not (base64).
  if (kind === 5) return enc.encode("y".repeat(256 + Math.floor(rnd() * 300)));
  if (kind === 6) {
    return Buffer.concat([
      enc.encode("z".repeat(256 + Math.floor(rnd() * 300))),
      Buffer.from([0xff]),
    ]);
  }
  return enc.encode(`v${Math.floor(rnd() * 1e6)}`);
}

function randomLog(rnd: () => number): { buf: Uint8Array; first: number; last: number } {
  const parts: Uint8Array[] = [];
  let offset = 100;
  for (let b = 0; b < 12; b++) {
    const n = 1 + Math.floor(rnd() * 5);
    const records: RecordInput[] = [];
    for (let i = 0; i < n; i++) {
      records.push({
        key: randomBytes(rnd),
        value: randomBytes(rnd),
        timestamp: 1_700_000_000_000 + Math.floor(rnd() * 1000),
        headers: rnd() < 0.3 ? [{ key: "h", value: enc.encode("1") }] : [],
      });
    }
    const control = rnd() < 0.15;
    parts.push(encodeRecordBatch({
      baseOffset: offset,
      baseTimestamp: 1_700_000_000_000,
      attributes: (control ? ATTR_CONTROL : 0) | (rnd() < 0.2 ? ATTR_TIMESTAMP_TYPE : 0),
      codec: rnd() < 0.3 ? 1 : 0,
      compress: (c, d) => compress(c, d),
      records,
    }));
    offset += n;
  }
  return { buf: Buffer.concat(parts), first: 100, last: offset - 1 };
}

const TEMPLATES = [
  undefined, // {value}: print-batches.ts's own loop, as "{value};"
  "{value};",
  "{key}={value}",
  "{topic}/{partition}@{offset} {timestamp}\\t[{key}]",
  "é{value}✓",
];

test("printBatches prints what formatting the decoded records prints", () => {
  const rnd = seededRandom(18);
  for (let round = 0; round < 60; round++) {
    const { buf, first, last } = randomLog(rnd);
    const from = first + Math.floor(rnd() * (last - first + 2));
    const max = rnd() < 0.5 ? Number.MAX_SAFE_INTEGER : Math.floor(rnd() * 20);
    for (const t of TEMPLATES) {
      const want = decodeBatches(buf, "orders", 3, from);
      const fmt = formatter(t, false);
      const text = want.records.slice(0, max).map(fmt).join("");
      const out = new Output();
      const got = printBatches(buf, "orders", 3, from, max, byteTemplate(t, false)!, out);
      const bytes = out.take();
      expect(Buffer.from(bytes).toString("utf8")).toBe(text);
      expect(got.records).toBe(Math.min(max, want.records.length));
      if (max >= want.records.length) expect(got.next).toBe(want.next);
      expect(batchesEnd(buf, from)).toBe(want.next);
    }
  }
});

test("byteTemplate leaves --json and {headers} to the decoded path", () => {
  expect(byteTemplate(undefined, true)).toBeUndefined();
  expect(byteTemplate("{value} {headers}", false)).toBeUndefined();
  expect(byteTemplate(undefined, false)?.fields).toEqual(["value"]);
});

test("printBatches stops at a batch cut short and refuses a damaged record", () => {
  const b = encodeRecordBatch({
    baseOffset: 5,
    records: [{ value: enc.encode("a") }, { value: enc.encode("b") }],
  });
  const out = new Output();
  expect(
    printBatches(b.subarray(0, b.length - 1), "t", 0, 0, 10, byteTemplate(undefined, false)!, out),
  )
    .toEqual({ records: 0, next: 0 });
  const bad = b.slice();
  bad[61] = 0x7f; // the first record's length, past the section
  expect(() => printBatches(bad, "t", 0, 0, 10, byteTemplate(undefined, false)!, out)).toThrow();
});
