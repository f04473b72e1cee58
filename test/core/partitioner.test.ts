import { expect, test } from "bun:test";
import { murmur2, partitionForKey } from "../../src/core/partitioner.ts";

const enc = (s: string) => new TextEncoder().encode(s);

// Vectors from Kafka's own murmur2 unit test (UtilsTest.testMurmur2).
test.each([
  ["21", -973932308],
  ["foobar", -790332482],
  ["a-little-bit-long-string", -985981536],
  ["a-little-bit-longer-string", -1486304829],
  ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
  ["abc", 479470107],
])("murmur2(%p) = %p", (key, expected) => {
  expect(murmur2(enc(key))).toBe(expected);
});

test("partition is the positive hash modulo the count", () => {
  expect(partitionForKey(enc("foobar"), 10)).toBe((-790332482 & 0x7fffffff) % 10);
  for (let n = 1; n < 50; n++) {
    const p = partitionForKey(enc(`key-${n}`), n);
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThan(n);
  }
});
