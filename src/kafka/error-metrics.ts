// Error codes in Kafka responses, counted by API and error for broker_kafka_request_errors_total.
// Responses carry their codes at any depth (top level, per topic, per partition, per group), so
// the response is walked; record bytes (typed arrays, buffer lists) are never entered.
import { errorName } from "../protocol/kafka/error-codes.ts";
import type { Counter } from "../core/metrics.ts";

/** Nesting a response never exceeds (protocol structs are at most a few levels deep). */
const MAX_DEPTH = 8;

function walk(v: unknown, depth: number, found: (code: number) => void): void {
  if (v === null || typeof v !== "object" || depth > MAX_DEPTH || ArrayBuffer.isView(v)) return;
  if (Array.isArray(v)) {
    for (const x of v) walk(x, depth + 1, found);
    return;
  }
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    if (k === "errorCode") {
      if (typeof x === "number" && x !== 0) found(x);
    } else if (k !== "records" && x !== null && typeof x === "object") {
      walk(x, depth + 1, found);
    }
  }
}

/** Count each non-zero errorCode in `response` under the API's name. */
export function countResponseErrors(errors: Counter, api: string, response: unknown): void {
  walk(response, 0, (code) => errors.inc({ api, code: String(code), error: errorName(code) }));
}
