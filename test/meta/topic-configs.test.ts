import { describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import {
  describeTopicConfig,
  normalizeTopicDefaults,
  resolveTopicConfig,
  TOPIC_CONFIGS,
  validateTopicConfig,
  validateTopicConfigs,
} from "../../src/meta/topic-configs.ts";

const LONG_MAX = "9223372036854775807";

function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof MetaError) return e.errorCode;
    throw e;
  }
  return undefined;
}

// name -> [accepted value, canonical][] and refused values
const CASES: Record<string, { ok: [string, string][]; bad: string[] }> = {
  "retention.ms": {
    ok: [["-1", "-1"], ["0", "0"], ["604800000", "604800000"], [" 5 ", "5"], ["+7", "7"], [
      LONG_MAX,
      LONG_MAX,
    ]],
    bad: ["-2", "1.5", "abc", "", "9223372036854775808", "1e3", "0x10"],
  },
  "retention.bytes": { ok: [["-1", "-1"], ["1024", "1024"]], bad: ["-2", "x"] },
  "segment.bytes": {
    ok: [["14", "14"], ["1073741824", "1073741824"], ["2147483647", "2147483647"]],
    bad: ["13", "0", "-1", "2147483648"],
  },
  "segment.ms": { ok: [["1", "1"], [LONG_MAX, LONG_MAX]], bad: ["0", "-1"] },
  "max.message.bytes": { ok: [["0", "0"], ["1048588", "1048588"]], bad: ["-1", "2147483648"] },
  "min.insync.replicas": { ok: [["1", "1"], ["3", "3"]], bad: ["0", "-1", "one"] },
  "message.timestamp.type": {
    ok: [["CreateTime", "CreateTime"], ["LogAppendTime", "LogAppendTime"]],
    bad: ["createtime", "Now", ""],
  },
  "message.timestamp.before.max.ms": { ok: [["0", "0"], [LONG_MAX, LONG_MAX]], bad: ["-1"] },
  "message.timestamp.after.max.ms": {
    ok: [["0", "0"], ["3600000", "3600000"]],
    bad: ["-1", "1.0"],
  },
  "cleanup.policy": {
    ok: [["delete", "delete"], [" delete ", "delete"]],
    bad: ["Delete", "", "none"],
  },
};

describe("topic config registry", () => {
  test("every registered config has a test table, a doc and a broker synonym", () => {
    expect(TOPIC_CONFIGS.map((d) => d.name).sort()).toEqual(Object.keys(CASES).sort());
    for (const d of TOPIC_CONFIGS) {
      expect(d.doc.length).toBeGreaterThan(10);
      expect(d.brokerSynonym.length).toBeGreaterThan(0);
      expect(() => d.parse(d.default)).not.toThrow(); // defaults are valid values
    }
  });

  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: accepted and refused values`, () => {
      for (const [v, canonical] of c.ok) expect(validateTopicConfig(name, v)).toBe(canonical);
      for (const v of c.bad) expect(code(() => validateTopicConfig(name, v))).toBe(40);
    });
  }

  test("compaction is refused with a clear message", () => {
    for (const v of ["compact", "compact,delete", "delete, compact"]) {
      expect(() => validateTopicConfig("cleanup.policy", v)).toThrow(
        /compaction is not supported yet/,
      );
      expect(code(() => validateTopicConfig("cleanup.policy", v))).toBe(40);
    }
  });

  test("unknown and known-but-unenforced names are refused with INVALID_CONFIG", () => {
    expect(() => validateTopicConfig("retention.msx", "1")).toThrow(/Unknown topic config name/);
    expect(() => validateTopicConfig("compression.type", "producer")).toThrow(/not supported/);
    expect(() => validateTopicConfig("unclean.leader.election.enable", "false")).toThrow(
      /not supported/,
    );
    expect(code(() => validateTopicConfig("log.retention.ms", "1"))).toBe(40); // broker name, not topic
    expect(code(() => validateTopicConfigs({ "retention.ms": 5 }))).toBe(40); // not a string
    expect(code(() => validateTopicConfigs(null))).toBe(40);
    expect(code(() => validateTopicConfigs(["retention.ms"]))).toBe(40);
  });

  test("values are canonicalised", () => {
    expect(validateTopicConfigs({ "retention.ms": " +10", "segment.bytes": "0014" })).toEqual({
      "retention.ms": "10",
      "segment.bytes": "14",
    });
  });
});

describe("resolveTopicConfig", () => {
  test("built-in defaults", () => {
    expect(resolveTopicConfig({})).toEqual({
      segmentBytes: 1073741824,
      segmentMs: 604800000,
      retentionMs: 604800000,
      retentionBytes: -1,
      maxMessageBytes: 1048588,
      minInsyncReplicas: 1,
      messageTimestampType: "CreateTime",
      messageTimestampBeforeMaxMs: Infinity,
      messageTimestampAfterMaxMs: Infinity,
      cleanupPolicy: "delete",
    });
  });

  test("topic override beats broker default beats built-in", () => {
    const r = resolveTopicConfig(
      { "retention.ms": "1000" },
      { "retention.ms": "2000", "segment.ms": "3000", "message.timestamp.type": "LogAppendTime" },
    );
    expect(r.retentionMs).toBe(1000);
    expect(r.segmentMs).toBe(3000);
    expect(r.messageTimestampType).toBe("LogAppendTime");
    expect(r.segmentBytes).toBe(1073741824);
  });

  test("longs past 2^53 become Infinity, smaller ones stay exact", () => {
    const r = resolveTopicConfig({
      "retention.ms": "9007199254740993",
      "segment.ms": "9007199254740991",
    });
    expect(r.retentionMs).toBe(Infinity);
    expect(r.segmentMs).toBe(9007199254740991);
  });

  test("min.insync.replicas defaults to 2 from replication factor 3 up, else 1", () => {
    expect(resolveTopicConfig({}, {}, 3).minInsyncReplicas).toBe(2);
    expect(resolveTopicConfig({}, {}, 5).minInsyncReplicas).toBe(2);
    expect(resolveTopicConfig({}, {}, 2).minInsyncReplicas).toBe(1);
    expect(resolveTopicConfig({}, {}, 1).minInsyncReplicas).toBe(1);
    expect(resolveTopicConfig({}, { "min.insync.replicas": "1" }, 3).minInsyncReplicas).toBe(1);
    expect(resolveTopicConfig({ "min.insync.replicas": "3" }, {}, 1).minInsyncReplicas).toBe(3);
    // Other configs do not depend on the factor.
    expect({ ...resolveTopicConfig({}, {}, 3), minInsyncReplicas: 1 }).toEqual(
      resolveTopicConfig({}),
    );
  });

  test("an invalid stored value still throws", () => {
    expect(code(() => resolveTopicConfig({ "segment.bytes": "1" }))).toBe(40);
  });
});

describe("describeTopicConfig", () => {
  test("sources, isDefault and synonyms", () => {
    const d = describeTopicConfig({ "retention.ms": "1000" }, {
      "retention.ms": "2000",
      "segment.bytes": "4096",
    });
    const by = Object.fromEntries(d.map((e) => [e.name, e]));
    expect(d.length).toBe(TOPIC_CONFIGS.length);
    expect(by["retention.ms"]).toMatchObject({
      value: "1000",
      source: "TOPIC_CONFIG",
      sourceCode: 1,
      isDefault: false,
      type: "long",
      typeCode: 5,
    });
    expect(by["retention.ms"].synonyms).toEqual([
      { name: "retention.ms", value: "1000", source: "TOPIC_CONFIG" },
      { name: "log.retention.ms", value: "2000", source: "STATIC_BROKER_CONFIG" },
      { name: "log.retention.ms", value: "604800000", source: "DEFAULT_CONFIG" },
    ]);
    expect(by["segment.bytes"]).toMatchObject({
      value: "4096",
      source: "STATIC_BROKER_CONFIG",
      sourceCode: 4,
      isDefault: false,
      typeCode: 3,
    });
    expect(by["message.timestamp.after.max.ms"]).toMatchObject({
      value: LONG_MAX,
      source: "DEFAULT_CONFIG",
      sourceCode: 5,
      isDefault: true,
    });
    expect(by["cleanup.policy"]).toMatchObject({ value: "delete", typeCode: 7, isDefault: true });
    expect(by["message.timestamp.type"].typeCode).toBe(2);
  });
});

test("describeTopicConfig shows the min.insync.replicas default for the replication factor", () => {
  const of = (rf?: number, td: Record<string, string> = {}) =>
    describeTopicConfig({}, td, false, rf).find((d) => d.name === "min.insync.replicas")!;
  expect(of(3)).toMatchObject({ value: "2", source: "DEFAULT_CONFIG", isDefault: true });
  expect(of(1)).toMatchObject({ value: "1", source: "DEFAULT_CONFIG" });
  expect(of()).toMatchObject({ value: "1", source: "DEFAULT_CONFIG" });
  expect(of(3, { "min.insync.replicas": "1" }).synonyms).toEqual([
    { name: "min.insync.replicas", value: "1", source: "STATIC_BROKER_CONFIG" },
    { name: "min.insync.replicas", value: "2", source: "DEFAULT_CONFIG" },
  ]);
});

describe("broker-wide topic defaults (--topic-default)", () => {
  test("topic names and broker synonyms are both accepted, keyed by topic name", () => {
    expect(
      normalizeTopicDefaults({
        "log.retention.ms": "100",
        "segment.bytes": "2048",
        "log.roll.ms": "5",
      }),
    )
      .toEqual({ "retention.ms": "100", "segment.bytes": "2048", "segment.ms": "5" });
  });
  test("validated with the same registry", () => {
    expect(code(() => normalizeTopicDefaults({ "retention.ms": "-5" }))).toBe(40);
    expect(code(() => normalizeTopicDefaults({ "log.cleanup.policy": "compact" }))).toBe(40);
    expect(code(() => normalizeTopicDefaults({ "bogus": "1" }))).toBe(40);
    expect(() => normalizeTopicDefaults({ "retention.ms": "1", "log.retention.ms": "2" })).toThrow(
      /twice/,
    );
  });
});
