// Users replicate with the metadata, and the SASL_PLAINTEXT listener speaks Kafka's
// authentication sequence exactly: three broker processes requiring SASL; a user added over HTTP
// on one logs in on another; raw frames check what is served before authentication and the
// error codes, closes and user APIs (Alter/DescribeUserScramCredentials) of the real broker.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pbkdf2Sync } from "node:crypto";
import { type RunningBroker, startBrokerProcess, tempDir } from "../helpers/broker-process.ts";
import { RawClient } from "../kafka/raw-client.ts";
import {
  ApiKey,
  decodeResponseFrame,
  encodeRequestFrame,
  ErrorCode,
  type Struct,
} from "../../src/protocol/kafka/index.ts";
import { ScramClient } from "../../src/kafka/sasl/scram.ts";

const all: RunningBroker[] = [];
const SASL = ["--kafka-sasl", "required", "--http-token", "tok"];
const AUTH = { authorization: "Bearer tok", "content-type": "application/json" };

beforeAll(async () => {
  const b0 = await startBrokerProcess({
    dataDir: tempDir("users-"),
    args: ["--node-id", "0", ...SASL],
    timeoutMs: 30_000,
  });
  all.push(b0);
  all.push(
    ...await Promise.all([1, 2].map((id) =>
      startBrokerProcess({
        dataDir: tempDir("users-"),
        args: ["--node-id", String(id), "--join", b0.clusterAddr, ...SASL],
        timeoutMs: 30_000,
      })
    )),
  );
}, 90_000);

afterAll(async () => {
  for (const b of all) b.kill("SIGKILL");
  await Promise.all(all.map((b) => b.exited));
});

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: unknown) => new TextDecoder().decode(b as Uint8Array);

/** A SCRAM login over SaslHandshake v1 + SaslAuthenticate v2; the last answer's error code. */
async function scramLogin(
  c: RawClient,
  user: string,
  password: string,
  mechanism: "SCRAM-SHA-256" | "SCRAM-SHA-512" = "SCRAM-SHA-512",
): Promise<{ errorCode: number; message?: unknown }> {
  const hs = await c.call(ApiKey.SaslHandshake, 1, { mechanism });
  if (hs.errorCode !== 0) return { errorCode: hs.errorCode as number };
  const client = new ScramClient({ mechanism, user, password, clientNonce: "testnonce123" });
  const r1 = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: enc(client.first()) });
  if (r1.errorCode !== 0) return { errorCode: r1.errorCode as number, message: r1.errorMessage };
  const r2 = await c.call(ApiKey.SaslAuthenticate, 2, {
    authBytes: enc(client.final(dec(r1.authBytes))),
  });
  if (r2.errorCode === 0) expect(client.verify(dec(r2.authBytes))).toBe(true);
  return { errorCode: r2.errorCode as number, message: r2.errorMessage };
}

async function connect(b: RunningBroker): Promise<RawClient> {
  return await RawClient.connect(b.kafkaPort);
}

describe("users across a 3-broker cluster", () => {
  test("a user added over HTTP on broker 0 logs in on broker 2", async () => {
    const r = await fetch(`${all[0].httpUrl}/users`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({ name: "dave", password: "dave-pw", mechanisms: ["SCRAM-SHA-512"] }),
    });
    expect(r.status).toBe(201);
    // Applied on broker 0 when the POST answers; the others apply it within moments.
    let result = { errorCode: -1 } as { errorCode: number };
    for (let i = 0; i < 50 && result.errorCode !== 0; i++) {
      const c = await connect(all[2]);
      result = await scramLogin(c, "dave", "dave-pw").catch(() => ({ errorCode: -2 }));
      c.close();
      if (result.errorCode !== 0) await Bun.sleep(100);
    }
    expect(result.errorCode).toBe(0);
  }, 30_000);
});

describe("before authentication (SASL_PLAINTEXT)", () => {
  test("Metadata and Produce are not served: the connection closes unanswered", async () => {
    for (
      const [key, v, body] of [
        [ApiKey.Metadata, 9, { topics: null, allowAutoTopicCreation: true }],
        [ApiKey.Produce, 9, { acks: -1, timeoutMs: 1000, topicData: [] }],
      ] as [number, number, Struct][]
    ) {
      const c = await connect(all[1]);
      await c.send(key, v, body);
      expect(await c.waitClosed(5000)).toBe(true);
      expect(c.frames).toEqual([]);
    }
  });

  test("ApiVersions is; an unknown mechanism gets UNSUPPORTED_SASL_MECHANISM, then close", async () => {
    const c = await connect(all[1]);
    const v = await c.call(ApiKey.ApiVersions, 3, {
      clientSoftwareName: "raw",
      clientSoftwareVersion: "1",
    });
    const keys = (v.apiKeys as Struct[]).map((k) => k.apiKey);
    for (const k of [17, 36, 50, 51]) expect(keys).toContain(k);
    const hs = await c.call(ApiKey.SaslHandshake, 1, { mechanism: "GSSAPI" });
    expect(hs.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    expect(hs.mechanisms).toEqual(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
    expect(await c.waitClosed(5000)).toBe(true);
  });

  test("a wrong password gets SASL_AUTHENTICATION_FAILED, then close", async () => {
    const c = await connect(all[1]);
    const r = await scramLogin(c, "dave", "not-dave");
    expect(r.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(r.message).toBe(
      "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    );
    expect(await c.waitClosed(5000)).toBe(true);
    const p = await connect(all[1]);
    await p.call(ApiKey.SaslHandshake, 1, { mechanism: "PLAIN" });
    const plain = await p.call(ApiKey.SaslAuthenticate, 1, { authBytes: enc("\0dave\0wrong") });
    expect(plain.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(await p.waitClosed(5000)).toBe(true);
  });

  test("SaslAuthenticate before SaslHandshake, or a large frame, closes the connection", async () => {
    const c = await connect(all[1]);
    await c.send(ApiKey.SaslAuthenticate, 2, { authBytes: enc("n,,n=dave,r=abc") });
    expect(await c.waitClosed(5000)).toBe(true);
    expect(c.frames).toEqual([]);
    // 600 KiB announced: above the 512 KiB allowed before authentication (not after).
    const big = await connect(all[1]);
    const head = new Uint8Array(8);
    new DataView(head.buffer).setInt32(0, 600 * 1024);
    new DataView(head.buffer).setInt16(4, ApiKey.SaslAuthenticate);
    await big.write(head);
    expect(await big.waitClosed(5000)).toBe(true);
  });
});

test("a request pipelined behind an unfinished login is not served", async () => {
  const add = await fetch(`${all[1].httpUrl}/users`, {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify({ name: "pipe", password: "pipe-pw", mechanisms: ["SCRAM-SHA-512"] }),
  });
  expect(add.status).toBe(201);
  const c = await connect(all[1]);
  await c.call(ApiKey.SaslHandshake, 1, { mechanism: "PLAIN" });
  // The login is still being checked when Metadata arrives (one write, so the client's Nagle
  // cannot hold Metadata back until the check is over): the connection closes after answering
  // the login, and Metadata gets nothing.
  const login = 101, md = 102;
  const frames = [
    encodeRequestFrame(
      { apiKey: ApiKey.SaslAuthenticate, apiVersion: 1, correlationId: login, clientId: "raw" },
      { authBytes: enc("\0pipe\0pipe-pw") },
    ),
    encodeRequestFrame(
      { apiKey: ApiKey.Metadata, apiVersion: 9, correlationId: md, clientId: "raw" },
      { topics: null, allowAutoTopicCreation: false },
    ),
  ];
  await c.write(Buffer.concat(frames));
  const closed = await c.waitClosed(5000);
  // The login itself succeeded: Metadata was refused for arriving while it was checked. (One
  // object, so a failure shows all of it.)
  const first = c.frames[0];
  expect({
    closed,
    answered: c.frames.map((f) => f.correlationId),
    loginError: first && first.correlationId === login
      ? decodeResponseFrame(ApiKey.SaslAuthenticate, 1, first.frame).body.errorCode
      : null,
  }).toEqual({ closed: true, answered: [login], loginError: 0 });
  expect(c.frames.map((f) => f.correlationId)).not.toContain(md);
});

describe("after authentication", () => {
  test("requests are served; SaslHandshake again is ILLEGAL_SASL_STATE", async () => {
    const c = await connect(all[1]);
    expect((await scramLogin(c, "dave", "dave-pw")).errorCode).toBe(0);
    const md = await c.call(ApiKey.Metadata, 9, { topics: null, allowAutoTopicCreation: false });
    expect((md.brokers as Struct[]).length).toBe(3);
    const hs = await c.call(ApiKey.SaslHandshake, 1, { mechanism: "PLAIN" });
    expect(hs.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    c.close();
  });

  test(
    "AlterUserScramCredentials and DescribeUserScramCredentials, as Kafka answers them",
    async () => {
      const c = await connect(all[1]);
      expect((await scramLogin(c, "dave", "dave-pw")).errorCode).toBe(0);
      const salt = new Uint8Array(16).fill(5);
      const salted = new Uint8Array(pbkdf2Sync("erin-pw", salt, 4096, 32, "sha256"));
      const up = (name: string, mechanism: number, iterations = 4096) => ({
        name,
        mechanism,
        iterations,
        salt,
        saltedPassword: salted,
      });
      const alter = await c.call(ApiKey.AlterUserScramCredentials, 0, {
        deletions: [{ name: "nobody", mechanism: 1 }],
        upsertions: [
          up("erin", 1),
          up("few", 1, 100),
          up("odd", 9),
          up("twice", 1),
          up("twice", 1),
        ],
      });
      const byUser = Object.fromEntries(
        (alter.results as Struct[]).map((r) => [r.user, r.errorCode]),
      );
      expect(byUser).toEqual({
        nobody: ErrorCode.RESOURCE_NOT_FOUND,
        erin: 0,
        few: ErrorCode.UNACCEPTABLE_CREDENTIAL,
        odd: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        twice: ErrorCode.DUPLICATE_RESOURCE,
      });
      const all2 = await c.call(ApiKey.DescribeUserScramCredentials, 0, { users: null });
      // Every user (the pipelined-login test's "pipe" too, when it ran first).
      expect((all2.results as Struct[]).filter((r) => r.user !== "pipe")).toEqual([
        {
          user: "dave",
          errorCode: 0,
          errorMessage: null,
          credentialInfos: [{ mechanism: 2, iterations: 4096 }],
        },
        {
          user: "erin",
          errorCode: 0,
          errorMessage: null,
          credentialInfos: [{ mechanism: 1, iterations: 4096 }],
        },
      ]);
      const named = await c.call(ApiKey.DescribeUserScramCredentials, 0, {
        users: [{ name: "erin" }, { name: "zed" }],
      });
      expect((named.results as Struct[]).map((r) => [r.user, r.errorCode])).toEqual([
        ["erin", 0],
        ["zed", ErrorCode.RESOURCE_NOT_FOUND],
      ]);
      c.close();
      // The user made through the Kafka API logs in on another broker (SCRAM-SHA-256, and PLAIN
      // against the same credential).
      let code = -1;
      for (let i = 0; i < 50 && code !== 0; i++) {
        const o = await connect(all[2]);
        code = (await scramLogin(o, "erin", "erin-pw", "SCRAM-SHA-256")).errorCode;
        o.close();
        if (code !== 0) await Bun.sleep(100);
      }
      expect(code).toBe(0);
      const p = await connect(all[0]);
      await p.call(ApiKey.SaslHandshake, 1, { mechanism: "PLAIN" });
      const plain = await p.call(ApiKey.SaslAuthenticate, 1, { authBytes: enc("\0erin\0erin-pw") });
      expect(plain.errorCode).toBe(0);
      p.close();
    },
    30_000,
  );
});
