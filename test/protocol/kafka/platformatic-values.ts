/**
 * Deterministic response values for the platformatic decode test. Every leaf gets a value
 * distinct from its neighbours (strings carry their field name, numbers a running counter), so a
 * field read from the wrong place cannot pass by accident.
 *
 * - "full": nullable fields set, every tagged field present with a non-default value, arrays of
 *   two or three elements, non-zero error codes, a real record batch where records go.
 * - "sparse": nullable fields null, tagged fields at their defaults, one-element arrays, no errors.
 */
import * as plt from "@platformatic/kafka";
import { defaultOf, type Struct } from "../../../src/protocol/kafka/codec.ts";
import { type Field, type FieldType, inRange } from "../../../src/protocol/kafka/schema.ts";

export type Mode = "full" | "sparse";

/** A two-record batch written by platformatic's own record writer (records are opaque to us). */
export const RECORD_BATCH: Uint8Array = (() => {
  const w = plt.createRecordsBatch([
    {
      key: Buffer.from("key-1"),
      value: Buffer.from("value-1"),
      headers: new Map([[Buffer.from("h"), Buffer.from("x")]]),
      timestamp: 1700000000000n,
      topic: "t",
      partition: 0,
    },
    {
      key: null,
      value: Buffer.from("value-2"),
      timestamp: 1700000000001n,
      topic: "t",
      partition: 0,
    },
  ] as never, {});
  return new Uint8Array((w as unknown as { buffer: Buffer }).buffer);
})();

class Counter {
  n = 0;
  next(): number {
    return ++this.n;
  }
}

function prim(prim: string, key: string, c: Counter, mode: Mode): unknown {
  const n = c.next();
  switch (prim) {
    case "int8":
      return n % 100;
    case "int16":
      if (key === "errorCode") return mode === "full" ? 3 + (n % 40) : 0;
      return 1000 + n;
    case "int32":
      return 100_000 + n * 7;
    case "int64":
      return 2 ** 40 + n * 1013;
    case "uint16":
      return 30_000 + n;
    case "uint32":
      return 3_000_000_000 + n;
    case "float64":
      return n + 0.5;
    case "bool":
      return n % 2 === 0;
    case "string":
      return n % 3 === 0 ? `${key}-${n}-ü日` : `${key}-${n}`;
    case "bytes":
      return Uint8Array.from({ length: 5 + (n % 3) }, (_, i) => (n * 11 + i) & 0xff);
    case "records":
      return mode === "full" ? RECORD_BATCH : new Uint8Array(0);
    case "uuid":
      return (n.toString(16).padStart(8, "0") + "5e1f9a0b7c3d4e2f0a1b2c3d4e5f6a7b").slice(0, 32);
  }
  throw new Error(`prim ${prim}`);
}

function value(
  t: FieldType,
  key: string,
  v: number,
  c: Counter,
  mode: Mode,
  depth: number,
): unknown {
  if (t.kind === "struct") return sampleStruct(t.fields, v, mode, c, depth + 1);
  if (t.kind === "array") {
    const n = mode === "sparse" ? 1 : depth === 0 ? 3 : 2;
    return Array.from({ length: n }, () => value(t.of, key, v, c, mode, depth));
  }
  return prim(t.prim, key, c, mode);
}

export function sampleStruct(
  fields: readonly Field[],
  version: number,
  mode: Mode,
  c = new Counter(),
  depth = 0,
): Struct {
  const out: Struct = {};
  for (const f of fields) {
    if (!inRange(f.versions, version)) out[f.key] = defaultOf(f, version);
    else if (mode === "sparse" && inRange(f.nullable, version)) out[f.key] = null;
    else if (mode === "sparse" && f.tag !== null) out[f.key] = defaultOf(f, version);
    else out[f.key] = value(f.type, f.key, version, c, mode, depth);
  }
  return out;
}
