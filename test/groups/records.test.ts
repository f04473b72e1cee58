import { describe, expect, test } from "bun:test";
import {
  decodeOffsetsRecord,
  encodeOffsetsRecord,
  type GroupMetadataValue,
  offsetsPartitionFor,
  type OffsetsRecord,
} from "../../src/groups/index.ts";

/** Hex with spaces and "|" for readability. */
const hex = (s: string): Uint8Array => {
  const clean = s.replace(/[\s|]/g, "");
  return new Uint8Array(clean.match(/../g)!.map((b) => parseInt(b, 16)));
};
const ascii = (s: string): string =>
  [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, "0")).join("");

// Golden bytes written by hand from apache/kafka OffsetCommitKey.json (record type 1: group,
// topic, partition), OffsetCommitValue.json v3 (offset, leaderEpoch, metadata, commitTimestamp),
// GroupMetadataKey.json (record type 2: group) and GroupMetadataValue.json v3.
const OFFSET_KEY = hex(`0001 | 0002 ${ascii("g1")} | 0001 ${ascii("t")} | 00000002`);
const OFFSET_VALUE_V3 = hex(
  `0003 | 000000000000002a | 00000005 | 0001 ${ascii("m")} | 0000018bcfe56800`,
);
const GROUP_KEY = hex(`0002 | 0002 ${ascii("g1")}`);
const GROUP_VALUE_V3 = hex(
  `0003 | 0008 ${ascii("consumer")} | 00000003 | 0005 ${ascii("range")} | 0002 ${ascii("m1")} |
   00000000000003e8 | 00000001 |
   0002 ${ascii("m1")} | ffff | 0001 ${ascii("c")} | 0002 ${ascii("/h")} | 000493e0 | 00002710 |
   00000002 0000 | 00000000`,
);

const GROUP_VALUE: GroupMetadataValue = {
  protocolType: "consumer",
  generation: 3,
  protocol: "range",
  leader: "m1",
  currentStateTimestamp: 1000,
  members: [{
    memberId: "m1",
    groupInstanceId: null,
    clientId: "c",
    clientHost: "/h",
    rebalanceTimeoutMs: 300_000,
    sessionTimeoutMs: 10_000,
    subscription: new Uint8Array([0, 0]),
    assignment: new Uint8Array(0),
  }],
};

describe("__consumer_offsets records", () => {
  test("offset commit key v1 / value v3 golden bytes", () => {
    const rec: OffsetsRecord = {
      type: "offset",
      group: "g1",
      topic: "t",
      partition: 2,
      value: {
        offset: 42,
        leaderEpoch: 5,
        metadata: "m",
        commitTimestamp: 1_700_000_000_000,
        expireTimestamp: null,
      },
    };
    const enc = encodeOffsetsRecord(rec);
    expect(enc.key).toEqual(OFFSET_KEY);
    expect(enc.value).toEqual(OFFSET_VALUE_V3);
    expect(decodeOffsetsRecord(enc.key, enc.value)).toEqual({ ok: true, value: rec });
  });

  test("group metadata key v2 / value v3 golden bytes", () => {
    const rec: OffsetsRecord = { type: "group", group: "g1", value: GROUP_VALUE };
    const enc = encodeOffsetsRecord(rec);
    expect(enc.key).toEqual(GROUP_KEY);
    expect(enc.value).toEqual(GROUP_VALUE_V3);
    expect(decodeOffsetsRecord(enc.key, enc.value)).toEqual({ ok: true, value: rec });
  });

  test("tombstones", () => {
    const off = encodeOffsetsRecord({
      type: "offset",
      group: "g1",
      topic: "t",
      partition: 2,
      value: null,
    });
    expect(off.value).toBeNull();
    expect(decodeOffsetsRecord(off.key, null)).toEqual({
      ok: true,
      value: { type: "offset", group: "g1", topic: "t", partition: 2, value: null },
    });
    const grp = encodeOffsetsRecord({ type: "group", group: "g1", value: null });
    expect(grp.key).toEqual(GROUP_KEY);
    expect(decodeOffsetsRecord(grp.key, null)).toEqual({
      ok: true,
      value: { type: "group", group: "g1", value: null },
    });
  });

  test("an explicit expiry is written as value v1", () => {
    const enc = encodeOffsetsRecord({
      type: "offset",
      group: "g",
      topic: "t",
      partition: 0,
      value: { offset: 7, leaderEpoch: 9, metadata: "", commitTimestamp: 1, expireTimestamp: 2 },
    });
    expect(enc.value).toEqual(
      hex("0001 | 0000000000000007 | 0000 | 0000000000000001 | 0000000000000002"),
    );
    const d = decodeOffsetsRecord(enc.key, enc.value);
    expect(d.ok && d.value.type === "offset" && d.value.value).toEqual({
      offset: 7,
      leaderEpoch: -1,
      metadata: "",
      commitTimestamp: 1,
      expireTimestamp: 2,
    });
  });

  test("older versions decode: key v0, offset value v0/v2, group value v0/v1/v2", () => {
    const key0 = hex(`0000 | 0001 ${ascii("g")} | 0001 ${ascii("t")} | 00000000`);
    const v0 = hex("0000 | 0000000000000003 | 0000 | 0000000000000004");
    const v2 = hex("0002 | 0000000000000003 | 0000 | 0000000000000004");
    for (const v of [v0, v2]) {
      const d = decodeOffsetsRecord(key0, v);
      expect(d.ok && d.value.type === "offset" && d.value.value).toEqual({
        offset: 3,
        leaderEpoch: -1,
        metadata: "",
        commitTimestamp: 4,
        expireTimestamp: null,
      });
    }
    const member = `0002 ${ascii("m1")} | 0001 ${ascii("c")} | 0000`;
    const tail = `00002710 | 00000000 | 00000001 ff`;
    const g0 = hex(`0000 | 0000 | 00000001 | ffff | ffff | 00000001 | ${member} | ${tail}`);
    const g1 = hex(
      `0001 | 0000 | 00000001 | ffff | ffff | 00000001 | ${member} | 00000064 | ${tail}`,
    );
    const g2 = hex(
      `0002 | 0000 | 00000001 | ffff | ffff | 0000000000000009 | 00000001 | ${member} | 00000064 | ${tail}`,
    );
    const expected = (rebalance: number, ts: number) => ({
      protocolType: "",
      generation: 1,
      protocol: null,
      leader: null,
      currentStateTimestamp: ts,
      members: [{
        memberId: "m1",
        groupInstanceId: null,
        clientId: "c",
        clientHost: "",
        rebalanceTimeoutMs: rebalance,
        sessionTimeoutMs: 10_000,
        subscription: new Uint8Array(0),
        assignment: new Uint8Array([0xff]),
      }],
    });
    const val = (b: Uint8Array) => {
      const d = decodeOffsetsRecord(GROUP_KEY, b);
      return d.ok && d.value.type === "group" ? d.value.value : d;
    };
    expect(val(g0)).toEqual(expected(10_000, -1));
    expect(val(g1)).toEqual(expected(100, -1));
    expect(val(g2)).toEqual(expected(100, 9));
  });

  test("unknown record types are reported as other; hostile bytes never throw", () => {
    expect(decodeOffsetsRecord(hex("0003 0001 61"), hex("00"))).toEqual({
      ok: true,
      value: { type: "other", keyVersion: 3 },
    });
    expect(decodeOffsetsRecord(hex("ffff"), null).ok).toBe(false);
    expect(decodeOffsetsRecord(OFFSET_KEY, hex("0004 00")).ok).toBe(false);
    for (let n = 0; n < GROUP_VALUE_V3.length; n++) {
      expect(decodeOffsetsRecord(GROUP_KEY, GROUP_VALUE_V3.subarray(0, n)).ok).toBe(false);
    }
    for (let n = 0; n < OFFSET_KEY.length; n++) {
      expect(decodeOffsetsRecord(OFFSET_KEY.subarray(0, n), null).ok).toBe(false);
    }
    // A member count far beyond the bytes present is refused before any allocation.
    const huge = GROUP_VALUE_V3.slice();
    huge.set([0x7f, 0xff, 0xff, 0xff], 2 + 10 + 4 + 7 + 4 + 8);
    expect(decodeOffsetsRecord(GROUP_KEY, huge).ok).toBe(false);
    let seed = 12345;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (let i = 0; i < 2000; i++) {
      const len = rnd() % 40;
      const key = new Uint8Array(len).map(() => rnd());
      key[0] = 0;
      key[1] = i % 3;
      const value = new Uint8Array(rnd() % 60).map(() => rnd());
      value[0] = 0;
      if (value.length > 1) value[1] = i % 4;
      expect(() => decodeOffsetsRecord(key, value)).not.toThrow();
    }
  });

  test("offsetsPartitionFor follows Kafka's abs(String.hashCode) % partitions", () => {
    expect(offsetsPartitionFor("abc", 50)).toBe(4); // hashCode 96354
    expect(offsetsPartitionFor("hello", 50)).toBe(22); // 99162322
    expect(offsetsPartitionFor("xyzzy-group", 50)).toBe(36); // -1085040886
    expect(offsetsPartitionFor("polygenelubricants", 50)).toBe(0); // Integer.MIN_VALUE → 0
    expect(() => offsetsPartitionFor("g", 0)).toThrow(RangeError);
  });
});
