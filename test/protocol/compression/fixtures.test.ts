import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Codec, CompressionError, decompress } from "../../../src/protocol/compression/index.ts";
import { equalBytes, expandPlaintext, type PartSpec } from "./plaintext.ts";

/** Bytes produced by real third-party encoders (see fixtures/README.md), decoded by ours. */
const dir = join(import.meta.dir, "fixtures");
interface Fixture {
  name: string;
  codec: number;
  plaintext: PartSpec[];
  command: string;
}
const manifest: Fixture[] = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));

function load(name: string): Uint8Array {
  return new Uint8Array(Buffer.from(readFileSync(join(dir, `${name}.b64`), "utf8"), "base64"));
}

describe("third-party fixtures", () => {
  test("manifest covers every codec and the framings the brief lists", () => {
    const names = manifest.map((f) => f.name);
    for (
      const n of [
        "gzip-concat-members",
        "snappy-xerial-kafka-python",
        "snappy-raw-json",
        "lz4-kafka-python",
        "lz4-py-flg60",
        "lz4-py-uncompressed-block",
        "lz4-py-linked-blocks",
        "zstd-cli-rle",
        "zstd-cli-multiblock",
        "zstd-cli-check",
      ]
    ) expect(names).toContain(n);
  });

  for (const fx of manifest) {
    test(`${fx.name} (${fx.command})`, () => {
      const want = expandPlaintext(fx.plaintext);
      const legacy = fx.name === "lz4-old-kafka-hc";
      const got = decompress(fx.codec, load(fx.name), { lz4LegacyHeaderChecksum: legacy });
      expect(got.length).toBe(want.length);
      expect(equalBytes(got, want)).toBe(true);
    });
  }

  test("lz4 FLG bytes are the ones Kafka clients write", () => {
    expect(load("lz4-py-flg60")[4]).toBe(0x60);
    expect(load("lz4-kafka-python")[4]).toBe(0x68);
    expect(load("lz4-py-linked-blocks")[4] & 0x20).toBe(0); // linked
  });

  test("KAFKA-3160 header checksum is rejected unless asked for", () => {
    const data = load("lz4-old-kafka-hc");
    let err: unknown;
    try {
      decompress(Codec.Lz4, data);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompressionError);
    expect((err as CompressionError).code).toBe("BAD_CHECKSUM");
  });

  test("xerial fixture really is xerial with several chunks", () => {
    const d = load("snappy-xerial-kafka-python");
    expect([...d.subarray(0, 8)]).toEqual([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
    const first = new DataView(d.buffer, d.byteOffset).getInt32(16);
    expect(16 + 4 + first).toBeLessThan(d.length);
  });
});
