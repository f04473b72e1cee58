// TLS and SASL on the Kafka listener with unmodified clients (kcat, confluent-kafka, kafka-python,
// kafkajs): a broker speaking SASL_SSL (users added with the CLI), one requiring TLS client
// certificates, and the HTTP API's Basic logins and token file. Certificates are made with
// openssl at test time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import {
  brokerCommand,
  type RunningBroker,
  startBrokerProcess,
  tempDir,
} from "../../helpers/broker-process.ts";
import { hasOpenssl, makeTestCerts, type TestCerts } from "../../helpers/certs.ts";

const PYTHON = "/usr/bin/python3";
const TOKEN = "http-token-from-a-file";
let certs: TestCerts;
let sasl: RunningBroker;
let mtls: RunningBroker;
const bootstrap = () => `127.0.0.1:${sasl.kafkaPort}`;

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error("openssl is needed to make the test certificates");
  certs = await makeTestCerts();
  const tokenFile = join(tempDir("token-"), "http.token");
  writeFileSync(tokenFile, TOKEN + "\n", { mode: 0o600 });
  [sasl, mtls] = await Promise.all([
    startBrokerProcess({
      args: [
        "--kafka-tls-cert",
        certs.serverCert,
        "--kafka-tls-key",
        certs.serverKey,
        "--kafka-sasl",
        "required",
        "--http-token-file",
        tokenFile,
      ],
    }),
    startBrokerProcess({
      args: [
        "--kafka-tls-cert",
        certs.serverCert,
        "--kafka-tls-key",
        certs.serverKey,
        "--kafka-tls-ca",
        certs.caCert,
      ],
    }),
  ]);
  // The CLI derives the SCRAM credentials and sends no password; the token comes from the env.
  const add = Bun.spawnSync(
    [...brokerCommand(), "user", "add", "alice", "--server", sasl.httpUrl],
    {
      stdin: new TextEncoder().encode("alice-pw\n"),
      env: { ...process.env, BROKER_HTTP_TOKEN: TOKEN },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  expect(add.stderr.toString()).toBe("");
  expect(add.stdout.toString()).toBe("user alice: SCRAM-SHA-256, SCRAM-SHA-512\n");
}, 60_000);

afterAll(async () => {
  for (const b of [sasl, mtls]) b?.kill();
  await Promise.all([sasl?.exited, mtls?.exited]);
});

/**
 * Run to completion, or until stderr matches `stopWhen` (a client that retries a refused login
 * until its timeout is stopped at its first error line).
 */
async function run(cmd: string[], stdin?: string, timeoutMs = 30_000, stopWhen?: RegExp) {
  const p = Bun.spawn(cmd, {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill(9), timeoutMs);
  let err = "";
  const readErr = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of p.stderr) {
      err += dec.decode(chunk, { stream: true });
      if (stopWhen?.test(err)) p.kill(9);
    }
  })();
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited, readErr]);
  clearTimeout(timer);
  return { out, err, code };
}

/** librdkafka's first error line (%3|...|FAIL|...). */
const FAILED = /\|FAIL\|.*\n/;

const kcatSasl = (mechanism: string, password: string) => [
  "kcat",
  "-b",
  bootstrap(),
  "-X",
  "security.protocol=SASL_SSL",
  "-X",
  `sasl.mechanisms=${mechanism}`,
  "-X",
  "sasl.username=alice",
  "-X",
  `sasl.password=${password}`,
  "-X",
  `ssl.ca.location=${certs.caCert}`,
  "-m",
  "8",
];

describe("SASL_SSL listener", () => {
  test(
    "kcat: PLAIN and SCRAM-SHA-512 produce and consume; a wrong password is refused",
    async () => {
      for (const m of ["PLAIN", "SCRAM-SHA-512"]) {
        const p = await run([...kcatSasl(m, "alice-pw"), "-P", "-t", "kcat-t"], `via-${m}\n`);
        expect({ m, code: p.code, err: p.err }).toEqual({ m, code: 0, err: "" });
      }
      const c = await run([...kcatSasl("SCRAM-SHA-512", "alice-pw"), "-C", "-t", "kcat-t", "-e"]);
      expect(c.out.split("\n").filter(Boolean)).toEqual(["via-PLAIN", "via-SCRAM-SHA-512"]);
      for (const m of ["PLAIN", "SCRAM-SHA-512"]) {
        const bad = await run([...kcatSasl(m, "wrong"), "-L"], undefined, 20_000, FAILED);
        expect(bad.code).not.toBe(0);
        expect(bad.err).toContain(
          `Authentication failed during authentication due to invalid credentials with SASL mechanism ${m}`,
        );
      }
    },
    60_000,
  );

  test("confluent-kafka (SCRAM-SHA-512) and kafka-python (PLAIN, SCRAM-SHA-256)", async () => {
    const py = async (client: string, m: string, password: string, value: string) => {
      const r = await run([
        PYTHON,
        join(import.meta.dir, "clients.py"),
        client,
        bootstrap(),
        "SASL_SSL",
        m,
        "alice",
        password,
        certs.caCert,
        "py-t",
        value,
      ]);
      return JSON.parse(r.out.trim().split("\n").pop() ?? "{}") as {
        values?: string[];
        error?: string;
      };
    };
    const [a, b, c] = await Promise.all([
      py("confluent", "SCRAM-SHA-512", "alice-pw", "confluent"),
      py("kafka-python", "PLAIN", "alice-pw", "kafka-python-plain"),
      py("kafka-python", "SCRAM-SHA-256", "alice-pw", "kafka-python-scram"),
    ]);
    const got: [{ values?: string[]; error?: string }, string][] = [
      [a, "confluent"],
      [b, "kafka-python-plain"],
      [c, "kafka-python-scram"],
    ];
    for (const [r, v] of got) {
      expect(r.error).toBeUndefined();
      expect(r.values).toContain(v);
    }
    const [badConfluent, badPython] = await Promise.all([
      py("confluent", "SCRAM-SHA-512", "wrong", "x"),
      py("kafka-python", "SCRAM-SHA-512", "wrong", "x"),
    ]);
    expect(badConfluent.error).toContain("invalid credentials with SASL mechanism SCRAM-SHA-512");
    // kafka-python 2.0 speaks SaslHandshake v0: bare tokens, no error frame; the broker closes.
    expect(badPython.error).toContain("NoBrokersAvailable");
  }, 60_000);

  test(
    "kafkajs: SCRAM-SHA-512 and PLAIN; a wrong password is a SASL authentication error",
    async () => {
      const ca = await Bun.file(certs.caCert).text();
      const k = (m: "plain" | "scram-sha-512", pw: string) =>
        new Kafka({
          brokers: [bootstrap()],
          clientId: "kafkajs-sasl",
          logLevel: logLevel.NOTHING,
          ssl: { ca: [ca] },
          sasl: { mechanism: m, username: "alice", password: pw } as never,
          retry: { retries: 0 },
        });
      for (const m of ["scram-sha-512", "plain"] as const) {
        const p = k(m, "alice-pw").producer();
        await p.connect();
        await p.send({ topic: "js-t", messages: [{ value: `kafkajs-${m}` }] });
        await p.disconnect();
      }
      const admin = k("scram-sha-512", "alice-pw").admin();
      await admin.connect();
      const offsets = await admin.fetchTopicOffsets("js-t");
      await admin.disconnect();
      expect(offsets[0].high).toBe("2");
      const bad = k("scram-sha-512", "wrong").producer();
      const e = await bad.connect().then(() => null, (err) => err);
      expect(e?.name).toBe("KafkaJSSASLAuthenticationError");
      expect(String(e?.message)).toContain("invalid credentials with SASL mechanism SCRAM-SHA-512");
    },
    60_000,
  );
});

describe("TLS client certificates (no SASL)", () => {
  const kcatTls = (cert?: string, key?: string) => [
    "kcat",
    "-b",
    `127.0.0.1:${mtls.kafkaPort}`,
    "-X",
    "security.protocol=SSL",
    "-X",
    `ssl.ca.location=${certs.caCert}`,
    ...(cert ? ["-X", `ssl.certificate.location=${cert}`, "-X", `ssl.key.location=${key}`] : []),
    "-m",
    "5",
  ];

  test("a certificate the CA signed is served; another CA's, or none, is refused", async () => {
    const ok = await run([...kcatTls(certs.clientCert, certs.clientKey), "-P", "-t", "m-t"], "x\n");
    expect({ code: ok.code, err: ok.err }).toEqual({ code: 0, err: "" });
    const [rogue, none] = await Promise.all([
      run([...kcatTls(certs.rogueCert, certs.rogueKey), "-L"], undefined, 20_000, FAILED),
      run([...kcatTls(), "-L"], undefined, 20_000, FAILED),
    ]);
    expect(rogue.code).not.toBe(0);
    expect(none.code).not.toBe(0);
    expect(none.err).toMatch(/certificate required|SSL handshake failed|Disconnected/i);
  }, 60_000);
});

describe("HTTP logins", () => {
  const basic = (user: string, pw: string) => "Basic " + btoa(`${user}:${pw}`);

  test("the token from --http-token-file, and users' passwords (Basic), are accepted", async () => {
    const bearer = await fetch(`${sasl.httpUrl}/users`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(bearer.status).toBe(200);
    expect(await bearer.json()).toEqual([{
      name: "alice",
      mechanisms: [
        { mechanism: "SCRAM-SHA-256", iterations: 4096 },
        { mechanism: "SCRAM-SHA-512", iterations: 4096 },
      ],
    }]);
    const user = await fetch(`${sasl.httpUrl}/topics`, {
      headers: { authorization: basic("alice", "alice-pw") },
    });
    expect(user.status).toBe(200);
    for (const auth of [basic("alice", "nope"), basic("mallory", "alice-pw"), "Bearer nope", ""]) {
      const r = await fetch(`${sasl.httpUrl}/topics`, { headers: { authorization: auth } });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe(
        'Bearer realm="broker", Basic realm="broker", charset="UTF-8"',
      );
      expect(((await r.json()) as { error_code: number }).error_code).toBe(40100);
    }
  });

  test("a user deleted over HTTP can no longer log in (Kafka or HTTP)", async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const add = await fetch(`${sasl.httpUrl}/users`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "carol", password: "carol-pw", mechanisms: ["SCRAM-SHA-512"] }),
    });
    expect(add.status).toBe(201);
    const login = (pw: string) =>
      run(
        [
          "kcat",
          "-b",
          bootstrap(),
          "-X",
          "security.protocol=SASL_SSL",
          "-X",
          "sasl.mechanisms=PLAIN",
          "-X",
          "sasl.username=carol",
          "-X",
          `sasl.password=${pw}`,
          "-X",
          `ssl.ca.location=${certs.caCert}`,
          "-m",
          "5",
          "-L",
        ],
        undefined,
        20_000,
      );
    expect((await login("carol-pw")).code).toBe(0);
    const del = await fetch(`${sasl.httpUrl}/users/carol`, { method: "DELETE", headers: auth });
    expect(del.status).toBe(204);
    expect((await login("carol-pw")).code).not.toBe(0);
    const r = await fetch(`${sasl.httpUrl}/topics`, {
      headers: { authorization: basic("carol", "carol-pw") },
    });
    expect(r.status).toBe(401);
    const again = await fetch(`${sasl.httpUrl}/users/carol`, { method: "DELETE", headers: auth });
    expect(again.status).toBe(404);
  }, 30_000);
});

describe("broker user (CLI)", () => {
  const cli = (args: string[]) =>
    Bun.spawnSync([...brokerCommand(), "user", ...args, "--server", sasl.httpUrl], {
      env: { ...process.env, BROKER_HTTP_TOKEN: TOKEN },
      stdout: "pipe",
      stderr: "pipe",
    });

  test("list, delete one mechanism, delete a user that does not exist", () => {
    const del = cli(["delete", "alice", "--mechanism", "SCRAM-SHA-256"]);
    expect(del.stdout.toString()).toBe("deleted SCRAM-SHA-256 of user alice\n");
    const list = cli(["list", "--json"]);
    expect(JSON.parse(list.stdout.toString())).toEqual([
      { name: "alice", mechanisms: [{ mechanism: "SCRAM-SHA-512", iterations: 4096 }] },
    ]);
    const missing = cli(["delete", "nobody"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.toString()).toContain('user "nobody" has no SCRAM credential');
    const bad = cli(["add", "x", "--mechanism", "SCRAM-SHA-1"]);
    expect(bad.exitCode).toBe(2);
  });
});
