// text/plain produce bodies: a record per line as bytes, with a fixed key or a key separator.
import { expect, test } from "bun:test";
import { textRecords } from "../../src/http/produce.ts";
import { HttpError } from "../../src/http/errors.ts";

const enc = new TextEncoder();
const dec = (b: Uint8Array | null | undefined) => (b == null ? null : new TextDecoder().decode(b));
const view = (body: string, key?: string, sep?: string) =>
  textRecords(enc.encode(body), key, sep).map((r) => [dec(r.input.key), dec(r.input.value)]);

test("lines, a final newline optional, \\r dropped, empty lines kept", () => {
  expect(view("a\r\n\nb")).toEqual([[null, "a"], [null, ""], [null, "b"]]);
  expect(view("a\n")).toEqual([[null, "a"]]);
  expect(view("\n")).toEqual([[null, ""]]);
  expect(view("")).toEqual([]);
});

test("a fixed key, or each line's key before its first separator", () => {
  expect(view("a\nb", "k")).toEqual([["k", "a"], ["k", "b"]]);
  expect(view("k1::v:1\nnone\n::x\r\n", undefined, "::")).toEqual([
    ["k1", "v:1"],
    [null, "none"],
    ["", "x"],
  ]);
  // A separator past the line end belongs to the next line.
  expect(view("ab\n:c", undefined, ":")).toEqual([[null, "ab"], ["", "c"]]);
  expect(() => view("a", "k", ":")).toThrow(HttpError);
});

test("bytes are kept as sent (not decoded and re-encoded)", () => {
  const body = new Uint8Array([0xff, 0xfe, 0x0a, 0x41]);
  const r = textRecords(body, undefined, undefined);
  expect([...r[0].input.value!]).toEqual([0xff, 0xfe]);
  expect([...r[1].input.value!]).toEqual([0x41]);
});

test("more than 100 000 lines is a 400", () => {
  expect(() => textRecords(enc.encode("x\n".repeat(100_001)), undefined, undefined)).toThrow(
    /at most 100000 records/,
  );
});
