import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { advertisedKafka, ConfigError, OPTIONS, parseCommandLine, usage } from "../src/config.ts";
import { tempDir } from "./helpers/broker-process.ts";

function run(argv: string[], env: Record<string, string> = {}) {
  const r = parseCommandLine(argv, env);
  if (r.kind !== "run") throw new Error("expected run");
  return r.config;
}

describe("config", () => {
  test("defaults", () => {
    const c = run([]);
    expect(c.dataDir).toBe("./data");
    expect(c.kafkaAddr).toEqual({ host: "0.0.0.0", port: 9092 });
    expect(c.httpAddr).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(c.clusterAddr).toEqual({ host: "0.0.0.0", port: 9093 });
    expect(c.nodeId).toBeUndefined();
    expect(c.join).toBeUndefined();
    expect(c.flush).toEqual({ kind: "interval", ms: 1000 });
  });

  test("flags override env, env overrides file", () => {
    const dir = tempDir();
    const file = join(dir, "b.json");
    writeFileSync(
      file,
      JSON.stringify({ "data-dir": "/from-file", "http-addr": "127.0.0.1:1", "node-id": 7 }),
    );
    const c = run(["--config", file, "--http-addr", "127.0.0.1:3"], {
      BROKER_HTTP_ADDR: "127.0.0.1:2",
      BROKER_DATA_DIR: "/from-env",
    });
    expect(c.dataDir).toBe("/from-env");
    expect(c.httpAddr.port).toBe(3);
    expect(c.nodeId).toBe(7);
  });

  test("TOML config file and topic defaults", () => {
    const dir = tempDir();
    const file = join(dir, "b.toml");
    writeFileSync(
      file,
      `"kafka-addr" = "127.0.0.1:19092"\n[topic-defaults]\n"retention.ms" = 1000\n`,
    );
    const c = run([], { BROKER_CONFIG: file });
    expect(c.kafkaAddr.port).toBe(19092);
    expect(c.topicDefaults["retention.ms"]).toBe("1000");
    const c2 = run(["--config", file, "--topic-default", "retention.ms=5"]);
    expect(c2.topicDefaults["retention.ms"]).toBe("5");
  });

  test("YAML config file (.yaml and .yml), with topic defaults; bad YAML named as YAML", () => {
    const dir = tempDir();
    const file = join(dir, "b.yaml");
    writeFileSync(
      file,
      '# a comment\nkafka-addr: "127.0.0.1:19093"\nnode-id: 4\ntopic-defaults:\n  retention.ms: 2000\n',
    );
    const c = run(["--config", file]);
    expect(c.kafkaAddr.port).toBe(19093);
    expect(c.nodeId).toBe(4);
    expect(c.topicDefaults["retention.ms"]).toBe("2000");
    const yml = join(dir, "b.yml");
    writeFileSync(yml, "http-addr: 127.0.0.1:7\n");
    expect(run([], { BROKER_CONFIG: yml }).httpAddr.port).toBe(7);
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "kafka-addr: [unclosed\n");
    expect(() => run(["--config", bad])).toThrow(/not valid YAML/);
    writeFileSync(bad, "- a list\n- not settings\n");
    expect(() => run(["--config", bad])).toThrow(/not valid YAML/);
    writeFileSync(bad, "data-dri: /x\n");
    expect(() => run(["--config", bad])).toThrow(/unknown key "data-dri" .*did you mean data-dir/);
  });

  test("a mistyped flag gets a suggestion", () => {
    expect(() => parseCommandLine(["--data-dri", "x"], {})).toThrow(/did you mean --data-dir\?/);
  });

  test.each([
    [["--kafka-addr", "nope"]],
    [["--kafka-addr", "h:99999"]],
    [["--node-id", "-1"]],
    [["--node-id", "x"]],
    [["--advertise-host", "0.0.0.0"]],
    [["--flush", "sometimes"]],
    [["--flush", "interval:0"]],
    [["--log-level", "loud"]],
    [["--unknown"]],
    [["positional"]],
    [["--data-dir", ""]],
    [["--topic-default", "noequals"]],
  ])("rejects %p with a ConfigError", (argv) => {
    expect(() => parseCommandLine(argv, {})).toThrow(ConfigError);
  });

  test("the common flag mistakes are answered with the fix", () => {
    expect(() => parseCommandLine(["--node-id", "-3"], {})).toThrow(/--node-id=-1/);
    expect(() => parseCommandLine(["--server", "http://x"], {})).toThrow(
      /option of the client commands: put it after the command/,
    );
  });

  test("a bad value is refused even where a higher source overrides it", () => {
    const dir = tempDir();
    const file = join(dir, "b.json");
    writeFileSync(file, JSON.stringify({ "kafka-addr": 5 }));
    expect(() => parseCommandLine(["--config", file, "--kafka-addr", "127.0.0.1:1"], {}))
      .toThrow(`${file}: kafka-addr`);
    expect(() => parseCommandLine(["--node-id", "4"], { BROKER_NODE_ID: "x" }))
      .toThrow("BROKER_NODE_ID");
  });

  test("unknown key in a config file is rejected", () => {
    const dir = tempDir();
    const file = join(dir, "b.json");
    writeFileSync(file, JSON.stringify({ "data_dir": "x" }));
    expect(() => parseCommandLine(["--config", file], {})).toThrow(/unknown key/);
  });

  test("the join token: flag, BROKER_JOIN_TOKEN or the config file; a short one is refused", () => {
    const t = "x".repeat(40);
    expect(run([]).joinToken).toBeUndefined();
    expect(run(["--join-token", t]).joinToken).toBe(t);
    expect(run([], { BROKER_JOIN_TOKEN: t }).joinToken).toBe(t);
    const dir = tempDir();
    const file = join(dir, "b.json");
    writeFileSync(file, JSON.stringify({ "join-token": t }));
    expect(run(["--config", file]).joinToken).toBe(t);
    expect(() => run(["--join-token", "short"])).toThrow(/at least 32 characters/);
    expect(() => run([], { BROKER_JOIN_TOKEN: "bad token with spaces but long enough!!" }))
      .toThrow(ConfigError);
  });

  test("help lists every flag with its default and env name", () => {
    const h = usage("1.2.3");
    for (const o of OPTIONS) {
      expect(h).toContain(`--${o.flag}`);
      expect(h).toContain(`BROKER_${o.flag.toUpperCase().replaceAll("-", "_")}`);
      if (o.default !== undefined) expect(h).toContain(`(default: ${o.default})`);
    }
  });

  test("limits: byte counts with units, connection limits, idle timeout", () => {
    const d = run([]);
    expect(d.queuedMaxRequestBytes).toBe(256 * 1024 * 1024);
    expect(d.maxConnections).toBe(10_000);
    expect(d.maxConnectionsPerIp).toBe(1000);
    expect(d.connectionsMaxIdleMs).toBe(600_000);
    expect(d.httpMaxBodyBytes).toBe(64 * 1024 * 1024);
    expect(d.httpQueuedMaxBodyBytes).toBeUndefined(); // 64 MiB, or the body limit if larger
    const c = run([
      "--queued-max-request-bytes",
      "64MiB",
      "--max-connections",
      "50",
      "--max-connections-per-ip",
      "5",
      "--connections-max-idle-ms",
      "1000",
      "--http-max-body-bytes",
      "512k",
      "--http-queued-max-body-bytes",
      "1073741824",
    ]);
    expect(c.queuedMaxRequestBytes).toBe(64 * 1024 * 1024);
    expect([c.maxConnections, c.maxConnectionsPerIp, c.connectionsMaxIdleMs]).toEqual([
      50,
      5,
      1000,
    ]);
    expect(c.httpMaxBodyBytes).toBe(512 * 1024);
    expect(c.httpQueuedMaxBodyBytes).toBe(1 << 30);
    expect(run([], { BROKER_QUEUED_MAX_REQUEST_BYTES: "2GiB" }).queuedMaxRequestBytes).toBe(
      2 ** 31,
    );
    expect(() => run(["--queued-max-request-bytes", "12 parsecs"])).toThrow(/byte count/);
    expect(() => run(["--queued-max-request-bytes", "1k"])).toThrow(/byte count/);
    expect(() => run(["--max-connections", "0"])).toThrow(ConfigError);
    expect(run(["--http-max-body-bytes", "128MiB"]).httpMaxBodyBytes).toBe(128 * 1024 * 1024);
    expect(() => run(["--http-max-body-bytes", "128MiB", "--http-queued-max-body-bytes", "64MiB"]))
      .toThrow(
        /--http-queued-max-body-bytes .* must be at least --http-max-body-bytes/,
      );
  });

  test("advertised address never is the wildcard", () => {
    const c = run([]);
    expect(advertisedKafka(c, 9092, "myhost")).toEqual({ host: "myhost", port: 9092 });
    const c2 = run(["--advertise-host", "broker.example"]);
    expect(advertisedKafka(c2, 9092, "myhost").host).toBe("broker.example");
    const c3 = run(["--advertise-kafka-addr", "public.example:29092"]);
    expect(advertisedKafka(c3, 9092, "myhost")).toEqual({ host: "public.example", port: 29092 });
  });

  test("Kafka listener flags: auto-create, default partitions and RF, initial rebalance delay", () => {
    const d = run([]);
    expect(d.autoCreateTopics).toBe(true);
    expect(d.numPartitions).toBe(1);
    expect(d.defaultReplicationFactor).toBeUndefined(); // automatic: min(3, live brokers)
    expect(d.groupInitialRebalanceDelayMs).toBe(3000);
    const c = run(
      [
        "--auto-create-topics",
        "false",
        "--num-partitions",
        "6",
        "--group-initial-rebalance-delay-ms",
        "0",
      ],
      { BROKER_DEFAULT_REPLICATION_FACTOR: "1" },
    );
    expect(c.autoCreateTopics).toBe(false);
    expect(c.numPartitions).toBe(6);
    expect(c.defaultReplicationFactor).toBe(1);
    // Any factor is accepted here; a topic is refused when fewer brokers are live.
    expect(run(["--default-replication-factor", "3"]).defaultReplicationFactor).toBe(3);
    expect(c.groupInitialRebalanceDelayMs).toBe(0);
    for (
      const bad of [
        ["--auto-create-topics", "maybe"],
        ["--num-partitions", "0"],
        ["--num-partitions", "1.5"],
        ["--default-replication-factor", "-1"],
        ["--default-replication-factor", "0"],
        ["--default-replication-factor", "32768"],
        ["--group-initial-rebalance-delay-ms", "-5"],
      ]
    ) {
      expect(() => run(bad)).toThrow(ConfigError);
    }
  });

  test("--voters: 1, 3 or 5, default 3, from flag or env, listed in --help", () => {
    expect(run([]).voters).toBe(3);
    expect(run(["--voters", "5"]).voters).toBe(5);
    expect(run([], { BROKER_VOTERS: "1" }).voters).toBe(1);
    for (const bad of ["0", "2", "4", "7", "three", ""]) {
      expect(() => run(["--voters", bad])).toThrow(ConfigError);
    }
    expect(usage("x")).toContain("--voters 1|3|5");
    expect(usage("x")).toContain("BROKER_VOTERS");
  });
});
