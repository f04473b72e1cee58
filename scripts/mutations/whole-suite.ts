// The whole-suite rerun of a survivor (scripts/mutate.ts --whole-suite): every test file, or the
// folders and files asked for, run against the mutated copy one shard at a time (a `bun test` per
// folder of test/, one for the files directly in it), each with a budget and a stall limit. A
// failing file, or a file a shard hung in, catches the bug only if it passes on the unmutated
// code, then fails alone on the mutated copy and passes alone on the unmutated one, twice, back to
// back (a long shard on a loaded machine fails timing-sensitive process tests now and then); one
// that fails unmutated too, or is not confirmed, is left out of the later shards and named.
import { readdirSync } from "node:fs";
import * as path from "node:path";
import { type BaselineEntry, runBunTests } from "./bun-tests.ts";

/** Budget of one shard (a folder of test/, run unmutated in ~1-4 min on a quiet machine). */
export const SHARD_BUDGET_MS = 30 * 60_000;
/**
 * A shard silent this long is stuck (bun prints a test's line as it ends): above the longest
 * single test's own timeout in the suite (600 s, test/sim/mutate.test.ts).
 */
export const SHARD_STALL_MS = 11 * 60_000;

/**
 * A failing file that passes unmutated is run alone this many times more, mutated then unmutated
 * back to back: it catches the bug only if every mutated run fails and every unmutated one passes.
 */
export const CONFIRM_PAIRS = 2;

/** A test file as bun finds one (its default patterns). */
const TEST_FILE = /[._](test|spec)\.[cm]?[jt]sx?$/;

function hasTests(dir: string): boolean {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).some((f) =>
    TEST_FILE.test(f) && !f.split(path.sep).includes("node_modules")
  );
}

/**
 * The shards of `test/` in `root`: a filter per folder holding test files ("test/kafka/"), then
 * the files directly in test/, sorted (the same order every run).
 */
export function shardsOf(root: string): string[][] {
  const shards: string[][] = [];
  const top: string[] = [];
  const entries = readdirSync(path.join(root, "test"), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const rel = `test/${e.name}`;
    if (e.isDirectory() && hasTests(path.join(root, rel))) shards.push([`${rel}/`]);
    else if (e.isFile() && TEST_FILE.test(e.name)) top.push(rel);
  }
  if (top.length > 0) shards.push(top);
  return shards;
}

export interface WholeSuiteOptions {
  /** Folders or files (from the root) to run instead of all of test/, one shard each. */
  scope: readonly string[];
  /** Files known to fail on the unmutated code (the named files' baseline): left out. */
  failingUnmutated: Iterable<string>;
  /** `file`'s result on the unmutated code (run there on first demand). */
  baselineOf: (file: string) => Promise<BaselineEntry>;
  /** An unmutated copy of the repository, to run a file in again. */
  unmutatedDir: () => string;
  /** The id of the bug planted in the copy (bun-tests.ts RunOptions.planted). */
  planted: string;
  log: (line: string) => void;
  shardBudgetMs?: number;
  stallMs?: number;
}

export interface WholeSuiteResult {
  caught: boolean;
  /** The catching file and test (caught); what could not be judged (not caught). */
  detail: string;
  /** Shards run, each with its outcome and time, for the report. */
  ran: string[];
  /** Files left out: failing on the unmutated code too. */
  ignored: string[];
}

/** Runs the survivor in `dir` against the whole suite, or `o.scope`, shard by shard. */
export async function wholeSuite(dir: string, o: WholeSuiteOptions): Promise<WholeSuiteResult> {
  const ignored = new Set(o.failingUnmutated);
  const shards = o.scope.length > 0 ? o.scope.map((s) => [s]) : shardsOf(dir);
  const ran: string[] = [];
  const unjudged: string[] = [];
  const flaky: string[] = [];
  for (const shard of shards) {
    const name = shard.length === 1 ? shard[0] : `test/*.test.ts (${shard.length} files)`;
    const extra = [...ignored].map((f) => `--path-ignore-patterns=${f}`);
    const t = await runBunTests(dir, shard, o.shardBudgetMs ?? SHARD_BUDGET_MS, {
      extra,
      planted: o.planted,
      stallMs: Math.min(o.stallMs ?? SHARD_STALL_MS, o.shardBudgetMs ?? SHARD_BUDGET_MS),
    });
    ran.push(`${name}: ${t.failed ? t.detail : "pass"} (${t.seconds} s)`);
    o.log(`  whole suite: ${ran.at(-1)}`);
    const suspects = [...t.failures].filter(([f]) => !ignored.has(f));
    // A hang: the file bun was in when it was killed, unless a failure there is already listed.
    if (t.killed && t.hungIn !== undefined && !ignored.has(t.hungIn) && !t.failures.has(t.hungIn)) {
      suspects.push([t.hungIn, t.detail]);
    }
    for (const [file, why] of suspects) {
      if (file === "(unknown file)") {
        unjudged.push(`${name}: ${why}`);
        continue;
      }
      const b = await o.baselineOf(file);
      if (!b.ok) {
        o.log(`  whole suite: ${file} fails unmutated too (${b.detail}): left out`);
        ignored.add(file);
        continue;
      }
      // Passes unmutated: the bug's, or a timing-sensitive test that failed under load in a long
      // shard and passed when the machine was quieter? Run alone, back to back, the mutated copy
      // must fail and the unmutated one pass, CONFIRM_PAIRS times: the same load for both.
      const alone = (where: string) =>
        runBunTests(where, [file], o.shardBudgetMs ?? SHARD_BUDGET_MS, {
          stallMs: Math.min(o.stallMs ?? SHARD_STALL_MS, o.shardBudgetMs ?? SHARD_BUDGET_MS),
          ...(where === dir ? { planted: o.planted } : {}),
        });
      let unconfirmed = "";
      for (let i = 0; i < CONFIRM_PAIRS && unconfirmed === ""; i++) {
        const m = await alone(dir);
        if (!m.failed) unconfirmed = `passes alone mutated (${m.seconds} s)`;
        else if ((await alone(o.unmutatedDir())).failed) {
          unconfirmed = `fails alone unmutated too, right after (${m.detail})`;
        }
      }
      if (unconfirmed === "") {
        return { caught: true, detail: `whole suite: ${file}: ${why}`, ran, ignored: [...ignored] };
      }
      o.log(
        `  whole suite: ${file} failed in the shard (${why}) but ${unconfirmed}: flaky, left out`,
      );
      flaky.push(file);
      ignored.add(file);
    }
    if (t.failed && suspects.length === 0 && t.failures.size === 0) {
      // Failed naming no file (bun crashed, or the hang came before any file's header).
      unjudged.push(`${name}: ${t.detail}`);
    }
  }
  if (flaky.length > 0) {
    unjudged.push(`flaky (failed once mutated, then passed): ${flaky.join(", ")}`);
  }
  return {
    caught: false,
    detail: unjudged.length > 0 ? `whole suite, not judged: ${unjudged.join("; ")}` : "",
    ran,
    ignored: [...ignored],
  };
}
