// The console's routes in the real HTTP app, without a browser: / redirects, the embedded files are
// served (without the token, which the API still demands) with the content security policy, and
// every module the page imports is one the broker serves.
import { expect, test } from "bun:test";
import type { Broker } from "../../src/broker.ts";
import { createHttpApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log.ts";
import { CONSOLE_CSP } from "../../src/console/index.ts";

const broker = {
  nodeId: 0,
  version: "test",
  log: createLogger("error"),
  isReady: () => true,
} as unknown as Broker;
const app = createHttpApp(broker, { token: "tok" });
const get = (path: string) => app.fetch(new Request(`http://localhost${path}`));

test("/ and /ui redirect to /ui/", async () => {
  for (const p of ["/", "/ui"]) {
    const r = await get(p);
    expect([p, r.status >= 301 && r.status <= 302, r.headers.get("location")]).toEqual([
      p,
      true,
      "/ui/",
    ]);
  }
});

test("the page and its modules load without the token, with the policy; the API does not", async () => {
  const page = await get("/ui/");
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(page.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
  expect(page.headers.get("x-content-type-options")).toBe("nosniff");
  const html = await page.text();
  // Every file the page and its modules refer to is served, with the policy and the right type.
  const queue = [...html.matchAll(/(?:src|href)="\/ui\/([\w.-]+)"/g)].map((m) => m[1]);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const r = await get(`/ui/${f}`);
    expect([f, r.status, r.headers.get("content-security-policy")]).toEqual([f, 200, CONSOLE_CSP]);
    const body = await r.text();
    if (f.endsWith(".js")) {
      expect(r.headers.get("content-type")).toContain("text/javascript");
      for (const m of body.matchAll(/from "\.\/([\w.-]+)"/g)) queue.push(m[1]);
    }
  }
  expect([...seen].sort()).toEqual([
    "api.js",
    "app.js",
    "cluster.js",
    "console.css",
    "dom.js",
    "favicon.svg",
    "groups.js",
    "messages.js",
    "topics.js",
  ]);
  expect((await get("/cluster")).status).toBe(401);
  // An unknown file is not served (the API's token check answers first).
  expect((await get("/ui/secret.js")).status).toBe(401);
  expect(CONSOLE_CSP).toContain("script-src 'self'");
  expect(CONSOLE_CSP).not.toContain("unsafe");
});
