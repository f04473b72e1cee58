// HTTP group requests (join, fetch, commit, heartbeat, leave, describe, delete, reset) that arrive
// at a broker that does not coordinate the group are passed to the coordinator over the cluster
// port: the request (method, path, query, a few headers, body bytes) goes as one call, the
// coordinator runs it through its own HTTP app and the answer (status, content type, body bytes)
// comes back as it is, so every group route works on any broker with the same shapes and errors.
// One hop only: a request that was itself passed on is never passed on again. The call's
// deadline follows the request (a join's rebalance timeout, a fetch's max_wait_ms); a client
// that hangs up cancels the request at the coordinator too (a pending join leaves the group).
import type { Context } from "hono";
import type { Broker } from "../broker.ts";
import type { ClusterService } from "../cluster/node.ts";
import { PeerCallError, type PeerCalls } from "../cluster/peer-calls.ts";
import type { MetadataStore } from "../meta/index.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { HttpError, kafkaError } from "./errors.ts";
import { leaderUrl } from "./render.ts";

/** Marks a request passed on by another broker (in Hono's env: no header can forge it). */
const FORWARDED = Symbol("forwarded-by");
/** Who called the broker that passed the request on (checks made at the coordinator use it). */
const FORWARDED_AS = Symbol("forwarded-as");
export type ForwardEnv = { [FORWARDED]?: number; [FORWARDED_AS]?: HttpCaller };

/** The caller as the HTTP auth layer proved it: "token" (the operator's), User:NAME, or nobody. */
export interface HttpCaller {
  principal: string | null;
  host: string;
}

/** Who called this broker: the `principal` auth.ts set, and the address the server passed. */
export function callerOf(c: Context): HttpCaller {
  const p = c.get("principal" as never) as string | undefined;
  const env = c.env as { clientIp?: unknown } | undefined;
  const ip = env && typeof env === "object" && typeof env.clientIp === "string" ? env.clientIp : "";
  return { principal: p ?? null, host: ip };
}

/** The broker that passed this request on, if it was. */
export function forwardedBy(c: Context): number | undefined {
  const env = c.env as ForwardEnv | undefined;
  return env !== null && typeof env === "object" ? env[FORWARDED] : undefined;
}

/** Who called the broker that passed this request on (undefined: it did not say). */
export function forwardedCaller(c: Context): HttpCaller | undefined {
  const env = c.env as ForwardEnv | undefined;
  return env !== null && typeof env === "object" ? env[FORWARDED_AS] : undefined;
}

function isCaller(v: unknown): v is HttpCaller {
  if (v === null || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  return (o.principal === null ||
    (typeof o.principal === "string" && o.principal.length <= 1024)) &&
    typeof o.host === "string" && o.host.length <= 256;
}

/** Bodies passed on (a commit of 100 000 offsets is a few MiB). */
const MAX_BODY = 32 << 20;
/** Answers passed back (a frame is at most 64 MiB). */
const MAX_ANSWER = 56 << 20;
const MAX_PATH = 8192;
const MAX_IN_FLIGHT = 4096;
/** Beyond the wait a request asks for (a join's rebalance, a fetch's long-poll). */
const BASE_MS = 30_000;
const HEADERS = ["content-type", "accept", "x-forwarded-for"] as const;
const PATH = /^\/groups\/[^/?#]+(\/[^?#]*)?(\?[^#]*)?$/;
const METHODS = new Set(["GET", "POST", "DELETE"]);

const num = (v: unknown, max: number) =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? Math.min(v, max) : undefined;

/** How long the coordinator may take: the request's own waits plus a margin. */
function budgetMs(url: URL, method: string, body: Uint8Array): number {
  if (method === "GET" && url.pathname.endsWith("/records")) {
    const w = Number(url.searchParams.get("max_wait_ms") ?? "0");
    return BASE_MS + (Number.isSafeInteger(w) && w > 0 ? Math.min(w, 300_000) : 0);
  }
  if (method === "POST" && /^\/groups\/[^/]+\/members\/?$/.test(url.pathname)) {
    try {
      const j = JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>;
      const ms = num(j?.rebalance_timeout_ms, 3_600_000) ?? num(j?.session_timeout_ms, 3_600_000) ??
        60_000;
      return BASE_MS + 2 * ms;
    } catch {
      return BASE_MS; // the coordinator answers 400
    }
  }
  return BASE_MS;
}

function notCoordinator(broker: Broker, group: string, id: number, why: string): HttpError {
  return new HttpError(
    503,
    50316,
    `group ${group} is coordinated by broker ${id}${
      leaderUrl(broker, id)
    }, which ${why}; retry shortly`,
    ErrorCode.NOT_COORDINATOR,
  );
}

/**
 * Pass a group request to its coordinator `id` and answer with what it answers; "moved" when
 * that broker answered that it does not coordinate the group (nothing was done there).
 */
export async function forwardToCoordinator(
  c: Context,
  broker: Broker,
  peers: PeerCalls,
  group: string,
  id: number,
): Promise<Response | "moved"> {
  const url = new URL(c.req.url);
  const path = url.pathname + url.search;
  const method = c.req.method;
  if (path.length > MAX_PATH || !METHODS.has(method)) {
    throw new HttpError(400, 40000, "this request cannot be passed to the group's coordinator");
  }
  let body = new Uint8Array(0);
  if (method !== "GET") {
    body = new Uint8Array(await c.req.arrayBuffer());
    if (body.length > MAX_BODY) {
      throw new HttpError(
        413,
        41300,
        `a group request passed to the coordinator may have at most ${MAX_BODY} bytes`,
      );
    }
  }
  const headers: Record<string, string> = {};
  for (const h of HEADERS) {
    const v = c.req.header(h);
    if (v !== undefined && v.length <= 1024) headers[h] = v;
  }
  const rid = crypto.randomUUID();
  const deadline = performance.now() + budgetMs(url, method, body);
  const signal = c.req.raw.signal;
  const cancel = () =>
    void peers.call(id, "group", "groupHttpCancel", { rid }, performance.now() + 5000).catch(
      () => {},
    );
  signal?.addEventListener("abort", cancel, { once: true });
  let r;
  try {
    const as = callerOf(c);
    r = await peers.call(id, "group", "groupHttp", { rid, method, path, headers, as }, deadline, [
      body,
    ]);
  } catch (e) {
    if (!(e instanceof PeerCallError)) throw e;
    if (e.kind === "timeout") {
      throw kafkaError(
        ErrorCode.REQUEST_TIMED_OUT,
        `broker ${id}, the coordinator of group ${group}, did not answer in time`,
      );
    }
    if (e.kind === "busy") {
      throw kafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `${e.message}; retry shortly`);
    }
    throw notCoordinator(
      broker,
      group,
      id,
      e.kind === "unknown" ? "has no known address" : `cannot be reached (${e.message})`,
    );
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
  const b = r.body as { status?: unknown; contentType?: unknown } | null;
  const status = b !== null && typeof b === "object" && Number.isSafeInteger(b.status) &&
      (b.status as number) >= 200 && (b.status as number) <= 599
    ? b.status as number
    : undefined;
  if (status === undefined) {
    throw new HttpError(502, 50200, `bad answer from broker ${id}, the coordinator of ${group}`);
  }
  const out = new Headers();
  if (typeof b!.contentType === "string" && b!.contentType.length <= 200) {
    out.set("content-type", b!.contentType);
  }
  if (status === 503 && movedOn(r.tail)) return "moved";
  const empty = status === 204 || status === 304;
  return new Response(empty ? null : r.tail, { status, headers: out });
}

/** Whether an answer is NOT_COORDINATOR (50316): the broker asked no longer coordinates. */
function movedOn(body: Uint8Array): boolean {
  if (body.length > 4096) return false;
  try {
    return (JSON.parse(new TextDecoder().decode(body)) as { error_code?: unknown })?.error_code ===
      50316;
  } catch {
    return false;
  }
}

/**
 * Serve group requests passed on by other brokers: run them through this broker's HTTP app
 * (`handle`) as if they had come here, with the broker's own token when it has one.
 */
export function serveGroupForwards(
  cluster: ClusterService,
  meta: MetadataStore,
  handle: (req: Request, env: ForwardEnv) => Response | Promise<Response>,
  token: string | undefined,
): void {
  const inFlight = new Map<string, AbortController>();
  const registered = (from: number) => meta.listBrokers().some((b) => b.nodeId === from);
  cluster.handleCall("groupHttp", async (from, body, tail) => {
    const b = body as Record<string, unknown> | null;
    if (
      b === null || typeof b !== "object" || typeof b.rid !== "string" || b.rid.length > 64 ||
      typeof b.method !== "string" || !METHODS.has(b.method) || typeof b.path !== "string" ||
      b.path.length > MAX_PATH || !PATH.test(b.path) || b.headers === null ||
      typeof b.headers !== "object" || Array.isArray(b.headers) || tail.length > MAX_BODY ||
      (b.as !== undefined && !isCaller(b.as))
    ) throw new Error("bad groupHttp request");
    if (!registered(from)) throw new Error(`broker ${from} is not registered`);
    if (inFlight.size >= MAX_IN_FLIGHT) throw new Error("too many group requests passed on");
    const headers = new Headers();
    for (const h of HEADERS) {
      const v = (b.headers as Record<string, unknown>)[h];
      if (typeof v === "string" && v.length <= 1024) headers.set(h, v);
    }
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    const key = `${from}:${b.rid}`;
    const ac = new AbortController();
    inFlight.set(key, ac);
    try {
      const req = new Request(`http://forwarded${b.path}`, {
        method: b.method,
        headers,
        body: b.method === "GET" ? undefined : tail,
        signal: ac.signal,
      });
      // A cancelled request answers at once (a dropped join never does), so the caller's call
      // ends rather than timing out.
      const cancelled = new Promise<Response>((resolve) =>
        ac.signal.addEventListener("abort", () => resolve(new Response(null, { status: 499 })), {
          once: true,
        })
      );
      const res = await Promise.race([
        handle(req, {
          [FORWARDED]: from,
          [FORWARDED_AS]: b.as === undefined ? undefined : { ...b.as as HttpCaller },
        }),
        cancelled,
      ]);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const contentType = res.headers.get("content-type") ?? undefined;
      if (bytes.length > MAX_ANSWER) {
        const msg = JSON.stringify({
          error_code: 50000,
          message:
            `the answer (${bytes.length} bytes) is too large to pass back from the group's ` +
            "coordinator: ask for less (limit, max_bytes)",
        });
        return {
          body: { status: 500, contentType: "application/json" },
          tail: [new TextEncoder().encode(msg)],
        };
      }
      return { body: { status: res.status, contentType }, tail: [bytes] };
    } finally {
      if (inFlight.get(key) === ac) inFlight.delete(key);
    }
  });
  cluster.handleCall("groupHttpCancel", (from, body) => {
    const rid = (body as { rid?: unknown } | null)?.rid;
    if (typeof rid === "string") {
      inFlight.get(`${from}:${rid}`)?.abort();
      inFlight.delete(`${from}:${rid}`);
    }
    return Promise.resolve({ body: { ok: true } });
  });
}
