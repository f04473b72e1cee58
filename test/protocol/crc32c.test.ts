import { expect, test } from "bun:test";
import { crc32c, crc32cIsNative, crc32cJs } from "../../src/protocol/crc32c.ts";
import { seededRandom } from "../../src/storage/crash-fs.ts";

const enc = (s: string) => new TextEncoder().encode(s);

test("known CRC-32C vectors", () => {
  expect(crc32cIsNative).toBe(true);
  for (const f of [crc32c, crc32cJs]) {
    expect(f(enc("123456789"))).toBe(0xe3069283);
    expect(f(new Uint8Array(0))).toBe(0);
    expect(f(new Uint8Array(32))).toBe(0x8a9136aa); // RFC 3720 B.4: 32 zero bytes
    expect(f(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(f(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
  }
});

test("native and fallback agree on random data, offsets and chaining", () => {
  const rnd = seededRandom(7);
  for (let i = 0; i < 200; i++) {
    const n = Math.floor(rnd() * 3000);
    const buf = Uint8Array.from({ length: n + 5 }, () => Math.floor(rnd() * 256));
    const view = buf.subarray(5 - (i % 5));
    expect(crc32cJs(view)).toBe(crc32c(view));
    const cut = Math.floor(rnd() * view.length);
    expect(crc32cJs(view.subarray(cut), crc32cJs(view.subarray(0, cut)))).toBe(crc32c(view));
    expect(crc32c(view.subarray(cut), crc32c(view.subarray(0, cut)))).toBe(crc32c(view));
  }
});
