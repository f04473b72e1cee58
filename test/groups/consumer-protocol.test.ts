import { describe, expect, test } from "bun:test";
import {
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  type Subscription,
} from "../../src/groups/index.ts";

const hex = (s: string): Uint8Array =>
  new Uint8Array(s.replace(/\s/g, "").match(/../g)!.map((b) => parseInt(b, 16)));

describe("ConsumerProtocol subscription", () => {
  test("observed payloads decode (librdkafka v1, kafkajs v0, platformatic v1 without OwnedPartitions)", () => {
    expect(decodeSubscription(hex("0001 00000001 0002 7432 00000000 00000000"))).toEqual({
      ok: true,
      value: {
        version: 1,
        topics: ["t2"],
        userData: new Uint8Array(0),
        ownedPartitions: [],
        generationId: -1,
        rackId: null,
      },
    });
    expect(decodeSubscription(hex("0000 00000001 0002 7433 00000000"))).toEqual({
      ok: true,
      value: {
        version: 0,
        topics: ["t3"],
        userData: new Uint8Array(0),
        ownedPartitions: [],
        generationId: -1,
        rackId: null,
      },
    });
    expect(decodeSubscription(hex("0001 00000001 0002 7074 ffffffff"))).toEqual({
      ok: true,
      value: {
        version: 1,
        topics: ["pt"],
        userData: null,
        ownedPartitions: [],
        generationId: -1,
        rackId: null,
      },
    });
  });

  test("encodes the observed bytes and round-trips every version", () => {
    const v1: Subscription = {
      version: 1,
      topics: ["t2"],
      userData: new Uint8Array(0),
      ownedPartitions: [],
      generationId: -1,
      rackId: null,
    };
    expect(encodeSubscription(v1)).toEqual(hex("0001 00000001 0002 7432 00000000 00000000"));
    for (let version = 0; version <= 3; version++) {
      const s: Subscription = {
        version,
        topics: ["a", "bb"],
        userData: new Uint8Array([1, 2, 3]),
        ownedPartitions: version >= 1 ? [{ topic: "a", partitions: [0, 5] }] : [],
        generationId: version >= 2 ? 7 : -1,
        rackId: version >= 3 ? "rack-1" : null,
      };
      expect(decodeSubscription(encodeSubscription(s))).toEqual({ ok: true, value: s });
    }
  });

  test("a higher version is read as v3 (newer fields come after)", () => {
    const v3 = encodeSubscription({
      version: 3,
      topics: ["x"],
      userData: null,
      ownedPartitions: [],
      generationId: 2,
      rackId: "r",
    });
    const v4 = new Uint8Array([...v3, 0, 0, 0, 9]);
    v4[1] = 4;
    const d = decodeSubscription(v4);
    expect(d.ok && d.value.rackId).toBe("r");
    expect(d.ok && d.value.version).toBe(4);
  });

  test("hostile input: truncation mid-field, negative counts, huge counts, negative version", () => {
    const good = hex("0001 00000001 0002 7432 00000000 00000001 0002 7432 00000001 00000007");
    expect(decodeSubscription(good).ok).toBe(true);
    for (const n of [0, 1, 3, 5, 7, 13, 17, 21, 25, 29]) {
      expect(decodeSubscription(good.subarray(0, n)).ok).toBe(false);
    }
    expect(decodeSubscription(hex("0000 ffffffff")).ok).toBe(false);
    expect(decodeSubscription(hex("0000 7fffffff 0000")).ok).toBe(false);
    expect(decodeSubscription(hex("ffff 00000000")).ok).toBe(false);
    expect(decodeSubscription(hex("0000 00000001 0002 ff fe")).ok).toBe(false); // not UTF-8
  });
});

describe("ConsumerProtocol assignment", () => {
  test("observed v0 payload round-trips; empty bytes mean an empty assignment", () => {
    const bytes = hex("0000 00000001 0002 7432 00000001 00000000 00000000");
    const d = decodeAssignment(bytes);
    expect(d).toEqual({
      ok: true,
      value: {
        version: 0,
        assignedPartitions: [{ topic: "t2", partitions: [0] }],
        userData: new Uint8Array(0),
      },
    });
    expect(d.ok && encodeAssignment(d.value)).toEqual(bytes);
    expect(decodeAssignment(new Uint8Array(0))).toEqual({
      ok: true,
      value: { version: 0, assignedPartitions: [], userData: null },
    });
    expect(decodeAssignment(hex("0000 00000001 0002 74")).ok).toBe(false);
    expect(decodeAssignment(hex("0000 00000001 0002 7432 7fffffff")).ok).toBe(false);
    expect(() => encodeAssignment({ version: -1, assignedPartitions: [], userData: null })).toThrow(
      RangeError,
    );
  });
});
