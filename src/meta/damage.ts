// meta.db is a materialisation: topics, partitions and brokers come from the metadata log
// (raft.db), group offsets from __consumer_offsets. So a missing or damaged meta.db can be rebuilt
// as long as the metadata log is there; these helpers tell the cases apart and keep the damaged
// file for inspection instead of deleting it.
import { Database } from "bun:sqlite";
import { existsSync, renameSync } from "node:fs";

export type MetaDbHealth =
  | { kind: "ok" }
  | { kind: "missing" }
  | { kind: "damaged"; reason: string };

/** SQLite's own verdict on the file (`PRAGMA quick_check`, which writes nothing). */
export function metaDbHealth(path: string): MetaDbHealth {
  if (!existsSync(path)) return { kind: "missing" };
  let db: Database | undefined;
  try {
    // Read-write without create: a WAL database opened read-only needs its -shm file to exist.
    db = new Database(path, { readwrite: true, create: false });
    const reason = quickCheck(db);
    return reason === null ? { kind: "ok" } : { kind: "damaged", reason };
  } catch (e) {
    // Only corruption is "damaged"; a permission or I/O error is the user's to see as it is.
    const code = String((e as { code?: unknown }).code ?? "");
    if (/SQLITE_(NOTADB|CORRUPT)/.test(code)) {
      return { kind: "damaged", reason: (e as Error).message };
    }
    throw e;
  } finally {
    db?.close();
  }
}

/** `PRAGMA quick_check` (writes nothing): null when fine, else its first findings, briefly. */
export function quickCheck(db: Database): string | null {
  const rows = db.query("PRAGMA quick_check").all() as { quick_check: string }[];
  const problems = rows.map((r) => r.quick_check).filter((m) => m !== "ok");
  if (problems.length === 0) return null;
  const lines = problems.flatMap((p) => p.split("\n")).filter((l) => l && !l.startsWith("***"));
  const head = lines.slice(0, 2).join("; ");
  return lines.length > 2 ? `${head}; and ${lines.length - 2} more` : head;
}

/** Renames meta.db and its WAL files to `<name>.damaged-<time>`; returns the new main name. */
export function moveAside(path: string, now = new Date()): string {
  const suffix = `.damaged-${now.toISOString().replace(/[:.]/g, "-")}`;
  for (const ext of ["", "-wal", "-shm"]) {
    if (existsSync(path + ext)) renameSync(path + ext, path + suffix + ext);
  }
  return path + suffix;
}
