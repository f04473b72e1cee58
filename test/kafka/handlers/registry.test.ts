// The registry is built from the per-API declarations: every handler file is listed, each key
// once, and ApiVersions lists exactly what the dispatcher serves.
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { defineHandler, type KafkaApi, type SchemaKey } from "../../../src/kafka/api.ts";
import { ADVERTISED, API_TABLE, KAFKA_APIS } from "../../../src/kafka/handlers/index.ts";
import {
  ApiKey,
  type FetchResponse,
  type ProduceRequest,
  type ProduceResponse,
} from "../../../src/protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../../../src/kafka/context.ts";

const DIR = join(import.meta.dir, "../../../src/kafka/handlers");

test("every handler file's declaration is registered", async () => {
  const files = readdirSync(DIR).filter((f) =>
    f.endsWith(".ts") && f !== "index.ts" && f !== "api-versions.ts"
  );
  expect(files.length).toBeGreaterThan(20);
  for (const f of files) {
    const mod = await import(join(DIR, f)) as { default?: KafkaApi };
    expect(mod.default, `${f} has no default declaration`).toBeDefined();
    expect(API_TABLE.get(mod.default!.apiKey), `${f} is not listed in index.ts`).toBe(mod.default!);
  }
  // One file per key, plus ApiVersions built by the registry.
  expect(KAFKA_APIS.length).toBe(files.length + 1);
});

test("ApiVersions answers with the declared ranges, ascending", async () => {
  const api = API_TABLE.get(ApiKey.ApiVersions)!;
  const body = await api.handle({} as KafkaContext, {} as RequestContext) as {
    apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[];
  };
  expect(body.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]])).toEqual(
    [...ADVERTISED].sort((a, b) => a[0] - b[0]).map(([k, r]) => [k, [...r]]),
  );
  expect(body.apiKeys.map((k) => k.apiKey)).toEqual(KAFKA_APIS.map((a) => a.apiKey));
  // The group APIs, and only they, wait for the coordinator.
  expect(KAFKA_APIS.filter((a) => a.needsGroups).map((a) => a.apiKey)).toEqual([
    8,
    9,
    11,
    12,
    13,
    14,
    15,
    16,
    42,
  ]);
});

test("a declared range outside the schema's versions is refused at load", () => {
  const handle = () => null;
  expect(() => defineHandler({ apiKey: ApiKey.Produce, versions: [0, 99], handle })).toThrow();
  expect(() => defineHandler({ apiKey: 999 as SchemaKey, versions: [0, 0], handle })).toThrow();
  expect(() => defineHandler({ apiKey: ApiKey.Fetch, versions: [5, 4], handle })).toThrow();
  expect(defineHandler({ apiKey: ApiKey.Fetch, versions: [4, 12], handle }).versions).toEqual([
    4,
    12,
  ]);
});

test("handlers read and build typed messages: a misspelt field is a type error", () => {
  // Checked by tsc (an unneeded @ts-expect-error fails the type-check too).
  const read = (req: RequestContext<ProduceRequest>) => {
    // @ts-expect-error: the field is timeoutMs
    return req.body.timeoutMS;
  };
  const build = (): ProduceResponse => ({
    responses: [],
    // @ts-expect-error: the field is throttleTimeMs
    throttleTimeMS: 0,
  });
  // A field of the wrong type is one too.
  // @ts-expect-error: errorCode is a number
  const wrong: FetchResponse = { responses: [], errorCode: "0" };
  expect([read, build, wrong]).toHaveLength(3);
});
