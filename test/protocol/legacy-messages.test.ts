// Message format v0/v1 up-converted into one RecordBatch v2 (what Produce v0-v2 carries from
// clients before Kafka 0.11): every message, in order, with key, value and timestamp, in the
// producer's codec; corrupt sets are refused with CORRUPT_MESSAGE.
import { describe, expect, test } from "bun:test";
import { compress, decompress } from "../../src/protocol/compression/index.ts";
import {
  LegacyMessageError,
  recordsMagic,
  upconvertMessageSet,
} from "../../src/protocol/legacy-messages.ts";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { message, type Msg, set, wrapped } from "../helpers/legacy-messages.ts";

const te = new TextEncoder();
const td = new TextDecoder();

function decoded(batch: Uint8Array) {
  const [b] = decodeRecordBatches(batch, (c, bytes) => decompress(c, bytes));
  return {
    codec: new DataView(batch.buffer, batch.byteOffset).getInt16(21) & 7,
    records: b.records!.map((r) => ({
      key: r.key === null ? null : td.decode(r.key),
      value: r.value === null ? null : td.decode(r.value),
      timestamp: r.timestamp,
    })),
  };
}

const MSGS: Msg[] = [
  { key: "k0", value: "v0", timestamp: 1_700_000_000_000 },
  { key: null, value: "v1", timestamp: 1_700_000_000_005 },
  { key: "k2", value: null, timestamp: 1_700_000_000_002 },
];

describe("legacy message sets", () => {
  test("v1, plain: keys, values, nulls and timestamps, in order; magic is read", () => {
    const s = set(1, MSGS);
    expect(recordsMagic(s)).toBe(1);
    const out = upconvertMessageSet(s, { now: 5 });
    expect(recordsMagic(out)).toBe(2);
    expect(decoded(out)).toEqual({ codec: 0, records: MSGS as never });
  });

  test("v0 carries no timestamp: the broker's time is the create time", () => {
    const out = decoded(upconvertMessageSet(set(0, MSGS), { now: 42 }));
    expect(out.records.map((r) => [r.key, r.value, r.timestamp])).toEqual([
      ["k0", "v0", 42],
      [null, "v1", 42],
      ["k2", null, 42],
    ]);
  });

  for (const [name, codec] of [["gzip", 1], ["snappy", 2], ["lz4", 3]] as const) {
    test(`v1 ${name} wrapper: the inner messages, stored in ${name}`, () => {
      const out = decoded(upconvertMessageSet(wrapped(1, codec, MSGS, 99), { now: 5 }));
      expect(out).toEqual({ codec, records: MSGS as never });
    });
  }

  test("several wrappers and plain messages in one set become one batch", () => {
    const s = Buffer.concat([wrapped(1, 1, MSGS.slice(0, 2)), set(1, MSGS.slice(2))]);
    expect(decoded(upconvertMessageSet(s, { now: 5 })).records).toEqual(MSGS as never);
  });

  test("two million messages in one set (a 55 MB request) become one batch", () => {
    const one = message(0, 0, null, te.encode("x"));
    const n = 2_000_000;
    const s = new Uint8Array(one.length * n);
    for (let i = 0; i < n; i++) s.set(one, i * one.length);
    const out = upconvertMessageSet(s, { now: 5 });
    const v = new DataView(out.buffer, out.byteOffset);
    expect(v.getInt32(23)).toBe(n - 1); // last offset delta
    expect(v.getInt32(57)).toBe(n); // record count
  });

  test("refused: CRC mismatch, truncation, nested compression, empty set", () => {
    const bad = set(1, MSGS);
    bad[bad.length - 1] ^= 1;
    const nested = message(1, 1, null, compress(1, wrapped(1, 1, MSGS)), 5);
    for (
      const [s, why] of [
        [bad, "CRC"],
        [set(1, MSGS).subarray(0, 30), "does not fit"],
        [nested, "inside a compressed"],
        [new Uint8Array(0), "no messages"],
      ] as const
    ) {
      let err: unknown;
      try {
        upconvertMessageSet(s, { now: 5 });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LegacyMessageError);
      expect((err as Error).message).toContain(why);
      expect([2, 87]).toContain((err as LegacyMessageError).errorCode);
    }
  });
});
