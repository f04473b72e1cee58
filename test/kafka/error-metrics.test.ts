// Error codes at any depth of a response are counted by API and error name, reading only the
// paths the API's response schema can hold an error code at.
import { expect, test } from "bun:test";
import { Counter } from "../../src/core/metrics.ts";
import { countResponseErrors } from "../../src/kafka/error-metrics.ts";
import { apiName, declaredApiKeys, schemaFor } from "../../src/protocol/kafka/index.ts";
import { errorName } from "../../src/protocol/kafka/error-codes.ts";
import { randomStruct, Rng } from "../protocol/kafka/random-values.ts";

test("error codes at every level are counted; zeros and record bytes are not", () => {
  const c = new Counter("broker_kafka_request_errors_total", "h");
  countResponseErrors(c, "Produce", {
    throttleTimeMs: 0,
    responses: [{
      name: "t",
      partitionResponses: [
        { index: 0, errorCode: 0 },
        { index: 1, errorCode: 3 },
        { index: 2, errorCode: 3 },
        { index: 3, errorCode: 6, records: { errorCode: 99 } },
      ],
    }],
    bytes: new Uint8Array([1, 2, 3]),
  });
  countResponseErrors(c, "FindCoordinator", { errorCode: 15, nodeId: -1 });
  expect(c.get({ api: "Produce", code: "3", error: "UNKNOWN_TOPIC_OR_PARTITION" })).toBe(2);
  expect(c.get({ api: "Produce", code: "6", error: "NOT_LEADER_OR_FOLLOWER" })).toBe(1);
  expect(c.get({ api: "Produce", code: "99", error: "UNKNOWN_ERROR_99" })).toBe(0);
  expect(c.get({ api: "FindCoordinator", code: "15", error: "COORDINATOR_NOT_AVAILABLE" })).toBe(1);
  const out: string[] = [];
  c.render(out);
  expect(out.length).toBe(2 + 3);
});

/** The reference: every non-zero errorCode anywhere in the value, record bytes aside. */
function everyCode(v: unknown, out: number[] = []): number[] {
  if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) return out;
  if (Array.isArray(v)) {
    for (const x of v) everyCode(x, out);
    return out;
  }
  for (const [k, x] of Object.entries(v)) {
    if (k === "errorCode" && typeof x === "number" && x !== 0) out.push(x);
    else if (k !== "records") everyCode(x, out);
  }
  return out;
}

test("only the schema's error-code paths are read, and they find every code a full walk does", () => {
  // Random responses of every API and version (random codes at every level they can be):
  // the compiled paths count exactly what a walk over every field finds.
  const rng = new Rng(19);
  let codes = 0;
  for (const key of declaredApiKeys()) {
    const schema = schemaFor(key, "response")!;
    for (let v = schema.valid.min; v <= schema.valid.max; v++) {
      for (let i = 0; i < 4; i++) {
        const body = randomStruct(rng, schema.fields, v);
        const c = new Counter("broker_kafka_request_errors_total", "h");
        countResponseErrors(c, apiName(key), body);
        const want = new Map<number, number>();
        for (const code of everyCode(body)) want.set(code, (want.get(code) ?? 0) + 1);
        for (const [code, n] of want) {
          expect([
            apiName(key),
            v,
            code,
            c.get({ api: apiName(key), code: String(code), error: errorName(code) }),
          ])
            .toEqual([apiName(key), v, code, n]);
        }
        const out: string[] = [];
        c.render(out);
        expect(out.length).toBe(2 + want.size); // HELP and TYPE, then one line a code
        codes += want.size;
      }
    }
  }
  expect(codes).toBeGreaterThan(100);
});

test("a Fetch answer's records and an API without a schema are never walked", () => {
  const c = new Counter("broker_kafka_request_errors_total", "h");
  const trap = new Proxy({}, {
    get() {
      throw new Error("records were walked");
    },
  });
  countResponseErrors(c, "Fetch", {
    errorCode: 0,
    responses: [{ partitions: [{ errorCode: 1, records: trap, abortedTransactions: trap }] }],
  });
  countResponseErrors(c, "NoSuchApi", { errorCode: 3 });
  expect(c.get({ api: "Fetch", code: "1", error: "OFFSET_OUT_OF_RANGE" })).toBe(1);
  expect(c.get({ api: "NoSuchApi", code: "3", error: "UNKNOWN_TOPIC_OR_PARTITION" })).toBe(0);
});
