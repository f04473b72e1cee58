/**
 * Message schemas as data. Each message is declared once in a compact text DSL (one field per
 * line) that mirrors the facts of Kafka's published message definitions:
 *
 *   Name type versions [null=R] [tag=N@R] [def=V] [ign] [noflex] [{]
 *
 * - type: int8 int16 int32 int64 uint16 uint32 float64 bool string bytes records uuid,
 *   `[]T` for an array of a primitive, `[]` for an array of structs and `struct` for a struct
 *   (both followed by `{` and a block closed by a line holding `}`).
 * - versions / R: `0+`, `3-7`, `5` or `none`.
 * - null=R nullable versions; tag=N@R tagged field N in versions R; def=V default
 *   (-1, 0x7fffffff, null, true, false, or a bare string); ign ignorable; noflex never uses the
 *   compact encoding (the request header's client id).
 */

export type Prim =
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "uint16"
  | "uint32"
  | "float64"
  | "bool"
  | "string"
  | "bytes"
  | "records"
  | "uuid";

export type FieldType =
  | { readonly kind: "prim"; readonly prim: Prim }
  | { readonly kind: "array"; readonly of: FieldType }
  | { readonly kind: "struct"; readonly fields: readonly Field[] };

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

export interface Field {
  /** Schema name, e.g. "ThrottleTimeMs". */
  readonly name: string;
  /** Property name on decoded values, e.g. "throttleTimeMs". */
  readonly key: string;
  readonly type: FieldType;
  readonly versions: VersionRange;
  readonly nullable: VersionRange;
  readonly tag: number | null;
  readonly tagged: VersionRange;
  /** Explicit default from the schema, or undefined for the type's zero value. */
  readonly defaultSpec: unknown;
  readonly ignorable: boolean;
  readonly noFlex: boolean;
}

export interface MessageSchema {
  readonly apiKey: number;
  readonly name: string;
  readonly direction: "request" | "response";
  readonly valid: VersionRange;
  readonly flexible: VersionRange;
  readonly fields: readonly Field[];
}

export const NO_VERSIONS: VersionRange = { min: 1, max: 0 };
const VERSION_CAP = 0x7fff;

export function inRange(r: VersionRange, v: number): boolean {
  return v >= r.min && v <= r.max;
}

export function parseRange(s: string): VersionRange {
  if (s === "none") return NO_VERSIONS;
  let m = /^(\d+)\+$/.exec(s);
  if (m) return { min: Number(m[1]), max: VERSION_CAP };
  m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[2]) };
  m = /^(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[1]) };
  throw new Error(`bad version range "${s}"`);
}

const PRIMS = new Set<string>([
  "int8",
  "int16",
  "int32",
  "int64",
  "uint16",
  "uint32",
  "float64",
  "bool",
  "string",
  "bytes",
  "records",
  "uuid",
]);

function parseDefault(s: string): unknown {
  if (s === "null") return null;
  if (s === "true") return true;
  if (s === "false") return false;
  if (/^-?(0x[0-9a-fA-F]+|\d+)$/.test(s)) {
    return s.startsWith("-") ? -Number(s.slice(1)) : Number(s);
  }
  return s;
}

function camel(name: string): string {
  return name[0].toLowerCase() + name.slice(1);
}

/** Parses a DSL block into fields. Throws plain Error on malformed declarations (a bug, not input). */
export function parseFields(text: string): Field[] {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
  let i = 0;
  const block = (depth: number): Field[] => {
    const out: Field[] = [];
    while (i < lines.length) {
      const line = lines[i++];
      if (line === "}") {
        if (depth === 0) throw new Error("unbalanced } in schema");
        return out;
      }
      const tokens = line.split(/\s+/);
      const opens = tokens[tokens.length - 1] === "{";
      if (opens) tokens.pop();
      const [name, typeTok, versionsTok, ...attrs] = tokens;
      if (!name || !typeTok || !versionsTok) throw new Error(`bad schema line "${line}"`);
      let type: FieldType;
      if (typeTok === "[]" || typeTok === "struct") {
        if (!opens) throw new Error(`struct field needs a block: "${line}"`);
        const struct: FieldType = { kind: "struct", fields: block(depth + 1) };
        type = typeTok === "[]" ? { kind: "array", of: struct } : struct;
      } else if (typeTok.startsWith("[]") && PRIMS.has(typeTok.slice(2))) {
        type = { kind: "array", of: { kind: "prim", prim: typeTok.slice(2) as Prim } };
      } else if (PRIMS.has(typeTok)) {
        type = { kind: "prim", prim: typeTok as Prim };
      } else {
        throw new Error(`unknown type in "${line}"`);
      }
      let nullable = NO_VERSIONS;
      let tag: number | null = null;
      let tagged = NO_VERSIONS;
      let defaultSpec: unknown = undefined;
      let ignorable = false;
      let noFlex = false;
      for (const a of attrs) {
        if (a.startsWith("null=")) nullable = parseRange(a.slice(5));
        else if (a.startsWith("tag=")) {
          const [n, r] = a.slice(4).split("@");
          tag = Number(n);
          tagged = parseRange(r);
        } else if (a.startsWith("def=")) defaultSpec = parseDefault(a.slice(4));
        else if (a === "ign") ignorable = true;
        else if (a === "noflex") noFlex = true;
        else throw new Error(`unknown attribute "${a}" in "${line}"`);
      }
      out.push({
        name,
        key: camel(name),
        type,
        versions: parseRange(versionsTok),
        nullable,
        tag,
        tagged,
        defaultSpec,
        ignorable,
        noFlex,
      });
    }
    if (depth !== 0) throw new Error("unterminated block in schema");
    return out;
  };
  return block(0);
}

export interface MessageDecl {
  readonly apiKey: number;
  readonly name: string;
  readonly valid: string;
  readonly flexible: string;
  readonly request: string;
  readonly response: string;
}

/** A request/response pair declared together. */
export function defineApi(d: MessageDecl): [MessageSchema, MessageSchema] {
  const valid = parseRange(d.valid);
  const flexible = parseRange(d.flexible);
  const mk = (direction: "request" | "response", text: string): MessageSchema => ({
    apiKey: d.apiKey,
    name: d.name + (direction === "request" ? "Request" : "Response"),
    direction,
    valid,
    flexible,
    fields: parseFields(text),
  });
  return [mk("request", d.request), mk("response", d.response)];
}
