/**
 * A real client parses our responses: kafkajs 2.2.4's own response decoders
 * (node_modules/kafkajs/src/protocol/requests/<api>/v<N>/response.js) read bodies we encode.
 * Check: every distinctive value we wrote (strings >= 3 chars, integers >= 1000 in magnitude,
 * int64s, byte strings >= 3 bytes) comes back out of kafkajs' decode, at least as many times.
 * kafkajs reads fields strictly in order, so a layout error garbles them.
 */
import { describe, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Field, type FieldType, inRange } from "../../../src/protocol/kafka/schema.ts";
import { ADVERTISED } from "../../../src/kafka/handlers/index.ts";
import {
  concatChunks,
  encodeResponse,
  schemaFor,
  type Struct,
} from "../../../src/protocol/kafka/index.ts";
import { KAFKAJS_DIRS as DIRS, kafkajsResponseCases, KJS } from "./kafkajs-cases.ts";
import { randomStruct, Rng } from "./random-values.ts";

const require = createRequire(import.meta.url);

/** Client-side fix-ups: no error codes (kafkajs throws on some) and no opaque record bytes. */
function sanitize(value: Struct, fields: readonly Field[], version: number): void {
  for (const f of fields) {
    const v = value[f.key];
    if (f.key === "errorCode") value[f.key] = 0;
    else if (f.type.kind === "prim" && f.type.prim === "records") value[f.key] = new Uint8Array(0);
    else if (f.type.kind === "array" && f.type.of.kind === "struct" && Array.isArray(v)) {
      for (const e of v) sanitize(e as Struct, f.type.of.fields, version);
    } else if (f.type.kind === "struct" && v) sanitize(v as Struct, f.type.fields, version);
  }
}

function ourLeaves(value: unknown, t: FieldType, version: number, out: string[]): void {
  if (value === null || value === undefined) return;
  if (t.kind === "struct") {
    for (const f of t.fields) {
      if (inRange(f.versions, version) && f.tag === null) {
        ourLeaves((value as Struct)[f.key], f.type, version, out);
      }
    }
  } else if (t.kind === "array") {
    for (const e of value as unknown[]) ourLeaves(e, t.of, version, out);
  } else if (t.prim === "string" && (value as string).length >= 3) out.push(`s:${value}`);
  else if ((t.prim === "bytes") && (value as Uint8Array).length >= 3) {
    out.push(`b:${Buffer.from(value as Uint8Array).toString("hex")}`);
  } else if (t.prim === "int64") out.push(`n:${value}`);
  else if ((t.prim === "int32" || t.prim === "int16") && Math.abs(value as number) >= 1000) {
    out.push(`n:${value}`);
  }
}

function theirLeaves(value: unknown, out: string[], depth = 0): void {
  if (depth > 20 || value === null || value === undefined) return;
  if (typeof value === "string") {
    out.push(`s:${value}`);
    if (/^-?\d+$/.test(value)) out.push(`n:${value}`);
  } else if (typeof value === "number" || typeof value === "bigint") out.push(`n:${value}`);
  else if (Buffer.isBuffer(value)) {
    out.push(`b:${value.toString("hex")}`);
    // SaslAuthenticate: kafkajs re-frames auth bytes behind an i32 length.
    if (value.length >= 4) out.push(`b:${value.subarray(4).toString("hex")}`);
  } else if (Array.isArray(value)) { for (const e of value) theirLeaves(e, out, depth + 1); }
  else if (typeof value === "object") {
    const o = value as Record<string, unknown>;
    // kafkajs' Long wraps a bigint; int64s it does not stringify arrive as that.
    if (typeof o.value === "bigint") {
      out.push(`n:${String(o.value)}`);
      return;
    }
    for (const v of Object.values(o)) theirLeaves(v, out, depth + 1);
  }
}

/** AlterPartitionReassignments, ListPartitionReassignments. */
const HEADER_TAGS_IN_BODY = new Set([45, 46]);

/** Those decoders also read error messages without returning them: nothing to compare. */
function dropMessages(v: unknown): void {
  if (Array.isArray(v)) { for (const e of v) dropMessages(e); }
  else if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (k === "errorMessage") o[k] = null;
      else dropMessages(o[k]);
    }
  }
}

function count(xs: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

describe("kafkajs decodes our responses", () => {
  for (const [apiKey, version] of kafkajsResponseCases()) {
    const adv = ADVERTISED.get(apiKey);
    const advertised = adv !== undefined && version >= adv[0] && version <= adv[1];
    test(`${DIRS[apiKey]} v${version}${advertised ? "" : " (not advertised)"}`, async () => {
      let mod = require(join(KJS, DIRS[apiKey], `v${version}`, "response.js"));
      // A few kafkajs response modules are factories over the request's arguments.
      if (typeof mod === "function") mod = mod({ topics: [] });
      const decode = mod.decode as (b: Buffer) => Promise<unknown>;
      const schema = schemaFor(apiKey, "response")!;
      for (let seed = 1; seed <= 8; seed++) {
        const value = randomStruct(
          new Rng(seed * 7919 + apiKey * 31 + version),
          schema.fields,
          version,
        );
        sanitize(value, schema.fields, version);
        if (HEADER_TAGS_IN_BODY.has(apiKey)) dropMessages(value);
        const body = concatChunks(encodeResponse(apiKey, version, value));
        // These decoders read the flexible response header's tag buffer themselves (kafkajs'
        // connection hands them everything after the correlation id): give them an empty one.
        const framed = HEADER_TAGS_IN_BODY.has(apiKey) ? [0, ...body] : body;
        const decoded = await decode(Buffer.from(framed));
        const ours: string[] = [];
        ourLeaves(value, { kind: "struct", fields: schema.fields }, version, ours);
        const theirs = count((() => {
          const t: string[] = [];
          theirLeaves(decoded, t);
          return t;
        })());
        for (const [leaf, n] of count(ours)) {
          expect({ leaf, found: theirs.get(leaf) ?? 0 }).toEqual({
            leaf,
            found: Math.max(n, theirs.get(leaf) ?? 0),
          });
        }
      }
    });
  }
});
