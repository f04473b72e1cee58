// Lists in a metadata snapshot image: absent (an older image) is none; anything but a list of
// objects is refused with the list's name, before a row is parsed.
import { expect, test } from "bun:test";
import { imageRows } from "../../src/meta/image-rows.ts";

const names = { list: "acls", row: "ACL" };
const parse = (o: Record<string, unknown>) => String(o.name);

test("rows are parsed; an absent list is none; a bad list or row is refused", () => {
  expect(imageRows([{ name: "a" }, { name: "b" }], names, parse)).toEqual(["a", "b"]);
  expect(imageRows(undefined, names, parse)).toEqual([]);
  expect(() => imageRows({}, names, parse)).toThrow("metadata snapshot: bad acls");
  expect(() => imageRows([{ name: "a" }, null], names, parse)).toThrow(
    "metadata snapshot: bad ACL row",
  );
  expect(() => imageRows(["a"], names, parse)).toThrow("metadata snapshot: bad ACL row");
});
