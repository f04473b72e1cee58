// JSON nesting depth. JSON.parse takes any depth, but JSON.stringify recurses and overflows the
// stack somewhere past ten thousand levels (a RangeError, which was a 500): record values over
// HTTP are limited to MAX_JSON_DEPTH levels, checked on text so nothing recurses.

/** Arrays and objects nested deeper than this are refused in produced values (400). */
export const MAX_JSON_DEPTH = 1000;

/**
 * Whether JSON text nests arrays and objects more than `limit` deep. Text of at most 2 × limit
 * characters cannot (each level takes an opening and a closing character), so the common case
 * costs nothing.
 */
export function nestedDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string: to the next quote not escaped by a backslash.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
