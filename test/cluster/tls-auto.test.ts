// The cluster port's TLS by default (tls.ts, auto mode): brokers given only the Kafka listener's
// certificate speak TLS on the cluster port too, with that certificate and no CA; the join-token
// handshake is bound to the TLS session, so a relay that terminates TLS with its own certificate
// towards both sides cannot pass a handshake on; `--cluster-tls off` keeps plain text; and a
// broker with TLS and one without say in their logs why they cannot talk and what to set.
import { beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ClusterKey } from "../../src/cluster/auth.ts";
import { ClusterTls } from "../../src/cluster/tls.ts";
import {
  AuthError,
  ClientHandshake,
  clusterRequest,
  FrameDecoder,
  FrameKind,
  jsonFrame,
  parseJson,
  ServerHandshake,
  TlsMismatchError,
} from "../../src/cluster/transport.ts";
import { type RunningBroker, tempDir, TEST_JOIN_TOKEN } from "../helpers/broker-process.ts";
import { makeTestCerts, type TestCerts } from "../helpers/certs.ts";
import { plainHelloAnswer } from "../helpers/cluster-probe.ts";
import { api } from "../helpers/http.ts";
import { BrokerSet, voterArgs, waitFor } from "../helpers/processes.ts";

const brokers = new BrokerSet("SIGKILL");
let certs: TestCerts;
let kafkaTls: string[];
/** Two brokers with only the Kafka listener's TLS flags. */
let tlsPair: RunningBroker[] = [];
/** Two brokers with the Kafka listener's TLS and --cluster-tls off. */
let plainPair: RunningBroker[] = [];

const pemOf = (f: string) => readFileSync(f, "utf8");
/** How a broker in auto mode dials: the Kafka certificate, no CA. */
const autoTls = () =>
  new ClusterTls({ cert: pemOf(certs.serverCert), key: pemOf(certs.serverKey) }, { auto: true });
const start = (id: number, join: string | undefined, extra: string[]) =>
  brokers.start({
    dataDir: tempDir("cluster-tls-auto-"),
    args: [...voterArgs(id, join, 2000), ...extra],
    timeoutMs: 30_000,
  });
const split = (addr: string) => {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
};
const logsOf = (b: RunningBroker) => b.logs.join("\n");

beforeAll(async () => {
  certs = await makeTestCerts();
  kafkaTls = ["--kafka-tls-cert", certs.serverCert, "--kafka-tls-key", certs.serverKey];
  const t0 = await start(0, undefined, kafkaTls);
  const p0 = await start(0, undefined, [...kafkaTls, "--cluster-tls", "off"]);
  const [t1, p1] = await Promise.all([
    start(1, t0.clusterAddr, kafkaTls),
    // The `=` spelling, as the docs show it.
    start(1, p0.clusterAddr, [...kafkaTls, "--cluster-tls=off"]),
  ]);
  tlsPair = [t0, t1];
  plainPair = [p0, p1];
}, 120_000);

/** Both brokers list each other, and a record written on one is in the other's own copy. */
async function formsAndReplicates(pair: RunningBroker[], topic: string): Promise<void> {
  await waitFor("both brokers registered", 20_000, async () => {
    const c = await api(pair[1].httpUrl, "GET", "/cluster");
    return c.json?.brokers?.length === 2 ? true : undefined;
  });
  const r = await api(pair[0].httpUrl, "POST", "/topics", {
    name: topic,
    partitions: 1,
    replication_factor: 2,
  });
  expect(r.status).toBe(201);
  await waitFor(`${topic} led`, 20_000, async () => {
    const w = await api(pair[0].httpUrl, "POST", `/topics/${topic}/records`, { value: "v" });
    return w.status === 200 ? true : undefined;
  });
  for (const b of pair) {
    await waitFor(`${topic} in each broker's own copy`, 20_000, async () => {
      const q = await api(b.httpUrl, "GET", `/topics/${topic}/partitions/0/records?replica=local`);
      return q.json?.records?.length >= 1 ? true : undefined;
    });
  }
}

describe("the handshake is bound to the TLS session", () => {
  const key = new ClusterKey(TEST_JOIN_TOKEN);
  const me = { clusterId: "c1", nodeId: 0 };
  /** A tool's client handshake on a connection whose channel binding is `channel`. */
  const client = (channel: string | null) =>
    new ClientHandshake(
      { key, clusterId: null, nodeId: null, addr: null, session: "request" },
      () => channel,
    );
  const frame = (bytes: Uint8Array) => new FrameDecoder().push(bytes)[0];
  /** One handshake, sans IO: the client and server see the channel values given. */
  const run = (clientChannel: string | null, serverChannel: string | null) => {
    const c = client(clientChannel);
    const s = new ServerHandshake(key, me, () => serverChannel);
    const hello = frame(c.hello());
    const challenge = s.step(hello.kind, hello.payload);
    const proof = frame(c.step(FrameKind.challenge, frame(challenge.send!).payload).send!);
    return s.step(proof.kind, proof.payload);
  };

  test("equal values pass, different values (two TLS sessions) or plain vs TLS fail", () => {
    expect(run("session-a", "session-a").client).toBeDefined();
    expect(run(null, null).client).toBeDefined();
    for (const [c, s] of [["session-a", "session-b"], [null, "session-a"], ["session-a", null]]) {
      const r = run(c, s);
      expect(r.client).toBeUndefined();
      expect(r.close).toContain("wrong proof");
    }
  });
  test("the client refuses a welcome proven over another session", () => {
    const c = client("session-a");
    const nc = (parseJson(frame(c.hello()).payload) as { nonce: string }).nonce;
    const ns = "B".repeat(32);
    c.step(FrameKind.challenge, frame(jsonFrame(FrameKind.challenge, { nonce: ns })).payload);
    const welcome = (channel: string) =>
      frame(jsonFrame(FrameKind.welcome, {
        clusterId: "c1",
        nodeId: 0,
        proof: key.proof("server", [nc, ns, "c1", 0, null, channel]),
      })).payload;
    expect(() => c.step(FrameKind.welcome, welcome("session-b"))).toThrow(AuthError);
    // The same welcome over the client's own session passes: what failed was the binding.
    expect(c.step(FrameKind.welcome, welcome("session-a")).server?.nodeId).toBe(0);
  });
});

describe("TLS on the Kafka listener only", () => {
  test("two brokers form a cluster over TLS on the cluster port and replicate", async () => {
    for (const b of tlsPair) expect(logsOf(b)).toContain('"cluster_tls":"auto"');
    await formsAndReplicates(tlsPair, "auto-tls");
    // A plain hello gets a TLS alert back (a record of type 21, version 3.x), not a challenge.
    const answer = await plainHelloAnswer(tlsPair[0].clusterAddr);
    expect(answer.length).toBeGreaterThan(0);
    expect([answer[0], answer[1]]).toEqual([0x15, 0x03]);
    expect(answer.toString("latin1")).not.toContain("nonce");
    // A TLS client gets TLS 1.3 and the Kafka listener's certificate.
    const { host, port } = split(tlsPair[0].clusterAddr);
    const seen = await new Promise<{ protocol: string | null; fp: string }>((resolve, reject) => {
      const s = tlsConnect({ host, port, rejectUnauthorized: false });
      s.on("secureConnect", () => {
        resolve({ protocol: s.getProtocol(), fp: s.getPeerCertificate().fingerprint256 });
        // Closed cleanly: a connection torn down mid-handshake is logged as an authentication
        // failure, and that log line is rate-limited (the relay test below looks for its own).
        s.end();
      });
      s.on("error", reject);
    });
    expect(seen.protocol).toBe("TLSv1.3");
    expect(seen.fp).toBe(new X509Certificate(pemOf(certs.serverCert)).fingerprint256);
    // The token over TLS is answered (the control for the relay below).
    const st = await clusterRequest(tlsPair[0].clusterAddr, "status", {}, 10_000, {
      token: TEST_JOIN_TOKEN,
      tls: autoTls(),
    }) as { clusterId?: string };
    expect(typeof st.clusterId).toBe("string");
  }, 90_000);

  test("a relay terminating TLS with its own certificate cannot pass a handshake on", async () => {
    const target = split(tlsPair[0].clusterAddr);
    const roguePem = { cert: pemOf(certs.roguePeerCert), key: pemOf(certs.roguePeerKey) };
    const rogue = new ClusterTls(roguePem, { auto: true });
    /** Plain text the relay read from the client and from the broker. */
    const fromClient = new FrameDecoder();
    const fromBroker = new FrameDecoder();
    const kinds: string[] = [];
    const sockets: Socket[] = [];
    const relay: Server = createServer((raw) => {
      const down = rogue.serve(raw);
      const up = tlsConnect({ ...target, rejectUnauthorized: false });
      sockets.push(down, up, raw);
      down.on("data", (d: Buffer) => {
        for (const f of fromClient.push(new Uint8Array(d))) kinds.push(`c${f.kind}`);
        up.write(d);
      });
      up.on("data", (d: Buffer) => {
        for (const f of fromBroker.push(new Uint8Array(d))) kinds.push(`b${f.kind}`);
        down.write(d);
      });
      for (const s of [down, up]) {
        s.on("error", () => {});
        s.on("close", () => {
          down.destroy();
          up.destroy();
        });
      }
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", () => r()));
    const relayAddr = `127.0.0.1:${(relay.address() as { port: number }).port}`;
    try {
      const asked = clusterRequest(relayAddr, "status", {}, 10_000, {
        token: TEST_JOIN_TOKEN,
        tls: autoTls(),
      });
      await expect(asked).rejects.toBeInstanceOf(AuthError);
      await expect(asked).rejects.toThrow(/join token/);
      // The relay read the handshake in clear and passed it on (hello, challenge, proof), and
      // the broker refused the proof: no welcome, so nothing after it was ever read.
      expect(kinds.slice(0, 3)).toEqual([
        `c${FrameKind.hello}`,
        `b${FrameKind.challenge}`,
        `c${FrameKind.proof}`,
      ]);
      expect(kinds).not.toContain(`b${FrameKind.welcome}`);
      expect(kinds).toContain(`b${FrameKind.denied}`);
      await waitFor(
        "the broker logs the relayed proof",
        5000,
        async () => logsOf(tlsPair[0]).includes("another TLS session") ? true : undefined,
      );
    } finally {
      relay.close();
      for (const s of sockets) s.destroy();
    }
  }, 60_000);
});

describe("--cluster-tls off", () => {
  test("keeps the cluster port in plain text while the Kafka listener uses TLS", async () => {
    for (const b of plainPair) {
      expect(logsOf(b)).toContain('"cluster_tls":"off"');
      expect(logsOf(b)).toContain("the Kafka listener speaks TLS but the cluster port does not");
    }
    await formsAndReplicates(plainPair, "plain-cluster");
    const st = await clusterRequest(plainPair[0].clusterAddr, "status", {}, 10_000, {
      token: TEST_JOIN_TOKEN,
    }) as { clusterId?: string };
    expect(typeof st.clusterId).toBe("string");
    // Its port never speaks TLS: a TLS client is answered in plain text.
    const { host, port } = split(plainPair[0].clusterAddr);
    const tlsErr = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host, port, rejectUnauthorized: false });
      s.on("secureConnect", () => resolve("secure"));
      s.on("error", (e: Error & { code?: string }) => resolve(String(e.code)));
    });
    expect(tlsErr).toBe("ERR_SSL_WRONG_VERSION_NUMBER");
  }, 90_000);
});

describe("a broker with TLS on the cluster port and one without", () => {
  test("a TLS broker joining a plain one: both logs say what to set", async () => {
    await expect(start(2, plainPair[0].clusterAddr, kafkaTls)).rejects.toThrow(
      /speaks plain text on the cluster port but this broker speaks TLS there.*--cluster-tls off/,
    );
    await waitFor(
      "the plain seed's log",
      10_000,
      async () =>
        /cluster TLS mismatch: .*speaks TLS on the cluster port but this broker speaks plain text.*--kafka-tls-cert/
            .test(logsOf(plainPair[0]))
          ? true
          : undefined,
    );
  }, 60_000);

  test("a plain broker joining a TLS one: both logs say what to set", async () => {
    await expect(start(2, tlsPair[0].clusterAddr, [])).rejects.toThrow(
      /speaks TLS on the cluster port but this broker speaks plain text.*--kafka-tls-cert/,
    );
    await waitFor(
      "the TLS seed's log",
      10_000,
      async () =>
        /cluster TLS mismatch: .*speaks plain text on the cluster port but this broker speaks TLS.*--cluster-tls off/
            .test(logsOf(tlsPair[0]))
          ? true
          : undefined,
    );
  }, 60_000);

  test("a client of the wrong kind gets a TlsMismatchError, not a retry", async () => {
    await expect(
      clusterRequest(plainPair[0].clusterAddr, "status", {}, 10_000, {
        token: TEST_JOIN_TOKEN,
        tls: autoTls(),
      }),
    ).rejects.toBeInstanceOf(TlsMismatchError);
    await expect(
      clusterRequest(tlsPair[0].clusterAddr, "status", {}, 10_000, { token: TEST_JOIN_TOKEN }),
    ).rejects.toBeInstanceOf(TlsMismatchError);
  }, 30_000);
});
