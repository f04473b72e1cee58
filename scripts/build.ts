// npm run build: compile the broker into one executable at dist/broker.
// Migrations are embedded as assets so the binary runs from any directory.
// `bun scripts/build.ts OUTFILE [TARGET]` builds for another platform (npm run release does).
import pkg from "../package.json" with { type: "json" };
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

/**
 * Compile src/main.ts to `outfile`; `target` is a `bun build --target` such as bun-linux-arm64
 * (default: this machine). Throws when bun fails.
 */
export function buildBinary(outfile: string, target?: string): void {
  mkdirSync(join(outfile, ".."), { recursive: true });
  const native = target === undefined || target === `bun-${process.platform}-${process.arch}`;
  const args = [
    process.execPath,
    "build",
    "--compile",
    ...(target ? [`--target=${target}`] : []),
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    "--minify-syntax",
    // The broker's modules (and the node:crypto, node:zlib, bun:sqlite they import) in chunks of
    // their own that load only when a broker starts: without it every client command evaluated
    // them all first (about 0.1 s of CPU per `broker consume`, half of its start).
    "--splitting",
    // Precompiled bytecode in the executable: a broker's start spends about 0.39 s of CPU instead
    // of 0.54 s (parsing and compiling our modules), which a rolling restart pays on a machine
    // whose other brokers are serving; esm because splitting needs it. Only for this machine's
    // own platform: bytecode made here is not known to be valid on another architecture.
    ...(native ? ["--bytecode", "--format=esm"] : []),
    "--sourcemap=inline",
    `--define=BROKER_VERSION=${JSON.stringify(pkg.version)}`,
    "--asset=migrations",
    "src/main.ts",
    "--outfile",
    outfile,
  ];
  const proc = Bun.spawnSync(args, { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (proc.exitCode !== 0) throw new Error(`build failed (exit ${proc.exitCode})`);
  // The source map is inside the executable (stack traces show src/ lines without it); the copy
  // bun also writes next to it would only be a 3 MB file for users to wonder about.
  rmSync(`${outfile}.map`, { force: true });
}

if (import.meta.main) {
  const outfile = process.argv[2] ?? join(root, "dist", "broker");
  try {
    buildBinary(outfile, process.argv[3]);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
  console.log(`built ${outfile}`);
}
