// The mutation suite in CI (scripts/mutate.ts, docs/mutation.md): every planted bug's edit still
// applies to the code as it is, and the simulators catch at least THRESHOLD of the bugs expected
// to be caught (a few bugs no random schedule reaches name a scripted test, run after them). A few minutes: each bug runs its campaign in a
// child process over a scratch copy, one at a time.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { markdown, runSuite, THRESHOLD } from "../../scripts/mutate.ts";
import { ALL_MUTATIONS, checkMutations, MUTATIONS } from "../../scripts/mutations/index.ts";
import { parseReport } from "../../scripts/mutations/bun-tests.ts";

const ROOT = path.resolve(import.meta.dir, "../..");

// Both suites' edits are checked here; only the simulator suite runs below (the test suite's
// bugs, `npm run mutate -- --suite tests`, run test files that start brokers: too slow for CI).
test("every planted bug's edit applies: its text occurs exactly once in its file", () => {
  // In a mutation run's scratch copy (the whole-suite rerun) one bug is planted: its own text is
  // gone there by design (scripts/mutations/bun-tests.ts sets MUTATE_PLANTED).
  const planted = process.env.MUTATE_PLANTED;
  const list = ALL_MUTATIONS.filter((m) => m.id !== planted);
  const problems = checkMutations(list, (f) => {
    const p = path.join(ROOT, f);
    return existsSync(p) ? readFileSync(p, "utf8") : null;
  });
  expect(problems).toEqual([]);
  // The issue asks for at least 20 text mutations the simulators are expected to catch.
  expect(MUTATIONS.filter((m) => m.expect !== "survives").length).toBeGreaterThanOrEqual(20);
});

// The baseline and the whole-suite rerun decide per file: which files failed, and how, is read
// from bun's report (a file's header line comes before its results).
test("bun's report is read as the first failure of each failing file", () => {
  const report = [
    "bun test v1.4.5",
    "",
    "test/a.test.ts:",
    "(pass) a ok [0.34ms]",
    "error: expect(received).toBe(expected)",
    "(fail) a > bad [0.66ms]",
    "(fail) a > worse [1.00ms]",
    "",
    "test/b/c.test.ts:",
    "(pass) d > b ok [0.01ms]",
    "",
    "test/e.test.ts:",
    "# Unhandled error between tests",
    "",
    " 2 pass",
  ].join("\n");
  expect([...parseReport(report)]).toEqual([
    ["test/a.test.ts", "a > bad"],
    ["test/e.test.ts", "an error outside any test"],
  ]);
});

test(`the simulators catch at least ${THRESHOLD * 100} % of the planted bugs`, async () => {
  const rep = await runSuite();
  console.log(markdown(rep));
  console.log(
    `mutation suite: caught ${rep.caught}/${rep.expected} (${(rep.ratio * 100).toFixed(1)} %) ` +
      `in ${rep.seconds} s`,
  );
  expect(rep.problems).toEqual([]);
  const missed = rep.results.filter((r) => !r.expectSurvives && r.verdict !== "caught");
  if (rep.ratio < THRESHOLD) {
    throw new Error(
      `the simulators caught ${rep.caught}/${rep.expected}, below ${THRESHOLD * 100} %; ` +
        `missed: ${missed.map((r) => r.id).join(", ")}`,
    );
  }
}, 600_000);
