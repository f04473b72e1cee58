// broker acl add|list|delete and the /acls routes, against a two-broker cluster: a binding added
// through one broker is listed by the other and enforced there (--authorizer acl) on HTTP; a
// deletion through either takes effect on both; bad input is a usage error or a 4xx naming it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  brokerCommand,
  type RunningBroker,
  startBrokerProcess,
  tempDir,
} from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

const all: RunningBroker[] = [];
const ARGS = ["--http-token", "tok", "--authorizer", "acl"];
const BEARER = { authorization: "Bearer tok" };
const ALICE = { authorization: `Basic ${btoa("alice:pw-alice")}` };

beforeAll(async () => {
  const b0 = await startBrokerProcess({
    dataDir: tempDir("acl-cli-"),
    args: ["--node-id", "0", ...ARGS],
    timeoutMs: 30_000,
  });
  all.push(b0);
  all.push(
    await startBrokerProcess({
      dataDir: tempDir("acl-cli-"),
      args: ["--node-id", "1", "--join", b0.clusterAddr, ...ARGS],
      timeoutMs: 30_000,
    }),
  );
  for (const name of ["orders", "other"]) {
    const r = await api(b0.httpUrl, "POST", "/topics", { name, partitions: 1 }, BEARER);
    expect(r.status).toBe(201);
  }
  const u = await api(
    b0.httpUrl,
    "POST",
    "/users",
    { name: "alice", password: "pw-alice" },
    BEARER,
  );
  expect(u.status).toBe(201);
}, 90_000);

afterAll(async () => {
  for (const b of all) b.kill("SIGKILL");
  await Promise.all(all.map((b) => b.exited));
});

function cli(args: string[], server: RunningBroker) {
  const r = Bun.spawnSync(
    [...brokerCommand(), ...args, "--server", server.httpUrl, "--token", "tok"],
    { env: { ...process.env, NO_COLOR: "1" } },
  );
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** Retries `f` until it returns `want` (the metadata log reaches the other broker in moments). */
async function eventually<T>(f: () => Promise<T>, want: T, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let got = await f();
  while (JSON.stringify(got) !== JSON.stringify(want) && Date.now() < end) {
    await Bun.sleep(100);
    got = await f();
  }
  return got;
}

const produce = (b: RunningBroker, topic: string) =>
  api(b.httpUrl, "POST", `/topics/${topic}/records`, { value: "x" }, ALICE).then((r) => r.status);

test("add through one broker, list and enforce on the other, delete through either", async () => {
  const [b0, b1] = all;
  expect(await produce(b1, "orders")).toBe(403);
  const add = cli(
    ["acl", "add", "--principal", "User:alice", "--operation", "read,write", "--topic", "orders"],
    b1,
  );
  expect([add.code, add.err]).toEqual([0, ""]);
  expect(add.out).toContain("ALLOW");
  expect(add.out.trim().split("\n").length).toBe(3); // header and two bindings
  const listed = async () => {
    const l = cli(["acl", "list", "--principal", "User:alice", "--json"], b0);
    return (JSON.parse(l.out) as { operation: string }[]).map((a) => a.operation).sort();
  };
  expect(await eventually(listed, ["READ", "WRITE"])).toEqual(["READ", "WRITE"]);
  expect(await eventually(() => produce(b0, "orders"), 200)).toBe(200);
  expect(await produce(b1, "orders")).toBe(200);
  expect(await produce(b1, "other")).toBe(403);

  const del = cli(
    ["acl", "delete", "--principal", "User:alice", "--topic", "orders", "--operation", "write"],
    b0,
  );
  expect([del.code, del.out]).toEqual([0, "deleted 1 ACL binding(s)\n"]);
  expect(await eventually(() => produce(b1, "orders"), 403)).toBe(403);
  expect(await eventually(listed, ["READ"])).toEqual(["READ"]);
}, 60_000);

test("usage errors and the routes' 4xx name what is wrong", async () => {
  const [b0] = all;
  const noResource = cli(["acl", "add", "--principal", "User:a", "--operation", "read"], b0);
  expect(noResource.code).toBe(2);
  expect(noResource.err).toContain("--topic");
  const two = cli(["acl", "list", "--topic", "a", "--group", "b"], b0);
  expect([two.code, two.err.includes("name one resource")]).toEqual([2, true]);
  expect(cli(["acl", "delete"], b0).code).toBe(2);

  const badOp = await api(b0.httpUrl, "POST", "/acls", {
    resource_type: "topic",
    resource_name: "t",
    principal: "User:a",
    operation: "fly",
  }, BEARER);
  expect([badOp.status, badOp.json.message]).toEqual([
    422,
    expect.stringContaining('operation: "fly" is not one of'),
  ]);
  const badPrincipal = await api(b0.httpUrl, "POST", "/acls", {
    resource_type: "topic",
    resource_name: "t",
    principal: "alice",
    operation: "read",
  }, BEARER);
  expect(badPrincipal.status).toBe(422);
  const wipe = await api(b0.httpUrl, "DELETE", "/acls", undefined, BEARER);
  expect(wipe.status).toBe(400);
  // A Basic user without ALTER on the cluster may not change ACLs.
  const selfGrant = await api(b0.httpUrl, "POST", "/acls", {
    resource_type: "topic",
    resource_name: "other",
    principal: "User:alice",
    operation: "write",
  }, ALICE);
  expect([selfGrant.status, selfGrant.json.error_code]).toEqual([403, 40331]);
});
