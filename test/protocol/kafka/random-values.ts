/** Seeded random values for a schema version (test helper). Absent fields get their defaults. */
import { defaultOf, type Struct } from "../../../src/protocol/kafka/codec.ts";
import { type Field, type FieldType, inRange } from "../../../src/protocol/kafka/schema.ts";

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    // xorshift32
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const WORDS = [
  "",
  "a",
  "topic-1",
  "grüße",
  "__consumer_offsets",
  "x".repeat(40),
  "日本",
  "rdkafka",
];

function randPrim(rng: Rng, prim: string): unknown {
  switch (prim) {
    case "int8":
      return rng.int(-128, 127);
    case "int16":
      return rng.int(-32768, 32767);
    case "int32":
      return rng.pick([0, -1, 1, 2147483647, -2147483648, rng.int(-1e9, 1e9)]);
    case "int64":
      return rng.pick([
        0,
        -1,
        Number.MAX_SAFE_INTEGER,
        Number.MIN_SAFE_INTEGER,
        rng.int(-1e15, 1e15),
        4294967296,
      ]);
    case "uint16":
      return rng.int(0, 65535);
    case "uint32":
      return rng.int(0, 4294967295);
    case "float64":
      return rng.pick([0, 1.5, -2.25, 1e300]);
    case "bool":
      return rng.chance(0.5);
    case "string":
      return rng.pick(WORDS);
    case "bytes":
    case "records": {
      // Sometimes big enough to be emitted by reference rather than copied.
      const n = rng.pick([0, 1, 7, 600]);
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
      return b;
    }
    case "uuid": {
      let s = "";
      for (let i = 0; i < 32; i++) s += rng.int(0, 15).toString(16);
      return s;
    }
  }
  throw new Error(`prim ${prim}`);
}

function randValue(rng: Rng, t: FieldType, version: number, depth: number): unknown {
  if (t.kind === "struct") return randomStruct(rng, t.fields, version, depth + 1);
  if (t.kind === "array") {
    const n = depth > 3 ? 0 : rng.int(0, 3);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(randValue(rng, t.of, version, depth));
    return out;
  }
  return randPrim(rng, t.prim);
}

export function randomStruct(
  rng: Rng,
  fields: readonly Field[],
  version: number,
  depth = 0,
): Struct {
  const out: Struct = {};
  for (const f of fields) {
    if (!inRange(f.versions, version)) {
      out[f.key] = defaultOf(f, version);
    } else if (inRange(f.nullable, version) && rng.chance(0.2)) {
      out[f.key] = null;
    } else if (f.tag !== null && rng.chance(0.3)) {
      out[f.key] = defaultOf(f, version);
    } else {
      out[f.key] = randValue(rng, f.type, version, depth);
    }
  }
  return out;
}
