// The mutation runner itself (scripts/mutate.ts, docs/mutation.md), on a fixture repository
// made here: a planted bug that makes a test hang is caught (its run killed at the budget with its
// whole process group, the runner returning even though a process that left the group holds
// bun's stderr open), in the named files and in the whole-suite rerun of a survivor; a harmless
// edit survives. And the CI rotation: every bug expected to be caught is in exactly one slice.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { runSuite } from "../../scripts/mutate.ts";
import { TEST_MUTATIONS } from "../../scripts/mutations/index.ts";
import { parseSlice, rotate, sliceOf } from "../../scripts/mutations/rotation.ts";
import type { Mutation } from "../../scripts/mutations/types.ts";
import { shardsOf } from "../../scripts/mutations/whole-suite.ts";

const repo = mkdtempSync(path.join(tmpdir(), "mutate-fixture-"));
const pids = path.join(repo, "pids");
mkdirSync(pids);
process.env.MUTATE_FIXTURE_PIDS = pids;

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
  writeFileSync(path.join(repo, file), text);
}

write("package.json", "{}\n");
write("bunfig.toml", '[test]\nroot = "test"\n');
write(
  "src/count.ts",
  "export function countTo(n: number): number {\n  let i = 0;\n  while (i < n) i += 1;\n" +
    "  return i;\n}\nexport function twice(n: number): number {\n  return n * 2;\n}\n",
);
// Before the loop it starts one process in its group and one that leaves it (setsid) holding
// stderr: the first must die with the run, the second must not keep the runner waiting.
write(
  "test/count.test.ts",
  `import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { countTo } from "../src/count.ts";
const dir = process.env.MUTATE_FIXTURE_PIDS!;
const inGroup = Bun.spawn(["sleep", "40"], { stdout: "ignore", stderr: "inherit" });
const escaped = Bun.spawn(["setsid", "sleep", "40"], { stdout: "ignore", stderr: "inherit" });
writeFileSync(dir + "/" + inGroup.pid + ".group", "");
writeFileSync(dir + "/" + escaped.pid + ".escaped", "");
test("counts", () => {
  expect(countTo(3)).toBe(3);
  inGroup.kill();
  escaped.kill();
});
`,
);
write(
  "test/more/twice.test.ts",
  `import { expect, test } from "bun:test";
import { twice } from "../../src/count.ts";
test("doubles", () => expect(twice(4)).toBe(8));
`,
);

// Two files that fail only together, whichever runs second (a test flaky under load, as a long
// shard meets it): alone, mutated or not, each passes.
for (const [me, other] of [["a", "b"], ["b", "a"]]) {
  write(
    `test/pair/${me}.test.ts`,
    `import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
const dir = process.env.MUTATE_FIXTURE_PIDS!;
test("${me} alone", () => {
  writeFileSync(dir + "/" + process.pid + ".${me}", "");
  expect(existsSync(dir + "/" + process.pid + ".${other}")).toBe(false);
});
`,
  );
}

const HANG = {
  file: "src/count.ts",
  find: "while (i < n) i += 1;",
  replace: "while (i < n) i += 0;",
};
const hangNamed: Mutation = {
  id: "fixture-count-hangs",
  ...HANG,
  why: "The loop never advances: countTo never returns.",
  tests: ["test/count.test.ts"],
};
const hangElsewhere: Mutation = {
  ...hangNamed,
  id: "fixture-count-hangs-elsewhere",
  tests: ["test/more/twice.test.ts"],
};
const harmless: Mutation = {
  id: "fixture-twice-same",
  file: "src/count.ts",
  find: "return n * 2;",
  replace: "return n + n;",
  why: "The same sum written another way.",
  tests: ["test/more/twice.test.ts"],
  expect: "survives",
  reason: "Equivalent.",
};

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The fixture's processes by kind, as its test files recorded them. */
function recorded(kind: "group" | "escaped"): number[] {
  return readdirSync(pids).filter((f) => f.endsWith(`.${kind}`)).map((f) =>
    Number(f.split(".")[0])
  );
}

afterAll(() => {
  for (const pid of recorded("escaped")) if (alive(pid)) process.kill(pid, "SIGKILL");
  rmSync(repo, { recursive: true, force: true });
});

test("a hang in a named file is caught: killed at the budget with its process group", async () => {
  const rep = await runSuite({ root: repo, list: [hangNamed, harmless], timeBudgetMs: 4_000 });
  const [hang, same] = rep.results;
  expect(hang.verdict).toBe("caught");
  expect(hang.detail).toMatch(/killed after 4 s.*hung in test\/count\.test\.ts/);
  // The budget, the drain of the escaped process's stderr, a copy: well under its 40 s sleep.
  expect(hang.seconds).toBeLessThan(20);
  expect(same.verdict).toBe("survived");
  expect(rep.problems).toEqual([]);
  expect(rep.ok).toBe(true);
  // Every in-group process is gone (the baseline's, ended by its test; the hung run's, killed).
  const group = recorded("group");
  expect(group.length).toBe(2);
  for (const pid of group) expect(alive(pid)).toBe(false);
}, 60_000);

test("a survivor that hangs another file is caught by the whole-suite rerun", async () => {
  const rep = await runSuite({
    root: repo,
    list: [hangElsewhere],
    wholeSuite: true,
    wholeSuiteShardMs: 4_000,
  });
  const [r] = rep.results;
  expect(r.verdict).toBe("caught");
  expect(r.campaign).toBe("whole-suite");
  expect(r.detail).toMatch(/^whole suite: test\/count\.test\.ts: killed after 4 s/);
  // Shards in a fixed order: folders, then the files directly in test/.
  expect(shardsOf(repo)).toEqual([["test/more/"], ["test/pair/"], ["test/count.test.ts"]]);
  expect(r.wholeSuiteRan?.[0]).toMatch(/^test\/more\/: pass/);
}, 90_000);

test(
  "a whole-suite failure that does not come back alone on the mutated copy is flaky",
  async () => {
    const rep = await runSuite({
      root: repo,
      list: [harmless],
      wholeSuite: ["test/pair/"],
      wholeSuiteShardMs: 20_000,
    });
    const [r] = rep.results;
    expect(r.verdict).toBe("survived");
    expect(r.detail).toMatch(
      /flaky \(failed once mutated, then passed\): test\/pair\/[ab]\.test\.ts/,
    );
  },
  60_000,
);

test("CI's rotation: every bug expected to be caught is in exactly one slice", () => {
  const expected = TEST_MUTATIONS.filter((m) => m.expect !== "survives").map((m) => m.id);
  for (const  of of[1, 4, 6]) {
    const seen = Array.from({ length: of }, (_, i) => sliceOf(TEST_MUTATIONS, { index: i + 1, of }))
      .flat().map((m) => m.id);
    expect(seen.sort()).toEqual([...expected].sort());
  }
  // Consecutive commits pick consecutive slices.
  expect([10, 11, 12, 13].map((k) => rotate(k, 4).index)).toEqual([3, 4, 1, 2]);
  expect(parseSlice("2/5")).toEqual({ index: 2, of: 5 });
  expect(() => parseSlice("6/5")).toThrow();
  expect(() => parseSlice("0/5")).toThrow();
});
