// API conventions on a broker with --http-token: an operationId on every operation of
// /openapi.json, the bearer scheme (or a user's Basic login) described and required, 401 with WWW-Authenticate, and /docs
// with a curl example per operation that the broker accepts as written.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { operationIdFor } from "../../src/http/operation-id.ts";

const TOKEN = "openapi-test-token";
let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess({ args: ["--http-token", TOKEN] });
});
afterAll(() => b?.kill("SIGKILL"));

const auth = { authorization: `Bearer ${TOKEN}` };

interface Doc {
  paths: Record<string, Record<string, { operationId?: string }>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme: string; description?: string }>;
  };
  security: Record<string, string[]>[];
}

test("derived operationIds read as method and resource", () => {
  expect(operationIdFor("get", "/topics")).toBe("getTopics");
  expect(operationIdFor("get", "/topics/{topic}/partitions/{partition}/records"))
    .toBe("getTopicPartitionRecords");
  expect(operationIdFor("delete", "/groups/{group}/members/{member}")).toBe("deleteGroupMember");
  expect(operationIdFor("post", "/cluster/elect-leaders")).toBe("postClusterElectLeaders");
});

test("every operation has a unique operationId; bearer described and required", async () => {
  const r = await fetch(`${b.httpUrl}/openapi.json`, { headers: auth });
  expect(r.status).toBe(200);
  const doc = await r.json() as Doc;
  const ids: string[] = [];
  const missing: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (op.operationId) ids.push(op.operationId);
      else missing.push(`${method} ${path}`);
    }
  }
  expect(missing).toEqual([]);
  expect(ids.length).toBeGreaterThan(20);
  expect(new Set(ids).size).toBe(ids.length);
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
  expect(doc.components.securitySchemes.bearer.description).toContain("--http-token");
  // A broker user's login (HTTP Basic) is the other way in: described too, as either/or.
  expect(doc.components.securitySchemes.basic).toMatchObject({ type: "http", scheme: "basic" });
  expect(doc.security).toEqual([{ bearer: [] }, { basic: [] }]);
});

test("401 without or with a wrong token carries WWW-Authenticate: Bearer", async () => {
  const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong" }];
  for (const headers of attempts) {
    const r = await fetch(`${b.httpUrl}/topics`, { headers });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate") ?? "").toMatch(/^Bearer realm=/);
    expect((await r.json() as { error_code: number }).error_code).toBe(40100);
  }
});

const unescape = (s: string) =>
  s.replaceAll("&quot;", '"').replaceAll("&gt;", ">").replaceAll("&lt;", "<").replaceAll(
    "&amp;",
    "&",
  );

test("/docs shows a curl example per operation, and each is a well-formed request", async () => {
  const doc = await (await fetch(`${b.httpUrl}/openapi.json`, { headers: auth })).json() as Doc;
  const ops = Object.values(doc.paths).reduce((n, o) => n + Object.keys(o).length, 0);
  const html = await (await fetch(`${b.httpUrl}/docs`, { headers: auth })).text();
  const curls = [...html.matchAll(/<pre>(curl [^<]*)<\/pre>/g)].map((m) => unescape(m[1]));
  expect(curls).toHaveLength(ops);
  // The examples name this broker (the page is built for the address it was reached at).
  for (const c of curls) expect(c).toContain(b.httpUrl);
  // Run them all, in page order, with the token: none may be malformed (400, 415, 422) or fail
  // (5xx); a 404 for an example resource (group billing) is fine.
  const script = curls.map((c) =>
    c.replace(
      /^curl /,
      `curl -s -o /dev/null --max-time 5 -w '%{http_code}\\n' -H 'authorization: Bearer ${TOKEN}' `,
    )
  ).join("\n");
  const r = Bun.spawnSync(["bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
  const codes = r.stdout.toString().trim().split("\n").map(Number);
  expect(codes).toHaveLength(curls.length);
  const bad = curls.filter((_, i) =>
    [400, 405, 413, 415, 422].includes(codes[i]) || codes[i] >= 500
  );
  expect(bad).toEqual([]);
}, 60_000);
