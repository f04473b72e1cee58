// The SASL front door in exact frames (no TLS, so raw sockets can speak it): what a client sees
// before it has authenticated, for a mechanism the operator did not enable, after a failed login,
// with a PLAIN authorization id naming someone else, and with a password changed meanwhile. Real
// clients (test/kafka/sasl/listener.test.ts) only ever take the happy paths and the wrong password.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiKey, ErrorCode, type Struct } from "../../../src/protocol/kafka/index.ts";
import { ScramClient } from "../../../src/kafka/sasl/scram.ts";
import { type RunningBroker, startBrokerProcess } from "../../helpers/broker-process.ts";
import { RawClient } from "../raw-client.ts";

let broker: RunningBroker;
const enc = new TextEncoder();
const dec = new TextDecoder();

async function setPassword(user: string, password: string): Promise<void> {
  const r = await fetch(`${broker.httpUrl}/users`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: user, password }),
  });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  // PLAIN without TLS is what an operator is warned about, and what raw frames need here.
  broker = await startBrokerProcess({
    args: ["--kafka-sasl", "required", "--kafka-sasl-mechanisms", "PLAIN,SCRAM-SHA-256"],
  });
  await setPassword("alice", "alice-pw");
  await setPassword("bob", "bob-pw");
}, 60_000);

afterAll(async () => {
  broker?.kill();
  await broker?.exited;
});

const metadata = (c: RawClient) =>
  c.call(ApiKey.Metadata, 9, {
    topics: null,
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });

async function handshake(c: RawClient, mechanism: string): Promise<Struct> {
  return await c.call(ApiKey.SaslHandshake, 1, { mechanism });
}

async function authenticate(c: RawClient, token: string): Promise<Struct> {
  return await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: enc.encode(token) });
}

/** A PLAIN login on a fresh connection: the SaslAuthenticate answer and the connection. */
async function plain(authzid: string, user: string, password: string) {
  const c = await RawClient.connect(broker.kafkaPort);
  expect((await handshake(c, "PLAIN")).errorCode).toBe(ErrorCode.NONE);
  const r = await authenticate(c, `${authzid}\0${user}\0${password}`);
  return { c, r };
}

describe("SASL required", () => {
  test("a request before authentication closes the connection unanswered", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    const before = c.frames.length;
    await c.send(ApiKey.Metadata, 9, {
      topics: null,
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(await c.waitClosed(5000)).toBe(true);
    expect(c.frames.length).toBe(before);
  });

  test("a mechanism not enabled is UNSUPPORTED_SASL_MECHANISM with the enabled list, then closed", async () => {
    const c = await RawClient.connect(broker.kafkaPort);
    const r = await handshake(c, "SCRAM-SHA-512");
    expect(r.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    expect(r.mechanisms).toEqual(["PLAIN", "SCRAM-SHA-256"]);
    expect(await c.waitClosed(5000)).toBe(true);
  });

  test("a failed login is SASL_AUTHENTICATION_FAILED, then the connection is closed", async () => {
    const { c, r } = await plain("", "alice", "wrong");
    expect(r.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(await c.waitClosed(5000)).toBe(true);
    // SCRAM: the proof of a wrong password fails the same way.
    const s = await RawClient.connect(broker.kafkaPort);
    expect((await handshake(s, "SCRAM-SHA-256")).errorCode).toBe(ErrorCode.NONE);
    const client = new ScramClient({
      mechanism: "SCRAM-SHA-256",
      user: "alice",
      password: "wrong",
      clientNonce: "fyko+d2lbbFgONRv9qkxdawL",
    });
    const first = await authenticate(s, client.first());
    expect(first.errorCode).toBe(ErrorCode.NONE);
    const fin = await authenticate(s, client.final(dec.decode(first.authBytes as Uint8Array)));
    expect(fin.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(await s.waitClosed(5000)).toBe(true);
  });

  test("PLAIN: an authorization id naming another user is refused; the user's own is not", async () => {
    const other = await plain("bob", "alice", "alice-pw");
    expect(other.r.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(String(other.r.errorMessage)).toContain("authorization id");
    const own = await plain("alice", "alice", "alice-pw");
    expect(own.r.errorCode).toBe(ErrorCode.NONE);
    expect(((await metadata(own.c)).brokers as Struct[]).length).toBe(1);
    own.c.close();
  });

  test("after a password change the old password no longer logs in (it was just used)", async () => {
    await setPassword("carol", "carol-old");
    const before = await plain("", "carol", "carol-old");
    expect(before.r.errorCode).toBe(ErrorCode.NONE);
    before.c.close();
    await setPassword("carol", "carol-new");
    const old = await plain("", "carol", "carol-old");
    expect(old.r.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    const now = await plain("", "carol", "carol-new");
    expect(now.r.errorCode).toBe(ErrorCode.NONE);
    now.c.close();
  });
});
