// Two promises of the HTTP API a client relies on without saying so: a produce without `acks`
// is acks=all (it waits for min.insync.replicas, as the README says), and the bearer token is
// compared whole (no prefix, no longer string gets in). (Both were planted bugs no test caught:
// docs/mutation.md, the test suite.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import { saltedPassword } from "../../src/kafka/sasl/scram.ts";

const TOKEN = "a-long-enough-http-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let b: RunningBroker;

beforeAll(async () => {
  b = await startBrokerProcess({ env: { BROKER_HTTP_TOKEN: TOKEN } });
  // One replica but min.insync.replicas=2: acks=all cannot be met, acks=1 can.
  const t = await api(b.httpUrl, "POST", "/topics", {
    name: "strict",
    partitions: 1,
    replication_factor: 1,
    configs: { "min.insync.replicas": "2" },
  }, AUTH);
  expect(t.status).toBe(201);
});
afterAll(() => b?.kill("SIGKILL"));

describe("produce without acks is acks=all", () => {
  test("JSON body: refused with 503 like acks=all; acks=1 is accepted", async () => {
    const none = await api(b.httpUrl, "POST", "/topics/strict/records", { value: "x" }, AUTH);
    expect(none.status).toBe(503);
    const all = await api(b.httpUrl, "POST", "/topics/strict/records?acks=all", {
      value: "x",
    }, AUTH);
    expect(all.status).toBe(503);
    const one = await api(b.httpUrl, "POST", "/topics/strict/records?acks=1", { value: "x" }, AUTH);
    expect(one.status).toBe(200);
    expect(one.json.offsets[0].offset).toBe(0);
  });

  test("text body: refused with 503 like acks=all; acks=1 is accepted", async () => {
    const text = { ...AUTH, "content-type": "text/plain" };
    const none = await api(b.httpUrl, "POST", "/topics/strict/records", "a\nb\n", text);
    expect(none.status).toBe(503);
    const one = await api(b.httpUrl, "POST", "/topics/strict/records?acks=1", "a\nb\n", text);
    expect(one.status).toBe(200);
  });
});

describe("the bearer token is compared whole", () => {
  test("a prefix, a one-character guess, and a longer string are 401; the token is 200", async () => {
    for (const guess of [TOKEN.slice(0, -1), TOKEN.slice(0, 1), `${TOKEN}x`]) {
      const r = await api(b.httpUrl, "GET", "/topics", undefined, {
        authorization: `Bearer ${guess}`,
      });
      expect(r.status).toBe(401);
    }
    expect((await api(b.httpUrl, "GET", "/topics", undefined, AUTH)).status).toBe(200);
  });
});

describe("Basic logins", () => {
  const basic = (user: string, pw: string) => ({ authorization: "Basic " + btoa(`${user}:${pw}`) });

  test("a user's password logs in; an empty password never does, even one stored", async () => {
    const pw = await api(
      b.httpUrl,
      "POST",
      "/users",
      { name: "carol", password: "carol-pw" },
      AUTH,
    );
    expect(pw.status).toBeLessThan(300);
    expect((await api(b.httpUrl, "GET", "/topics", undefined, basic("carol", "carol-pw"))).status)
      .toBe(200);
    // Credentials a client derived from an empty password (the API stores what it is given).
    const salt = new TextEncoder().encode("0123456789abcdef");
    const blank = await api(b.httpUrl, "POST", "/users", {
      name: "blank",
      credentials: [{
        mechanism: "SCRAM-SHA-256",
        iterations: 4096,
        salt: Buffer.from(salt).toString("base64"),
        salted_password: Buffer.from(saltedPassword("sha256", "", salt, 4096)).toString("base64"),
      }],
    }, AUTH);
    expect(blank.status).toBeLessThan(300);
    const r = await api(b.httpUrl, "GET", "/topics", undefined, basic("blank", ""));
    expect(r.status).toBe(401);
  });
});
