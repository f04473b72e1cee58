/** Test data: fixture plaintext specs (mirrors fixtures/generate.py) and seeded generators. */
import { createHash } from "node:crypto";

export type PartSpec =
  | { gen: "json"; from: number; count: number }
  | { gen: "random"; seed: string; length: number }
  | { gen: "repeat"; byte: number; length: number }
  | { gen: "text"; text: string };

function part(spec: PartSpec): Uint8Array {
  switch (spec.gen) {
    case "json": {
      let s = "";
      for (let i = spec.from; i < spec.from + spec.count; i++) {
        s += `{"id":${i},"name":"user-${i % 977}","score":${(i * 7919) % 1000}}\n`;
      }
      return new TextEncoder().encode(s);
    }
    case "random": {
      const out = new Uint8Array(Math.ceil(spec.length / 32) * 32);
      for (let i = 0; i * 32 < spec.length; i++) {
        const ctr = new Uint8Array(4);
        new DataView(ctr.buffer).setUint32(0, i);
        out.set(createHash("sha256").update(spec.seed).update(ctr).digest(), i * 32);
      }
      return out.subarray(0, spec.length);
    }
    case "repeat":
      return new Uint8Array(spec.length).fill(spec.byte);
    case "text":
      return new TextEncoder().encode(spec.text);
  }
}

export function expandPlaintext(parts: PartSpec[]): Uint8Array {
  const chunks = parts.map(part);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let p = 0;
  for (const c of chunks) {
    out.set(c, p);
    p += c.length;
  }
  return out;
}

/** mulberry32: small seeded PRNG so every run sees the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomBytes(n: number, seed: number): Uint8Array {
  const r = prng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (r() * 256) | 0;
  return out;
}

/** JSON-ish records like a Kafka value stream: compressible but not trivially so. */
export function jsonish(n: number, seed: number): Uint8Array {
  const r = prng(seed);
  const words = ["alpha", "beta", "gamma", "delta", "order", "user", "click", "view", "cart"];
  let s = "";
  for (let i = 0; s.length < n; i++) {
    const w = words[(r() * words.length) | 0];
    s += `{"seq":${i},"ts":${1700000000000 + i * 17},"event":"${w}","user":"u${
      (r() * 5000) | 0
    }","amount":${(r() * 10000).toFixed(2)},"ok":${r() < 0.9}}\n`;
  }
  return new TextEncoder().encode(s).subarray(0, n);
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

/** The CompressionError code `fn` throws; fails the test if it throws anything else. */
export function errorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof Error && e.name === "CompressionError") {
      return (e as Error & { code: string }).code;
    }
    throw new Error(`expected CompressionError, got ${String(e)}`);
  }
  return "NO_ERROR";
}
