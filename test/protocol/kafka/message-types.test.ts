// The committed message types are what `npm run gen` writes from the schemas today.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { OUTPUT, renderMessageTypes } from "../../../scripts/gen-kafka-types.ts";
import { ApiKey, declaredApiKeys, schemaFor } from "../../../src/protocol/kafka/index.ts";

test("src/protocol/kafka/message-types.gen.ts is up to date (else run npm run gen)", () => {
  expect(readFileSync(OUTPUT, "utf8")).toBe(renderMessageTypes());
});

test("ApiKey names every schema's key once, by the schema's name", () => {
  const byKey: [number, string][] = Object.entries(ApiKey).map(([name, key]) => [key, name]);
  byKey.sort((a, b) => a[0] - b[0]);
  expect(byKey).toEqual(
    declaredApiKeys().map((k) => [k, schemaFor(k, "request")!.name.replace(/Request$/, "")]),
  );
});
