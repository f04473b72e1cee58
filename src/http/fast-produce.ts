// The hot path of `POST /topics/{t}/records` with a JSON body: answered before the Hono router,
// middleware chain and request validators, which cost several times the produce itself for a
// one-record request. It validates with the same pieces the declared route uses (the
// ProduceQuery schema, the record parser) and answers with the same shapes; any request it is
// not sure about (another media type, a token mismatch, no content-length, repeated or invalid
// query parameters) goes to the Hono app, which answers it in full.
import { timingSafeEqual } from "node:crypto";
import type { Metrics } from "../core/metrics.ts";
import { badRequest, errorBody, toHttpError } from "./errors.ts";
import {
  jsonRecords,
  mediaType,
  parseAcks,
  produceAnswer,
  ProduceQuery,
  type Producer,
  queryPartition,
} from "./produce.ts";
import type { Logger } from "../log.ts";

/** The route label the Hono app reports for this path in /metrics. */
const ROUTE = "/topics/:topic/records";
const LABELS = { method: "POST", route: ROUTE };

export interface FastPathOptions {
  producer: Producer;
  metrics: Metrics;
  log: Logger;
  bodyLimit: number;
  /** The Authorization header value that grants access ("Bearer TOKEN"), with --http-token. */
  authorization?: Buffer;
}

/** Query parameters, or undefined when one repeats or does not decode (the Hono app decides). */
function parseQuery(qs: string): Record<string, string> | undefined {
  // No prototype: a "__proto__" parameter is just a key.
  const out: Record<string, string> = Object.create(null);
  for (const pair of qs.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    let k = eq < 0 ? pair : pair.slice(0, eq);
    let v = eq < 0 ? "" : pair.slice(eq + 1);
    try {
      if (/[%+]/.test(k)) k = decodeURIComponent(k.replaceAll("+", " "));
      if (/[%+]/.test(v)) v = decodeURIComponent(v.replaceAll("+", " "));
    } catch {
      return undefined;
    }
    if (Object.hasOwn(out, k)) return undefined;
    out[k] = v;
  }
  return out;
}

/** Constant-time, as in the auth middleware; anything else is left to it (it answers 401). */
function authorized(got: string | null, want: Buffer): boolean {
  if (got === null) return false;
  const g = Buffer.from(got);
  return g.length === want.length && timingSafeEqual(g, want);
}

/** Returns a handler, or undefined when the request is for the Hono app. */
export function fastProducePath(
  o: FastPathOptions,
): (req: Request) => Promise<Response> | undefined {
  return (req) => {
    if (req.method !== "POST") return undefined;
    const url = req.url;
    // The path starts after "http://host"; req.url is always absolute.
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const qm = url.indexOf("?", pathStart);
    const path = qm < 0 ? url.slice(pathStart) : url.slice(pathStart, qm);
    if (!path.startsWith("/topics/") || !path.endsWith("/records")) return undefined;
    const raw = path.slice(8, -8);
    if (raw.length === 0 || raw.includes("/")) return undefined;
    const h = req.headers;
    if (mediaType(h.get("content-type")) !== "application/json") return undefined;
    const len = h.get("content-length");
    if (len === null || !/^\d{1,12}$/.test(len) || Number(len) > o.bodyLimit) return undefined;
    if (o.authorization !== undefined && !authorized(h.get("authorization"), o.authorization)) {
      return undefined;
    }
    let topic = raw;
    if (raw.includes("%")) {
      try {
        topic = decodeURIComponent(raw);
      } catch {
        return undefined;
      }
    }
    if (topic.length > 249) return undefined;
    const query = qm < 0 ? {} : parseQuery(url.slice(qm + 1));
    if (query === undefined) return undefined;
    const q = ProduceQuery.safeParse(query);
    // key_separator with JSON is a 400 the declared route explains.
    if (!q.success || q.data.key_separator !== undefined) return undefined;
    return handle(o, req, topic, q.data);
  };
}

async function handle(
  o: FastPathOptions,
  req: Request,
  topic: string,
  q: {
    acks?: string;
    format?: "json" | "text" | "base64";
    partition?: string;
    summary?: "true" | "false";
  },
): Promise<Response> {
  const t0 = performance.now();
  let res: Response;
  try {
    let body: unknown;
    try {
      body = await req.json();
    } catch (e) {
      throw badRequest(`the body is not valid JSON: ${(e as Error).message}`);
    }
    const records = jsonRecords(body, q.format ?? "json");
    const offsets = await o.producer.produce(
      topic,
      records,
      parseAcks(q.acks),
      queryPartition(q),
    );
    res = Response.json(produceAnswer(offsets, q.summary === "true"));
  } catch (e) {
    const h = toHttpError(e);
    if (h) res = Response.json(errorBody(h), { status: h.status });
    else {
      o.log.error("http handler failed", { error: e, path: ROUTE, stack: (e as Error).stack });
      res = Response.json({ error_code: 50000, message: "internal error" }, { status: 500 });
    }
  }
  o.metrics.httpSeconds.observe(LABELS, (performance.now() - t0) / 1000);
  o.metrics.httpRequests.inc({ method: "POST", route: ROUTE, status: String(res.status) });
  return res;
}
