// Reads bun's JUnit report and prints "N passed, N failed" as the last line.
// Failed CI steps (type-check, lint, build) count as failures too, and make the exit code non-zero.
import { existsSync, readFileSync } from "node:fs";

const [file, ...failedSteps] = process.argv.slice(2);
let tests = 0, failures = 0, errors = 0, skipped = 0;
if (file && existsSync(file)) {
  const xml = readFileSync(file, "utf8");
  const top = /<testsuites\b([^>]*)>/.exec(xml)?.[1] ?? "";
  const attr = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(top)?.[1] ?? 0);
  tests = attr("tests");
  failures = attr("failures");
  errors = attr("errors");
  skipped = attr("skipped");
} else {
  console.log(`no test report at ${file}`);
  failedSteps.push("test report");
}
for (const s of failedSteps) console.log(`failed step: ${s}`);
const failed = failures + errors + failedSteps.length;
const passed = tests - failures - errors - skipped;
// Skips on a line of their own: CI reads the last line in exactly this form.
if (skipped) console.log(`${skipped} skipped`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || tests === 0 ? 1 : 0);
