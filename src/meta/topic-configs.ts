// The one registry of topic configs this broker enforces: name, type, default, range, doc and
// the broker-level synonym (for --topic-default and DescribeConfigs synonyms). Anything not in
// the registry is refused with INVALID_CONFIG, so a client never believes a setting took effect
// when the broker ignores it.
import { MetaError } from "./errors.ts";

export type TopicConfigType = "int" | "long" | "string" | "list";

/** DescribeConfigs config_type codes (Kafka's ConfigType). */
export const CONFIG_TYPE_CODE: Record<TopicConfigType, number> = {
  string: 2,
  int: 3,
  long: 5,
  list: 7,
};

/** DescribeConfigs config_source codes (Kafka's ConfigSource) for the sources topics have. */
export const CONFIG_SOURCE_CODE = {
  TOPIC_CONFIG: 1,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
} as const;
export type ConfigSource = keyof typeof CONFIG_SOURCE_CODE;

export interface ResolvedTopicConfig {
  segmentBytes: number;
  segmentMs: number;
  /** -1 = no time limit. Values beyond 2^53 become Infinity. */
  retentionMs: number;
  /** -1 = no size limit. */
  retentionBytes: number;
  maxMessageBytes: number;
  minInsyncReplicas: number;
  messageTimestampType: "CreateTime" | "LogAppendTime";
  /** Infinity when unbounded (Kafka's default Long.MAX_VALUE). */
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  cleanupPolicy: "delete";
}

export interface TopicConfigDef {
  name: string;
  type: TopicConfigType;
  /** Default as Kafka's wire string. */
  default: string;
  doc: string;
  /** Broker-level name of the same setting (Kafka's synonym), e.g. log.retention.ms. */
  brokerSynonym: string;
  key: keyof ResolvedTopicConfig;
  /**
   * Built-in default for a topic of `replicationFactor` replicas, when it depends on it
   * (min.insync.replicas); `default` otherwise and when the factor is not known.
   */
  defaultFor?: (replicationFactor: number) => string;
  /** Validates a raw value; returns its canonical string and typed value, or throws. */
  parse(raw: string): { canonical: string; value: ResolvedTopicConfig[keyof ResolvedTopicConfig] };
}

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const LONG_MAX_STR = LONG_MAX.toString();

function invalid(name: string, raw: string, why: string): MetaError {
  const shown = raw.length > 64 ? raw.slice(0, 64) + "..." : raw;
  return new MetaError(
    "INVALID_CONFIG",
    `Invalid value ${JSON.stringify(shown)} for configuration ${name}: ${why}`,
  );
}

function integerParser(name: string, type: "int" | "long", min: bigint) {
  const [lo, hi] = type === "int" ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
  return (raw: string) => {
    const t = raw.trim();
    if (!/^[+-]?\d{1,25}$/.test(t)) {
      throw invalid(name, raw, `Not a number of type ${type.toUpperCase()}`);
    }
    const v = BigInt(t);
    if (v < lo || v > hi) throw invalid(name, raw, `Not a number of type ${type.toUpperCase()}`);
    if (v < min) throw invalid(name, raw, `Value must be at least ${min}`);
    const n = Number(v);
    return {
      canonical: v.toString(),
      value: Number.isSafeInteger(n) ? n : n > 0 ? Infinity : -Infinity,
    };
  };
}

function intDef(
  name: string,
  key: keyof ResolvedTopicConfig,
  type: "int" | "long",
  min: bigint,
  dflt: string,
  brokerSynonym: string,
  doc: string,
): TopicConfigDef {
  return {
    name,
    type,
    default: dflt,
    doc,
    brokerSynonym,
    key,
    parse: integerParser(name, type, min),
  };
}

export const TOPIC_CONFIGS: readonly TopicConfigDef[] = [
  {
    name: "cleanup.policy",
    type: "list",
    default: "delete",
    doc: 'How old segments are discarded. Only "delete" (by retention time/size) is supported; ' +
      "log compaction is not implemented yet.",
    brokerSynonym: "log.cleanup.policy",
    key: "cleanupPolicy",
    parse(raw) {
      const items = raw.split(",").map((s) => s.trim());
      for (const it of items) {
        if (it === "compact") {
          throw invalid(
            "cleanup.policy",
            raw,
            "compaction is not supported yet by this broker; use cleanup.policy=delete",
          );
        }
        if (it !== "delete") throw invalid("cleanup.policy", raw, "String must be one of: delete");
      }
      return { canonical: "delete", value: "delete" };
    },
  },
  intDef(
    "retention.ms",
    "retentionMs",
    "long",
    -1n,
    "604800000",
    "log.retention.ms",
    "How long a record is kept before its segment may be deleted; -1 keeps records forever.",
  ),
  intDef(
    "retention.bytes",
    "retentionBytes",
    "long",
    -1n,
    "-1",
    "log.retention.bytes",
    "Largest size a partition may grow to before old segments are deleted; -1 = no limit.",
  ),
  intDef(
    "segment.bytes",
    "segmentBytes",
    "int",
    14n,
    "1073741824",
    "log.segment.bytes",
    "Size of one segment file; retention deletes whole segments.",
  ),
  intDef(
    "segment.ms",
    "segmentMs",
    "long",
    1n,
    "604800000",
    "log.roll.ms",
    "Time after which the active segment is rolled even if not full.",
  ),
  intDef(
    "max.message.bytes",
    "maxMessageBytes",
    "int",
    0n,
    "1048588",
    "message.max.bytes",
    "Largest record batch size accepted (after compression).",
  ),
  {
    ...intDef(
      "min.insync.replicas",
      "minInsyncReplicas",
      "int",
      1n,
      "1",
      "min.insync.replicas",
      "Minimum number of in-sync replicas for an acks=all produce to succeed. Unless set for " +
        "the topic or the broker: 2 for a topic of 3 or more replicas, else 1.",
    ),
    defaultFor: (rf) => rf >= 3 ? "2" : "1",
  },
  {
    name: "message.timestamp.type",
    type: "string",
    default: "CreateTime",
    doc: "CreateTime keeps the producer's timestamps; LogAppendTime stamps the broker's clock.",
    brokerSynonym: "log.message.timestamp.type",
    key: "messageTimestampType",
    parse(raw) {
      const t = raw.trim();
      if (t !== "CreateTime" && t !== "LogAppendTime") {
        throw invalid(
          "message.timestamp.type",
          raw,
          "String must be one of: CreateTime, LogAppendTime",
        );
      }
      return { canonical: t, value: t };
    },
  },
  intDef(
    "message.timestamp.before.max.ms",
    "messageTimestampBeforeMaxMs",
    "long",
    0n,
    LONG_MAX_STR,
    "log.message.timestamp.before.max.ms",
    "How far in the past a record's timestamp may be relative to the broker's clock.",
  ),
  intDef(
    "message.timestamp.after.max.ms",
    "messageTimestampAfterMaxMs",
    "long",
    0n,
    LONG_MAX_STR,
    "log.message.timestamp.after.max.ms",
    "How far in the future a record's timestamp may be relative to the broker's clock.",
  ),
];

const BY_NAME = new Map(TOPIC_CONFIGS.map((d) => [d.name, d]));
const BY_SYNONYM = new Map(TOPIC_CONFIGS.map((d) => [d.brokerSynonym, d]));

/** Kafka topic configs this broker knows of but does not enforce: refused, never ignored. */
const NOT_ENFORCED = new Set([
  "compression.type",
  "compression.gzip.level",
  "compression.lz4.level",
  "compression.zstd.level",
  "delete.retention.ms",
  "file.delete.delay.ms",
  "flush.messages",
  "flush.ms",
  "follower.replication.throttled.replicas",
  "index.interval.bytes",
  "leader.replication.throttled.replicas",
  "local.retention.bytes",
  "local.retention.ms",
  "max.compaction.lag.ms",
  "message.downconversion.enable",
  "message.format.version",
  "message.timestamp.difference.max.ms",
  "min.cleanable.dirty.ratio",
  "min.compaction.lag.ms",
  "preallocate",
  "remote.log.copy.disable",
  "remote.log.delete.on.disable",
  "remote.storage.enable",
  "segment.index.bytes",
  "segment.jitter.ms",
  "unclean.leader.election.enable",
]);

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return BY_NAME.get(name);
}

function defFor(name: string): TopicConfigDef {
  const d = BY_NAME.get(name);
  if (d !== undefined) return d;
  const shown = JSON.stringify(name.length > 100 ? name.slice(0, 100) + "..." : name);
  if (NOT_ENFORCED.has(name)) {
    throw new MetaError(
      "INVALID_CONFIG",
      `Topic config ${shown} is not supported by this broker (it would not be enforced)`,
    );
  }
  throw new MetaError("INVALID_CONFIG", `Unknown topic config name: ${shown}`);
}

/** Throws INVALID_CONFIG unless `name` is a topic config this broker enforces. */
export function assertKnownTopicConfig(name: string): void {
  defFor(name);
}

/** Validates one topic config; returns its canonical string value. */
export function validateTopicConfig(name: string, value: unknown): string {
  const def = defFor(name);
  if (typeof value !== "string") {
    throw new MetaError("INVALID_CONFIG", `Value of topic config ${name} must be a string`);
  }
  return def.parse(value).canonical;
}

/** Validates a set of topic overrides (topic-level names); returns canonical values. */
export function validateTopicConfigs(configs: unknown): Record<string, string> {
  if (configs === null || typeof configs !== "object" || Array.isArray(configs)) {
    throw new MetaError("INVALID_CONFIG", "Topic configs must be an object of name to value");
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(configs)) out[k] = validateTopicConfig(k, v);
  return out;
}

/**
 * Validates broker-wide topic defaults (`--topic-default`). Keys may be topic names
 * (retention.ms) or broker synonyms (log.retention.ms); the result is keyed by topic name.
 */
export function normalizeTopicDefaults(
  raw: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const def = BY_SYNONYM.get(k) ?? defFor(k);
    if (out[def.name] !== undefined) {
      throw new MetaError("INVALID_CONFIG", `Topic default ${def.name} is given twice (as ${k})`);
    }
    out[def.name] = def.parse(v).canonical;
  }
  return out;
}

/**
 * Built-in default of a config for a topic of `replicationFactor` replicas (unknown: the
 * registry's default): min.insync.replicas is 2 from 3 replicas up, else 1.
 */
export function builtInDefault(def: TopicConfigDef, replicationFactor?: number): string {
  return replicationFactor !== undefined && def.defaultFor !== undefined
    ? def.defaultFor(replicationFactor)
    : def.default;
}

/**
 * Effective typed config of a topic: topic override, else broker default, else built-in (which
 * may depend on the topic's replication factor, when given).
 * Both inputs are expected validated; an invalid value still throws INVALID_CONFIG.
 */
export function resolveTopicConfig(
  overrides: Readonly<Record<string, string>>,
  brokerDefaults: Readonly<Record<string, string>> = {},
  replicationFactor?: number,
): ResolvedTopicConfig {
  const out: Record<string, unknown> = {};
  for (const d of TOPIC_CONFIGS) {
    const raw = Object.hasOwn(overrides, d.name)
      ? overrides[d.name]
      : Object.hasOwn(brokerDefaults, d.name)
      ? brokerDefaults[d.name]
      : builtInDefault(d, replicationFactor);
    out[d.key] = d.parse(raw).value;
  }
  return out as unknown as ResolvedTopicConfig;
}

export interface ConfigSynonym {
  name: string;
  value: string;
  source: ConfigSource;
}

export interface DescribedTopicConfig {
  name: string;
  value: string;
  source: ConfigSource;
  sourceCode: number;
  isDefault: boolean;
  readOnly: boolean;
  sensitive: boolean;
  type: TopicConfigType;
  typeCode: number;
  doc: string;
  /** In precedence order, the first one is in effect (DescribeConfigs v1+ include_synonyms). */
  synonyms: ConfigSynonym[];
}

/**
 * Configs the broker fixes for internal topics, shown as the topic's own and read-only:
 * __consumer_offsets is compacted by the broker itself (src/core/offsets-compaction.ts), though
 * `cleanup.policy=compact` is not yet accepted for user topics.
 */
export const INTERNAL_TOPIC_CONFIGS: Readonly<Record<string, string>> = {
  "cleanup.policy": "compact",
};

/**
 * Every registered topic config with its effective value and where it comes from.
 * `replicationFactor`: the topic's, for defaults that depend on it (min.insync.replicas).
 */
export function describeTopicConfig(
  overrides: Readonly<Record<string, string>>,
  brokerDefaults: Readonly<Record<string, string>> = {},
  internal = false,
  replicationFactor?: number,
): DescribedTopicConfig[] {
  return TOPIC_CONFIGS.map((d) => {
    const synonyms: ConfigSynonym[] = [];
    const fixed = internal ? INTERNAL_TOPIC_CONFIGS[d.name] : undefined;
    if (fixed !== undefined) {
      synonyms.push({ name: d.name, value: fixed, source: "TOPIC_CONFIG" });
    } else if (Object.hasOwn(overrides, d.name)) {
      synonyms.push({ name: d.name, value: overrides[d.name], source: "TOPIC_CONFIG" });
    }
    if (Object.hasOwn(brokerDefaults, d.name)) {
      synonyms.push({
        name: d.brokerSynonym,
        value: brokerDefaults[d.name],
        source: "STATIC_BROKER_CONFIG",
      });
    }
    synonyms.push({
      name: d.brokerSynonym,
      value: builtInDefault(d, replicationFactor),
      source: "DEFAULT_CONFIG",
    });
    const top = synonyms[0];
    return {
      name: d.name,
      value: top.value,
      source: top.source,
      sourceCode: CONFIG_SOURCE_CODE[top.source],
      isDefault: top.source === "DEFAULT_CONFIG",
      readOnly: fixed !== undefined,
      sensitive: false,
      type: d.type,
      typeCode: CONFIG_TYPE_CODE[d.type],
      doc: d.doc,
      synonyms,
    };
  });
}
