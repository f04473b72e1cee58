// A list in a metadata snapshot image (users, ACLs): checked to be a list of objects before each
// row is parsed. Images written before the list existed lack it: no rows.
import { MetaError } from "./errors.ts";

export function imageRows<T>(
  v: unknown,
  names: { list: string; row: string },
  parse: (row: Record<string, unknown>) => T,
): T[] {
  if (v === undefined) return [];
  const bad = (what: string) => new MetaError("INVALID_REQUEST", `metadata snapshot: bad ${what}`);
  if (!Array.isArray(v)) throw bad(names.list);
  return v.map((x) => {
    if (x === null || typeof x !== "object") throw bad(`${names.row} row`);
    return parse(x as Record<string, unknown>);
  });
}
