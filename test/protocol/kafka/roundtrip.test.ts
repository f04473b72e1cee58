/** Property tests: seeded random values round-trip through every schema and version. */
import { describe, expect, test } from "bun:test";
import {
  codecVersions,
  concatChunks,
  declaredApiKeys,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  schemaFor,
} from "../../../src/protocol/kafka/index.ts";
import { randomStruct, Rng } from "./random-values.ts";

const CASES_PER_VERSION = 25;

describe("round-trip every schema version", () => {
  for (const apiKey of declaredApiKeys()) {
    const [min, max] = codecVersions(apiKey)!;
    for (const direction of ["request", "response"] as const) {
      test(`api ${apiKey} ${direction} v${min}-${max}`, () => {
        const schema = schemaFor(apiKey, direction)!;
        for (let v = min; v <= max; v++) {
          const rng = new Rng(apiKey * 1000 + v * 10 + (direction === "request" ? 1 : 2));
          for (let i = 0; i < CASES_PER_VERSION; i++) {
            const value = randomStruct(rng, schema.fields, v);
            const bytes = direction === "request"
              ? encodeRequest(apiKey, v, value)
              : concatChunks(encodeResponse(apiKey, v, value));
            const decoded = direction === "request"
              ? decodeRequest(apiKey, v, bytes)
              : decodeResponse(apiKey, v, bytes);
            expect(decoded).toEqual(value);
            const again = direction === "request"
              ? encodeRequest(apiKey, v, decoded)
              : concatChunks(encodeResponse(apiKey, v, decoded));
            expect(again).toEqual(bytes);
          }
        }
      });
    }
  }
});
