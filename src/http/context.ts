// What every route file needs from the app: the shared context and the route registration.
// Its own module so the route files do not import app.ts, which imports them.
import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Broker } from "../broker.ts";
import type { Metrics } from "../core/metrics.ts";
import { withOperationId } from "./operation-id.ts";
import type { PartitionAccess } from "./partition-access.ts";
// Type-only (erased at run time): the producer's type is inferred from its factory.
import type { Producer } from "./produce.ts";

export interface HttpContext {
  broker: Broker;
  metrics: Metrics;
  producer: Producer;
  closing: AbortSignal;
  /** Partitions wherever they are led (here, or at the leader over the cluster port). */
  access: PartitionAccess;
}

/** Register a declared route; handlers build their responses themselves (streams, 204s, errors). */
export function on(
  app: OpenAPIHono,
  route: RouteConfig,
  handler: (c: Context) => Response | Promise<Response>,
): void {
  app.openapi(withOperationId(route), handler as never);
}
