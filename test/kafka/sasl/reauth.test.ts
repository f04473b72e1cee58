// SASL re-authentication (KIP-368) with --connections-max-reauth-ms: SaslAuthenticate v1+ tells
// the session's lifetime; a client re-authenticates on the same connection (as the same user,
// with the same mechanism) and keeps being served; a connection used after its session ended is
// closed; a v0 client (which cannot re-authenticate) keeps its session, as in Kafka. Raw frames
// for the exact sequence, and kafkajs (which re-authenticates by itself) across several lifetimes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../../helpers/broker-process.ts";
import { api } from "../../helpers/http.ts";
import { RawClient } from "../raw-client.ts";

const LIFETIME = 1500;
const BEARER = { authorization: "Bearer tok" };
let b: RunningBroker;

beforeAll(async () => {
  b = await startBrokerProcess({
    args: [
      "--kafka-sasl",
      "required",
      "--http-token",
      "tok",
      "--connections-max-reauth-ms",
      String(LIFETIME),
    ],
  });
  for (const [name, password] of [["alice", "pw-a"], ["bob", "pw-b"]]) {
    expect((await api(b.httpUrl, "POST", "/users", { name, password }, BEARER)).status).toBe(201);
  }
}, 60_000);
afterAll(() => b?.kill("SIGKILL"));

const plain = (user: string, pw: string) => new TextEncoder().encode(`\0${user}\0${pw}`);

/** SaslHandshake v1 and SaslAuthenticate (version `v`) with PLAIN. */
async function login(c: RawClient, user: string, pw: string, v = 2, mechanism = "PLAIN") {
  const hs = await c.call(17, 1, { mechanism });
  if (hs.errorCode !== 0) return hs;
  return c.call(36, v, { authBytes: plain(user, pw) });
}

const metadata = (c: RawClient) =>
  c.call(3, 9, {
    topics: [],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  }, 3000);

async function closedWithin(c: RawClient, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!c.closed && Date.now() < end) await Bun.sleep(20);
  return c.closed;
}

test("the lifetime is told; re-authenticating keeps the connection; expiry closes it", async () => {
  const c = await RawClient.connect(b.kafkaPort);
  try {
    const first = await login(c, "alice", "pw-a");
    expect([first.errorCode, first.sessionLifetimeMs]).toEqual([0, LIFETIME]);
    expect((await metadata(c)).brokers).toHaveLength(1);
    // Twice past the first lifetime, re-authenticating before each ends.
    for (let i = 0; i < 2; i++) {
      await Bun.sleep(LIFETIME * 0.7);
      const again = await login(c, "alice", "pw-a");
      expect([again.errorCode, again.sessionLifetimeMs]).toEqual([0, LIFETIME]);
      expect((await metadata(c)).brokers).toHaveLength(1);
    }
    // Now not: the next request after the session ended closes the connection unanswered.
    await Bun.sleep(LIFETIME + 200);
    await c.send(3, 9, { topics: [] });
    expect(await closedWithin(c, 3000)).toBe(true);
  } finally {
    c.close();
  }
}, 30_000);

test("re-authentication as another user, or with another mechanism, is refused and closes", async () => {
  const c = await RawClient.connect(b.kafkaPort);
  try {
    expect((await login(c, "alice", "pw-a")).errorCode).toBe(0);
    const bob = await login(c, "bob", "pw-b");
    expect([bob.errorCode, bob.errorMessage]).toEqual([
      58,
      "Cannot change principals during re-authentication",
    ]);
    expect(await closedWithin(c, 3000)).toBe(true);
  } finally {
    c.close();
  }
  const d = await RawClient.connect(b.kafkaPort);
  try {
    expect((await login(d, "alice", "pw-a")).errorCode).toBe(0);
    const hs = await d.call(17, 1, { mechanism: "SCRAM-SHA-256" });
    expect(hs.errorCode).toBe(33);
    expect(await closedWithin(d, 3000)).toBe(true);
  } finally {
    d.close();
  }
});

test("a SaslAuthenticate v0 client is told no lifetime and keeps its session", async () => {
  const c = await RawClient.connect(b.kafkaPort);
  try {
    expect((await login(c, "alice", "pw-a", 0)).errorCode).toBe(0);
    await Bun.sleep(LIFETIME + 300);
    expect((await metadata(c)).brokers).toHaveLength(1);
  } finally {
    c.close();
  }
}, 15_000);

test(
  "kafkajs re-authenticates by itself and keeps producing across several lifetimes",
  async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${b.kafkaPort}`],
      sasl: { mechanism: "plain", username: "alice", password: "pw-a" },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      // Re-authenticate once less than this is left of the session.
      reauthenticationThreshold: 700,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "reauth" }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const logins = async () => {
      const m = await fetch(`${b.httpUrl}/metrics`, { headers: BEARER }).then((r) => r.text());
      const line = m.split("\n").find((l) =>
        l.startsWith("broker_kafka_authentications_total") && l.includes('mechanism="PLAIN"') &&
        l.includes('result="success"')
      );
      return Number(line?.split(" ").pop() ?? 0);
    };
    const before = await logins();
    try {
      // 4.5 lifetimes, one record every 300 ms: every send must succeed on the same connection.
      for (let i = 0; i < 22; i++) {
        await producer.send({ topic: "reauth", messages: [{ value: String(i) }] });
        await Bun.sleep(300);
      }
    } finally {
      await producer.disconnect();
    }
    expect(await logins() - before).toBeGreaterThanOrEqual(3);
    const expired = (await fetch(`${b.httpUrl}/metrics`, { headers: BEARER }).then((r) => r.text()))
      .split("\n").filter((l) => l.includes('result="expired"') && !l.endsWith(" 0"));
    // Only the raw test's deliberately expired connection, none of kafkajs's.
    expect(expired.length).toBeLessThanOrEqual(1);
  },
  60_000,
);
