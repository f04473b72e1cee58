// ACLs on the HTTP API (--authorizer acl): each route is checked, before its handler acts, as the
// Kafka request(s) it stands for (src/acl/http-rules.ts, decided by the Kafka rule table), with
// the caller's principal: the Basic user as User:NAME; the bearer token is the operator's and
// passes every check (a super user); without --http-token callers are User:ANONYMOUS, as
// unauthenticated Kafka clients are. A refusal is 403 in the API's error shape with Kafka's code.
// GET /topics and GET /groups leave out what the caller may not DESCRIBE, as Kafka's all-topics
// Metadata and ListGroups do, and a group's page the offsets of such topics (as OffsetFetch).
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { AclOperation, CLUSTER_RESOURCE, nameOf, ResourceType } from "../acl/authorizer.ts";
import type { Requester } from "../acl/authorizer.ts";
import type { LiveAuthorizer } from "../acl/live.ts";
import { HTTP_RULES, httpDenied } from "../acl/http-rules.ts";
import { deniedNeeds, type Need } from "../acl/kafka-rules.ts";
import { codeOf } from "../kafka/authorize.ts";
import { errorResponse, HttpError } from "./errors.ts";
import { callerOf, forwardedBy, forwardedCaller, type HttpCaller } from "./forward.ts";

/** What the Bun server passes the app: the caller's address, for ACLs that name hosts. */
export interface ClientEnv {
  clientIp?: string;
}

/** The declared route a request matched, as the OpenAPI document names it ("/topics/{topic}"). */
function declaredRoute(c: Context): string | undefined {
  const rs = matchedRoutes(c);
  for (let i = rs.length - 1; i >= 0; i--) {
    if (rs[i].method !== "ALL") return rs[i].path.replace(/:([A-Za-z_]+)/g, "{$1}");
  }
  return undefined;
}

/** The path parameters of `route` in `path` (the middleware runs before Hono sets them). */
function paramsOf(route: string, path: string): Record<string, string> {
  const names = route.split("/");
  const parts = path.split("/");
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    const m = /^\{(.+)\}$/.exec(n);
    if (m && parts[i] !== undefined) {
      try {
        out[m[1]] = decodeURIComponent(parts[i]);
      } catch {
        out[m[1]] = parts[i];
      }
    }
  });
  return out;
}

function requesterOf(caller: HttpCaller): Requester | "super" {
  if (caller.principal === "token") return "super";
  return { principal: caller.principal ?? "User:ANONYMOUS", host: caller.host };
}

function refusal(who: Requester, need: Need): HttpError {
  const code = codeOf(need);
  const c = need.anyOf.find((x) => !x.any) ?? need.anyOf[0];
  const what = c === undefined
    ? "use this route"
    : `${nameOf.operation(c.op)} ${nameOf.resourceType(c.type).toLowerCase()}` +
      (c.type === ResourceType.CLUSTER ? "" : ` ${JSON.stringify(c.name)}`);
  return new HttpError(
    403,
    40300 + code,
    `${who.principal} is not authorized to ${what} (ACLs, --authorizer acl)`,
    code,
  );
}

/** What a handler asks when it learns what it acts on only after the route's check. */
type LateCheck = (apiKey: number, body: Record<string, unknown>) => HttpError | undefined;
const LATE_CHECK = "aclLateCheck";

/**
 * Throws the 403 the caller would get for Kafka request `apiKey` with `body`, for handlers that
 * learn what they act on only after the route was checked (an HTTP member's assignment, set by
 * the group's leader, possibly a Kafka client; and ACLs may have changed since the join).
 * Nothing is checked without --authorizer acl.
 */
export function refuseUnlessAllowed(
  c: Context,
  apiKey: number,
  body: Record<string, unknown>,
): void {
  const check = c.get(LATE_CHECK as never) as LateCheck | undefined;
  const refused = check?.(apiKey, body);
  if (refused !== undefined) throw refused;
}

export function aclMiddleware(live: LiveAuthorizer | undefined): MiddlewareHandler {
  if (live === undefined) return (_c, next) => next();
  return async (c, next) => {
    const by = forwardedBy(c);
    // Passed on by another broker, which checked the route (the cluster port authenticates
    // brokers); the handler's own checks are made as the caller that broker names.
    const caller = by !== undefined ? forwardedCaller(c) : callerOf(c);
    // A broker of an older version names no caller: its check of the route is all there is.
    const who = caller === undefined ? undefined : requesterOf(caller);
    if (who !== undefined && who !== "super") {
      c.set(
        LATE_CHECK as never,
        ((apiKey, body) => {
          const [need] = deniedNeeds(live.get(), who, apiKey, body);
          return need === undefined ? undefined : refusal(who, need);
        }) satisfies LateCheck as never,
      );
    }
    if (by !== undefined) return next();
    const route = declaredRoute(c);
    // No route: the 404/405 answer tells nothing.
    if (route === undefined) return next();
    if (who === "super" || who === undefined) return next();
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const key = `${method} ${route}`;
    const rule = HTTP_RULES.get(key);
    const body = rule?.readsBody ? await c.req.json().catch(() => undefined) : undefined;
    const authz = live.get();
    const denied = httpDenied(authz, who, key, { params: paramsOf(route, c.req.path), body });
    if (denied !== null) return errorResponse(c, refusal(who, denied));
    await next();
    if ((key === "GET /topics" || key === "GET /groups") && c.res.status === 200) {
      const rows = await c.res.json() as Record<string, unknown>[];
      const may = (type: ResourceType, name: unknown) =>
        authz.authorize(who, AclOperation.DESCRIBE, type, String(name)).allowed;
      const kept = key === "GET /topics"
        ? rows.filter((t) => may(ResourceType.TOPIC, t.name))
        : may(ResourceType.CLUSTER, CLUSTER_RESOURCE)
        ? rows
        : rows.filter((g) => may(ResourceType.GROUP, g.group_id));
      c.res = c.json(kept);
    }
    if (key === "GET /groups/{group}" && c.res.status === 200) {
      // Committed offsets as OffsetFetch gives them: of the topics the caller may DESCRIBE.
      const d = await c.res.json() as { offsets?: { topic: string; lag: number | null }[] };
      const offsets = (d.offsets ?? []).filter((o) =>
        authz.authorize(who, AclOperation.DESCRIBE, ResourceType.TOPIC, o.topic).allowed
      );
      const lag = offsets.some((o) => o.lag === null)
        ? null
        : offsets.reduce((n, o) => n + (o.lag ?? 0), 0);
      c.res = c.json({ ...d, offsets, lag });
    }
  };
}
