// The rotating subset of the test-suite mutations CI runs (.ci/run, docs/mutation.md): the bugs
// expected to be caught, sorted by id, dealt round-robin into `of` slices (ids of one area share a
// prefix, so each slice gets a few of every area and a similar cost). CI picks the slice from the
// number of commits on HEAD: consecutive commits run consecutive slices, so any `of` commits in a
// row cover every bug; without git, the day number does the same over `of` days.
import { spawnSync } from "node:child_process";
import type { Mutation } from "./types.ts";

export interface Slice {
  /** 1-based. */
  index: number;
  of: number;
}

/** "3/5" as a slice; throws on anything else. */
export function parseSlice(s: string): Slice {
  const m = /^(\d+)\/(\d+)$/.exec(s);
  const index = m ? Number(m[1]) : NaN;
  const of = m ? Number(m[2]) : NaN;
  if (!(of >= 1 && index >= 1 && index <= of)) throw new Error(`not a slice: ${s} (want i/n)`);
  return { index, of };
}

/** The bugs of slice `s`: only those expected to be caught (a survivor proves nothing in CI). */
export function sliceOf(list: readonly Mutation[], s: Slice): Mutation[] {
  return list
    .filter((m) => m.expect !== "survives")
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .filter((_, i) => i % s.of === s.index - 1);
}

/** What picked the slice, for the log line that lets anyone rerun it. */
export interface RotationKey {
  key: number;
  source: string;
}

/** The commit count of HEAD in `root`, or the UTC day number when there is no git history. */
export function rotationKey(root: string): RotationKey {
  const r = spawnSync("git", ["rev-list", "--count", "HEAD"], { cwd: root, encoding: "utf8" });
  const count = Number(r.stdout?.trim());
  if (r.status === 0 && Number.isSafeInteger(count) && count > 0) {
    const head = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" })
      .stdout?.trim();
    return { key: count, source: `HEAD ${head} is commit ${count}` };
  }
  const day = Math.floor(Date.now() / 86_400_000);
  return { key: day, source: `no git history: UTC day ${day}` };
}

/** The slice of `of` that `key` picks. */
export function rotate(key: number, of: number): Slice {
  return { index: (key % of) + 1, of };
}
