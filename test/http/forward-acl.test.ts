// A group request passed on to the coordinator carries who called the first broker, so checks the
// coordinator's handler makes (an HTTP member's assigned topics, src/http/members.ts) are made as
// that caller, not as the broker's own token. Both halves with fakes: the forwarding side's call
// body, and the serving side's checks for a named caller, the token and an older broker.
import { expect, test } from "bun:test";
import { Hono } from "hono";
import type { Broker } from "../../src/broker.ts";
import type { ClusterService } from "../../src/cluster/node.ts";
import type { PeerCalls } from "../../src/cluster/peer-calls.ts";
import type { MetadataStore } from "../../src/meta/index.ts";
import {
  AclOperation,
  AclPermission,
  PatternType,
  ResourceType,
} from "../../src/acl/authorizer.ts";
import { LiveAuthorizer } from "../../src/acl/live.ts";
import { aclMiddleware, refuseUnlessAllowed } from "../../src/http/acl.ts";
import { errorResponse, HttpError } from "../../src/http/errors.ts";
import { forwardToCoordinator, serveGroupForwards } from "../../src/http/forward.ts";

const live = new LiveAuthorizer({
  aclBindings: () => [{
    resourceType: ResourceType.TOPIC,
    resourceName: "orders",
    patternType: PatternType.LITERAL,
    principal: "User:alice",
    host: "*",
    operation: AclOperation.READ,
    permission: AclPermission.ALLOW,
  }],
  aclGeneration: () => 1,
}, new Set());

test("the forwarding broker names its caller in the call", async () => {
  const sent: unknown[] = [];
  const peers = {
    call: (_id: number, _kind: string, _m: string, body: unknown) => {
      sent.push(body);
      return Promise.resolve({
        body: { status: 200, contentType: "application/json" },
        tail: new TextEncoder().encode("{}"),
      });
    },
  } as unknown as PeerCalls;
  const app = new Hono<{ Bindings: { clientIp: string } }>();
  app.use("*", (c, next) => {
    c.set("principal" as never, "User:alice" as never);
    return next();
  });
  app.get("*", async (c) => {
    const r = await forwardToCoordinator(c, {} as Broker, peers, "g", 2);
    return r === "moved" ? c.text("moved", 503) : r;
  });
  const res = await app.fetch(new Request("http://x/groups/g/records?member_id=m"), {
    clientIp: "10.1.2.3",
  });
  expect(res.status).toBe(200);
  expect((sent[0] as { as: unknown }).as).toEqual({ principal: "User:alice", host: "10.1.2.3" });
});

test("the coordinator checks its handler's topics as the named caller", async () => {
  const calls = new Map<string, (from: number, body: unknown, tail: Uint8Array) => unknown>();
  const cluster = {
    handleCall: (name: string, fn: (from: number, body: unknown, tail: Uint8Array) => unknown) =>
      calls.set(name, fn),
  } as unknown as ClusterService;
  const meta = { listBrokers: () => [{ nodeId: 1 }] } as unknown as MetadataStore;
  const app = new Hono();
  app.onError((e, c) => e instanceof HttpError ? errorResponse(c, e) : c.text("boom", 500));
  app.use("*", aclMiddleware(live));
  app.get("/groups/:group/records", (c) => {
    refuseUnlessAllowed(c, 1, { replicaId: -1, topics: [{ topic: c.req.query("topic") }] });
    return c.json({ ok: true });
  });
  serveGroupForwards(cluster, meta, (req, env) => app.fetch(req, env), "tok");
  const groupHttp = calls.get("groupHttp")!;
  const status = async (topic: string, as?: unknown) => {
    const r = await groupHttp(1, {
      rid: crypto.randomUUID(),
      method: "GET",
      path: `/groups/g/records?topic=${topic}`,
      headers: {},
      ...(as === undefined ? {} : { as }),
    }, new Uint8Array(0)) as { body: { status: number } };
    return r.body.status;
  };
  const alice = { principal: "User:alice", host: "10.1.2.3" };
  expect(await status("orders", alice)).toBe(200);
  expect(await status("secret", alice)).toBe(403);
  expect(await status("orders", { principal: null, host: "" })).toBe(403); // anonymous
  expect(await status("secret", { principal: "token", host: "" })).toBe(200);
  // A broker of an older version names nobody: its own check of the route is all there is.
  expect(await status("secret")).toBe(200);
  await expect(
    Promise.resolve().then(() => status("orders", { principal: 7, host: "" })),
  ).rejects.toThrow("bad groupHttp request");
});
