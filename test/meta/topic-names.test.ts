import { describe, expect, test } from "bun:test";
import { MetaError } from "../../src/meta/errors.ts";
import { topicNamesCollide, validateTopicName } from "../../src/meta/topic-names.ts";
import { MetadataStore } from "../../src/meta/store.ts";
import { tempDir } from "./helpers.ts";

const LEGAL = [
  "a",
  "A-z_0.9",
  "x".repeat(249),
  "..a",
  "a..",
  "-",
  "_",
  "__consumer_offsets",
  "...",
  "9",
];
const ILLEGAL: [string, RegExp][] = [
  ["", /empty/],
  [".", /"\." or "\.\."/],
  ["..", /"\." or "\.\."/],
  ["x".repeat(250), /longer than 249/],
  ["a b", /character/],
  ["a/b", /character/],
  ["ä", /character/],
  ["a\u0000", /character/],
  ["a:b", /character/],
  ["emoji😀", /character/],
];

describe("topic names", () => {
  for (const name of LEGAL) {
    test(`legal: ${JSON.stringify(name.length > 20 ? `${name.length} chars` : name)}`, () => {
      expect(() => validateTopicName(name)).not.toThrow();
    });
  }
  for (const [name, why] of ILLEGAL) {
    test(`illegal: ${JSON.stringify(name.length > 20 ? `${name.length} chars` : name)}`, () => {
      let err: unknown;
      try {
        validateTopicName(name);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(MetaError);
      expect((err as MetaError).errorCode).toBe(17);
      expect((err as MetaError).message).toMatch(why);
    });
  }
  test("non-strings are refused", () => {
    expect(() => validateTopicName(42)).toThrow(MetaError);
    expect(() => validateTopicName(null)).toThrow(MetaError);
  });
  test("collisions are by '.' versus '_'", () => {
    expect(topicNamesCollide("a.b", "a_b")).toBe(true);
    expect(topicNamesCollide("a_b", "a.b")).toBe(true);
    expect(topicNamesCollide("a.b_c", "a_b.c")).toBe(true);
    expect(topicNamesCollide("a.b", "a.b")).toBe(false);
    expect(topicNamesCollide("a-b", "a_b")).toBe(false);
    expect(topicNamesCollide("ab", "a_b")).toBe(false);
  });

  test("the store refuses a colliding name with INVALID_TOPIC_EXCEPTION and a bad name early", async () => {
    const t = tempDir();
    const store = MetadataStore.open(t.dir);
    try {
      await store.registerBroker({
        nodeId: 0,
        host: "h",
        kafkaPort: 1,
        httpPort: 2,
        clusterPort: 3,
      });
      await store.createTopic("metrics.cpu", 1, 1);
      const e = await store.createTopic("metrics_cpu", 1, 1).catch((x) => x);
      expect(e).toBeInstanceOf(MetaError);
      expect(e.errorCode).toBe(17);
      expect(e.message).toMatch(/collides with existing topic: metrics.cpu/);
      await expect(store.createTopic("metrics-cpu", 1, 1)).resolves.toBeDefined();
      const bad = await store.createTopic("..", 1, 1).catch((x) => x);
      expect(bad.errorCode).toBe(17);
      expect(store.listTopics().map((x) => x.name)).toEqual(["metrics-cpu", "metrics.cpu"]);
    } finally {
      await store.close();
      t.cleanup();
    }
  });
});
