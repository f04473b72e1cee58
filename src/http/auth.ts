// Bearer-token access for the HTTP API (--http-token), until full authentication lands.
import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { HostPort } from "../config.ts";
import type { Logger } from "../log.ts";
import type { PasswordChecker } from "../kafka/sasl/password.ts";
import { basicLogin, challenges, parseBasic } from "./basic-auth.ts";

/**
 * Probes a load balancer or orchestrator (Kubernetes liveness and readiness) makes without
 * credentials. Without the token they answer their status code and nothing else: no version,
 * node id or topic names (fields an attacker could use) leave the broker.
 */
const PROBES = new Set(["/healthz", "/readyz"]);

/** What a probe's body keeps for a caller without the token. */
const PROBE_FIELDS = ["status", "ready", "error_code"];

async function reduceProbe(res: Response): Promise<Response> {
  let body: Record<string, unknown>;
  try {
    body = await res.clone().json() as Record<string, unknown>;
  } catch {
    return res;
  }
  const kept = Object.fromEntries(PROBE_FIELDS.filter((k) => k in body).map((k) => [k, body[k]]));
  return Response.json(kept, { status: res.status });
}

/**
 * With a token, every request needs it (Bearer) or, given `passwords`, a user's password
 * (Basic, basic-auth.ts). The user, or "token", is the request's `principal` variable.
 */
export function authMiddleware(
  token: string | undefined,
  passwords?: PasswordChecker,
): MiddlewareHandler {
  if (!token) return (_c, next) => next();
  const want = Buffer.from(token);
  return async (c, next) => {
    const h = c.req.header("authorization") ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(h.trim());
    const got = m ? Buffer.from(m[1]) : undefined;
    // Constant-time compare, so the token cannot be guessed byte by byte from response times.
    const bearer = got !== undefined && got.length === want.length && timingSafeEqual(got, want);
    const user = !bearer && passwords ? await basicLogin(h, passwords) : null;
    const ok = bearer || user !== null;
    if (ok) c.set("principal" as never, (user === null ? "token" : `User:${user}`) as never);
    if (!ok && PROBES.has(c.req.path)) {
      await next();
      c.res = await reduceProbe(c.res);
      return;
    }
    if (!ok) {
      for (const v of challenges(passwords !== undefined)) {
        c.header("WWW-Authenticate", v, { append: true });
      }
      return c.json({
        error_code: 40100,
        message: m
          ? "the bearer token is wrong"
          : parseBasic(h) !== null
          ? "the user name or password is wrong"
          : passwords
          ? "this broker requires Authorization: Bearer <token> (see --http-token) or Basic " +
            "with a user's name and password (broker user add)"
          : "this broker requires Authorization: Bearer <token> (see --http-token)",
      }, 401);
    }
    return next();
  };
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Warn at start when the API is reachable from other machines without a token. */
export function warnIfExposed(addr: HostPort, token: string | undefined, log: Logger): void {
  if (token || isLoopback(addr.host)) return;
  log.warn(
    "the HTTP API listens beyond loopback without a token: anyone who can reach it can read, write and delete; set --http-token (or BROKER_HTTP_TOKEN)",
    { http_addr: `${addr.host}:${addr.port}` },
  );
}
