/** Response golden tests: hand-written frames, and zero-copy record slices in Fetch responses. */
import { describe, expect, test } from "bun:test";
import {
  concatChunks,
  decodeResponseFrame,
  encodeResponseFrame,
} from "../../../src/protocol/kafka/index.ts";
import { HANDWRITTEN_RESPONSES } from "./handwritten-responses.ts";

function fromHex(parts: string[]): Uint8Array {
  return new Uint8Array(Buffer.from(parts.join("").replace(/\s+/g, ""), "hex"));
}

describe("hand-written response frames", () => {
  for (const c of HANDWRITTEN_RESPONSES) {
    test(`api ${c.apiKey} v${c.version}`, () => {
      const expected = fromHex(c.hex);
      // The hand-counted size prefix agrees with the frame written out.
      expect(new DataView(expected.buffer).getInt32(0)).toBe(expected.length - 4);
      const encoded = concatChunks(
        encodeResponseFrame(c.apiKey, c.version, c.correlationId, c.body),
      );
      expect(Buffer.from(encoded).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
      const decoded = decodeResponseFrame(c.apiKey, c.version, expected.subarray(4));
      expect(decoded.correlationId).toBe(c.correlationId);
      expect(decoded.body).toMatchObject(c.body);
    });
  }
});

describe("fetch records are written by reference", () => {
  test("segment slices appear uncopied, in order, and decode as one subarray", () => {
    const a = new Uint8Array(4096).fill(1);
    const b = new Uint8Array(2048).fill(2);
    const chunks = encodeResponseFrame(1, 11, 42, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [{
        topic: "t",
        partitions: [{
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 10,
          lastStableOffset: 10,
          logStartOffset: 0,
          abortedTransactions: [],
          preferredReadReplica: -1,
          records: [a, b],
        }],
      }],
    });
    expect(chunks.includes(a)).toBe(true);
    expect(chunks.includes(b)).toBe(true);
    expect(chunks.indexOf(a)).toBeLessThan(chunks.indexOf(b));
    const frame = concatChunks(chunks);
    expect(new DataView(frame.buffer).getInt32(0)).toBe(frame.length - 4);
    const { body } = decodeResponseFrame(1, 11, frame.subarray(4));
    const topics = body.responses as { partitions: { records: Uint8Array }[] }[];
    const rec = topics[0].partitions[0].records;
    expect(rec.length).toBe(6144);
    expect(rec.buffer).toBe(frame.buffer); // a view into the input, not a copy
    expect(rec[0]).toBe(1);
    expect(rec[6143]).toBe(2);
  });
});
