// Shared helpers for the metadata tests: temp dirs and table dumps.
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function tempDir(prefix = "meta-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function tableNames(sqlite: Database): string[] {
  return (sqlite.query(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).all() as { name: string }[]).map((r) => r.name);
}

/** Every row of a table in a stable order, for equality checks. */
export function dump(sqlite: Database, table: string): unknown[] {
  return sqlite.query(`SELECT * FROM "${table}" ORDER BY 1, 2`).all();
}
