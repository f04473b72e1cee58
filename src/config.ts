// One typed configuration: defaults ← file ← env (BROKER_*) ← flags.
// Every option is declared once here; --help, env names and file keys derive from the table.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { explainParseError } from "./cli/parse-error.ts";
import { didYouMean } from "./cli/suggest.ts";
import { tokenProblem } from "./cluster/auth.ts";
import { isSaslMechanism, SASL_MECHANISMS, type SaslMechanism } from "./kafka/sasl/exchange.ts";

export class ConfigError extends Error {}

export interface HostPort {
  host: string;
  port: number;
}

export type FlushPolicy = { kind: "always" } | { kind: "interval"; ms: number };

export interface BrokerConfig {
  dataDir: string;
  kafkaAddr: HostPort;
  httpAddr: HostPort;
  clusterAddr: HostPort;
  advertiseHost: string | undefined;
  advertiseKafkaAddr: HostPort | undefined;
  nodeId: number | undefined;
  join: HostPort | undefined;
  /** The cluster's join token (a joiner needs it; see docs/security.md). */
  joinToken: string | undefined;
  /** Voters the metadata quorum grows to (1, 3 or 5); further brokers stay learners. */
  voters: 1 | 3 | 5;
  flush: FlushPolicy;
  /** Zeros written ahead of a partition's end while acks=all syncs are small (zero-ahead.ts). */
  zeroAhead: boolean;
  logLevel: LogLevelName;
  /** undefined: text when stderr is a terminal, else JSON (main.ts decides). */
  logFormat: "json" | "text" | undefined;
  /** A second listener serving only /metrics, /healthz and /readyz, without the token. */
  metricsAddr: HostPort | undefined;
  groupInitialRebalanceDelayMs: number;
  /** replica.lag.time.max.ms: a follower not caught up this long leaves the ISR. */
  replicaLagTimeMaxMs: number;
  /** broker.session.timeout.ms: a broker silent this long to the controller is fenced. */
  brokerSessionTimeoutMs: number;
  /** auto.leader.rebalance.enable: leadership returns to preferred replicas. */
  autoLeaderRebalance: boolean;
  /** How long SIGTERM waits for leadership to move away (controlled shutdown). */
  controlledShutdownMs: number;
  /** Bytes/s for a reassignment's copy when it sets none (leader and follower side); 0: none. */
  reassignmentThrottle: number;
  /** Partitions a reassignment copies at once (the controller starts more as these finish). */
  reassignmentMaxConcurrent: number;
  /** Bearer token the HTTP API requires (all routes but /healthz); undefined: open. */
  httpToken: string | undefined;
  /** A file holding the HTTP token (read into httpToken at parse time). */
  httpTokenFile: string | undefined;
  /** PEM files of the Kafka listener's TLS certificate chain and key (both or neither). */
  kafkaTlsCert: string | undefined;
  kafkaTlsKey: string | undefined;
  /** PEM file of the CA whose client certificates the Kafka listener requires. */
  kafkaTlsCa: string | undefined;
  /** PEM files of the cluster port's TLS certificate chain and key (both or neither). */
  clusterTlsCert: string | undefined;
  clusterTlsKey: string | undefined;
  /** PEM file of the CA peers' certificates must be signed by (mutual TLS). */
  clusterTlsCa: string | undefined;
  /**
   * auto: the cluster port speaks TLS with --cluster-tls-cert, else with the Kafka listener's
   * certificate when it has one; on: the same, a start without a certificate is an error;
   * off: plain text whatever the listeners do.
   */
  clusterTls: "auto" | "on" | "off";
  /** Whether Kafka clients must authenticate with SASL (Kafka's SASL_PLAINTEXT/SASL_SSL). */
  kafkaSasl: "none" | "required";
  /** sasl.enabled.mechanisms */
  kafkaSaslMechanisms: SaslMechanism[];
  /** connections.max.reauth.ms: SASL sessions last this long (KIP-368); 0: for ever. */
  connectionsMaxReauthMs: number;
  /** acl: Kafka requests are checked against the ACLs (authorizer.class.name); none: not. */
  authorizer: "none" | "acl";
  /** Principals that bypass ACLs (super.users), e.g. "User:admin". */
  superUsers: string[];
  /** Metadata requests may create unknown topics when the client allows it (auto.create.topics.enable). */
  autoCreateTopics: boolean;
  /** Partitions of a topic created without a count (num.partitions). */
  numPartitions: number;
  /**
   * Replication factor of a topic created without one (default.replication.factor);
   * undefined: automatic, min(3, live brokers).
   */
  defaultReplicationFactor: number | undefined;
  /** Broker-wide defaults for topic configs (`log.retention.ms` style keys map to topic keys). */
  topicDefaults: Record<string, string>;
  /** queued.max.request.bytes: Kafka request bytes held in memory across all connections. */
  queuedMaxRequestBytes: number;
  /** max.connections of the Kafka listener (lowered at start to leave descriptors free). */
  maxConnections: number;
  /** max.connections.per.ip of the Kafka listener. */
  maxConnectionsPerIp: number;
  /** connections.max.idle.ms: a Kafka connection without a request this long is closed. */
  connectionsMaxIdleMs: number;
  /** The largest HTTP request body read (413 above it). */
  httpMaxBodyBytes: number;
  /** HTTP request body bytes held in memory across all requests; undefined: see broker.ts. */
  httpQueuedMaxBodyBytes: number | undefined;
}

export type LogLevelName = "debug" | "info" | "warn" | "error";

interface OptionSpec {
  flag: string;
  key: keyof BrokerConfig;
  arg: string;
  default: string | undefined;
  help: string;
  parse: (v: string, name: string) => unknown;
}

export function parseHostPort(v: string, name: string): HostPort {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(v.trim());
  if (!m) throw new ConfigError(`${name}: expected HOST:PORT, got ${JSON.stringify(v)}`);
  const host = m[1] ?? m[2] ?? "";
  const port = Number(m[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${name}: port must be 0-65535, got ${m[3]}`);
  }
  if (host.length === 0) throw new ConfigError(`${name}: host is empty in ${JSON.stringify(v)}`);
  return { host, port };
}

function parseNodeId(v: string, name: string): number {
  if (!/^\d+$/.test(v.trim())) {
    throw new ConfigError(`${name}: expected an integer ≥ 0, got ${JSON.stringify(v)}`);
  }
  const n = Number(v);
  if (n > 2147483647) throw new ConfigError(`${name}: must be at most 2147483647`);
  return n;
}

export function parseFlush(v: string, name: string): FlushPolicy {
  if (v === "always") return { kind: "always" };
  const m = /^interval:(\d+)$/.exec(v);
  if (m) {
    const ms = Number(m[1]);
    if (ms < 1 || ms > 3_600_000) throw new ConfigError(`${name}: interval must be 1..3600000 ms`);
    return { kind: "interval", ms };
  }
  throw new ConfigError(`${name}: expected "always" or "interval:<ms>", got ${JSON.stringify(v)}`);
}

function parseHost(v: string, name: string): string {
  const h = v.trim();
  if (h === "" || h === "0.0.0.0" || h === "::" || h === "[::]") {
    throw new ConfigError(`${name}: must be a host clients can reach, not ${JSON.stringify(v)}`);
  }
  return h;
}

function parseLogLevel(v: string, name: string): LogLevelName {
  if (v === "debug" || v === "info" || v === "warn" || v === "error") return v;
  throw new ConfigError(`${name}: expected debug|info|warn|error, got ${JSON.stringify(v)}`);
}

function parseLogFormat(v: string, name: string): "json" | "text" {
  if (v === "json" || v === "text") return v;
  throw new ConfigError(`${name}: expected text or json, got ${JSON.stringify(v)}`);
}

function intIn(min: number, max: number) {
  return (v: string, name: string): number => {
    const t = v.trim();
    if (!/^-?\d+$/.test(t) || Number(t) < min || Number(t) > max) {
      throw new ConfigError(
        `${name}: expected an integer ${min}..${max}, got ${JSON.stringify(v)}`,
      );
    }
    return Number(t);
  };
}

const UNITS = new Map<string, number>([
  ["", 1],
  ["k", 1024],
  ["kib", 1024],
  ["m", 1 << 20],
  ["mib", 1 << 20],
  ["g", 1 << 30],
  ["gib", 1 << 30],
]);

/** A byte count: an integer, optionally with a binary unit (64KiB, 256MiB, 1GiB; K, M, G too). */
function bytesIn(min: number, max: number) {
  return (v: string, name: string): number => {
    const m = /^(\d+)\s*([a-z]*)$/i.exec(v.trim());
    const unit = m ? UNITS.get(m[2].toLowerCase()) : undefined;
    const n = m && unit !== undefined ? Number(m[1]) * unit : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(
        `${name}: expected a byte count ${min}..${max} (e.g. 256MiB), got ${JSON.stringify(v)}`,
      );
    }
    return n;
  };
}

function parseBool(v: string, name: string): boolean {
  const t = v.trim().toLowerCase();
  if (t === "true" || t === "1" || t === "yes") return true;
  if (t === "false" || t === "0" || t === "no") return false;
  throw new ConfigError(`${name}: expected true or false, got ${JSON.stringify(v)}`);
}

const str = (v: string, name: string) => {
  if (v.trim() === "") throw new ConfigError(`${name}: must not be empty`);
  return v;
};

/** A file that must exist and be readable now (its contents are read at start). */
function readableFile(v: string, name: string): string {
  const path = str(v, name).trim();
  try {
    readFileSync(path);
  } catch (e) {
    throw new ConfigError(`${name}: cannot read ${path}: ${(e as Error).message}`);
  }
  return path;
}

function parseSaslMechanisms(v: string, name: string): SaslMechanism[] {
  const out: SaslMechanism[] = [];
  for (const m of v.split(",").map((x) => x.trim().toUpperCase()).filter((x) => x !== "")) {
    if (!isSaslMechanism(m)) {
      throw new ConfigError(
        `${name}: unknown SASL mechanism ${JSON.stringify(m)}; expected some of ${
          SASL_MECHANISMS.join(",")
        }`,
      );
    }
    if (!out.includes(m)) out.push(m);
  }
  if (out.length === 0) throw new ConfigError(`${name}: name at least one mechanism`);
  return out;
}

export const OPTIONS: OptionSpec[] = [
  {
    flag: "data-dir",
    key: "dataDir",
    arg: "DIR",
    default: "./data",
    help: "where partition logs and metadata live",
    parse: str,
  },
  {
    flag: "kafka-addr",
    key: "kafkaAddr",
    arg: "HOST:PORT",
    default: "0.0.0.0:9092",
    help: "Kafka protocol listener",
    parse: parseHostPort,
  },
  {
    flag: "http-addr",
    key: "httpAddr",
    arg: "HOST:PORT",
    default: "0.0.0.0:8080",
    help: "HTTP API listener",
    parse: parseHostPort,
  },
  {
    flag: "cluster-addr",
    key: "clusterAddr",
    arg: "HOST:PORT",
    default: "0.0.0.0:9093",
    help: "broker-to-broker traffic",
    parse: parseHostPort,
  },
  {
    flag: "advertise-host",
    key: "advertiseHost",
    arg: "HOST",
    default: undefined,
    help: "host clients are told to connect to (default: the listener host, or this machine's " +
      "first non-loopback address when that is 0.0.0.0; logged at start)",
    parse: parseHost,
  },
  {
    flag: "advertise-kafka-addr",
    key: "advertiseKafkaAddr",
    arg: "HOST:PORT",
    default: undefined,
    help: "Kafka address clients are told, when the outside port differs (NAT, containers)",
    parse: (v, n) => {
      const hp = parseHostPort(v, n);
      parseHost(hp.host, n);
      return hp;
    },
  },
  {
    flag: "node-id",
    key: "nodeId",
    arg: "N",
    default: undefined,
    help: "this broker's id (default: recorded in the data dir, else 0)",
    parse: parseNodeId,
  },
  {
    flag: "join",
    key: "join",
    arg: "HOST:PORT",
    default: undefined,
    help: "join the cluster through this member's cluster address",
    parse: parseHostPort,
  },
  {
    flag: "join-token",
    key: "joinToken",
    arg: "TOKEN",
    default: undefined,
    help: "the cluster's join token, needed with --join (print it on a member: broker cluster " +
      "join-token); prefer the env var or the config file to a flag others can see in ps",
    parse: (v, name) => {
      const t = v.trim();
      const why = tokenProblem(t);
      if (why !== undefined) throw new ConfigError(`${name}: ${why}`);
      return t;
    },
  },
  {
    flag: "voters",
    key: "voters",
    arg: "1|3|5",
    default: "3",
    help: "voters of the Raft metadata quorum; joiners are promoted until it has this many",
    parse: (v, name) => {
      const t = v.trim();
      if (t === "1" || t === "3" || t === "5") return Number(t);
      throw new ConfigError(`${name}: expected 1, 3 or 5, got ${JSON.stringify(v)}`);
    },
  },
  {
    flag: "flush",
    key: "flush",
    arg: "always|interval:MS",
    default: "interval:1000",
    help: "background fdatasync policy; acks=all always waits for the sync covering its bytes",
    parse: parseFlush,
  },
  {
    flag: "zero-ahead",
    key: "zeroAhead",
    arg: "true|false",
    default: "true",
    help: "while acks=all producers wait on small, frequent syncs, keep up to 32 MiB of zeros " +
      "written ahead of each such partition's end (written while idle): faster syncs, every " +
      "byte written twice",
    parse: parseBool,
  },
  {
    flag: "group-initial-rebalance-delay-ms",
    key: "groupInitialRebalanceDelayMs",
    arg: "MS",
    default: "3000",
    help: "how long a new group waits for more members before its first rebalance",
    parse: intIn(0, 300_000),
  },
  {
    flag: "replica-lag-time-max-ms",
    key: "replicaLagTimeMaxMs",
    arg: "MS",
    default: "10000",
    help: "a follower that has not caught up with its leader for this long leaves the ISR",
    parse: intIn(100, 3_600_000),
  },
  {
    flag: "broker-session-timeout-ms",
    key: "brokerSessionTimeoutMs",
    arg: "MS",
    default: "3000",
    help: "a broker silent this long to the controller is fenced and its partitions fail over",
    parse: intIn(500, 600_000),
  },
  {
    flag: "auto-leader-rebalance",
    key: "autoLeaderRebalance",
    arg: "true|false",
    default: "true",
    help: "move partition leadership back to preferred replicas when they return",
    parse: parseBool,
  },
  {
    flag: "controlled-shutdown-ms",
    key: "controlledShutdownMs",
    arg: "MS",
    default: "5000",
    help: "on SIGTERM, how long to wait for partition leadership to move to in-sync replicas",
    parse: intIn(0, 600_000),
  },
  {
    flag: "reassignment-throttle",
    key: "reassignmentThrottle",
    arg: "BYTES_PER_S",
    default: "0",
    help:
      "default rate of a reassignment's copy, on this broker as leader and as follower (0: none)",
    parse: intIn(0, 1e12),
  },
  {
    flag: "reassignment-max-concurrent",
    key: "reassignmentMaxConcurrent",
    arg: "N",
    default: "10",
    help:
      "partitions a reassignment moves at once (the controller's setting); more wait their turn",
    parse: intIn(1, 100_000),
  },
  {
    flag: "auto-create-topics",
    key: "autoCreateTopics",
    arg: "true|false",
    default: "true",
    help: "create unknown topics named in Kafka Metadata requests that allow it",
    parse: parseBool,
  },
  {
    flag: "num-partitions",
    key: "numPartitions",
    arg: "N",
    default: "1",
    help: "partitions of a topic created without a count (auto-created or -1)",
    parse: intIn(1, 10_000),
  },
  {
    flag: "default-replication-factor",
    key: "defaultReplicationFactor",
    arg: "N",
    default: undefined,
    help: "replication factor of a topic created without one (auto-created or -1); a topic " +
      "is refused when fewer brokers are live (default: 3, or every live broker when fewer)",
    parse: intIn(1, 32767),
  },
  {
    flag: "queued-max-request-bytes",
    key: "queuedMaxRequestBytes",
    arg: "BYTES",
    default: "256MiB",
    help: "Kafka request bytes held in memory across all connections (queued.max.request.bytes); " +
      "a connection whose next frame does not fit is not read until bytes are released, a frame " +
      "larger than this is refused",
    parse: bytesIn(1 << 20, 2 ** 40),
  },
  {
    flag: "max-connections",
    key: "maxConnections",
    arg: "N",
    default: "10000",
    help: "Kafka connections at once (max.connections), lowered at start so 10% of the open-file " +
      "limit (at least 1024) stays free; connections over it are closed at once",
    parse: intIn(1, 10_000_000),
  },
  {
    flag: "max-connections-per-ip",
    key: "maxConnectionsPerIp",
    arg: "N",
    default: "1000",
    help: "Kafka connections at once from one address (max.connections.per.ip)",
    parse: intIn(1, 10_000_000),
  },
  {
    flag: "connections-max-idle-ms",
    key: "connectionsMaxIdleMs",
    arg: "MS",
    default: "600000",
    help: "close a Kafka connection that has had no request for this long " +
      "(connections.max.idle.ms)",
    parse: intIn(100, 2_147_483_647),
  },
  {
    flag: "kafka-tls-cert",
    key: "kafkaTlsCert",
    arg: "FILE",
    default: undefined,
    help: "PEM certificate chain: the Kafka listener speaks TLS only (with --kafka-tls-key); the " +
      "cluster port then speaks TLS too, with it, unless --cluster-tls-cert or --cluster-tls off",
    parse: readableFile,
  },
  {
    flag: "kafka-tls-key",
    key: "kafkaTlsKey",
    arg: "FILE",
    default: undefined,
    help: "PEM private key of --kafka-tls-cert",
    parse: readableFile,
  },
  {
    flag: "kafka-tls-ca",
    key: "kafkaTlsCa",
    arg: "FILE",
    default: undefined,
    help: "PEM CA certificate(s): Kafka clients must present a certificate signed by one " +
      "(ssl.client.auth=required; without SASL its subject is the client's principal)",
    parse: readableFile,
  },
  {
    flag: "cluster-tls-cert",
    key: "clusterTlsCert",
    arg: "FILE",
    default: undefined,
    help: "PEM certificate chain: the cluster port speaks TLS only, in and out, gossip " +
      "included (with --cluster-tls-key; every broker of the cluster alike)",
    parse: readableFile,
  },
  {
    flag: "cluster-tls-key",
    key: "clusterTlsKey",
    arg: "FILE",
    default: undefined,
    help: "PEM private key of --cluster-tls-cert",
    parse: readableFile,
  },
  {
    flag: "cluster-tls-ca",
    key: "clusterTlsCa",
    arg: "FILE",
    default: undefined,
    help: "PEM CA certificate(s): mutual TLS, peers' certificates (both ways) must be signed by " +
      "one; without it a peer's certificate is checked against the system's roots",
    parse: readableFile,
  },
  {
    flag: "cluster-tls",
    key: "clusterTls",
    arg: "auto|on|off",
    default: "auto",
    help: "auto: the cluster port speaks TLS with --cluster-tls-cert, else when the Kafka " +
      "listener does (its certificate and key reused, no CA needed: peers prove the join token, " +
      "bound to the TLS session); on: the same, and a start without any certificate is an " +
      "error; off: plain text even when the Kafka listener uses TLS (every broker of a cluster " +
      "alike: TLS and plain brokers cannot talk)",
    parse: (v, name) => {
      const t = v.trim();
      if (t === "auto" || t === "on" || t === "off") return t;
      throw new ConfigError(`${name}: expected auto, on or off, got ${JSON.stringify(v)}`);
    },
  },
  {
    flag: "kafka-sasl",
    key: "kafkaSasl",
    arg: "none|required",
    default: "none",
    help: "required: Kafka clients authenticate with SASL (users: broker user add) before " +
      "any other request",
    parse: (v, name) => {
      const t = v.trim();
      if (t === "none" || t === "required") return t;
      throw new ConfigError(`${name}: expected none or required, got ${JSON.stringify(v)}`);
    },
  },
  {
    flag: "kafka-sasl-mechanisms",
    key: "kafkaSaslMechanisms",
    arg: "LIST",
    default: SASL_MECHANISMS.join(","),
    help: "SASL mechanisms offered (sasl.enabled.mechanisms), comma-separated",
    parse: parseSaslMechanisms,
  },
  {
    flag: "connections-max-reauth-ms",
    key: "connectionsMaxReauthMs",
    arg: "MS",
    default: "0",
    help: "SASL sessions last this long: clients re-authenticate on the connection before it " +
      "ends or are disconnected (connections.max.reauth.ms, KIP-368; 0: sessions never end)",
    parse: intIn(0, 2_147_483_647),
  },
  {
    flag: "authorizer",
    key: "authorizer",
    arg: "none|acl",
    default: "none",
    help: "acl: every Kafka request is checked against the ACLs (broker acl, CreateAcls); " +
      "nothing matching refuses",
    parse: (v, name) => {
      const t = v.trim();
      if (t === "none" || t === "acl") return t;
      throw new ConfigError(`${name}: expected none or acl, got ${JSON.stringify(v)}`);
    },
  },
  {
    flag: "super-users",
    key: "superUsers",
    arg: "LIST",
    default: "",
    help: "principals that bypass ACLs (super.users), comma-separated, e.g. User:admin",
    parse: (v, name) => {
      const list = v.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
      for (const p of list) {
        const colon = p.indexOf(":");
        if (colon <= 0 || colon === p.length - 1) {
          throw new ConfigError(`${name}: ${JSON.stringify(p)} is not "Type:name" (User:alice)`);
        }
      }
      return list;
    },
  },
  {
    flag: "http-max-body-bytes",
    key: "httpMaxBodyBytes",
    arg: "BYTES",
    default: "64MiB",
    help: "largest HTTP request body; a larger one gets 413 without being read",
    parse: bytesIn(1024, 1 << 30),
  },
  {
    flag: "http-queued-max-body-bytes",
    key: "httpQueuedMaxBodyBytes",
    arg: "BYTES",
    default: undefined,
    help: "HTTP request body bytes held in memory across all requests (at least " +
      "--http-max-body-bytes); a request waits up to 5 s for room, then gets 503 with " +
      "Retry-After (default: 64MiB, or --http-max-body-bytes when that is larger)",
    parse: bytesIn(1024, 2 ** 40),
  },
  {
    flag: "http-token",
    key: "httpToken",
    arg: "TOKEN",
    default: undefined,
    help: "require Authorization: Bearer TOKEN on every HTTP route but /healthz and /readyz",
    parse: str,
  },
  {
    flag: "http-token-file",
    key: "httpTokenFile",
    arg: "FILE",
    default: undefined,
    help: "read the HTTP token from this file (trailing newline ignored), so it is not on the " +
      "command line",
    parse: readableFile,
  },
  {
    flag: "metrics-addr",
    key: "metricsAddr",
    arg: "HOST:PORT",
    default: undefined,
    help: "also serve /metrics (and /healthz, /readyz) on this listener, without the HTTP " +
      "token: for Prometheus on an internal interface",
    parse: parseHostPort,
  },
  {
    flag: "log-level",
    key: "logLevel",
    arg: "LEVEL",
    default: "info",
    help: "debug, info, warn or error",
    parse: parseLogLevel,
  },
  {
    flag: "log-format",
    key: "logFormat",
    arg: "text|json",
    default: undefined,
    help: "log lines on stderr: text (one readable line each) or json (one object each) " +
      "(default: text on a terminal, else json)",
    parse: parseLogFormat,
  },
];

export const envName = (flag: string) => "BROKER_" + flag.toUpperCase().replaceAll("-", "_");

export const HELP_FLAGS = ["config", "help", "version"];

export function usage(version: string): string {
  const lines = [
    `broker ${version}: a Kafka-compatible message broker in one binary`,
    "",
    "Usage: broker [flags]              start a broker",
    "       broker --join HOST:PORT      start a broker that joins a cluster (with its join token:",
    "                                    BROKER_JOIN_TOKEN, or --join-token)",
    "",
    "Flags (each also as an env var, e.g. BROKER_DATA_DIR; flags override env, env overrides --config):",
  ];
  const rows: [string, string][] = OPTIONS.map((o) => [
    `--${o.flag} ${o.arg}`,
    `${o.help}${o.default !== undefined ? ` (default: ${o.default})` : ""}  [${envName(o.flag)}]`,
  ]);
  rows.push([
    "--config FILE",
    "read settings from a YAML, TOML or JSON file (keys are flag names)  [BROKER_CONFIG]",
  ]);
  rows.push([
    "--topic-default KEY=VALUE",
    "broker-wide default for a topic config, repeatable (e.g. retention.ms=3600000)",
  ]);
  rows.push(["--version", "print the version and exit"]);
  rows.push(["-h, --help", "print this help and exit"]);
  const w = Math.max(...rows.map((r) => r[0].length)) + 2;
  for (const [a, b] of rows) lines.push(`  ${a.padEnd(w)}${b}`);
  return lines.join("\n") + "\n";
}

export type ParsedCommand =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "run"; config: BrokerConfig };

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`--config: cannot read ${path}: ${(e as Error).message}`);
  }
  // By extension: .toml, .yaml/.yml, else JSON.
  const kind = /\.toml$/i.test(path) ? "TOML" : /\.ya?ml$/i.test(path) ? "YAML" : "JSON";
  try {
    const obj = kind === "TOML"
      ? Bun.TOML.parse(text)
      : kind === "YAML"
      ? Bun.YAML.parse(text)
      : JSON.parse(text);
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
      throw new Error("not a mapping of settings");
    }
    return obj as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError(`--config: ${path} is not valid ${kind}: ${(e as Error).message}`);
  }
}

function parseTopicDefault(s: string, name: string): [string, string] {
  const i = s.indexOf("=");
  if (i <= 0) throw new ConfigError(`${name}: expected KEY=VALUE, got ${JSON.stringify(s)}`);
  return [s.slice(0, i), s.slice(i + 1)];
}

/** Parse argv (without the executable and script) and env into a config. Throws ConfigError. */
export function parseCommandLine(
  argv: string[],
  env: Record<string, string | undefined>,
): ParsedCommand {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean }
  > = {
    config: { type: "string" },
    help: { type: "boolean", short: "h" },
    version: { type: "boolean" },
    "topic-default": { type: "string", multiple: true },
  };
  for (const o of OPTIONS) options[o.flag] = { type: "string" };
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: argv, options, allowPositionals: false, strict: true }));
  } catch (e) {
    throw new ConfigError(explainParseError(e, Object.keys(options)));
  }
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };

  const configPath = (values.config as string | undefined) ?? env.BROKER_CONFIG;
  const file = configPath ? readConfigFile(configPath) : {};
  const known = new Set([...OPTIONS.map((o) => o.flag), "topic-defaults"]);
  for (const k of Object.keys(file)) {
    if (!known.has(k)) {
      throw new ConfigError(
        `--config: unknown key ${JSON.stringify(k)} in ${configPath}${didYouMean(k, known)}`,
      );
    }
  }

  const out: Record<string, unknown> = {};
  for (const o of OPTIONS) {
    // Every source given is checked, not only the one that wins: a bad value in the config file
    // or the environment is an error even while a flag overrides it this time.
    let value: unknown = o.default === undefined
      ? undefined
      : o.parse(o.default, `default for --${o.flag}`);
    const fv = file[o.flag];
    if (fv !== undefined) value = o.parse(String(fv), `${configPath}: ${o.flag}`);
    const ev = env[envName(o.flag)];
    if (ev !== undefined && ev !== "") value = o.parse(ev, envName(o.flag));
    const flagValue = values[o.flag] as string | undefined;
    if (flagValue !== undefined) value = o.parse(flagValue, `--${o.flag}`);
    out[o.key] = value;
  }

  const topicDefaults: Record<string, string> = {};
  const fileTd = file["topic-defaults"];
  if (fileTd !== undefined) {
    if (fileTd === null || typeof fileTd !== "object") {
      throw new ConfigError(`--config: topic-defaults must be a table`);
    }
    for (const [k, v] of Object.entries(fileTd)) topicDefaults[k] = String(v);
  }
  for (const s of (values["topic-default"] as string[] | undefined) ?? []) {
    const [k, v] = parseTopicDefault(s, "--topic-default");
    topicDefaults[k] = v;
  }
  out.topicDefaults = topicDefaults;
  checkListenerSecurity(out, env);
  if (
    out.httpQueuedMaxBodyBytes !== undefined &&
    (out.httpQueuedMaxBodyBytes as number) < (out.httpMaxBodyBytes as number)
  ) {
    throw new ConfigError(
      `--http-queued-max-body-bytes (${out.httpQueuedMaxBodyBytes}) must be at least ` +
        `--http-max-body-bytes (${out.httpMaxBodyBytes})`,
    );
  }
  return { kind: "run", config: out as unknown as BrokerConfig };
}

/** TLS files come in pairs; the token comes from one place; the token file is read here. */
function checkListenerSecurity(
  out: Record<string, unknown>,
  env: Record<string, string | undefined>,
): void {
  if ((out.kafkaTlsCert === undefined) !== (out.kafkaTlsKey === undefined)) {
    throw new ConfigError("--kafka-tls-cert and --kafka-tls-key go together: give both");
  }
  if (out.kafkaTlsCa !== undefined && out.kafkaTlsCert === undefined) {
    throw new ConfigError("--kafka-tls-ca needs --kafka-tls-cert and --kafka-tls-key");
  }
  if ((out.clusterTlsCert === undefined) !== (out.clusterTlsKey === undefined)) {
    throw new ConfigError("--cluster-tls-cert and --cluster-tls-key go together: give both");
  }
  if (out.clusterTlsCa !== undefined && out.clusterTlsCert === undefined) {
    throw new ConfigError("--cluster-tls-ca needs --cluster-tls-cert and --cluster-tls-key");
  }
  if (out.clusterTls === "off" && out.clusterTlsCert !== undefined) {
    throw new ConfigError(
      "--cluster-tls off and --cluster-tls-cert contradict each other: give one",
    );
  }
  if (
    out.clusterTls === "on" && out.clusterTlsCert === undefined && out.kafkaTlsCert === undefined
  ) {
    throw new ConfigError(
      "--cluster-tls on needs a certificate: --cluster-tls-cert/--cluster-tls-key, or TLS on the " +
        "Kafka listener (--kafka-tls-cert/--kafka-tls-key)",
    );
  }
  const file = out.httpTokenFile as string | undefined;
  if (file === undefined) return;
  if (out.httpToken !== undefined) {
    throw new ConfigError(
      `--http-token-file and --http-token${
        env.BROKER_HTTP_TOKEN ? " (BROKER_HTTP_TOKEN)" : ""
      } both give the HTTP token: give one`,
    );
  }
  const token = readFileSync(file, "utf8").replace(/\r?\n$/, "");
  if (token.trim() === "" || /[\r\n]/.test(token)) {
    throw new ConfigError(`--http-token-file: ${file} must hold the token on one line`);
  }
  out.httpToken = token;
}

/** The host:port clients are told for the Kafka listener. */
export function advertisedKafka(cfg: BrokerConfig, boundPort: number, hostname: string): HostPort {
  if (cfg.advertiseKafkaAddr) return cfg.advertiseKafkaAddr;
  const listen = cfg.kafkaAddr.host;
  const wildcard = listen === "0.0.0.0" || listen === "::";
  return { host: cfg.advertiseHost ?? (wildcard ? hostname : listen), port: boundPort };
}
