// The producer fields of stored batches, as the chaos checker reads them from segment files.
import { expect, test } from "bun:test";
import { parseBatches } from "../../scripts/chaos/segments.ts";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";

test("batch headers from a segment: offsets, producer id, epoch, sequence; zeros end it", () => {
  const enc = new TextEncoder();
  const a = encodeRecordBatch({
    baseOffset: 0,
    records: [{ key: enc.encode("a"), value: null }, { key: enc.encode("b"), value: null }],
    producerId: 42,
    producerEpoch: 3,
    baseSequence: 17,
  });
  const b = encodeRecordBatch({
    baseOffset: 2,
    records: [{ key: enc.encode("c"), value: null }],
  });
  const seg = new Uint8Array(a.length + b.length + 4096); // zeros written ahead of the end
  seg.set(a);
  seg.set(b, a.length);
  expect(parseBatches(5, seg)).toEqual([
    { p: 5, base: 0, last: 1, pid: 42, epoch: 3, seq: 17 },
    { p: 5, base: 2, last: 2, pid: -1, epoch: -1, seq: -1 },
  ]);
  // A torn tail (a batch cut short) is not read.
  expect(parseBatches(5, seg.subarray(0, a.length + b.length - 1))).toHaveLength(1);
});
