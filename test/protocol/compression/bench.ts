/**
 * Codec throughput on 1 MiB of JSON-ish records (not a test; run by hand):
 *   npx bun test/protocol/compression/bench.ts
 * MB/s counts uncompressed bytes (MB = 2^20 bytes).
 */
import {
  compress,
  type CompressOptions,
  decompress,
} from "../../../src/protocol/compression/index.ts";
import { equalBytes, jsonish } from "./plaintext.ts";

const data = jsonish(1 << 20, 42);
const variants: [string, number, CompressOptions][] = [
  ["gzip (zlib, level 6)", 1, {}],
  ["snappy raw (TS)", 2, {}],
  ["snappy xerial (TS)", 2, { xerial: true }],
  ["lz4 frame 0x60 (TS)", 3, {}],
  ["lz4 frame + checksums (TS)", 3, { lz4: { contentChecksum: true, blockChecksum: true } }],
  ["zstd (libzstd, level 3)", 4, {}],
];

function rate(fn: () => void): number {
  for (let i = 0; i < 5; i++) fn(); // warm up the JIT
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 500) {
    fn();
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

console.log("codec                        ratio   encode MB/s  decode MB/s");
for (const [name, codec, opts] of variants) {
  const c = compress(codec, data, opts);
  if (!equalBytes(decompress(codec, c), data)) throw new Error(`${name}: round trip failed`);
  const enc = rate(() => compress(codec, data, opts));
  const dec = rate(() => decompress(codec, c));
  console.log(
    `${name.padEnd(28)} ${(data.length / c.length).toFixed(2).padStart(5)}  ${
      enc.toFixed(0).padStart(11)
    }  ${dec.toFixed(0).padStart(11)}`,
  );
}
