import { expect, test } from "bun:test";
import { xxh32 } from "../../../src/protocol/compression/index.ts";

const enc = new TextEncoder();

test("xxh32 reference vectors", () => {
  // Values from the xxHash reference implementation (XXH32, seed 0 unless given).
  expect(xxh32(enc.encode(""))).toBe(0x02cc5d05);
  expect(xxh32(enc.encode("a"))).toBe(0x550d7456);
  expect(xxh32(enc.encode("abc"))).toBe(0x32d153ff);
  expect(xxh32(enc.encode("Nobody inspects the spammish repetition"))).toBe(0xe2293b2f);
  expect(xxh32(enc.encode(""), 0, 0, 1)).toBe(0x0b2cb792);
});

test("xxh32 over a sub-range equals xxh32 of the copied range", () => {
  const buf = enc.encode("0123456789abcdefghijklmnopqrstuvwxyz0123456789");
  for (const [s, e] of [[0, 46], [3, 20], [5, 6], [1, 45]]) {
    expect(xxh32(buf, s, e)).toBe(xxh32(buf.slice(s, e)));
  }
});
