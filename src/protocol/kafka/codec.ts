/**
 * The one generic encoder/decoder, driven by MessageSchema data. Works on requests and responses
 * of every declared version. `records` fields decode to zero-copy subarrays and encode from a
 * Uint8Array or a list of slices written by reference.
 */
import { ProtocolDecodeError, ProtocolEncodeError } from "./errors.ts";
import { Reader } from "./reader.ts";
import { type Field, type FieldType, inRange, type Prim } from "./schema.ts";
import { utf8Bytes, Writer } from "./writer.ts";

/** A decoded message or struct: schema field keys (camelCase) to values. */
export interface Struct {
  [key: string]: unknown;
}

/** Tagged fields this schema does not know, kept so re-encoding is byte-identical. */
export interface UnknownTaggedField {
  tag: number;
  data: Uint8Array;
}

export const UNKNOWN_TAGS_KEY = "_unknownTaggedFields";
export const ZERO_UUID = "00000000000000000000000000000000";

/** Per-version view of a struct's fields, computed once per (fields, version, flexible). */
interface Plan {
  readonly body: readonly PlannedField[];
  readonly tagged: readonly PlannedField[];
  readonly absent: readonly Field[];
  readonly minSize: number;
}

interface PlannedField {
  readonly field: Field;
  readonly nullable: boolean;
  /** Compact encodings for this field (false for non-flexible versions and `noflex` fields). */
  readonly compact: boolean;
}

const plans = new WeakMap<readonly Field[], Map<number, Plan>>();

function planFor(fields: readonly Field[], version: number, flexible: boolean): Plan {
  let byVersion = plans.get(fields);
  if (!byVersion) {
    byVersion = new Map();
    plans.set(fields, byVersion);
  }
  const cacheKey = version * 2 + (flexible ? 1 : 0);
  let plan = byVersion.get(cacheKey);
  if (plan) return plan;
  const body: PlannedField[] = [];
  const tagged: PlannedField[] = [];
  const absent: Field[] = [];
  let minSize = flexible ? 1 : 0;
  for (const field of fields) {
    if (!inRange(field.versions, version)) {
      absent.push(field);
      continue;
    }
    const pf = {
      field,
      nullable: inRange(field.nullable, version),
      compact: flexible && !field.noFlex,
    };
    if (flexible && field.tag !== null && inRange(field.tagged, version)) tagged.push(pf);
    else {
      body.push(pf);
      minSize += minSizeOf(field.type, version, pf.compact);
    }
  }
  tagged.sort((a, b) => (a.field.tag as number) - (b.field.tag as number));
  plan = { body, tagged, absent, minSize };
  byVersion.set(cacheKey, plan);
  return plan;
}

const PRIM_SIZE: Record<Prim, number> = {
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  uint16: 2,
  uint32: 4,
  float64: 8,
  bool: 1,
  string: 2,
  bytes: 4,
  records: 4,
  uuid: 16,
};

function minSizeOf(t: FieldType, version: number, compact: boolean): number {
  if (t.kind === "array") return compact ? 1 : 4;
  if (t.kind === "struct") return planFor(t.fields, version, compact).minSize;
  if (compact && (t.prim === "string" || t.prim === "bytes" || t.prim === "records")) return 1;
  return PRIM_SIZE[t.prim];
}

// ---------------------------------------------------------------- defaults

/** The default value of a field (explicit schema default, else the type's zero). Fresh each call. */
export function defaultOf(field: Field, version: number): unknown {
  if (field.defaultSpec !== undefined) {
    if (field.defaultSpec === null) return null;
    if (field.type.kind === "prim") return field.defaultSpec;
  }
  return zeroOf(field.type, version);
}

function zeroOf(t: FieldType, version: number): unknown {
  if (t.kind === "array") return [];
  if (t.kind === "struct") return defaultStruct(t.fields, version);
  switch (t.prim) {
    case "bool":
      return false;
    case "string":
      return "";
    case "bytes":
      return new Uint8Array(0);
    case "records":
      return null;
    case "uuid":
      return ZERO_UUID;
    default:
      return 0;
  }
}

/** A struct with every field set to its default. */
export function defaultStruct(fields: readonly Field[], version: number): Struct {
  const out: Struct = {};
  for (const f of fields) out[f.key] = defaultOf(f, version);
  return out;
}

function isDefault(field: Field, value: unknown, version: number): boolean {
  if (value === undefined) return true;
  const def = defaultOf(field, version);
  return sameValue(field.type, value, def, version);
}

function sameValue(t: FieldType, a: unknown, b: unknown, version: number): boolean {
  if (a === null || b === null) return a === b;
  if (t.kind === "array") {
    return Array.isArray(a) && Array.isArray(b) && a.length === 0 && b.length === 0;
  }
  if (t.kind === "struct") {
    const sa = a as Struct;
    const sb = b as Struct;
    return t.fields.every((f) =>
      sameValue(f.type, sa[f.key] ?? defaultOf(f, version), sb[f.key], version)
    );
  }
  if (t.prim === "bytes" || t.prim === "records") {
    return (a as Uint8Array).length === 0 && (b as Uint8Array).length === 0;
  }
  return a === b;
}

// ---------------------------------------------------------------- decode

export function decodeStruct(
  r: Reader,
  fields: readonly Field[],
  version: number,
  flexible: boolean,
): Struct {
  const plan = planFor(fields, version, flexible);
  const out: Struct = {};
  for (const pf of plan.body) out[pf.field.key] = decodeValue(r, pf.field.type, pf, version);
  for (const f of plan.absent) out[f.key] = defaultOf(f, version);
  if (flexible) {
    for (const pf of plan.tagged) out[pf.field.key] = defaultOf(pf.field, version);
    decodeTaggedFields(r, plan, out, version);
  }
  return out;
}

function decodeTaggedFields(r: Reader, plan: Plan, out: Struct, version: number): void {
  const count = r.uvarint();
  if (count * 2 > r.remaining) r.fail(`tagged field count ${count} exceeds remaining bytes`);
  const seen = new Set<number>();
  let unknown: UnknownTaggedField[] | undefined;
  for (let i = 0; i < count; i++) {
    const tag = r.uvarint();
    const size = r.uvarint();
    r.need(size, "tagged field");
    if (seen.has(tag)) r.fail(`duplicate tag ${tag}`);
    seen.add(tag);
    const pf = plan.tagged.find((p) => p.field.tag === tag);
    if (!pf) {
      (unknown ??= []).push({ tag, data: r.slice(size, "tagged field") });
      continue;
    }
    const end = r.pos + size;
    const sub = new Reader(r.bytes, r.pos, end);
    out[pf.field.key] = decodeValue(sub, pf.field.type, pf, version);
    if (sub.pos !== end) {
      r.fail(`tagged field ${pf.field.name} has ${end - sub.pos} trailing bytes`);
    }
    r.pos = end;
  }
  if (unknown) out[UNKNOWN_TAGS_KEY] = unknown;
}

function decodeLength(r: Reader, pf: PlannedField, wide: boolean, what: string): number | null {
  let n: number;
  if (pf.compact) {
    n = r.uvarint() - 1;
  } else {
    n = wide ? r.int32() : r.int16();
  }
  if (n === -1) {
    if (!pf.nullable) r.fail(`null ${what} in non-nullable field ${pf.field.name}`);
    return null;
  }
  if (n < -1) r.fail(`negative ${what} length ${n} in ${pf.field.name}`);
  return n;
}

function decodeValue(r: Reader, t: FieldType, pf: PlannedField, version: number): unknown {
  if (t.kind === "struct") {
    // Nullable structs do not occur in the declared APIs; structs follow the message's flexibility.
    return decodeStruct(r, t.fields, version, pf.compact);
  }
  if (t.kind === "array") {
    const count = decodeLength(r, pf, true, "array");
    if (count === null) return null;
    const elem = t.of;
    const min = Math.max(1, minSizeOf(elem, version, pf.compact));
    if (count > r.remaining / min) r.fail(`array count ${count} exceeds remaining bytes`);
    const elemPf: PlannedField = { field: pf.field, nullable: false, compact: pf.compact };
    const out: unknown[] = [];
    for (let i = 0; i < count; i++) out.push(decodeValue(r, elem, elemPf, version));
    return out;
  }
  switch (t.prim) {
    case "int8":
      return r.int8();
    case "int16":
      return r.int16();
    case "int32":
      return r.int32();
    case "int64":
      return r.int64();
    case "uint16":
      return r.uint16();
    case "uint32":
      return r.uint32();
    case "float64":
      return r.float64();
    case "bool":
      return r.bool();
    case "uuid":
      return r.uuid();
    case "string": {
      const n = decodeLength(r, pf, false, "string");
      return n === null ? null : r.utf8(n);
    }
    case "bytes":
    case "records": {
      const n = decodeLength(r, pf, true, t.prim);
      return n === null ? null : r.slice(n, t.prim);
    }
  }
}

/** Decodes a whole body; trailing bytes are an error. */
export function decodeBody(
  bytes: Uint8Array,
  start: number,
  fields: readonly Field[],
  version: number,
  flexible: boolean,
): Struct {
  const r = new Reader(bytes, start);
  try {
    const out = decodeStruct(r, fields, version, flexible);
    if (r.remaining !== 0) r.fail(`${r.remaining} trailing bytes after message body`);
    return out;
  } catch (e) {
    if (e instanceof ProtocolDecodeError) throw e;
    // Defensive: anything else escaping the reader is still reported as a decode error.
    throw new ProtocolDecodeError(`decode failed: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------- encode

function encodeFail(field: Field, message: string): never {
  throw new ProtocolEncodeError(`${field.name}: ${message}`);
}

export function encodeStruct(
  w: Writer,
  fields: readonly Field[],
  version: number,
  flexible: boolean,
  value: Struct,
): void {
  if (value === null || typeof value !== "object") {
    throw new ProtocolEncodeError(`expected a struct, got ${String(value)}`);
  }
  const plan = planFor(fields, version, flexible);
  for (const f of plan.absent) {
    if (!f.ignorable && !isDefault(f, value[f.key], version)) {
      encodeFail(
        f,
        `not present in version ${version} and not ignorable, but set to a non-default value`,
      );
    }
  }
  for (const pf of plan.body) {
    const v = value[pf.field.key];
    encodeValue(w, pf.field.type, pf, version, v === undefined ? defaultOf(pf.field, version) : v);
  }
  if (!flexible) return;
  const entries: { tag: number; data: Uint8Array }[] = [];
  for (const pf of plan.tagged) {
    const v = value[pf.field.key];
    if (isDefault(pf.field, v, version)) continue;
    const sub = new Writer(64);
    encodeValue(sub, pf.field.type, pf, version, v);
    entries.push({ tag: pf.field.tag as number, data: sub.bytes() });
  }
  const unknown = value[UNKNOWN_TAGS_KEY] as UnknownTaggedField[] | undefined;
  if (unknown) {
    for (const u of unknown) {
      if (plan.tagged.some((p) => p.field.tag === u.tag)) {
        throw new ProtocolEncodeError(`unknown tagged field ${u.tag} collides with a known tag`);
      }
      entries.push(u);
    }
    entries.sort((a, b) => a.tag - b.tag);
  }
  w.uvarint(entries.length);
  for (const e of entries) {
    w.uvarint(e.tag);
    w.uvarint(e.data.length);
    w.raw(e.data);
  }
}

function writeLength(w: Writer, pf: PlannedField, wide: boolean, n: number): void {
  if (pf.compact) w.uvarint(n + 1);
  else if (wide) w.int32(n);
  else {
    if (n > 0x7fff) encodeFail(pf.field, `string of ${n} bytes is too long`);
    w.int16(n);
  }
}

function encodeValue(w: Writer, t: FieldType, pf: PlannedField, version: number, v: unknown): void {
  if (v === null) {
    if (t.kind === "struct" || !pf.nullable) {
      encodeFail(pf.field, `null is not allowed in version ${version}`);
    }
    writeLength(w, pf, t.kind !== "prim" || t.prim !== "string", -1);
    return;
  }
  if (t.kind === "struct") {
    encodeStruct(w, t.fields, version, pf.compact, v as Struct);
    return;
  }
  if (t.kind === "array") {
    if (!Array.isArray(v)) encodeFail(pf.field, "expected an array");
    writeLength(w, pf, true, v.length);
    const elemPf: PlannedField = { field: pf.field, nullable: false, compact: pf.compact };
    for (const e of v) encodeValue(w, t.of, elemPf, version, e);
    return;
  }
  switch (t.prim) {
    case "int8":
    case "int16":
    case "int32":
    case "uint16":
    case "uint32":
    case "int64":
    case "float64":
      if (typeof v !== "number") encodeFail(pf.field, `expected a number, got ${typeof v}`);
      if (t.prim !== "float64" && !Number.isInteger(v)) {
        encodeFail(pf.field, `${v} is not an integer`);
      }
      switch (t.prim) {
        case "int8":
          return w.int8(v);
        case "int16":
          return w.int16(v);
        case "int32":
          return w.int32(v);
        case "uint16":
          return w.uint16(v);
        case "uint32":
          return w.uint32(v);
        case "int64":
          return w.int64(v);
        default:
          return w.float64(v);
      }
    case "bool":
      if (typeof v !== "boolean") encodeFail(pf.field, "expected a boolean");
      return w.bool(v);
    case "uuid":
      return w.uuid(v as string);
    case "string": {
      if (typeof v !== "string") encodeFail(pf.field, "expected a string");
      const b = utf8Bytes(v);
      writeLength(w, pf, false, b.length);
      w.raw(b);
      return;
    }
    case "bytes":
      if (!(v instanceof Uint8Array)) encodeFail(pf.field, "expected a Uint8Array");
      writeLength(w, pf, true, v.length);
      w.raw(v);
      return;
    case "records": {
      // A list of slices is written back to back without concatenation (segment slices).
      const parts = Array.isArray(v) ? (v as Uint8Array[]) : [v as Uint8Array];
      let n = 0;
      for (const p of parts) {
        if (!(p instanceof Uint8Array)) encodeFail(pf.field, "expected Uint8Array or Uint8Array[]");
        n += p.length;
      }
      writeLength(w, pf, true, n);
      for (const p of parts) w.raw(p);
      return;
    }
  }
}
