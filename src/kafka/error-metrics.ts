// Error codes in Kafka responses, counted by API and error for broker_kafka_request_errors_total.
// Responses carry their codes at several depths (top level, per topic, per partition, per
// group). Rather than walking every field of every response (on the Produce and Fetch hot path
// that was most of the cost), each API's response schema is compiled once into the paths that
// can hold an `ErrorCode` field, and only those are read: a Fetch answer costs one property read
// per partition, and its records, offsets and epochs are never visited. Counting the response
// (rather than where handlers set codes) keeps the codes the ACL layer merges in counted too.
import { ApiKey, schemaFor } from "../protocol/kafka/index.ts";
import { errorName } from "../protocol/kafka/error-codes.ts";
import type { Field } from "../protocol/kafka/schema.ts";
import type { Counter } from "../core/metrics.ts";

/** Where error codes can be in a struct: its own errorCode, and the fields leading to more. */
interface Plan {
  readonly hasCode: boolean;
  /** Struct or array-of-struct fields that hold an errorCode somewhere below. */
  readonly nested: readonly (readonly [key: string, plan: Plan])[];
}

function compile(fields: readonly Field[]): Plan | null {
  let hasCode = false;
  const nested: [string, Plan][] = [];
  for (const f of fields) {
    const t = f.type.kind === "array" ? f.type.of : f.type;
    if (f.key === "errorCode" && t.kind === "prim") hasCode = true;
    else if (t.kind === "struct") {
      const p = compile(t.fields);
      if (p !== null) nested.push([f.key, p]);
    }
  }
  return hasCode || nested.length > 0 ? { hasCode, nested } : null;
}

const PLANS = new Map<string, Plan | null>();

/** The compiled plan of an API's response, by the name metrics label it with. */
function planOf(api: string): Plan | null {
  let p = PLANS.get(api);
  if (p === undefined) {
    const key = (ApiKey as Record<string, number>)[api];
    const schema = key === undefined ? undefined : schemaFor(key, "response");
    p = schema === undefined ? null : compile(schema.fields);
    PLANS.set(api, p);
  }
  return p;
}

function visit(v: unknown, plan: Plan, errors: Counter, api: string): void {
  if (v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) visit(v[i], plan, errors, api);
    return;
  }
  const o = v as Record<string, unknown>;
  if (plan.hasCode) {
    const code = o.errorCode;
    if (typeof code === "number" && code !== 0) {
      errors.inc({ api, code: String(code), error: errorName(code) });
    }
  }
  for (let i = 0; i < plan.nested.length; i++) {
    const [key, p] = plan.nested[i];
    visit(o[key], p, errors, api);
  }
}

/** Count each non-zero errorCode in `response` (an answer of API `api`) under the API's name. */
export function countResponseErrors(errors: Counter, api: string, response: unknown): void {
  const plan = planOf(api);
  if (plan !== null) visit(response, plan, errors, api);
}
