// The Hono app served on --http-addr. Routes are grouped by resource in sibling files.
import { Hono } from "hono";
import type { Broker } from "../broker.ts";
import { errorResponse, toHttpError } from "./errors.ts";
import { topicRoutes } from "./topics.ts";
import { recordRoutes } from "./records.ts";

export function createHttpApp(broker: Broker): Hono {
  const app = new Hono();
  app.get(
    "/healthz",
    (c) => c.json({ status: "ok", node_id: broker.nodeId, version: broker.version }),
  );
  app.get("/readyz", (c) => {
    const ready = broker.isReady();
    return c.json({ ready }, ready ? 200 : 503);
  });
  topicRoutes(app, broker);
  recordRoutes(app, broker);
  app.notFound((c) =>
    c.json({ error_code: 40400, message: `no route for ${c.req.method} ${c.req.path}` }, 404)
  );
  app.onError((err, c) => {
    const h = toHttpError(err);
    if (h) return errorResponse(c, h);
    broker.log.error("http handler failed", { error: err, path: c.req.path, stack: err.stack });
    return c.json({ error_code: 50000, message: "internal error" }, 500);
  });
  return app;
}
