/**
 * A real client parses our responses: @platformatic/kafka 2.12.1's own per-version parsers
 * (`parseResponse` in node_modules/@platformatic/kafka/dist/apis/<group>/<api>-v<N>.js) read
 * whole frames we encode, the way its connection does: size, correlation id, the header tag
 * section when its API definition says the response header is flexible, then the body. The
 * parser must consume the body exactly, and every field our schema has at that version must
 * come back equal to what we encoded (values: platformatic-values.ts, plus seeded random ones).
 * Fields platformatic does not expose are allowed only where the schema makes them tagged (a
 * client may skip tags it does not know) or where listed in DROPPED; EXPECTED_UNCHECKED pins the
 * exact set. Where platformatic renames or reshapes, ALIASES and unshape() map back.
 */
import { describe, expect, test } from "bun:test";
import * as plt from "@platformatic/kafka";
import type { Field, FieldType } from "../../../src/protocol/kafka/schema.ts";
import { inRange } from "../../../src/protocol/kafka/schema.ts";
import { ADVERTISED } from "../../../src/kafka/handlers/index.ts";
import {
  apiName,
  concatChunks,
  encodeResponseFrame,
  responseHeaderVersion,
  schemaFor,
  type Struct,
} from "../../../src/protocol/kafka/index.ts";
import { platformaticResponseCases, type PltApiModule, pltModule } from "./platformatic-cases.ts";
import { type Mode, RECORD_BATCH, sampleStruct } from "./platformatic-values.ts";
import { randomStruct, Rng } from "./random-values.ts";

/**
 * Where platformatic names a field differently from Kafka's JSON definition, keyed
 * "apiKey:path.key" (path without indexes) to its property name.
 */
const ALIASES: Record<string, string> = {
  // Fetch up to v12 names the topic by name, but platformatic calls the property topicId.
  "1:responses.topic": "topicId",
  // DescribeAcls and DeleteAcls v1+: PatternType is resourcePatternType there.
  "29:resources.patternType": "resourcePatternType",
  "31:filterResults.matchingAcls.patternType": "resourcePatternType",
};

/** Non-tagged fields platformatic reads past and drops, keyed "apiKey:path.key" like ALIASES. */
const DROPPED: Record<string, string> = {
  "32:results.configs.isDefault": "DescribeConfigs v0: read and discarded (configSource from v1)",
};

/** Where platformatic reshapes a response, turn its result back into the wire shape. */
function unshape(apiKey: number, version: number, theirs: Record<string, unknown>) {
  // FindCoordinator v0-v3: the single coordinator moves into coordinators[0], as in v4+.
  if (apiKey === 10 && version <= 3) {
    const [one] = theirs.coordinators as Record<string, unknown>[];
    return { throttleTimeMs: theirs.throttleTimeMs, ...one };
  }
  return theirs;
}

/** The response-header flag from the module's API definition, read via a stand-in connection. */
function responseHeaderTagged(mod: PltApiModule): boolean {
  let flag: boolean | undefined;
  mod.api({ send: (...a: unknown[]) => (flag = a[5] as boolean) });
  if (flag === undefined) throw new Error("api() did not call send");
  return flag;
}

interface Check {
  apiKey: number;
  version: number;
  issues: string[];
  unchecked: Set<string>;
}

function sameRecords(ours: Uint8Array | null, theirs: unknown, path: string, c: Check): void {
  if (ours === null) {
    if (theirs !== null) c.issues.push(`${path}: expected null records`);
    return;
  }
  const batches = theirs as { records: { key: Buffer | null; value: Buffer }[] }[] | null;
  if (ours.length === 0) {
    if (batches !== null && batches.length !== 0) c.issues.push(`${path}: expected no records`);
    return;
  }
  if (ours !== RECORD_BATCH) throw new Error("records other than RECORD_BATCH");
  const values = (batches ?? []).flatMap((b) => b.records.map((r) => r.value.toString()));
  if (values.join() !== "value-1,value-2") c.issues.push(`${path}: records ${values.join()}`);
}

function compare(ours: unknown, theirs: unknown, t: FieldType, path: string, c: Check): void {
  if (t.kind === "struct") {
    if (theirs === null || typeof theirs !== "object") {
      c.issues.push(`${path}: expected a struct, got ${String(theirs)}`);
      return;
    }
    compareFields(ours as Struct, theirs as Record<string, unknown>, t.fields, path, c);
    return;
  }
  if (t.kind === "array") {
    // readArray turns a null array into []; the client cannot tell the two apart.
    if (ours === null) {
      if (theirs !== null && !(Array.isArray(theirs) && theirs.length === 0)) {
        c.issues.push(`${path}: expected null array`);
      }
      return;
    }
    const os = ours as unknown[];
    if (!Array.isArray(theirs) || theirs.length !== os.length) {
      c.issues.push(`${path}: expected ${os.length} elements, got ${show(theirs)}`);
      return;
    }
    os.forEach((o, i) => compare(o, theirs[i], t.of, `${path}[${i}]`, c));
    return;
  }
  if (t.prim === "records") return sameRecords(ours as Uint8Array | null, theirs, path, c);
  let ok: boolean;
  if (ours === null || theirs === null) ok = ours === theirs;
  else if (t.prim === "int64") ok = BigInt(ours as number) === BigInt(theirs as bigint);
  else if (t.prim === "uuid") ok = String(theirs).replaceAll("-", "") === ours;
  else if (t.prim === "bytes") {
    ok = Buffer.isBuffer(theirs) && Buffer.compare(theirs, Buffer.from(ours as Uint8Array)) === 0;
  } else ok = Object.is(ours, theirs);
  if (!ok) c.issues.push(`${path}: ours ${show(ours)}, theirs ${show(theirs)}`);
}

function compareFields(
  ours: Struct,
  theirs: Record<string, unknown>,
  fields: readonly Field[],
  path: string,
  c: Check,
): void {
  for (const f of fields) {
    if (!inRange(f.versions, c.version)) continue;
    const bare = `${path}.${f.key}`.replace(/\[\d+\]/g, "").slice(1);
    const theirKey = ALIASES[`${c.apiKey}:${bare}`] ?? f.key;
    if (!(theirKey in theirs)) {
      if (f.tag !== null && inRange(f.tagged, c.version)) c.unchecked.add(bare);
      else if (DROPPED[`${c.apiKey}:${bare}`]) c.unchecked.add(bare);
      else c.issues.push(`${path}.${f.key}: not in platformatic's result`);
      continue;
    }
    compare(ours[f.key], theirs[theirKey], f.type, `${path}.${f.key}`, c);
  }
}

function show(x: unknown): string {
  return JSON.stringify(x, (_, v) => typeof v === "bigint" ? `${v}n` : v)?.slice(0, 120) ??
    String(x);
}

/** Encodes one frame, parses it as platformatic's connection would, and compares. */
function roundTrip(apiKey: number, version: number, value: Struct, c: Check): void {
  const mod = pltModule(apiKey, version)!;
  const correlationId = 0x1234567;
  const frame = Buffer.from(
    concatChunks(encodeResponseFrame(apiKey, version, correlationId, value)),
  );
  const head = plt.Reader.from(frame);
  expect(head.readInt32()).toBe(frame.length - 4);
  expect(head.readInt32()).toBe(correlationId);
  const tagged = responseHeaderTagged(mod);
  expect(tagged).toBe(responseHeaderVersion(apiKey, version) === 1);
  if (tagged) head.readTaggedFields();
  const body = plt.Reader.from(frame.subarray(head.position));
  let decoded: unknown;
  try {
    decoded = mod.parseResponse(correlationId, apiKey, version, body);
  } catch (e) {
    // Non-zero error codes throw, carrying the fully parsed response.
    const response = (e as { response?: unknown }).response;
    if (response === undefined) throw e;
    decoded = response;
  }
  if (body.remaining !== 0) c.issues.push(`${body.remaining} body bytes left unread`);
  const root: FieldType = { kind: "struct", fields: schemaFor(apiKey, "response")!.fields };
  compare(value, unshape(apiKey, version, decoded as Record<string, unknown>), root, "", c);
}

const RANDOM_SEEDS = 4;

/** Fields platformatic skips (tagged fields it does not know, or DROPPED ones), per case. */
const UNCHECKED = new Map<string, string[]>();
const EXPECTED_UNCHECKED: Record<string, string[]> = {
  "CreateTopics v5": ["topics.topicConfigErrorCode"],
  "CreateTopics v6": ["topics.topicConfigErrorCode"],
  "DescribeConfigs v0": ["results.configs.isDefault"],
};

describe("@platformatic/kafka parses our responses", () => {
  for (const [apiKey, version] of platformaticResponseCases()) {
    const adv = ADVERTISED.get(apiKey);
    const advertised = adv !== undefined && version >= adv[0] && version <= adv[1];
    test(`${apiName(apiKey)} v${version}${advertised ? "" : " (not advertised)"}`, () => {
      const fields = schemaFor(apiKey, "response")!.fields;
      const values: [string, Struct][] = (["full", "sparse"] as Mode[]).map((m) => [
        m,
        sampleStruct(fields, version, m),
      ]);
      for (let seed = 1; seed <= RANDOM_SEEDS; seed++) {
        const v = randomStruct(new Rng(seed * 104729 + apiKey * 37 + version), fields, version);
        values.push([`random ${seed}`, clientSafe(v, fields)]);
      }
      // A non-zero ApiVersions error from v3 on means the v0-shaped fallback body (KIP-511),
      // which platformatic expects then; the fallback has its own hand-written frame.
      if (apiKey === 18 && version >= 3) { for (const [, v] of values) v.errorCode = 0; }
      const unchecked = new Set<string>();
      for (const [label, value] of values) {
        const c: Check = { apiKey, version, issues: [], unchecked };
        roundTrip(apiKey, version, value, c);
        expect({ label, issues: c.issues }).toEqual({ label, issues: [] });
      }
      UNCHECKED.set(`${apiName(apiKey)} v${version}`, [...unchecked]);
    });
  }
  test("only the expected fields went unchecked", () => {
    // Meaningful only when every case above ran (not under a -t filter).
    if (UNCHECKED.size !== platformaticResponseCases().length) return;
    const got = Object.fromEntries([...UNCHECKED].filter(([, u]) => u.length > 0));
    expect(got).toEqual(EXPECTED_UNCHECKED);
  });
});

/**
 * Client-side fix-ups for random values: random record bytes are not a batch platformatic could
 * parse (use none or RECORD_BATCH), and it looks every non-zero error code up in its table of
 * known codes (an unknown one crashes it), so fold them into 0-59.
 */
function clientSafe(value: Struct, fields: readonly Field[]): Struct {
  for (const f of fields) {
    const v = value[f.key];
    if (f.key === "errorCode" && typeof v === "number") value[f.key] = Math.abs(v) % 60;
    else if (f.type.kind === "prim" && f.type.prim === "records") {
      value[f.key] = v === null ? null : (v as Uint8Array).length > 0 ? RECORD_BATCH : v;
    } else if (f.type.kind === "array" && f.type.of.kind === "struct" && Array.isArray(v)) {
      const of = f.type.of;
      for (const e of v) clientSafe(e as Struct, of.fields);
    } else if (f.type.kind === "struct" && v) clientSafe(v as Struct, f.type.fields);
  }
  return value;
}
