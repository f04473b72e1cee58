// npm run release: the broker for linux-x64 and linux-arm64 (one self-contained executable
// each, the Bun runtime inside) in dist/release/, with SHA256SUMS (check: sha256sum -c).
// Cross-compiling fetches the other platform's Bun runtime once (bun caches it).
import pkg from "../package.json" with { type: "json" };
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { buildBinary } from "./build.ts";

const root = join(import.meta.dir, "..");
const out = join(root, "dist", "release");

/** bun's target name -> the platform in the file name. */
export const TARGETS: [string, string][] = [
  ["bun-linux-x64", "linux-x64"],
  ["bun-linux-arm64", "linux-arm64"],
];

export function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** SHA256SUMS in `dir` for `files` (in it), in the format `sha256sum -c` reads. */
export function writeChecksums(dir: string, files: string[]): string {
  const out = join(dir, "SHA256SUMS");
  writeFileSync(out, files.map((f) => `${sha256(join(dir, f))}  ${f}\n`).join(""));
  return out;
}

if (import.meta.main) {
  rmSync(out, { recursive: true, force: true });
  const files: string[] = [];
  for (const [target, platform] of TARGETS) {
    const file = join(out, `broker-${pkg.version}-${platform}`);
    try {
      buildBinary(file, target);
    } catch (e) {
      console.error(`${target}: ${(e as Error).message}`);
      process.exit(1);
    }
    files.push(basename(file));
    console.log(`built ${file} (${(statSync(file).size / 2 ** 20).toFixed(1)} MiB)`);
  }
  console.log(`wrote ${writeChecksums(out, files)}`);
}
