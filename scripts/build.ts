// npm run build: compile the broker into one executable at dist/broker.
// Migrations are embedded as assets so the binary runs from any directory.
import pkg from "../package.json" with { type: "json" };
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const outfile = process.argv[2] ?? join(root, "dist", "broker");
mkdirSync(join(outfile, ".."), { recursive: true });

const args = [
  process.execPath,
  "build",
  "--compile",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--minify-syntax",
  "--sourcemap=inline",
  `--define=BROKER_VERSION=${JSON.stringify(pkg.version)}`,
  "--asset=migrations",
  "src/main.ts",
  "--outfile",
  outfile,
];
const proc = Bun.spawnSync(args, { cwd: root, stdout: "inherit", stderr: "inherit" });
if (proc.exitCode !== 0) {
  console.error(`build failed (exit ${proc.exitCode})`);
  process.exit(1);
}
// The source map is inside the executable (stack traces show src/ lines without it); the copy
// bun also writes next to it would only be a 3 MB file for users to wonder about.
rmSync(`${outfile}.map`, { force: true });
console.log(`built ${outfile}`);
