// Proves the migration mechanism survives `bun build --compile`: a tiny entry that opens a
// metadata db is compiled, the binary is moved to another directory (so nothing relative to
// the build location exists) and run against a fresh db; the tables must be there.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableNames, tempDir } from "./helpers.ts";

const MIGRATE_TS = join(import.meta.dir, "..", "..", "src", "meta", "migrate.ts");

test("a compiled binary, moved elsewhere, migrates a fresh db from embedded SQL", async () => {
  const t = tempDir("meta-compile-");
  try {
    const buildDir = join(t.dir, "build");
    const runDir = join(t.dir, "elsewhere", "bin");
    mkdirSync(buildDir);
    mkdirSync(runDir, { recursive: true });
    const entry = join(buildDir, "entry.ts");
    writeFileSync(
      entry,
      `import { openMetaDb } from ${JSON.stringify(MIGRATE_TS)};\n` +
        `const { sqlite } = openMetaDb(process.argv[2]);\n` +
        `const rows = sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table'").all();\n` +
        `console.log(JSON.stringify(rows.map((r) => r.name).sort()));\n` +
        `sqlite.close();\n`,
    );
    const out = join(buildDir, "tiny");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, "--outfile", out], {
      cwd: buildDir,
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const moved = join(runDir, "tiny");
    renameSync(out, moved);
    const dbPath = join(t.dir, "fresh.db");
    const run = Bun.spawnSync([moved, dbPath], { cwd: t.dir, stderr: "pipe", stdout: "pipe" });
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    const printed = JSON.parse(run.stdout.toString()) as string[];
    for (const table of ["topics", "partitions", "brokers", "metadata_log", "group_offsets"]) {
      expect(printed).toContain(table);
    }
    const db = new Database(dbPath, { readonly: true });
    expect(tableNames(db)).toContain("meta_state");
    expect((db.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n)
      .toBeGreaterThan(0);
    db.close();
  } finally {
    t.cleanup();
  }
}, 60_000);
