// The cursor an HTTP group member holds between fetches: base64url JSON
// {"topic": {"partition": nextOffset}}. It is the client's and unsigned, so anything may be in it:
// the commit route's ACL rule (src/acl/http-rules.ts) reads its topics with this same parser, so
// a position committed from a cursor is checked like one given as `offsets`.

export type Positions = Map<string, Map<number, number>>;

export function encodeCursor(pos: Positions): string {
  const o: Record<string, Record<string, number>> = {};
  for (const [t, ps] of pos) o[t] = Object.fromEntries([...ps].map(([p, n]) => [String(p), n]));
  return Buffer.from(JSON.stringify(o)).toString("base64url");
}

/** The positions of a cursor, or undefined when it is not one this API could have issued. */
export function parseCursor(s: string): Positions | undefined {
  let o: unknown;
  try {
    o = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (o === null || typeof o !== "object" || Array.isArray(o)) return undefined;
  const out: Positions = new Map();
  for (const [t, ps] of Object.entries(o)) {
    if (ps === null || typeof ps !== "object" || Array.isArray(ps)) return undefined;
    const m = new Map<number, number>();
    for (const [p, n] of Object.entries(ps as Record<string, unknown>)) {
      if (!/^\d{1,9}$/.test(p) || typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
        return undefined;
      }
      m.set(Number(p), n);
    }
    out.set(t, m);
  }
  return out;
}
