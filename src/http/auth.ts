// Bearer-token access for the HTTP API (--http-token), until full authentication lands.
import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { HostPort } from "../config.ts";
import type { Logger } from "../log.ts";

/** Routes a load balancer or orchestrator probes without credentials. */
const OPEN_PATHS = new Set(["/healthz"]);

export function authMiddleware(token: string | undefined): MiddlewareHandler {
  if (!token) return (_c, next) => next();
  const want = Buffer.from(token);
  return async (c, next) => {
    if (OPEN_PATHS.has(c.req.path)) return next();
    const h = c.req.header("authorization") ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(h.trim());
    const got = m ? Buffer.from(m[1]) : undefined;
    // Constant-time compare, so the token cannot be guessed byte by byte from response times.
    if (!got || got.length !== want.length || !timingSafeEqual(got, want)) {
      c.header("WWW-Authenticate", 'Bearer realm="broker"');
      return c.json({
        error_code: 40100,
        message: m
          ? "the bearer token is wrong"
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
