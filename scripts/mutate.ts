// The mutation suite: plants each bug of scripts/mutations (a text edit) in a scratch copy of the
// repository, runs the simulator campaign that should catch it (scripts/mutations/
// run-campaign.ts, in a child process) until the first failing seed or the seed budget, and
// reports per bug: caught or not, the first failing seed and the invariant. The default suite
// ("sim") measures the simulators; the "tests" suite (--suite tests, issue #21) measures the unit
// and integration tests on bugs in code no simulator runs: each runs only its named test files.
//
//   npm run mutate                                  # all of them (~3-4 min on 2 cores)
//   npm run mutate -- --only raft-quorum-half,repl-truncate-to-hw
//   npm run mutate -- --seeds 50                    # every campaign's budget set to 50 seeds
//   npm run mutate -- --check                       # only check that every edit still applies
//   npm run mutate -- --markdown                    # the table as Markdown (docs/mutation.md)
//   npm run mutate -- --keep                        # keep the scratch copies (/tmp/mutate-*)
//   npm run mutate -- --suite tests                 # the test-suite bugs (unit/integration tests)
//   npm run mutate -- --suite tests --only http-produce-acks-default-one
//   npm run mutate -- --suite tests --whole-suite   # survivors: every test file too (slow)
//   npm run mutate -- --suite tests --whole-suite-in test/kafka,test/http   # survivors: these
//   npm run mutate -- --no-baseline                 # skip the unmutated run of the named files
//
// Before mutating, the test files the selected bugs name run once on an unmutated copy: a file
// failing there is reported (BASELINE FAILS), left out of every bug's run, and fails the suite
// (a "caught" by it would mean nothing). Test children run at niceness 10 (a shared machine).
//
// Exit code 1 when an edit no longer applies (its text is not in the file exactly once: the
// code moved, rewrite the entry), a mutated tree does not load, a named test file fails on the
// unmutated code, or fewer than THRESHOLD of the
// bugs expected to be caught are caught. Bugs marked `expect: "survives"` are listed with their
// reason and left out of the ratio.
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { setPriority, tmpdir } from "node:os";
import * as path from "node:path";
import {
  ALL_MUTATIONS,
  type CampaignName,
  checkMutations,
  type Mutation,
  type SuiteName,
  SUITES,
} from "./mutations/index.ts";
import {
  baseline,
  type BaselineEntry,
  CHILD_NICENESS,
  killChildren,
  runBunTests,
} from "./mutations/bun-tests.ts";
import { parseSlice, rotate, rotationKey, type Slice, sliceOf } from "./mutations/rotation.ts";
import { wholeSuite } from "./mutations/whole-suite.ts";

/** Share of the bugs expected to be caught that must be caught. */
export const THRESHOLD = 0.9;

/**
 * Seeds tried per campaign (a mutation may ask for more). The unmutated code passes at least
 * these: test/sim/raft/seeds-*.test.ts (500), test/sim/swim (500 chaos; the loss campaign was
 * checked over 300), test/sim/replication (1000), test/sim/storage (400). Most bugs are caught within tens of seeds; a survivor costs the whole
 * budget, so it stays a few seconds of simulation per campaign on this machine.
 */
export const SEED_BUDGET: Record<CampaignName, number> = {
  raft: 150,
  "raft-figure8": 300,
  swim: 150,
  "swim-loss": 60,
  replication: 400,
  "storage-crash": 300,
};

/**
 * Wall-clock budget of one campaign run, a safety net on a slow machine (a run normally ends at
 * its first failing seed or its seed budget well before); a run past it stops after its seed.
 */
export const TIME_BUDGET_MS = 120_000;
/** Wall-clock budget of a test-suite mutation's `bun test` run (its files start brokers). */
export const TESTS_BUDGET_MS = 300_000;
/** A child silent this long after its budget (a seed that never ends) is killed. */
const HANG_GRACE_MS = 30_000;

const ROOT = path.resolve(import.meta.dir, "..");
/** What a scratch copy holds: the code, the simulators, this suite. */
const COPY = ["src", "test/sim", "scripts/mutations", "package.json", "tsconfig.json"];
/**
 * A test-suite mutation (no campaign) copies all of test/ (its files import helpers from other
 * folders) and what the tests read: scripts, migrations, bunfig.toml (timeout, root).
 */
const COPY_TESTS = [
  "src",
  "test",
  "scripts",
  "migrations",
  "package.json",
  "tsconfig.json",
  "bunfig.toml",
  "deno.json",
];

/**
 * "baseline": every test file the bug names fails on the unmutated code, so nothing can be said
 * about the bug (a problem, like "stale").
 */
export type Verdict = "caught" | "survived" | "stale" | "error" | "baseline";

export interface MutationResult {
  id: string;
  /** The campaign that caught it, or every campaign tried ("swim+swim-loss"). */
  campaign: string;
  verdict: Verdict;
  expectSurvives: boolean;
  seed: number | null;
  /** The failing invariant (caught), or why the run could not be made (stale, error). */
  detail: string;
  seedsRun: number;
  seconds: number;
  /** The run stopped at the time budget before the seed budget. */
  budgetHit: boolean;
  /**
   * A survivor run against the whole suite (--whole-suite: "every test file") or part of it
   * (--whole-suite-in: the folders) that still survived.
   */
  wholeSuite?: string;
  /** The whole-suite shards run, each with its outcome and time. */
  wholeSuiteRan?: string[];
}

export interface SuiteOptions {
  /** Which list: "sim" (the default, simulator campaigns) or "tests" (unit/integration tests). */
  suite?: SuiteName;
  only?: string[];
  /** Override every campaign's seed budget. */
  seeds?: number;
  timeBudgetMs?: number;
  keep?: boolean;
  /** Progress lines (one per mutation). */
  log?: (line: string) => void;
  /**
   * Check first that the named test files pass on the unmutated code (default true): a file
   * failing there would make every bug it names look caught.
   */
  baseline?: boolean;
  /**
   * Survivors are run again against every test file (all of test/, or these folders or files):
   * a survivor the named files miss may be caught elsewhere. A failure counts only in a file that
   * passes on the unmutated code.
   */
  wholeSuite?: readonly string[] | true;
  /** Budget of one whole-suite shard (default whole-suite.ts's SHARD_BUDGET_MS). */
  wholeSuiteShardMs?: number;
  /** Run only this slice of the expected-to-be-caught bugs (the CI rotation, rotation.ts). */
  slice?: Slice;
  /**
   * Start no mutation after this long (a mutation started runs to its own budget); the ones not
   * started are listed in `notRun`, not counted.
   */
  totalBudgetMs?: number;
  /** Fail when any bug expected to be caught is not (CI), not only below THRESHOLD. */
  strict?: boolean;
  /** The repository to copy (default this one): the runner's own tests plant bugs in a fixture. */
  root?: string;
  /** Run these instead of a suite's list (the runner's own tests). */
  list?: readonly Mutation[];
}

export interface SuiteReport {
  results: MutationResult[];
  /** Caught / expected-to-be-caught (excluding stale and errors from neither). */
  ratio: number;
  expected: number;
  caught: number;
  problems: string[];
  /** Named test files failing on the unmutated code, with their first failure. */
  baselineFailures: Map<string, string>;
  /** Selected but not started: the total budget ran out first. */
  notRun: string[];
  seconds: number;
  ok: boolean;
}

function readRepo(file: string, root = ROOT): string | null {
  const p = path.join(root, file);
  return existsSync(p) ? readFileSync(p, "utf8") : null;
}

/** Scratch copies made by this run (removed on an interrupt too, unless --keep). */
const scratchDirs = new Set<string>();

/** A scratch copy of `paths` of the repository (node_modules linked); returns its directory. */
function scratchCopy(name: string, paths: readonly string[], root: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `mutate-${name}-`));
  scratchDirs.add(dir);
  for (const p of paths) {
    const from = path.join(root, p);
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    cpSync(from, path.join(dir, p), { recursive: true });
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/**
 * A whole-suite run copies what the repository holds besides: some tests read docs/ (the systemd
 * unit, the OpenAPI page), .ci/ or the Dockerfile, and would fail in the copy whatever the bug.
 */
const COPY_WHOLE = [
  ...COPY_TESTS,
  "docs",
  "README.md",
  "Dockerfile",
  ".dockerignore",
  ".ci",
  "drizzle.config.ts",
  "package-lock.json",
];

/** A scratch copy of the repository with `m` applied; returns its directory. */
function scratchWith(m: Mutation, whole: boolean, root: string): string {
  const copy = whole
    ? COPY_WHOLE
    : campaignsOf(m).length === 0
    ? COPY_TESTS
    : [...COPY, ...(m.tests ?? []).map((t) => path.dirname(t))];
  const dir = scratchCopy(m.id, copy, root);
  const target = path.join(dir, m.file);
  const text = readFileSync(target, "utf8");
  const at = text.indexOf(m.find);
  if (at < 0 || text.indexOf(m.find, at + m.find.length) >= 0) {
    rmSync(dir, { recursive: true, force: true }); // a stale entry leaves no copy behind
    throw new Error(`${m.id}: the text to replace does not occur exactly once in ${m.file}`);
  }
  writeFileSync(target, text.slice(0, at) + m.replace + text.slice(at + m.find.length));
  return dir;
}

interface ChildOutcome {
  result?: {
    caught: boolean;
    seed: number | null;
    failure: string | null;
    seedsRun: number;
    budgetHit: boolean;
  };
  loadError?: string;
  lastSeed: number | null;
  killed: boolean;
  code: number | null;
  stderrTail: string;
}

function runChild(dir: string, campaign: CampaignName, seeds: number, budgetMs: number) {
  return new Promise<ChildOutcome>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "scripts/mutations/run-campaign.ts",
        "--campaign",
        campaign,
        "--seeds",
        String(seeds),
        "--budget-ms",
        String(budgetMs),
      ],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      if (child.pid !== undefined) setPriority(child.pid, CHILD_NICENESS);
    } catch {
      // Not permitted here: the default priority.
    }
    const out: ChildOutcome = { lastSeed: null, killed: false, code: null, stderrTail: "" };
    let buf = "";
    const onLine = (line: string) => {
      if (line.startsWith("MUTATE-SEED ")) out.lastSeed = Number(line.slice(12));
      else if (line.startsWith("MUTATE-RESULT ")) out.result = JSON.parse(line.slice(14));
      else if (line.startsWith("MUTATE-ERROR ")) out.loadError = JSON.parse(line.slice(13));
    };
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      out.stderrTail = (out.stderrTail + d).slice(-2000);
    });
    const timer = setTimeout(() => {
      out.killed = true;
      child.kill("SIGKILL");
    }, budgetMs + HANG_GRACE_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (buf.length > 0) onLine(buf);
      out.code = code;
      resolve(out);
    });
  });
}

export function campaignsOf(m: Mutation): readonly CampaignName[] {
  if (m.campaign === undefined) return [];
  return typeof m.campaign === "string" ? [m.campaign] : m.campaign;
}

/** State shared by the mutations of one run: the baseline of the test files. */
interface RunState {
  /** Per test file: does it pass on the unmutated code (filled before mutating, and on demand). */
  baseline: Map<string, BaselineEntry>;
  /** An unmutated copy for baselines found on demand (a whole-suite failure), made once. */
  cleanDir: string | null;
  root: string;
  log: (line: string) => void;
}

/** `file`'s result on the unmutated code; runs it there the first time it is asked. */
async function baselineOf(file: string, st: RunState): Promise<BaselineEntry> {
  if (!st.baseline.has(file)) {
    st.cleanDir ??= scratchCopy("baseline", COPY_WHOLE, st.root);
    await baseline(st.cleanDir, [file], st.baseline, TESTS_BUDGET_MS);
  }
  return st.baseline.get(file)!;
}

async function runOne(m: Mutation, o: SuiteOptions, st: RunState): Promise<MutationResult> {
  const t0 = performance.now();
  const campaigns = campaignsOf(m);
  const base = {
    id: m.id,
    campaign: campaigns.length === 0 ? "tests" : campaigns.join("+"),
    expectSurvives: m.expect === "survives",
    seed: null,
    seedsRun: 0,
    budgetHit: false,
  };
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;
  // Only files that pass unmutated can catch anything (the baseline, when it was run).
  const named = m.tests ?? [];
  const tests = named.filter((f) => st.baseline.get(f)?.ok !== false);
  if (named.length > 0 && tests.length === 0 && campaigns.length === 0) {
    return {
      ...base,
      verdict: "baseline",
      detail: `its test files fail on the unmutated code: ${named.join(", ")}`,
      seconds: seconds(),
    };
  }
  let dir: string;
  try {
    dir = scratchWith(m, o.wholeSuite !== undefined, st.root);
  } catch (e) {
    return { ...base, verdict: "stale", detail: (e as Error).message, seconds: seconds() };
  }
  try {
    let seedsRun = 0;
    let budgetHit = false;
    for (const campaign of campaigns) {
      const seeds = o.seeds ?? m.seeds ?? SEED_BUDGET[campaign];
      const budget = o.timeBudgetMs ?? TIME_BUDGET_MS;
      const c = await runChild(dir, campaign, seeds, budget);
      if (c.loadError !== undefined) {
        return {
          ...base,
          verdict: "error",
          detail: `does not load: ${c.loadError}`,
          seconds: seconds(),
        };
      }
      if (c.result === undefined) {
        // No result line: the run hung in a seed (killed) or the process died under the bug.
        // The seed tests would fail the same way, so it counts as caught, saying how.
        const last = c.stderrTail.trim().split("\n").filter(Boolean).at(-1) ?? "";
        return {
          ...base,
          campaign,
          verdict: "caught",
          seed: c.lastSeed,
          detail: c.killed
            ? `seed ${c.lastSeed} never finished (killed after ${
              Math.round((budget + HANG_GRACE_MS) / 1000)
            } s)`
            : `the process died (exit ${c.code}): ${last.slice(0, 200)}`,
          seedsRun: seedsRun + (c.lastSeed ?? 0),
          seconds: seconds(),
        };
      }
      const r = c.result;
      seedsRun += r.seedsRun;
      budgetHit ||= r.budgetHit;
      if (r.caught) {
        return {
          ...base,
          campaign,
          verdict: "caught",
          seed: r.seed,
          detail: r.failure ?? "",
          seedsRun,
          budgetHit,
          seconds: seconds(),
        };
      }
    }
    if (tests.length > 0) {
      // Integration tests start broker processes: a test-suite bug gets more time than a seed run.
      const budget = o.timeBudgetMs ??
        (m.testBudgetSeconds !== undefined ? m.testBudgetSeconds * 1000 : undefined) ??
        (campaigns.length === 0 ? TESTS_BUDGET_MS : TIME_BUDGET_MS);
      const t = await runBunTests(dir, tests, budget, { planted: m.id });
      if (t.failed) {
        return {
          ...base,
          campaign: campaigns.length === 0 ? "tests" : `${base.campaign}+test`,
          verdict: "caught",
          detail: `test: ${t.detail}`,
          seedsRun,
          budgetHit,
          seconds: seconds(),
        };
      }
    }
    if (o.wholeSuite !== undefined) {
      const w = await wholeSuite(dir, {
        scope: o.wholeSuite === true ? [] : o.wholeSuite,
        failingUnmutated: [...st.baseline].filter(([, b]) => !b.ok).map(([f]) => f),
        baselineOf: (f) => baselineOf(f, st),
        unmutatedDir: () => (st.cleanDir ??= scratchCopy("baseline", COPY_WHOLE, st.root)),
        planted: m.id,
        log: st.log,
        ...(o.wholeSuiteShardMs !== undefined ? { shardBudgetMs: o.wholeSuiteShardMs } : {}),
      });
      if (w.caught) {
        return {
          ...base,
          campaign: "whole-suite",
          verdict: "caught",
          detail: w.detail,
          seedsRun,
          budgetHit,
          wholeSuiteRan: w.ran,
          seconds: seconds(),
        };
      }
      return {
        ...base,
        verdict: "survived",
        detail: w.detail,
        seedsRun,
        budgetHit,
        ...(w.detail === ""
          ? {
            wholeSuite: (o.wholeSuite === true ? "every test file" : o.wholeSuite.join(", ")) +
              (w.ignored.length ? ` (but ${w.ignored.join(", ")}, failing unmutated)` : ""),
          }
          : {}),
        wholeSuiteRan: w.ran,
        seconds: seconds(),
      };
    }
    return { ...base, verdict: "survived", detail: "", seedsRun, budgetHit, seconds: seconds() };
  } finally {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

export async function runSuite(o: SuiteOptions = {}): Promise<SuiteReport> {
  const t0 = performance.now();
  const log = o.log ?? (() => {});
  const root = o.root ?? ROOT;
  const suite = o.list ?? SUITES[o.suite ?? "sim"];
  const problems = checkMutations(suite, (f) => readRepo(f, root));
  let list = [...suite];
  if (o.only !== undefined) {
    const unknown = o.only.filter((id) => !suite.some((m) => m.id === id));
    for (const id of unknown) problems.push(`${id}: no such mutation`);
    list = list.filter((m) => o.only!.includes(m.id));
  }
  if (o.slice !== undefined) list = sliceOf(list, o.slice);
  const st: RunState = { baseline: new Map(), cleanDir: null, root, log };
  const baselineFailures = new Map<string, string>();
  try {
    const files = [...new Set(list.flatMap((m) => m.tests ?? []))];
    if ((o.baseline ?? true) && files.length > 0) {
      log(`baseline: ${files.length} named test file(s) on the unmutated code...`);
      st.cleanDir = scratchCopy(
        "baseline",
        o.wholeSuite !== undefined ? COPY_WHOLE : COPY_TESTS,
        root,
      );
      await baseline(st.cleanDir, files, st.baseline, TESTS_BUDGET_MS * 2);
      for (const f of files) {
        const b = st.baseline.get(f)!;
        if (b.flaky !== undefined) {
          log(`baseline: ${f} failed once (${b.flaky}), then passed alone: flaky`);
        }
        if (b.ok) continue;
        baselineFailures.set(f, b.detail);
        const who = list.filter((m) => m.tests?.includes(f)).map((m) => m.id);
        log(`BASELINE FAILS ${f}: ${b.detail} (named by ${who.join(", ")})`);
        problems.push(
          `baseline: ${f} fails on the unmutated code (${b.detail}); not counted for ` +
            who.join(", "),
        );
      }
      if (baselineFailures.size === 0) log(`baseline: all ${files.length} pass`);
    }
    const results: MutationResult[] = [];
    const notRun: string[] = [];
    for (const m of list) {
      if (o.totalBudgetMs !== undefined && performance.now() - t0 > o.totalBudgetMs) {
        notRun.push(m.id);
        continue;
      }
      const r = await runOne(m, o, st);
      results.push(r);
      log(formatRow(r));
    }
    for (const r of results) {
      if (r.verdict === "stale" || r.verdict === "error" || r.verdict === "baseline") {
        problems.push(`${r.id}: ${r.detail}`);
      }
    }
    const expected = results.filter((r) => !r.expectSurvives);
    const caught = expected.filter((r) => r.verdict === "caught").length;
    const ratio = expected.length === 0 ? 1 : caught / expected.length;
    if (o.strict) {
      for (const r of expected) {
        if (r.verdict !== "caught") problems.push(`${r.id}: expected to be caught, ${r.verdict}`);
      }
    }
    return {
      results,
      ratio,
      expected: expected.length,
      caught,
      problems: [...new Set(problems)],
      baselineFailures,
      notRun,
      seconds: Math.round((performance.now() - t0) / 1000),
      ok: problems.length === 0 && ratio >= THRESHOLD,
    };
  } finally {
    if (st.cleanDir !== null && !o.keep) rmSync(st.cleanDir, { recursive: true, force: true });
  }
}

function formatRow(r: MutationResult): string {
  const verdict = r.verdict === "caught"
    ? (r.expectSurvives ? "CAUGHT (expected to survive)" : "caught")
    : r.verdict === "survived"
    ? (r.expectSurvives ? "survived (expected)" : "SURVIVED")
    : r.verdict.toUpperCase();
  const seed = r.seed === null ? "-" : String(r.seed);
  const runs = r.verdict === "survived" && r.campaign !== "tests"
    ? ` (${r.seedsRun} seeds${r.budgetHit ? ", time budget" : ""})`
    : "";
  const whole = r.wholeSuite ? ` (${r.wholeSuite}: all pass too)` : "";
  return `${r.id.padEnd(40)} ${r.campaign.padEnd(16)} ${verdict.padEnd(14)} ${seed.padStart(5)}  ` +
    `${r.seconds.toFixed(1).padStart(5)} s  ${r.detail}${runs}${whole}`;
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** The report as Markdown: the table of every mutation, then the survivors with reasons. */
export function markdown(rep: SuiteReport): string {
  const byId = new Map(ALL_MUTATIONS.map((m) => [m.id, m]));
  const lines = [
    "| mutation | campaign | caught | first failing seed | invariant (first failure) | s |",
    "| --- | --- | --- | ---: | --- | ---: |",
  ];
  for (const r of rep.results) {
    const caught = r.verdict === "caught"
      ? "yes"
      : r.verdict === "survived"
      ? (r.expectSurvives ? "no (expected)" : "**no**")
      : r.verdict;
    const detail = r.verdict === "survived"
      ? (r.campaign === "tests" ? "its tests pass" : `not in ${r.seedsRun} seeds`) +
        (r.wholeSuite ? `; so do ${r.wholeSuite}` : "")
      : escapeCell(r.detail.length > 160 ? r.detail.slice(0, 157) + "..." : r.detail);
    lines.push(
      `| \`${r.id}\` | ${r.campaign} | ${caught} | ${r.seed ?? "—"} | ${detail} | ${
        r.seconds.toFixed(1)
      } |`,
    );
  }
  const survivors = rep.results.filter((r) => r.verdict === "survived");
  if (survivors.length > 0) {
    lines.push("", "Survivors:", "");
    for (const r of survivors) {
      const m = byId.get(r.id)!;
      lines.push(`- \`${r.id}\`: ${m.why} ${m.reason ?? "**Not expected: investigate.**"}`);
    }
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const o: SuiteOptions = { log: (l) => console.log(l) };
  // Interrupted: end the test children (they would run on, niced, for minutes), remove the
  // scratch copies, and go.
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      killChildren();
      if (!o.keep) { for (const d of scratchDirs) rmSync(d, { recursive: true, force: true }); }
      process.exit(130);
    });
  }
  let md = false;
  let checkOnly = false;
  let rotateOf: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--only") o.only = (args[++i] ?? "").split(",").filter(Boolean);
    else if (a === "--seeds") o.seeds = Number(args[++i]);
    else if (a === "--time-budget") o.timeBudgetMs = Number(args[++i]) * 1000;
    else if (a === "--keep") o.keep = true;
    else if (a === "--no-baseline") o.baseline = false;
    else if (a === "--strict") o.strict = true;
    else if (a === "--slice") o.slice = parseSlice(args[++i] ?? "");
    else if (a === "--rotate") rotateOf = Number(args[++i]);
    else if (a === "--total-budget") o.totalBudgetMs = Number(args[++i]) * 1000;
    else if (a === "--whole-suite") o.wholeSuite = true;
    else if (a === "--whole-suite-in") {
      o.wholeSuite = (args[++i] ?? "").split(",").filter(Boolean);
    } else if (a === "--markdown") md = true;
    else if (a === "--check") checkOnly = true;
    else if (a === "--suite") {
      const name = args[++i];
      if (name !== "sim" && name !== "tests") {
        console.error("--suite needs sim or tests");
        process.exit(2);
      }
      o.suite = name;
    } else if (a === "--list") {
      for (const m of SUITES[o.suite ?? "sim"]) {
        console.log(
          `${m.id.padEnd(40)} ${
            (campaignsOf(m).join("+") || "tests").padEnd(16)
          } ${m.file}  ${m.why}`,
        );
      }
      process.exit(0);
    } else {
      console.error(
        `unknown argument ${a}\nusage: bun scripts/mutate.ts [--suite sim|tests] [--only id,id] ` +
          "[--seeds N] [--time-budget S] [--markdown] [--check] [--list] [--keep] " +
          "[--no-baseline] [--whole-suite | --whole-suite-in dir,file] [--strict] " +
          "[--slice i/n | --rotate n] [--total-budget S]",
      );
      process.exit(2);
    }
  }
  if (o.seeds !== undefined && !(Number.isSafeInteger(o.seeds) && o.seeds > 0)) {
    console.error("--seeds needs a positive integer");
    process.exit(2);
  }
  if (rotateOf !== undefined) {
    if (!(Number.isSafeInteger(rotateOf) && rotateOf >= 1)) {
      console.error("--rotate needs a positive number of slices");
      process.exit(2);
    }
    const k = rotationKey(ROOT);
    o.slice = rotate(k.key, rotateOf);
    console.log(
      `rotation: slice ${o.slice.index}/${rotateOf} (${k.source}; ${k.key} mod ${rotateOf} = ` +
        `${o.slice.index - 1}). Rerun it: npm run mutate -- --suite ${o.suite ?? "sim"} ` +
        `--slice ${o.slice.index}/${rotateOf}`,
    );
  }
  if (o.slice !== undefined) {
    // A subset has no meaningful ratio: every bug in it expected to be caught must be.
    o.strict = true;
    const ids = sliceOf(o.list ?? SUITES[o.suite ?? "sim"], o.slice).map((m) => m.id);
    console.log(`slice ${o.slice.index}/${o.slice.of}: ${ids.length} bugs: ${ids.join(", ")}`);
  }
  if (checkOnly) {
    // Every suite's edits, whatever --suite says: a stale entry anywhere is a problem.
    const problems = checkMutations(ALL_MUTATIONS, readRepo);
    for (const p of problems) console.log(`STALE ${p}`);
    console.log(`${ALL_MUTATIONS.length} mutations, ${problems.length} problems`);
    process.exit(problems.length === 0 ? 0 : 1);
  }
  console.log(
    `${"mutation".padEnd(40)} ${"campaign".padEnd(16)} ${"verdict".padEnd(14)} ${
      "seed".padStart(5)
    }` +
      `  ${"time".padStart(7)}  invariant`,
  );
  const rep = await runSuite(o);
  const survivors = rep.results.filter((r) => r.verdict === "survived");
  if (survivors.length > 0) {
    console.log("\nsurvivors:");
    const byId = new Map(ALL_MUTATIONS.map((m) => [m.id, m]));
    for (const r of survivors) {
      const m = byId.get(r.id)!;
      console.log(
        `  ${r.id}: ${m.reason ?? "NOT EXPECTED: the simulator or the tests miss a real bug"}`,
      );
    }
  }
  const unexpected = rep.results.filter((r) => r.expectSurvives && r.verdict === "caught");
  for (const r of unexpected) {
    console.log(`note: ${r.id} is marked "survives" but was caught: update the list`);
  }
  for (const p of rep.problems) console.log(`PROBLEM ${p}`);
  if (rep.notRun.length > 0) {
    console.log(
      `not run (the total budget of ${(o.totalBudgetMs ?? 0) / 1000} s was spent): ` +
        `${rep.notRun.join(", ")}\n  run them: npm run mutate -- --suite ${o.suite ?? "sim"} ` +
        `--only ${rep.notRun.join(",")}`,
    );
  }
  console.log(
    `\ncaught ${rep.caught}/${rep.expected} expected to be caught (${
      (rep.ratio * 100).toFixed(1)
    }%, threshold ${THRESHOLD * 100}%), ${
      rep.results.filter((r) => r.expectSurvives).length
    } known survivors, ${rep.results.length} mutations in ${rep.seconds} s`,
  );
  if (md) console.log(`\n${markdown(rep)}`);
  process.exit(rep.ok ? 0 : 1);
}
