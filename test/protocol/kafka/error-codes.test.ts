// The one error table: every Kafka code once, each with one HTTP status, and every typed error
// of the broker carrying its code the same way (`errorCode`), whatever layer threw it.
import { describe, expect, test } from "bun:test";
import {
  ErrorCode,
  errorCodeOf,
  errorName,
  httpStatusOf,
  isRetriable,
} from "../../../src/protocol/kafka/error-codes.ts";
import { MetaError } from "../../../src/meta/index.ts";
import { LogError } from "../../../src/storage/index.ts";
import { BrokerError } from "../../../src/core/partition-manager.ts";
import { ReplicaError } from "../../../src/replication/replica.ts";
import { toHttpError } from "../../../src/http/errors.ts";

describe("the error table", () => {
  test("codes and names are one-to-one; statuses are HTTP error statuses", () => {
    const entries = Object.entries(ErrorCode);
    expect(new Set(entries.map(([, c]) => c)).size).toBe(entries.length);
    for (const [name, code] of entries) {
      expect(errorName(code)).toBe(name);
      const status = httpStatusOf(code);
      if (code === ErrorCode.NONE) expect(status).toBe(200);
      else expect(status >= 400 && status <= 599).toBe(true);
    }
    expect(errorName(9999)).toBe("UNKNOWN_ERROR_9999");
    expect(httpStatusOf(9999)).toBe(500);
  });

  test("Kafka's numbers, retriable flags and statuses where clients and tools rely on them", () => {
    expect([ErrorCode.NOT_CONTROLLER, isRetriable(41), httpStatusOf(41)]).toEqual([41, true, 503]);
    expect([ErrorCode.TOPIC_ALREADY_EXISTS, isRetriable(36), httpStatusOf(36)])
      .toEqual([36, false, 409]);
    expect(httpStatusOf(ErrorCode.RESOURCE_NOT_FOUND)).toBe(404);
    expect(httpStatusOf(ErrorCode.UNACCEPTABLE_CREDENTIAL)).toBe(422);
    expect(ErrorCode.INVALID_UPDATE_VERSION).toBe(108);
    // Refusals are the caller's, not a server fault: monitoring counts 5xx as broker errors.
    for (const c of [29, 30, 31, 53]) expect(httpStatusOf(c)).toBe(403);
    expect(httpStatusOf(ErrorCode.SASL_AUTHENTICATION_FAILED)).toBe(401);
    // A passing state a retry gets past (a leadership moving) is 503, not a server fault (500).
    for (const c of [5, 6, 13, 74, 75, 78]) expect(httpStatusOf(c)).toBe(503);
    expect(httpStatusOf(ErrorCode.THROTTLING_QUOTA_EXCEEDED)).toBe(429);
  });

  test("metadata, storage, core and replica errors carry the code as errorCode", () => {
    const thrown = [
      new MetaError("TOPIC_ALREADY_EXISTS", "exists"),
      new LogError(ErrorCode.TOPIC_ALREADY_EXISTS, "exists"),
      new BrokerError(ErrorCode.TOPIC_ALREADY_EXISTS, "exists"),
      new ReplicaError(ErrorCode.TOPIC_ALREADY_EXISTS, "exists"),
    ];
    for (const e of thrown) {
      expect(errorCodeOf(e)).toBe(36);
      const h = toHttpError(e)!;
      expect([h.status, h.errorCode, h.kafkaErrorCode]).toEqual([409, 40936, 36]);
    }
    expect(errorCodeOf(new Error("plain"))).toBe(-1);
    // A numeric `code` (a Node system error shape) is not a Kafka code.
    expect(errorCodeOf(Object.assign(new Error("x"), { code: 36 }))).toBe(-1);
  });

  test("a SCRAM refusal from the metadata layer answers the user routes' statuses", () => {
    const gone = toHttpError(new MetaError("RESOURCE_NOT_FOUND", "no such credential"))!;
    expect([gone.status, gone.errorCode, gone.kafkaErrorCode]).toEqual([404, 40491, 91]);
    const bad = toHttpError(new MetaError("UNACCEPTABLE_CREDENTIAL", "too few iterations"))!;
    expect([bad.status, bad.errorCode, bad.kafkaErrorCode]).toEqual([422, 42293, 93]);
  });
});
