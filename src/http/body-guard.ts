// Request bodies in front of every route: a body over the per-request limit gets 413 without
// being read (from its Content-Length; a chunked one is read only up to the limit, then the
// connection is closed), and the bytes of bodies being read or handled are bounded across all
// requests. A request that does not fit waits (its body unread: Bun stops reading the socket) up
// to BODY_WAIT_MS for bytes to be released, then gets 503 with Retry-After. A chunked body takes
// its bytes chunk by chunk as it is read; one that finds the budget full halfway gets 503 at once
// (it never waits while holding bytes, so bodies cannot hold each other up for ever).
import { timingSafeEqual } from "node:crypto";
import { ByteBudget } from "../kafka/budget.ts";
import type { Metrics } from "../core/metrics.ts";
import type { WarnLimiter } from "../log.ts";
import type { PasswordChecker } from "../kafka/sasl/password.ts";
import { basicLogin } from "./basic-auth.ts";

/** How long a request waits for room in the body budget before it gets 503. */
export const BODY_WAIT_MS = 5000;

export interface BodyGuardOptions {
  /** The largest body read (413 above it). */
  maxBodyBytes: number;
  /** Body bytes held across all requests. */
  queuedMaxBodyBytes: number;
  metrics: Metrics;
  warnings: WarnLimiter;
  /** "Bearer TOKEN" with --http-token: a chunked body is not read for a request without it. */
  authorization?: Buffer;
  /** Users whose password (Basic) counts as well as the token. */
  passwords?: PasswordChecker;
  waitMs?: number;
}

type Next = (req: Request) => Response | Promise<Response>;

export interface BodyGuard {
  (req: Request, next: Next): Response | Promise<Response>;
  readonly budget: ByteBudget;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });

export function bodyGuard(o: BodyGuardOptions): BodyGuard {
  const budget = new ByteBudget(o.queuedMaxBodyBytes);
  const waitMs = o.waitMs ?? BODY_WAIT_MS;
  const refused = o.metrics.counter(
    "broker_http_bodies_refused_total",
    "HTTP requests refused for their body: too_large (413) or busy (503, the body budget was full)",
  );
  o.metrics.collect(() =>
    budget.gauges(
      "broker_http_body_bytes_queued",
      "HTTP request body bytes held in memory across all requests",
      "--http-queued-max-body-bytes",
    )
  );

  const tooLarge = (req: Request, size: number | "chunked") => {
    refused.inc({ reason: "too_large" });
    o.warnings.warn("http_body_too_large", "refusing an HTTP request body over the limit", {
      path: pathOf(req),
      size,
      max: o.maxBodyBytes,
    });
    return json(413, {
      error_code: 41300,
      message: `the request body is larger than the ${o.maxBodyBytes}-byte limit`,
    });
  };
  const busy = (req: Request) => {
    refused.inc({ reason: "busy" });
    o.warnings.warn("http_body_busy", "refusing an HTTP request: request bodies fill memory", {
      path: pathOf(req),
      queued: budget.used,
      max: budget.limit,
    });
    return json(503, {
      error_code: 50300,
      message: `request bodies in flight fill the ${budget.limit}-byte budget; retry shortly`,
    }, { "retry-after": "1" });
  };

  /** Run the request holding `n` budget bytes, released once its response is made. */
  const holding = (req: Request, next: Next, n: number): Response | Promise<Response> => {
    let res: Response | Promise<Response>;
    try {
      res = next(req);
    } catch (e) {
      budget.release(n);
      throw e;
    }
    if (!(res instanceof Promise)) {
      budget.release(n);
      return res;
    }
    return res.finally(() => budget.release(n));
  };

  const guard = (req: Request, next: Next): Response | Promise<Response> => {
    const h = req.headers;
    const chunked = h.get("transfer-encoding") !== null;
    const cl = h.get("content-length");
    if (!chunked) {
      if (cl === null) return next(req);
      const n = Number(cl);
      if (!Number.isSafeInteger(n) || n <= 0) return next(req);
      if (n > o.maxBodyBytes) return tooLarge(req, n);
      if (budget.tryAcquire(n)) return holding(req, next, n);
      return acquire(budget, n, waitMs).then((ok) => ok ? holding(req, next, n) : busy(req));
    }
    if (req.body === null) return next(req);
    // Without the token the app answers 401 without reading: nothing to buffer here.
    if (o.authorization !== undefined && !authorized(h.get("authorization"), o.authorization)) {
      // A user's password counts too: checked before anything of the body is read.
      if (o.passwords === undefined) return next(req);
      return basicLogin(h.get("authorization"), o.passwords).then((user) =>
        user === null ? next(req) : readChunked(req, next)
      );
    }
    return readChunked(req, next);
  };

  async function readChunked(req: Request, next: Next): Promise<Response> {
    const reader = req.body!.getReader();
    const chunks: Uint8Array[] = [];
    let held = 0;
    let ok = false;
    try {
      for (;;) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (e) {
          return json(400, {
            error_code: 40000,
            message: `the request body could not be read: ${(e as Error).message}`,
          });
        }
        const { done, value } = r;
        if (done) break;
        if (held + value.length > o.maxBodyBytes) {
          // Stop reading: the rest of the body is never taken in (Bun closes the connection).
          void reader.cancel().catch(() => {});
          return tooLarge(req, "chunked");
        }
        // Waiting while holding bytes could deadlock (every chunked body half read, none
        // finishing): only a request that holds nothing yet waits, the others give up at once.
        if (
          !budget.tryAcquire(value.length) &&
          (held > 0 || !(await acquire(budget, value.length, waitMs)))
        ) {
          void reader.cancel().catch(() => {});
          return busy(req);
        }
        held += value.length;
        chunks.push(value);
      }
      const headers = new Headers(req.headers);
      headers.delete("transfer-encoding");
      headers.set("content-length", String(held));
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, held);
      chunks.length = 0;
      const whole = new Request(req.url, {
        method: req.method,
        headers,
        body,
        signal: req.signal,
      });
      ok = true;
      return await holding(whole, next, held);
    } finally {
      // `holding` releases the bytes once the response is made; otherwise they go here.
      if (!ok) budget.release(held);
    }
  }

  return Object.assign(guard, { budget });
}

/** Wait until `n` bytes fit in the budget (true, and they are taken) or `ms` pass (false). */
function acquire(budget: ByteBudget, n: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined = undefined;
    const wake = () => {
      if (budget.tryAcquire(n)) {
        clearTimeout(timer);
        resolve(true);
      } else budget.onRelease(wake);
    };
    timer = setTimeout(() => {
      budget.cancel(wake);
      resolve(false);
    }, ms);
    budget.onRelease(wake);
  });
}

function pathOf(req: Request): string {
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  return start < 0 ? "/" : q < 0 ? url.slice(start) : url.slice(start, q);
}

function authorized(got: string | null, want: Buffer): boolean {
  if (got === null) return false;
  const g = Buffer.from(got);
  return g.length === want.length && timingSafeEqual(g, want);
}
