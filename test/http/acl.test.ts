// ACLs on the HTTP API (--authorizer acl): a Basic user is User:NAME and gets what its ACLs give,
// through the same rule table as the Kafka listener (a route checked as the Kafka request it
// stands for); the bearer token passes every check; refusals are 403 JSON with Kafka's code; the
// topic and group lists leave out what the user may not DESCRIBE. ACLs are created over Kafka on
// a broker without enforcement, which is then restarted with it on the same data dir.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import {
  AclOperationTypes as Op,
  AclPermissionTypes as Perm,
  AclResourceTypes as RT,
  Kafka,
  logLevel,
  ResourcePatternTypes as PT,
} from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import type { Broker } from "../../src/broker.ts";
import { createHttpApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log.ts";
import { HTTP_RULES } from "../../src/acl/http-rules.ts";
import { LiveAuthorizer } from "../../src/acl/live.ts";

const TOKEN = "http-acl-test-token-0123456789";
const BEARER = { authorization: `Bearer ${TOKEN}` };
const ALICE = { authorization: `Basic ${btoa("alice:alice-pw")}` };
let b: RunningBroker;

const allow = (type: number, name: string, operation: number, pattern = PT.LITERAL) => ({
  resourceType: type,
  resourceName: name,
  resourcePatternType: pattern,
  principal: "User:alice",
  host: "*",
  operation,
  permissionType: Perm.ALLOW,
});

beforeAll(async () => {
  const env = { BROKER_HTTP_TOKEN: TOKEN };
  const setup = await startBrokerProcess({
    env,
    args: ["--group-initial-rebalance-delay-ms", "0"],
  });
  try {
    for (const name of ["orders", "secret", "public-news"]) {
      const r = await api(setup.httpUrl, "POST", "/topics", { name, partitions: 1 }, BEARER);
      expect(r.status).toBe(201);
    }
    const u = await api(setup.httpUrl, "POST", "/users", {
      name: "alice",
      password: "alice-pw",
    }, BEARER);
    expect(u.status).toBe(201);
    const admin = new Kafka({
      brokers: [`127.0.0.1:${setup.kafkaPort}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    await admin.connect();
    await admin.createAcls({
      acl: [
        allow(RT.TOPIC, "orders", Op.WRITE),
        allow(RT.TOPIC, "orders", Op.READ),
        allow(RT.TOPIC, "public-", Op.DESCRIBE, PT.PREFIXED),
        allow(RT.GROUP, "app-", Op.READ, PT.PREFIXED),
      ],
    });
    await admin.disconnect();
  } finally {
    setup.kill();
    await setup.exited;
  }
  b = await startBrokerProcess({
    dataDir: setup.dataDir,
    env,
    args: ["--group-initial-rebalance-delay-ms", "0", "--authorizer", "acl"],
  });
}, 60_000);
afterAll(async () => {
  b?.kill();
  await b?.exited;
  if (b) rmSync(b.dataDir, { recursive: true, force: true });
});

const as = (headers: Record<string, string>) => (m: string, p: string, body?: unknown) =>
  api(b.httpUrl, m, p, body, headers);

describe("a Basic user gets what its ACLs give", () => {
  test("produce and read its topic; the others are 403 with Kafka's code", async () => {
    const alice = as(ALICE);
    const w = await alice("POST", "/topics/orders/records", { value: "a" });
    expect(w.status).toBe(200);
    const r = await alice("GET", "/topics/orders/partitions/0/records?offset=earliest");
    expect([r.status, r.json.records.length]).toEqual([200, 1]);
    const refused = await alice("POST", "/topics/secret/records", { value: "x" });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({
      error_code: 40329,
      kafka_error_code: 29,
      message: 'User:alice is not authorized to WRITE topic "secret" (ACLs, --authorizer acl)',
    });
    // A text body too (not the JSON fast path), and reads of a topic it may only DESCRIBE.
    const text = await api(b.httpUrl, "POST", "/topics/secret/records", "x\n", {
      ...ALICE,
      "content-type": "text/plain",
    });
    expect(text.status).toBe(403);
    expect((await alice("GET", "/topics/public-news/records")).status).toBe(403);
    expect((await alice("GET", "/topics/public-news")).status).toBe(200);
    expect((await alice("GET", "/topics/secret")).json.error_code).toBe(40329);
  });

  test("topic admin, users and cluster routes need their operations", async () => {
    const alice = as(ALICE);
    const codes = async (m: string, p: string, body?: unknown) =>
      (await alice(m, p, body)).json?.error_code;
    expect(await codes("POST", "/topics", { name: "new-one" })).toBe(40329);
    expect(await codes("DELETE", "/topics/orders")).toBe(40329);
    expect(await codes("PATCH", "/topics/orders/configs", { "retention.ms": "1000" })).toBe(40329);
    expect(await codes("GET", "/users")).toBe(40331);
    expect(await codes("POST", "/cluster/elect-leaders", {})).toBe(40331);
    expect(await codes("GET", "/reassignments")).toBe(40331);
    expect(await codes("GET", "/metrics")).toBe(40331);
    expect((await alice("GET", "/cluster")).status).toBe(200);
    // Nothing was changed by the refused requests.
    expect((await as(BEARER)("GET", "/topics/orders")).status).toBe(200);
  });

  test("lists leave out what it may not DESCRIBE; the token sees everything", async () => {
    const names = (rows: { name: string }[]) => rows.map((t) => t.name).sort();
    expect(names((await as(ALICE)("GET", "/topics")).json)).toEqual(["orders", "public-news"]);
    expect(names((await as(BEARER)("GET", "/topics")).json)).toEqual([
      "orders",
      "public-news",
      "secret",
    ]);
  });

  test("an HTTP consumer joins a group it may READ, for topics it may READ", async () => {
    const alice = as(ALICE);
    const other = await alice("POST", "/groups/other/members", { topics: ["orders"] });
    expect([other.status, other.json.error_code]).toEqual([403, 40330]);
    const secret = await alice("POST", "/groups/app-1/members", { topics: ["orders", "secret"] });
    expect([secret.status, secret.json.error_code]).toEqual([403, 40329]);
    const ok = await alice("POST", "/groups/app-1/members", { topics: ["orders"] });
    expect(ok.status).toBe(200);
    // A group alice may not DESCRIBE (joined with the token) is left out of her list.
    const zzz = await as(BEARER)("POST", "/groups/zzz/members", { topics: ["orders"] });
    expect(zzz.status).toBe(200);
    const groups = (await alice("GET", "/groups")).json as { group_id: string }[];
    expect(groups.map((g) => g.group_id)).toEqual(["app-1"]);
    const all = (await as(BEARER)("GET", "/groups")).json as { group_id: string }[];
    expect(all.map((g) => g.group_id).sort()).toEqual(["app-1", "zzz"]);
    // The group's page shows offsets of the topics she may DESCRIBE only.
    const commit = await as(BEARER)("POST", "/groups/app-2/offsets/reset", {
      to: "earliest",
      topics: ["orders", "secret"],
    });
    expect(commit.status).toBe(200);
    const page = async (h: Record<string, string>) =>
      ((await as(h)("GET", "/groups/app-2")).json.offsets as { topic: string }[])
        .map((o) => o.topic).sort();
    expect(await page(BEARER)).toEqual(["orders", "secret"]);
    expect(await page(ALICE)).toEqual(["orders"]);
    const left = await alice("DELETE", `/groups/app-1/members/${ok.json.member_id}`);
    expect(left.status).toBe(204);
  }, 30_000);

  test("an HTTP consumer's commits and fetches are checked per topic each time", async () => {
    const alice = as(ALICE);
    const bearer = as(BEARER);
    const j = await alice("POST", "/groups/app-cursor/members", { topics: ["orders"] });
    expect(j.status).toBe(200);
    const member = { member_id: j.json.member_id, generation_id: j.json.generation_id };
    const q = `member_id=${member.member_id}&generation_id=${member.generation_id}`;
    const f = await alice("GET", `/groups/app-cursor/records?${q}`);
    expect(f.status).toBe(200);
    // The cursor is the client's: one naming a topic she may not READ is refused whole.
    const forged = Buffer.from(JSON.stringify({ orders: { 0: 1 }, secret: { 0: 5 } }))
      .toString("base64url");
    const refused = await alice("POST", "/groups/app-cursor/offsets", {
      ...member,
      cursor: forged,
    });
    expect([refused.status, refused.json.error_code]).toEqual([403, 40329]);
    expect(refused.json.message).toContain('READ topic "secret"');
    const offsets = async () =>
      ((await bearer("GET", "/groups/app-cursor")).json.offsets as {
        topic: string;
        committed_offset: number | null;
      }[]).filter((o) => o.committed_offset !== null).map((o) => o.topic);
    expect(await offsets()).toEqual([]);
    const mine = await alice("POST", "/groups/app-cursor/offsets", {
      ...member,
      cursor: f.json.cursor,
    });
    expect(mine.status).toBe(200);
    expect(await offsets()).toEqual(["orders"]);
    // READ taken away after the join: the next fetch is refused, not served from the assignment.
    const deny = {
      resource_type: "topic",
      resource_name: "orders",
      principal: "User:alice",
      operation: "read",
      permission: "deny",
    };
    expect((await bearer("POST", "/acls", deny)).status).toBe(201);
    try {
      const after = await alice("GET", `/groups/app-cursor/records?${q}`);
      expect([after.status, after.json.error_code]).toEqual([403, 40329]);
    } finally {
      const del = await bearer(
        "DELETE",
        "/acls?resource_type=topic&resource_name=orders&principal=User:alice&permission=deny",
      );
      expect(del.status).toBe(200);
    }
    expect((await alice("GET", `/groups/app-cursor/records?${q}`)).status).toBe(200);
    await alice("DELETE", `/groups/app-cursor/members/${member.member_id}`);
  }, 30_000);

  test("a wrong password is still 401, not 403", async () => {
    const r = await api(b.httpUrl, "GET", "/topics", undefined, {
      authorization: `Basic ${btoa("alice:wrong")}`,
    });
    expect(r.status).toBe(401);
  });
});

test("every declared route has a rule (a route without one would be refused to all)", () => {
  const broker = {
    nodeId: 0,
    version: "test",
    log: createLogger("error"),
    isReady: () => true,
  } as unknown as Broker;
  const doc = createHttpApp(broker).getOpenAPIDocument({
    openapi: "3.0.3",
    info: { title: "t", version: "0" },
  });
  const declared = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    ["get", "post", "put", "patch", "delete"].filter((m) => m in (item as object))
      .map((m) => `${m.toUpperCase()} ${path}`)
  );
  expect(declared.length).toBeGreaterThan(30);
  expect(declared.filter((r) => !HTTP_RULES.has(r))).toEqual([]);
});

test("without a token, HTTP callers are User:ANONYMOUS (and produce skips no check)", async () => {
  const broker = {
    nodeId: 0,
    version: "test",
    log: createLogger("error"),
    isReady: () => true,
  } as unknown as Broker;
  const live = new LiveAuthorizer({ aclBindings: () => [], aclGeneration: () => 0 }, new Set());
  const app = createHttpApp(broker, { authorizer: live });
  const res = await app.fetch(
    new Request("http://localhost/topics/t/records", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": "13" },
      body: '{"value":"x"}',
    }),
  );
  expect(res.status).toBe(403);
  expect(((await res.json()) as { message: string }).message).toContain("User:ANONYMOUS");
});
