// The listener security flags: TLS files in pairs, SASL choices, the HTTP token from a file.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BrokerConfig, ConfigError, parseCommandLine } from "../src/config.ts";
import { tempDir } from "./helpers/broker-process.ts";

const dir = tempDir("config-security-");
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const cert = file("c.pem", "-----BEGIN CERTIFICATE-----\n");
const key = file("k.pem", "-----BEGIN PRIVATE KEY-----\n");

function parse(argv: string[], env: Record<string, string> = {}): BrokerConfig {
  const r = parseCommandLine(argv, env);
  if (r.kind !== "run") throw new Error(r.kind);
  return r.config;
}

describe("listener security flags", () => {
  test("defaults: no TLS, no SASL, every mechanism offered", () => {
    const c = parse([]);
    expect(c.kafkaTlsCert).toBeUndefined();
    expect(c.kafkaSasl).toBe("none");
    expect(c.kafkaSaslMechanisms).toEqual(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
  });

  test("TLS files come in pairs; a CA needs them; a missing file is named", () => {
    expect(parse(["--kafka-tls-cert", cert, "--kafka-tls-key", key]).kafkaTlsKey).toBe(key);
    expect(() => parse(["--kafka-tls-cert", cert])).toThrow(/go together/);
    expect(() => parse(["--kafka-tls-ca", cert])).toThrow(/needs --kafka-tls-cert/);
    expect(() => parse(["--kafka-tls-cert", join(dir, "nope.pem"), "--kafka-tls-key", key]))
      .toThrow(/--kafka-tls-cert: cannot read .*nope\.pem/);
  });

  test("cluster TLS: files in pairs, a CA needs them, also from the environment", () => {
    const c = parse([
      "--cluster-tls-cert",
      cert,
      "--cluster-tls-key",
      key,
      "--cluster-tls-ca",
      cert,
    ]);
    expect([c.clusterTlsCert, c.clusterTlsKey, c.clusterTlsCa]).toEqual([cert, key, cert]);
    expect(parse([], { BROKER_CLUSTER_TLS_CERT: cert, BROKER_CLUSTER_TLS_KEY: key }).clusterTlsKey)
      .toBe(key);
    expect(parse([]).clusterTlsCert).toBeUndefined();
    expect(() => parse(["--cluster-tls-key", key])).toThrow(/go together/);
    expect(() => parse(["--cluster-tls-ca", cert])).toThrow(/needs --cluster-tls-cert/);
  });

  test("--cluster-tls: auto by default, off and on checked against the certificates", () => {
    expect(parse([]).clusterTls).toBe("auto");
    expect(
      parse(["--cluster-tls=off", "--kafka-tls-cert", cert, "--kafka-tls-key", key]).clusterTls,
    )
      .toBe("off");
    expect(parse([], { BROKER_CLUSTER_TLS: "off" }).clusterTls).toBe("off");
    expect(
      parse(["--cluster-tls", "on", "--kafka-tls-cert", cert, "--kafka-tls-key", key]).clusterTls,
    )
      .toBe("on");
    expect(() => parse(["--cluster-tls", "on"])).toThrow(/--cluster-tls on needs a certificate/);
    expect(() =>
      parse(["--cluster-tls", "off", "--cluster-tls-cert", cert, "--cluster-tls-key", key])
    )
      .toThrow(/contradict/);
    expect(() => parse(["--cluster-tls", "yes"])).toThrow(/expected auto, on or off/);
  });

  test("SASL: none or required; mechanisms from the list, deduplicated", () => {
    expect(parse(["--kafka-sasl", "required"]).kafkaSasl).toBe("required");
    expect(() => parse(["--kafka-sasl", "optional"])).toThrow(ConfigError);
    expect(parse(["--kafka-sasl-mechanisms", "scram-sha-512, SCRAM-SHA-512"]).kafkaSaslMechanisms)
      .toEqual(["SCRAM-SHA-512"]);
    expect(() => parse(["--kafka-sasl-mechanisms", "GSSAPI"])).toThrow(/unknown SASL mechanism/);
    expect(() => parse(["--kafka-sasl-mechanisms", ","])).toThrow(/at least one/);
  });

  test("the HTTP token from a file (one line), not with --http-token too", () => {
    const tf = file("token", "s3cret-token\n");
    expect(parse(["--http-token-file", tf]).httpToken).toBe("s3cret-token");
    expect(parse([], { BROKER_HTTP_TOKEN_FILE: tf }).httpToken).toBe("s3cret-token");
    expect(() => parse(["--http-token-file", tf, "--http-token", "x"])).toThrow(/give one/);
    expect(() => parse(["--http-token-file", tf], { BROKER_HTTP_TOKEN: "x" })).toThrow(
      /BROKER_HTTP_TOKEN/,
    );
    expect(() => parse(["--http-token-file", file("empty", "\n")])).toThrow(/one line/);
    expect(() => parse(["--http-token-file", file("two", "a\nb\n")])).toThrow(/one line/);
  });
});
