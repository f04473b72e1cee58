// `bun test` runs for the mutation suite (scripts/mutate.ts): which files failed and their first
// failing test, read from bun's report; the baseline (the named files on the unmutated code: a
// file that fails there would make every bug it names look caught); the whole-suite rerun of a
// survivor. Children run at a lower CPU priority: the machine is shared.
import { type ChildProcess, spawn } from "node:child_process";
import { setPriority } from "node:os";

/** Niceness of every `bun test` child (and the brokers it starts, which inherit it). */
export const CHILD_NICENESS = 10;

const running = new Set<ChildProcess>();

/** Ends every `bun test` child still running (the runner was interrupted). */
export function killChildren(): void {
  for (const c of running) killGroup(c);
}

/** The child and the brokers its tests started (its own process group). */
function killGroup(c: ChildProcess): void {
  try {
    if (c.pid !== undefined) process.kill(-c.pid, "SIGKILL");
  } catch {
    // The group is gone (everything in it has exited).
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }
}

export interface TestRun {
  /** Non-zero exit (or killed). */
  failed: boolean;
  /** Test files with a failing test or an error outside tests, each with its first failure. */
  failures: Map<string, string>;
  /** The first failure's description (file and test), or `exit N`. */
  detail: string;
  /** Killed: past its budget, or silent for `stallMs`. */
  killed: boolean;
  /** The file bun was running when it was killed (its header is printed as a file starts). */
  hungIn?: string;
  seconds: number;
}

const HEADER = /^(\S+\.test\.[cm]?[jt]sx?):$/;

/**
 * Bun's report (stderr) as failures per file: a file header line ("test/x.test.ts:") precedes
 * its results; "(fail) name" is a failing test, "# Unhandled error" an error between tests.
 */
export function parseReport(text: string): Map<string, string> {
  const failures = new Map<string, string>();
  let file = "(unknown file)";
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    const h = HEADER.exec(line);
    if (h) {
      file = h[1];
      continue;
    }
    let what: string | null = null;
    if (line.startsWith("(fail) ")) what = line.slice(7).replace(/ \[[\d.]+m?s\]$/, "");
    else if (line.startsWith("# Unhandled error")) what = "an error outside any test";
    if (what !== null && !failures.has(file)) failures.set(file, what);
  }
  return failures;
}

export interface RunOptions {
  /** Extra bun arguments (before the files). */
  extra?: readonly string[];
  /**
   * Kill when bun has printed nothing for this long: a test stuck where bun's own per-test
   * timeout cannot reach it (a synchronous loop, a hook waiting on a process). Must exceed the
   * longest single test's timeout (bun prints a test's line only as it ends).
   */
  stallMs?: number;
  /**
   * The id of the bug planted in `dir`, passed as MUTATE_PLANTED: the list's own check
   * (test/sim/mutate.test.ts, "every planted bug's edit applies") skips that entry there.
   */
  planted?: string;
}

/**
 * After the child exits (or is killed), how long its stderr may stay open: a process that left
 * the child's group may hold it for ever, and the run must end all the same.
 */
const DRAIN_MS = 5_000;

/**
 * `bun test` in `dir` on `files` (all of test/ when empty). Past `budgetMs`, or silent for
 * `o.stallMs`, its whole process group is killed (the brokers its tests started too) and the run
 * ends as failed and `killed`: a hang is a failure, as it would be in CI.
 */
export function runBunTests(
  dir: string,
  files: readonly string[],
  budgetMs: number,
  o: RunOptions = {},
): Promise<TestRun> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["test", "--timeout", "60000", ...(o.extra ?? []), ...files],
      {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"],
        env: o.planted === undefined ? process.env : { ...process.env, MUTATE_PLANTED: o.planted },
        // Its own process group: a hung run is ended with every broker its tests started.
        detached: true,
      },
    );
    running.add(child);
    try {
      if (child.pid !== undefined) setPriority(child.pid, CHILD_NICENESS);
    } catch {
      // Not permitted here: run at the default priority.
    }
    // Bun writes its report to stderr; a header may be far above its failure, so keep it all
    // up to a generous cap.
    let text = "";
    let killed = false;
    let why = "";
    const kill = (reason: string) => {
      if (killed) return;
      killed = true;
      why = reason;
      killGroup(child);
    };
    let stall: ReturnType<typeof setTimeout> | undefined;
    const armStall = () => {
      if (o.stallMs === undefined) return;
      clearTimeout(stall);
      stall = setTimeout(
        () => kill(`killed after ${Math.round(o.stallMs! / 1000)} s without output`),
        o.stallMs,
      );
    };
    armStall();
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (text.length < 20_000_000) text += d;
      armStall();
    });
    const timer = setTimeout(
      () => kill(`killed after ${Math.round(budgetMs / 1000)} s`),
      budgetMs,
    );
    let done = false;
    let code: number | null = null;
    const finish = () => {
      if (done) return;
      done = true;
      running.delete(child);
      clearTimeout(timer);
      clearTimeout(stall);
      child.stderr.destroy();
      const failures = parseReport(text);
      const first = [...failures][0];
      const hungIn = killed
        ? [...text.matchAll(/^(\S+\.test\.[cm]?[jt]sx?):$/gm)].at(-1)?.[1]
        : undefined;
      resolve({
        failed: killed || code !== 0,
        failures,
        detail: killed
          ? `${why} (hung${hungIn ? ` in ${hungIn}` : ""})`
          : first
          ? `${first[0]}: ${first[1]}`
          : `exit ${code}`,
        killed,
        ...(hungIn !== undefined ? { hungIn } : {}),
        seconds: Math.round((performance.now() - t0) / 100) / 10,
      });
    };
    child.on("exit", (c) => {
      code = c;
      // Whatever its tests left running in its group (a broker a mutated stop never stopped),
      // at once: while any of it lives the group id cannot be reused by another process.
      killGroup(child);
      setTimeout(finish, DRAIN_MS);
    });
    child.on("close", finish);
  });
}

/** What the unmutated code gives for one test file (cached for the whole run). */
export interface BaselineEntry {
  ok: boolean;
  detail: string;
  /** Failed once, then passed alone: its "caught" verdicts deserve a second look. */
  flaky?: string;
}

/**
 * Runs `files` on an unmutated copy (`dir`) and records each file's result in `cache`. Files
 * already in the cache are not run again. A run that fails without naming a file (a crash)
 * marks every file of it failed: nothing it says can be trusted. A file that fails is run once
 * more alone: on a loaded machine a broker may start too slowly once, and the second run tells a
 * broken file from a flaky one (`flaky` names the first failure).
 */
export async function baseline(
  dir: string,
  files: readonly string[],
  cache: Map<string, BaselineEntry>,
  budgetMs: number,
): Promise<void> {
  const todo = [...new Set(files)].filter((f) => !cache.has(f));
  if (todo.length === 0) return;
  const r = await runBunTests(dir, todo, budgetMs);
  const named = [...r.failures.keys()].some((f) => todo.includes(f));
  for (const f of todo) {
    const why = r.failures.get(f);
    if (r.killed) cache.set(f, { ok: false, detail: `the baseline run was ${r.detail}` });
    else if (why !== undefined) cache.set(f, { ok: false, detail: why });
    else if (r.failed && !named) cache.set(f, { ok: false, detail: r.detail });
    else cache.set(f, { ok: true, detail: "" });
  }
  for (const f of todo) {
    const first = cache.get(f)!;
    if (first.ok) continue;
    const again = await runBunTests(dir, [f], budgetMs);
    cache.set(
      f,
      again.failed
        ? { ok: false, detail: again.failures.get(f) ?? again.detail }
        : { ok: true, detail: "", flaky: first.detail },
    );
  }
}
