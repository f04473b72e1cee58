// The Hono app served on --http-addr. Routes are declared with @hono/zod-openapi in one file per
// resource: the same declarations validate requests and produce /openapi.json and /docs.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { matchedRoutes } from "hono/route";
import type { Broker } from "../broker.ts";
import { errorBody, errorResponse, HttpError, toHttpError, unsupportedMedia } from "./errors.ts";
import { topicRoutes } from "./topics.ts";
import { createProducer, produceRoutes } from "./produce.ts";
import type { HttpContext } from "./context.ts";
import { fastProducePath } from "./fast-produce.ts";
import { readRoutes } from "./read.ts";
import { tailRoutes } from "./tail.ts";
import { groupRoutes } from "./groups.ts";
import { memberRoutes } from "./members.ts";
import { reassignmentRoutes } from "./reassignments.ts";
import { userRoutes } from "./users.ts";
import { clusterRoutes, NOT_READY } from "./cluster.ts";
import { renderDocsPage } from "./docs-page.ts";
import { authMiddleware } from "./auth.ts";
import { aclMiddleware } from "./acl.ts";
import { aclRoutes } from "./acls.ts";
import type { LiveAuthorizer } from "../acl/live.ts";
import type { PasswordChecker } from "../kafka/sasl/password.ts";
import { consoleRoutes } from "../console/index.ts";
import { Metrics } from "../core/metrics.ts";
import { CorruptLogError } from "../storage/index.ts";
import { reportDamage } from "../core/damage-log.ts";
import type { RemotePartitions } from "../cluster/remote-partitions.ts";
import { PartitionAccess } from "./partition-access.ts";
import { bodyGuard } from "./body-guard.ts";
import { WarnLimiter } from "../log.ts";
import { type ForwardEnv, serveGroupForwards } from "./forward.ts";

/** The largest request body the API reads (a produce request of many records), by default. */
export const HTTP_BODY_LIMIT = 64 * 1024 * 1024;
/**
 * Request body bytes held across all requests, by default (--http-queued-max-body-bytes): one
 * maximum-size body at a time. A JSON body takes several times its size while it is parsed and
 * turned into records (a 60 MiB one of 1 KiB records peaked at 500-900 MiB RssAnon).
 */
export const HTTP_QUEUED_BODY_LIMIT = 64 * 1024 * 1024;

export interface HttpOptions {
  /** Bearer token every route but /healthz requires (--http-token). */
  token?: string;
  /** With a token: users' passwords (HTTP Basic) are accepted too, checked with this. */
  passwords?: PasswordChecker;
  metrics?: Metrics;
  /** Aborted when the broker shuts down: long-polls answer and live tails end at once. */
  closing?: AbortSignal;
  /**
   * The broker's partition access over the cluster port: partitions led elsewhere are read and
   * written at their leader, and group requests are passed to the group's coordinator.
   */
  remote?: RemotePartitions;
  /** The largest request body read (--http-max-body-bytes); default HTTP_BODY_LIMIT. */
  maxBodyBytes?: number;
  /** Body bytes held across all requests (--http-queued-max-body-bytes). */
  queuedMaxBodyBytes?: number;
  /** --authorizer acl: routes are checked against the ACLs (acl.ts). */
  authorizer?: LiveAuthorizer;
}

/** Routes that answer whether or not the broker is ready. */
const ALWAYS_OPEN = new Set(["/healthz", "/readyz", "/metrics"]);

/** Paths whose POST accepts more than JSON (produce bodies). */
const PRODUCE_PATH = /^\/topics\/[^/]+(\/records|\/partitions\/[^/]+(\/records)?)?$/;
const JSON_TYPE = /^application\/([\w.-]+\+)?json$/;

/**
 * `curl -d` sends application/x-www-form-urlencoded (and some clients nothing at all): treat
 * such bodies as the JSON they almost always are; refuse other media types with 415.
 */
const mediaTypes: MiddlewareHandler = async (c, next) => {
  const m = c.req.method;
  if (m !== "POST" && m !== "PATCH" && m !== "PUT") return next();
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const produce = m === "POST" && PRODUCE_PATH.test(c.req.path);
  if (type === "" || type === "application/x-www-form-urlencoded") {
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    c.req.raw = new Request(c.req.raw, { headers });
    return next();
  }
  if (JSON_TYPE.test(type)) return next();
  if (
    produce && (type === "application/x-ndjson" || type === "application/jsonl" ||
      type === "text/plain" || type === "application/octet-stream")
  ) return next();
  throw unsupportedMedia(
    produce
      ? `unsupported content type ${type}: use application/json, application/x-ndjson, text/plain or application/octet-stream`
      : `unsupported content type ${type}: this route takes application/json`,
  );
};

function routeOf(c: Context): string {
  const rs = matchedRoutes(c);
  for (let i = rs.length - 1; i >= 0; i--) if (rs[i].method !== "ALL") return rs[i].path;
  return "unmatched";
}

export function createHttpApp(broker: Broker, opts: HttpOptions = {}): OpenAPIHono {
  const metrics = opts.metrics ?? new Metrics();
  const maxBody = opts.maxBodyBytes ?? HTTP_BODY_LIMIT;
  const warnings = new WarnLimiter(broker.log);
  const access = new PartitionAccess(broker, opts.remote);
  const producer = createProducer(broker, metrics, access);
  const ctx: HttpContext = {
    broker,
    metrics,
    producer,
    closing: opts.closing ?? new AbortController().signal,
    access,
  };
  const app = new OpenAPIHono({
    // Validation failures are the client's: 400 with every problem named.
    defaultHook: (result, c) => {
      if (result.success) return;
      const issues = result.error.issues.map((i) =>
        `${result.target}${i.path.length ? "." + i.path.join(".") : ""}: ${i.message}`
      );
      return c.json({ error_code: 40000, message: issues.join("; ") }, 400);
    },
  });
  app.use("*", async (c, next) => {
    const t0 = performance.now();
    await next();
    const route = routeOf(c);
    const labels = { method: c.req.method, route };
    metrics.httpSeconds.observe(labels, (performance.now() - t0) / 1000);
    metrics.httpRequests.inc({ ...labels, status: String(c.res.status) });
  });
  // The web console's files (no data in them) load without the token; its API calls carry it.
  consoleRoutes(app);
  app.use("*", authMiddleware(opts.token, opts.passwords));
  // While the broker starts or stops, only the probes answer; everything else is a JSON 503.
  app.use("*", (c, next) => {
    if (broker.isReady() || ALWAYS_OPEN.has(c.req.path)) return next();
    return Promise.resolve(c.json(NOT_READY, 503));
  });
  app.use("*", mediaTypes);
  app.use(
    "*",
    // A backstop for requests that reach the app without the body guard below (group requests
    // passed on by other brokers).
    bodyLimit({
      maxSize: maxBody,
      onError: (c) =>
        c.json({
          error_code: 41300,
          message: `the request body is larger than the ${maxBody}-byte limit`,
        }, 413),
    }),
  );

  // After the media type is settled: a rule may read the JSON body (parsed once, then cached).
  app.use("*", aclMiddleware(opts.authorizer));

  clusterRoutes(app, ctx);
  topicRoutes(app, ctx);
  produceRoutes(app, ctx);
  readRoutes(app, ctx);
  tailRoutes(app, ctx);
  groupRoutes(app, ctx);
  memberRoutes(app, ctx);
  reassignmentRoutes(app, ctx);
  userRoutes(app, ctx);
  aclRoutes(app, ctx);

  // Registered, not put in docConfig: the generator replaces the config's components.
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "The broker's --http-token (BROKER_HTTP_TOKEN) as " +
      "`Authorization: Bearer <token>`; needed when the broker runs with a token, on every " +
      "route but /healthz and /readyz. A request without it is answered 401 with " +
      "WWW-Authenticate.",
  });
  if (opts.passwords) {
    app.openAPIRegistry.registerComponent("securitySchemes", "basic", {
      type: "http",
      scheme: "basic",
      description: "A broker user's name and password (`broker user add`, the users of the " +
        "Kafka listener's SASL), instead of the token; the request then acts as `User:<name>` " +
        "for ACLs.",
    });
  }
  const docConfig = {
    openapi: "3.0.3",
    info: {
      title: "Broker HTTP API",
      version: broker.version,
      description:
        "Topics, produce, read, live tail, consumer groups and cluster status of a Kafka-compatible broker. " +
        'Errors are JSON {"error_code", "message"}.',
    },
    // Optional ({}) when the broker runs without a token; either scheme when users may log in.
    security: [
      ...(opts.token ? [] : [{}]),
      { bearer: [] },
      ...(opts.token && opts.passwords ? [{ basic: [] }] : []),
    ] as Record<string, string[]>[],
  };
  app.doc("/openapi.json", docConfig);
  app.get(
    "/docs",
    (c) => c.html(renderDocsPage(app.getOpenAPIDocument(docConfig), new URL(c.req.url).origin)),
  );

  let routeTable: { pattern: RegExp; methods: string[] }[] | null = null;
  app.notFound((c) => {
    // A known path with another method is 405 with the methods it has, not "no route".
    routeTable ??= declaredRoutes(app.getOpenAPIDocument(docConfig).paths ?? {});
    const allowed = [
      ...new Set(routeTable.filter((r) => r.pattern.test(c.req.path)).flatMap((r) => r.methods)),
    ];
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return c.json({
        error_code: 40500,
        message: `${c.req.method} is not allowed on ${c.req.path}; use ${
          allowed.length > 1
            ? `${allowed.slice(0, -1).join(", ")} or ${allowed[allowed.length - 1]}`
            : allowed[0]
        }`,
      }, 405);
    }
    return c.json(
      { error_code: 40400, message: `no route for ${c.req.method} ${c.req.path}` },
      404,
    );
  });
  app.onError((err, c) => {
    const h = toHttpError(err);
    if (err instanceof CorruptLogError) reportDamage(broker.log, err, { via: c.req.path });
    if (h) return errorResponse(c, h);
    broker.log.error("http handler failed", { error: err, path: c.req.path, stack: err.stack });
    return c.json({ error_code: 50000, message: "internal error" }, 500);
  });
  // JSON produce requests skip the router and middleware chain (see fast-produce.ts).
  const fast = fastProducePath({
    producer,
    metrics,
    log: broker.log,
    bodyLimit: maxBody,
    authorization: opts.token ? Buffer.from(`Bearer ${opts.token}`) : undefined,
  });
  const guard = bodyGuard({
    maxBodyBytes: maxBody,
    queuedMaxBodyBytes: Math.max(maxBody, opts.queuedMaxBodyBytes ?? HTTP_QUEUED_BODY_LIMIT),
    metrics,
    warnings,
    authorization: opts.token ? Buffer.from(`Bearer ${opts.token}`) : undefined,
    passwords: opts.passwords,
  });
  const honoFetch = app.fetch;
  // With ACLs and no token, every produce is checked: the fast path (token only) is off.
  const fastOk = opts.authorizer === undefined || opts.token !== undefined;
  app.fetch = (req, ...rest) =>
    guard(
      req,
      (r) => (fastOk && broker.isReady() ? fast(r) : undefined) ?? honoFetch(r, ...rest),
    );
  // Group requests other brokers pass on to this one as the groups' coordinator.
  if (opts.remote) {
    serveGroupForwards(
      broker.cluster,
      broker.meta,
      (req: Request, env: ForwardEnv) => honoFetch(req, env),
      opts.token,
    );
  }
  return app;
}

export { errorBody, HttpError };
export { type HttpContext, on } from "./context.ts";

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

/** The declared OpenAPI paths as patterns ("{topic}" matches one segment) with their methods. */
function declaredRoutes(paths: Record<string, object | undefined>) {
  return Object.entries(paths).map(([p, item]) => ({
    pattern: new RegExp(
      "^" +
        p.split(/\{[^}]+\}/).map((lit) => lit.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("[^/]+") +
        "/?$",
    ),
    methods: HTTP_METHODS.filter((m) => item && m in item).map((m) => m.toUpperCase()),
  }));
}
