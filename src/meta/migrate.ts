// Opens the metadata SQLite database and applies the drizzle-kit migrations embedded in the
// binary (see embedded-migrations.ts). Why our own runner instead of drizzle's migrate(): that
// one reads a folder at run time, which a compiled binary moved elsewhere does not have. The
// bookkeeping is drizzle's own (table __drizzle_migrations, sha256 of the file as hash,
// created_at = the journal's `when`), so either runner can take over a database.
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema.ts";
import { MIGRATION_JOURNAL, MIGRATION_SQL } from "./embedded-migrations.ts";

export type MetaDb = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface Migration {
  tag: string;
  /** The journal's `when` (ms); drizzle stores it as created_at and orders by it. */
  when: number;
  sql: string;
  /** sha256 hex of the file text, as drizzle computes it. */
  hash: string;
}

const MIGRATIONS_TABLE = "__drizzle_migrations";
const BREAKPOINT = "--> statement-breakpoint";

/** Builds the migration list from a drizzle-kit journal and the SQL text of each entry. */
export function buildMigrations(
  journal: unknown,
  sqlByTag: Readonly<Record<string, string>>,
): Migration[] {
  const entries = (journal as { entries?: unknown })?.entries;
  if (!Array.isArray(entries)) throw new Error("migrations: journal has no entries array");
  const out: Migration[] = [];
  for (const e of entries as { tag?: unknown; when?: unknown }[]) {
    if (typeof e?.tag !== "string" || typeof e.when !== "number") {
      throw new Error("migrations: malformed journal entry " + JSON.stringify(e));
    }
    const sql = sqlByTag[e.tag];
    if (sql === undefined) {
      throw new Error(
        `migrations: ${e.tag}.sql is not embedded; run \`bun scripts/check-migrations.ts --write\``,
      );
    }
    out.push({
      tag: e.tag,
      when: e.when,
      sql,
      hash: createHash("sha256").update(sql).digest("hex"),
    });
  }
  for (let i = 1; i < out.length; i++) {
    if (out[i].when <= out[i - 1].when) throw new Error("migrations: journal is not in time order");
  }
  return out;
}

/** The migrations compiled into this build. */
export function embeddedMigrations(): Migration[] {
  return buildMigrations(MIGRATION_JOURNAL, MIGRATION_SQL);
}

/**
 * Applies the migrations newer than the last one recorded, all in one transaction.
 * Idempotent. Refuses a database migrated by a newer build, or whose applied migration text
 * differs from ours (a migration edited after release).
 */
export function runMigrations(
  sqlite: Database,
  migrations: Migration[] = embeddedMigrations(),
): { applied: string[] } {
  sqlite.run(
    `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
  );
  const applied: string[] = [];
  sqlite.transaction(() => {
    const done = sqlite.query(`SELECT hash, created_at FROM "${MIGRATIONS_TABLE}"`).all() as {
      hash: string;
      created_at: number;
    }[];
    const last = done.reduce((m, r) => Math.max(m, Number(r.created_at)), -Infinity);
    const newest = migrations.length > 0 ? migrations[migrations.length - 1].when : -Infinity;
    if (last > newest) {
      throw new Error(
        "metadata database was migrated by a newer broker version; refusing to start with an older one",
      );
    }
    for (const m of migrations) {
      const row = done.find((r) => Number(r.created_at) === m.when);
      if (row !== undefined && row.hash !== m.hash) {
        throw new Error(`migration ${m.tag} differs from the one applied to this database`);
      }
      if (m.when <= last) continue;
      for (const stmt of m.sql.split(BREAKPOINT)) {
        if (stmt.trim() !== "") sqlite.run(stmt);
      }
      sqlite.run(`INSERT INTO "${MIGRATIONS_TABLE}" (hash, created_at) VALUES (?, ?)`, [
        m.hash,
        m.when,
      ]);
      applied.push(m.tag);
    }
  }).immediate();
  return { applied };
}

export interface OpenedDb {
  sqlite: Database;
  db: MetaDb;
}

/**
 * Opens (creating if needed) a metadata database in WAL mode with foreign keys on and full
 * sync (metadata writes are rare; losing a committed one would be worse than the fsync), then
 * migrates it. `path` may be ":memory:" for tests.
 */
export function openMetaDb(path: string): OpenedDb {
  const sqlite = new Database(path, { create: true, readwrite: true, strict: true });
  try {
    sqlite.run("PRAGMA busy_timeout = 5000");
    const mode = sqlite.query("PRAGMA journal_mode = WAL").get() as { journal_mode: string };
    if (path !== ":memory:" && mode.journal_mode.toLowerCase() !== "wal") {
      throw new Error(`metadata database ${path}: cannot switch to WAL (got ${mode.journal_mode})`);
    }
    sqlite.run("PRAGMA synchronous = FULL");
    sqlite.run("PRAGMA foreign_keys = ON");
    runMigrations(sqlite);
  } catch (e) {
    sqlite.close();
    throw e;
  }
  return { sqlite, db: drizzle({ client: sqlite, schema }) };
}
