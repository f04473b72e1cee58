// Human output: aligned tables; --json output goes straight through JSON.stringify.
export function table(headers: string[], rows: unknown[][]): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? "-" : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  return [line(headers), ...cells.map(line)].join("\n") + "\n";
}

export function out(s: string): void {
  process.stdout.write(s);
}

export function json(v: unknown): void {
  process.stdout.write(JSON.stringify(v, null, 2) + "\n");
}
