/** Hostile input: decoding never throws anything but ProtocolDecodeError, and stays bounded. */
import { describe, expect, test } from "bun:test";
import {
  codecVersions,
  concatChunks,
  declaredApiKeys,
  decodeRequest,
  decodeRequestFrame,
  decodeRequestHeader,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  peekFrameSize,
  ProtocolDecodeError,
  schemaFor,
  UnsupportedApiError,
} from "../../../src/protocol/kafka/index.ts";
import { randomStruct, Rng } from "./random-values.ts";

function expectDecodeError(fn: () => unknown): ProtocolDecodeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolDecodeError);
    return e as ProtocolDecodeError;
  }
  throw new Error("expected a ProtocolDecodeError");
}

/** Runs fn; a success or a ProtocolDecodeError are both fine, anything else fails. */
function tolerate(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ProtocolDecodeError)) throw e;
  }
}

function hex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"));
}

describe("malformed primitives", () => {
  test("huge array count is rejected before allocating", () => {
    // Metadata v1 request: topics count 0x7fffffff with 2 bytes left.
    const e = expectDecodeError(() => decodeRequest(3, 1, hex("7fffffff 0000")));
    expect(e.message).toContain("exceeds remaining");
  });
  test("huge compact array count is rejected", () => {
    // Metadata v9: uvarint 0xffffffff (count 2^32-2).
    expectDecodeError(() => decodeRequest(3, 9, hex("ffffffff0f 00")));
  });
  test("negative lengths are rejected", () => {
    expectDecodeError(() => decodeRequest(3, 1, hex("fffffffe"))); // array -2
    expectDecodeError(() => decodeRequest(17, 0, hex("fffe"))); // string -2
    expectDecodeError(() => decodeRequest(36, 0, hex("fffffff0"))); // bytes -16
  });
  test("null where not nullable", () => {
    expectDecodeError(() => decodeRequest(3, 0, hex("ffffffff"))); // v0 topics null
    expectDecodeError(() => decodeRequest(17, 1, hex("ffff"))); // mechanism null
  });
  test("truncated and trailing bytes", () => {
    expectDecodeError(() => decodeRequest(12, 0, hex("0001 61 0000")));
    expectDecodeError(() => decodeRequest(12, 0, hex("0001 61 00000001 0000 00")));
  });
  test("varint longer than 5 bytes or above 32 bits", () => {
    expectDecodeError(() => decodeRequest(18, 3, hex("ffffffffffff")));
    expectDecodeError(() => decodeRequest(18, 3, hex("ffffffff7f")));
  });
  test("invalid bool, invalid UTF-8, unsafe int64", () => {
    expectDecodeError(() => decodeRequest(60, 0, hex("02 00")));
    expectDecodeError(() => decodeRequest(17, 0, hex("0002 c328")));
    // InitProducerId v3 (flexible: a null compact transactional id, timeout, producer id,
    // epoch, no tags): 2^53 and beyond are refused, not rounded; 2^53 - 1 is exact. The
    // messages are checked: a malformed prefix would fail for another reason.
    const initPid = (id: string) => decodeRequest(22, 3, hex(`00 00000000 ${id} ffff 00`));
    for (const id of ["7fffffffffffffff", "0020000000000000"]) {
      expect(expectDecodeError(() => initPid(id)).message).toContain("int64 outside");
    }
    expect(initPid("001fffffffffffff")).toMatchObject({ producerId: 2 ** 53 - 1 });
  });
  test("tagged field larger than the message, duplicate tags", () => {
    // ApiVersions v3: two empty compact strings, then the tagged fields.
    const bigTag = () => decodeRequest(18, 3, hex("01 01 01 05 05 00"));
    expect(expectDecodeError(bigTag).message).toContain("truncated tagged field");
    const twice = () => decodeRequest(18, 3, hex("01 01 02 05 00 05 00"));
    expect(expectDecodeError(twice).message).toContain("duplicate tag 5");
  });
  test("unknown api key or version", () => {
    const e = expectDecodeError(() => decodeRequest(999, 0, new Uint8Array(0)));
    expect(e).toBeInstanceOf(UnsupportedApiError);
    expectDecodeError(() => decodeRequest(0, 99, new Uint8Array(0)));
    // Whole frame: ApiVersions v9 keeps the parsed header for the §1.5 fallback answer.
    const frame = hex("0012 0009 00000007 0003 616263 00");
    const f = expectDecodeError(() => decodeRequestFrame(frame)) as UnsupportedApiError;
    expect(f.header?.correlationId).toBe(7);
    expect(f.header?.clientId).toBe("abc");
  });
  test("header: truncated, negative client id length", () => {
    expectDecodeError(() => decodeRequestHeader(hex("0003 00")));
    expectDecodeError(() => decodeRequestHeader(hex("0003 0001 00000001 fff0")));
  });
  test("frame size limits", () => {
    expect(peekFrameSize(hex("000000"), 0, 100)).toBe(-1);
    expect(peekFrameSize(hex("00000010"), 0, 100)).toBe(16);
    expectDecodeError(() => peekFrameSize(hex("ffffffff"), 0, 100));
    expectDecodeError(() => peekFrameSize(hex("00000065"), 0, 100));
  });
});

describe("fuzz every schema version", () => {
  test("truncations, bit flips and garbage never escape as other errors", () => {
    const rng = new Rng(12345);
    let cases = 0;
    for (const apiKey of declaredApiKeys()) {
      const [min, max] = codecVersions(apiKey)!;
      for (let v = min; v <= max; v++) {
        for (const direction of ["request", "response"] as const) {
          const decode = direction === "request" ? decodeRequest : decodeResponse;
          const schema = schemaFor(apiKey, direction)!;
          const value = randomStruct(rng, schema.fields, v);
          const base = direction === "request"
            ? encodeRequest(apiKey, v, value)
            : concatChunks(encodeResponse(apiKey, v, value));
          // Truncations at a few cut points.
          for (let i = 0; i < 6 && base.length > 0; i++) {
            const cut = rng.int(0, base.length - 1);
            expectDecodeError(() => decode(apiKey, v, base.subarray(0, cut)));
            cases++;
          }
          // Single-byte corruption.
          for (let i = 0; i < 6 && base.length > 0; i++) {
            const bad = base.slice();
            bad[rng.int(0, bad.length - 1)] ^= 1 << rng.int(0, 7);
            tolerate(() => decode(apiKey, v, bad));
            cases++;
          }
          // Pure garbage, biased toward 0xff (maximal lengths and counts).
          for (let i = 0; i < 6; i++) {
            const n = rng.int(0, 64);
            const junk = new Uint8Array(n);
            for (let j = 0; j < n; j++) junk[j] = rng.chance(0.5) ? 0xff : rng.int(0, 255);
            tolerate(() => decode(apiKey, v, junk));
            cases++;
          }
        }
      }
    }
    expect(cases).toBeGreaterThan(1000);
  });
});
