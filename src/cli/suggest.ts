// "Did you mean": the closest known word to a typo, by edit distance (transpositions count one).

/** Optimal string alignment distance between a and b. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d.push([i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The known word closest to `typo`, if it is close enough to be what was meant: within a third
 * of its length (at least 1, at most 3 edits), or a unique word it is a prefix of.
 */
export function closest(typo: string, known: Iterable<string>): string | undefined {
  const t = typo.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  const prefixed: string[] = [];
  for (const k of known) {
    const d = editDistance(t, k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
    if (t.length >= 3 && k.startsWith(t)) prefixed.push(k);
  }
  const limit = Math.min(3, Math.max(1, Math.floor(t.length / 3)));
  if (best !== undefined && bestD <= limit) return best;
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** " (did you mean X?)" or "". */
export function didYouMean(typo: string, known: Iterable<string>): string {
  const c = closest(typo, known);
  return c === undefined ? "" : ` (did you mean ${c}?)`;
}
