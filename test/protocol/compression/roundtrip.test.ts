import { describe, expect, test } from "bun:test";
import {
  Codec,
  codecFromName,
  codecName,
  compress,
  type CompressOptions,
  decompress,
} from "../../../src/protocol/compression/index.ts";
import { equalBytes, errorCode, jsonish, randomBytes } from "./plaintext.ts";

const SIZES = [0, 1, 2, 15, 100, 4095, 65535, 65536, 65537, 1 << 20];
const VARIANTS: [string, number, CompressOptions][] = [
  ["none", Codec.None, {}],
  ["gzip", Codec.Gzip, {}],
  ["snappy raw", Codec.Snappy, {}],
  ["snappy xerial", Codec.Snappy, { xerial: true }],
  ["lz4 0x60", Codec.Lz4, {}],
  ["lz4 all flags", Codec.Lz4, {
    lz4: { contentSize: true, contentChecksum: true, blockChecksum: true },
  }],
  ["zstd", Codec.Zstd, { zstdChecksum: true }],
];

describe("round trips", () => {
  for (const [name, codec, opts] of VARIANTS) {
    test(`${name}: random and compressible data, sizes 0..1 MiB`, () => {
      for (const n of SIZES) {
        for (const [kind, data] of [["random", randomBytes(n, n + 1)], ["json", jsonish(n, n)]]) {
          const c = compress(codec, data as Uint8Array, opts);
          const d = decompress(codec, c);
          if (!equalBytes(d, data as Uint8Array)) throw new Error(`${name} ${kind} ${n} mismatch`);
          if (codec !== Codec.None && kind === "json" && n >= 4095) {
            // A real compressor, not a framing of literals.
            expect(c.length).toBeLessThan(n * 0.6);
          }
        }
      }
    });
  }

  test("long runs and overlapping matches", () => {
    const data = new Uint8Array(300_000);
    for (let i = 0; i < data.length; i++) data[i] = i < 100_000 ? 7 : (i % 3) + (i >> 16);
    for (const [name, codec, opts] of VARIANTS) {
      const c = compress(codec, data, opts);
      expect(equalBytes(decompress(codec, c), data)).toBe(true);
      if (codec !== Codec.None) expect(c.length, name).toBeLessThan(20_000);
    }
  });

  test("decompress honours a limit exactly at the decoded size", () => {
    const data = jsonish(10_000, 3);
    for (const [, codec, opts] of VARIANTS) {
      const c = compress(codec, data, opts);
      expect(decompress(codec, c, { maxOutputBytes: 10_000 }).length).toBe(10_000);
      expect(errorCode(() => decompress(codec, c, { maxOutputBytes: 9_999 }))).toBe("OUTPUT_LIMIT");
    }
  });

  test("subarray inputs (non-zero byteOffset) decode", () => {
    const data = jsonish(50_000, 9);
    for (const [, codec, opts] of VARIANTS) {
      const c = compress(codec, data, opts);
      const padded = new Uint8Array(c.length + 13);
      padded.set(c, 7);
      expect(equalBytes(decompress(codec, padded.subarray(7, 7 + c.length)), data)).toBe(true);
    }
  });

  test("codec names", () => {
    expect(codecName(3)).toBe("lz4");
    expect(codecFromName("zstd")).toBe(4);
    expect(codecFromName("brotli")).toBeUndefined();
    expect(codecName(5)).toBeUndefined();
  });
});

test("results are plain Uint8Arrays whose slice() copies", () => {
  for (const codec of [Codec.Gzip, Codec.Snappy, Codec.Lz4, Codec.Zstd]) {
    const c = compress(codec, jsonish(1000, 1));
    const d = decompress(codec, c);
    for (const a of [c, d]) {
      expect(Buffer.isBuffer(a)).toBe(false);
      const copy = a.slice();
      copy[0] ^= 0xff;
      expect(copy[0]).not.toBe(a[0]);
    }
  }
});
