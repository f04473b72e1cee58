// Every operation in /openapi.json gets an operationId (client generators name their methods
// after it): a route's own, else one derived from its method and path, e.g.
// GET /topics/{topic}/partitions/{partition}/records -> getTopicPartitionRecords.
import type { RouteConfig } from "@hono/zod-openapi";

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** "consumer-groups" -> "ConsumerGroups". */
const word = (s: string) => s.split(/[^A-Za-z0-9]+/).filter((x) => x !== "").map(cap).join("");

/** A collection named right before one of its items ("topics/{topic}") reads as the item. */
function singular(s: string): string {
  if (/ies$/.test(s)) return s.slice(0, -3) + "y";
  if (/(ss|us)$/.test(s)) return s;
  return s.replace(/s$/, "");
}

export function operationIdFor(method: string, path: string): string {
  const segs = path.split("/").filter((s) => s !== "");
  let out = method.toLowerCase();
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    if (s.startsWith("{")) continue;
    const beforeParam = segs[i + 1]?.startsWith("{") ?? false;
    out += word(beforeParam ? singular(s) : s);
  }
  return out;
}

/** The route with an operationId (its own if it has one). */
export function withOperationId<R extends RouteConfig>(route: R): R {
  if (route.operationId) return route;
  return { ...route, operationId: operationIdFor(route.method, route.path) };
}
