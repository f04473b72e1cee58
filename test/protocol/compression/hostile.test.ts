import { describe, expect, test } from "bun:test";
import {
  Codec,
  compress,
  type CompressOptions,
  decompress,
  xxh32,
} from "../../../src/protocol/compression/index.ts";
import { errorCode, jsonish, prng, randomBytes } from "./plaintext.ts";

const sample = jsonish(20_000, 11);
const CHECKED: [string, number, CompressOptions][] = [
  ["gzip", Codec.Gzip, {}],
  ["snappy", Codec.Snappy, {}],
  ["snappy xerial", Codec.Snappy, { xerial: true }],
  ["lz4", Codec.Lz4, {}],
  ["lz4 checksums", Codec.Lz4, { lz4: { contentChecksum: true, blockChecksum: true } }],
  ["zstd", Codec.Zstd, {}],
  ["zstd checksum", Codec.Zstd, { zstdChecksum: true }],
];

function timed<T>(fn: () => T): T {
  const t = performance.now();
  const r = fn();
  expect(performance.now() - t).toBeLessThan(500);
  return r;
}

function bytes(...parts: (number | number[])[]): Uint8Array {
  return new Uint8Array(parts.flat());
}

const LZ4_MAGIC = [0x04, 0x22, 0x4d, 0x18];
/** A frame descriptor with a correct header checksum. */
function lz4Header(flg: number, bd: number, extra: number[] = []): number[] {
  const desc = new Uint8Array([flg, bd, ...extra]);
  return [...LZ4_MAGIC, ...desc, (xxh32(desc) >>> 8) & 0xff];
}
function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}

describe("hostile input", () => {
  test("unknown codecs", () => {
    for (const c of [5, 6, 7, -1, 1.5]) {
      expect(errorCode(() => decompress(c, sample))).toBe("UNSUPPORTED_CODEC");
      expect(errorCode(() => compress(c, sample))).toBe("UNSUPPORTED_CODEC");
    }
  });

  test("empty input is not a valid compressed stream", () => {
    for (const codec of [Codec.Gzip, Codec.Snappy, Codec.Lz4, Codec.Zstd]) {
      expect(errorCode(() => decompress(codec, new Uint8Array(0)))).toBe("TRUNCATED");
    }
  });

  test("bad magic", () => {
    expect(errorCode(() => decompress(Codec.Gzip, bytes(0x1f, 0x8c, 8, 0)))).toBe("BAD_MAGIC");
    expect(errorCode(() => decompress(Codec.Lz4, bytes(4, 0x22, 0x4d, 0x19, 0x60, 0x40))))
      .toBe("BAD_MAGIC");
    expect(errorCode(() => decompress(Codec.Zstd, bytes(0x28, 0xb5, 0x2f, 0xfe, 0, 1, 0, 0))))
      .toBe("BAD_MAGIC");
  });

  test("every truncation of every codec fails", () => {
    for (const [name, codec, opts] of CHECKED) {
      const c = compress(codec, sample, opts);
      const step = Math.max(1, Math.floor(c.length / 150));
      const cuts = new Set<number>([1, 2, 3, 4, 5, 8, 15, 16, 17, c.length - 1, c.length - 2]);
      for (let n = 0; n < c.length; n += step) cuts.add(n);
      // A xerial stream cut exactly between chunks is a valid shorter stream: skip those cuts.
      const boundaries = new Set<number>();
      if (opts.xerial) {
        const v = new DataView(c.buffer, c.byteOffset);
        for (let p = 16; p < c.length; p += 4 + v.getInt32(p)) boundaries.add(p);
      }
      for (const n of cuts) {
        if (n >= c.length || boundaries.has(n)) continue;
        const code = errorCode(() => decompress(codec, c.subarray(0, n)));
        if (code === "NO_ERROR") throw new Error(`${name}: prefix ${n}/${c.length} decoded`);
      }
    }
  });

  test("trailing garbage after the last frame fails", () => {
    for (const [name, codec, opts] of CHECKED) {
      if (name.startsWith("snappy")) continue; // raw snappy has no end marker of its own
      const c = compress(codec, sample, opts);
      const g = new Uint8Array(c.length + 5);
      g.set(c);
      g.set([1, 2, 3, 4, 5], c.length);
      expect(errorCode(() => decompress(codec, g)), name).not.toBe("NO_ERROR");
    }
  });

  test("random corruption never escapes as a non-CompressionError", () => {
    const r = prng(1234);
    for (const [name, codec, opts] of CHECKED) {
      const c = compress(codec, sample, opts);
      for (let i = 0; i < 150; i++) {
        const m = c.slice();
        const flips = 1 + ((r() * 4) | 0);
        for (let k = 0; k < flips; k++) m[(r() * m.length) | 0] ^= 1 << ((r() * 8) | 0);
        let out: Uint8Array | undefined;
        try {
          out = decompress(codec, m, { maxOutputBytes: 1 << 20 });
        } catch (e) {
          if (!(e instanceof Error) || e.name !== "CompressionError") {
            throw new Error(`${name}: mutation ${i} threw ${String(e)}`);
          }
        }
        if (out && out.length > 1 << 20) throw new Error(`${name}: limit exceeded`);
        // Checksummed formats must notice any change that survives decoding.
        if (out && (name === "lz4 checksums" || name === "zstd checksum" || name === "gzip")) {
          expect(Buffer.from(out).equals(Buffer.from(sample)), `${name} mutation ${i}`).toBe(true);
        }
      }
    }
  });

  test("random garbage fails cleanly", () => {
    for (let seed = 0; seed < 50; seed++) {
      const g = randomBytes(1 + seed * 37, seed);
      for (const codec of [Codec.Gzip, Codec.Snappy, Codec.Lz4, Codec.Zstd]) {
        expect(errorCode(() => decompress(codec, g, { maxOutputBytes: 1 << 20 }))).not.toBe(
          "NO_ERROR",
        );
      }
    }
  });

  test("bad checksums", () => {
    const lz = compress(Codec.Lz4, sample, {
      lz4: { contentChecksum: true, blockChecksum: true, contentSize: true },
    });
    const hdr = lz.slice();
    hdr[4 + 2 + 8] ^= 1; // header checksum byte
    expect(errorCode(() => decompress(Codec.Lz4, hdr))).toBe("BAD_CHECKSUM");
    const content = lz.slice();
    content[content.length - 1] ^= 1;
    expect(errorCode(() => decompress(Codec.Lz4, content))).toBe("BAD_CHECKSUM");
    const blockSum = lz.slice();
    const blockLen = new DataView(lz.buffer).getUint32(15, true) & 0x7fffffff;
    blockSum[19 + blockLen] ^= 1;
    expect(errorCode(() => decompress(Codec.Lz4, blockSum))).toBe("BAD_CHECKSUM");

    const zs = compress(Codec.Zstd, sample, { zstdChecksum: true });
    const zbad = zs.slice();
    zbad[zbad.length - 1] ^= 1;
    expect(errorCode(() => decompress(Codec.Zstd, zbad))).toBe("BAD_CHECKSUM");

    const gz = compress(Codec.Gzip, sample);
    const gbad = gz.slice();
    gbad[gbad.length - 6] ^= 1; // CRC32 in the trailer
    expect(errorCode(() => decompress(Codec.Gzip, gbad))).toBe("BAD_CHECKSUM");
  });

  test("huge declared sizes fail fast, before allocating", () => {
    // snappy raw: varint 0xffffffff
    timed(() =>
      expect(errorCode(() => decompress(Codec.Snappy, bytes(0xff, 0xff, 0xff, 0xff, 0x0f, 0))))
        .toBe("OUTPUT_LIMIT")
    );
    expect(errorCode(() => decompress(Codec.Snappy, bytes(0xff, 0xff, 0xff, 0xff, 0x7f))))
      .toBe("CORRUPT"); // > 32 bits
    // xerial: a chunk length far past the input, and chunk declared sizes summing past the limit
    const xhdr = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0, 0, 0, 0, 1, 0, 0, 0, 1];
    expect(errorCode(() => decompress(Codec.Snappy, bytes(xhdr, 0x7f, 0xff, 0xff, 0xff, 0))))
      .toBe("TRUNCATED");
    const bomb = [0, 0, 0, 5, 0x80, 0x80, 0x80, 0x20, 0]; // 64 MiB declared per chunk
    expect(errorCode(() => decompress(Codec.Snappy, bytes(xhdr, bomb, bomb)))).toBe(
      "OUTPUT_LIMIT",
    );
    // lz4: content size 2^52
    const lz = bytes(lz4Header(0x68, 0x40, [0, 0, 0, 0, 0, 0, 0x10, 0]), le32(0));
    timed(() => expect(errorCode(() => decompress(Codec.Lz4, lz))).toBe("OUTPUT_LIMIT"));
    // zstd: frame content size 2^40, and a 2 GiB window without content size
    const zfcs = bytes(0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0);
    timed(() => expect(errorCode(() => decompress(Codec.Zstd, zfcs))).toBe("OUTPUT_LIMIT"));
    const zwin = bytes(0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 1, 0, 0);
    timed(() => expect(errorCode(() => decompress(Codec.Zstd, zwin))).toBe("OUTPUT_LIMIT"));
  });

  test("decompression bombs stop at the limit", () => {
    const zeros = new Uint8Array(8 << 20);
    for (const [name, codec, opts] of CHECKED) {
      const c = compress(codec, zeros, opts);
      timed(() =>
        expect(errorCode(() => decompress(codec, c, { maxOutputBytes: 1 << 20 })), name).toBe(
          "OUTPUT_LIMIT",
        )
      );
    }
  });

  test("default limit is 64 MiB", () => {
    const c = compress(Codec.Zstd, new Uint8Array((64 << 20) + 1));
    timed(() => expect(errorCode(() => decompress(Codec.Zstd, c))).toBe("OUTPUT_LIMIT"));
    const s = bytes(0x81, 0x80, 0x80, 0x20, 0); // snappy declaring 64 MiB + 1
    expect(errorCode(() => decompress(Codec.Snappy, s))).toBe("OUTPUT_LIMIT");
  });

  test("lz4 structural errors", () => {
    const end = le32(0);
    // version bits 00, reserved FLG bit, reserved BD bits, bad block size id
    expect(errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x20, 0x40), end)))).toBe(
      "CORRUPT",
    );
    expect(errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x62, 0x40), end)))).toBe(
      "CORRUPT",
    );
    expect(errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x60, 0x41), end)))).toBe(
      "CORRUPT",
    );
    expect(errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x60, 0x30), end)))).toBe(
      "CORRUPT",
    );
    // dictionary id
    expect(
      errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x61, 0x40, le32(7)), end))),
    ).toBe("UNSUPPORTED_FEATURE");
    // block larger than the declared maximum (64 KiB)
    expect(errorCode(() => decompress(Codec.Lz4, bytes(lz4Header(0x60, 0x40), le32(0x10001)))))
      .toBe("CORRUPT");
    // match offset 0, and offset before the start of output
    const seq = (off: number) => [0x10, 0x61, off & 0xff, off >> 8, 0x10, 0x62];
    for (const off of [0, 2]) {
      const blk = seq(off);
      const f = bytes(lz4Header(0x60, 0x40), le32(blk.length), blk, end);
      expect(errorCode(() => decompress(Codec.Lz4, f))).toBe("CORRUPT");
    }
    // offset 1 is fine: "a" then a 4-byte match of it, then literal "b"
    const ok = bytes(lz4Header(0x60, 0x40), le32(6), seq(1), end);
    expect(new TextDecoder().decode(decompress(Codec.Lz4, ok))).toBe("aaaaab");
    // an independent block may not reach into the previous block
    const blk2 = [0x00, 0x01, 0x00, 0x10, 0x62]; // match offset 1 at block start
    const indep = bytes(lz4Header(0x60, 0x40), le32(6), seq(1), le32(5), blk2, end);
    expect(errorCode(() => decompress(Codec.Lz4, indep))).toBe("CORRUPT");
    const linked = bytes(lz4Header(0x40, 0x40), le32(6), seq(1), le32(5), blk2, end);
    expect(new TextDecoder().decode(decompress(Codec.Lz4, linked))).toBe("aaaaabbbbbb");
    // uncompressed block (high bit) and content size mismatch
    const raw = bytes(lz4Header(0x60, 0x40), le32(0x80000003), [0x78, 0x79, 0x7a], end);
    expect(new TextDecoder().decode(decompress(Codec.Lz4, raw))).toBe("xyz");
    const sized = bytes(
      lz4Header(0x68, 0x40, [4, 0, 0, 0, 0, 0, 0, 0]),
      le32(0x80000003),
      [0x78, 0x79, 0x7a],
      end,
    );
    expect(errorCode(() => decompress(Codec.Lz4, sized))).toBe("CORRUPT");
  });

  test("snappy structural errors", () => {
    // literal longer than the input, copy before the start, output longer than declared
    expect(errorCode(() => decompress(Codec.Snappy, bytes(5, 4 << 2, 0x61)))).toBe("TRUNCATED");
    expect(errorCode(() => decompress(Codec.Snappy, bytes(5, 0, 0x61, 0x01 | (0 << 2), 2))))
      .toBe("CORRUPT");
    expect(errorCode(() => decompress(Codec.Snappy, bytes(1, 1 << 2, 0x61, 0x62)))).toBe(
      "CORRUPT",
    );
    // declared 5, produced 1
    expect(errorCode(() => decompress(Codec.Snappy, bytes(5, 0, 0x61)))).toBe("TRUNCATED");
    // valid: "a" + copy1(len 4, off 1)
    expect(new TextDecoder().decode(decompress(Codec.Snappy, bytes(5, 0, 0x61, 0x01, 1))))
      .toBe("aaaaa");
  });

  test("zstd structural errors", () => {
    const z = compress(Codec.Zstd, sample);
    // reserved block type 3 in the first block header (frame header is 6 bytes here)
    const fhd = z[4];
    const hdrLen = 5 + (fhd & 0x20 ? 0 : 1) + [0, 1, 2, 4][fhd & 3] +
      [fhd & 0x20 ? 1 : 0, 2, 4, 8][fhd >> 6];
    const bad = z.slice();
    bad[hdrLen] |= 0x06;
    expect(errorCode(() => decompress(Codec.Zstd, bad))).toBe("CORRUPT");
    // dictionary frames are not supported
    const dict = bytes(0x28, 0xb5, 0x2f, 0xfd, 0x21, 9, 1, 0, 0);
    expect(errorCode(() => decompress(Codec.Zstd, dict))).toBe("UNSUPPORTED_FEATURE");
    // a skippable frame alone is no data; followed by a real frame it is skipped
    const skip = bytes(0x50, 0x2a, 0x4d, 0x18, le32(3), 1, 2, 3);
    expect(errorCode(() => decompress(Codec.Zstd, skip))).toBe("TRUNCATED");
    const both = new Uint8Array(skip.length + z.length);
    both.set(skip);
    both.set(z, skip.length);
    expect(decompress(Codec.Zstd, both).length).toBe(sample.length);
  });

  test("skippable frames: passed over in lz4 and zstd alike, refused when cut short", () => {
    for (const codec of [Codec.Lz4, Codec.Zstd]) {
      const z = compress(codec, sample);
      // Any of the 16 skippable magics, a 3-byte payload, then a real frame.
      const skip = bytes(0x5f, 0x2a, 0x4d, 0x18, le32(3), 7, 8, 9);
      const both = new Uint8Array(skip.length + z.length);
      both.set(skip);
      both.set(z, skip.length);
      expect(decompress(codec, both)).toEqual(sample);
      // After a real frame, cut inside its size, and inside its payload.
      for (const cut of [skip.subarray(0, 6), skip.subarray(0, 10)]) {
        const tail = new Uint8Array(z.length + cut.length);
        tail.set(z);
        tail.set(cut, z.length);
        expect(errorCode(() => decompress(codec, tail))).toBe("TRUNCATED");
      }
    }
  });
});
