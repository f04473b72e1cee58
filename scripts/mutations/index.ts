// The mutation suite's list of planted bugs (scripts/mutate.ts runs them). Add one whenever a
// core grows a rule worth proving: a text edit, the bug in words, the campaign that should catch
// it; `expect: "survives"` with the reason when the simulator cannot.
import { RAFT } from "./raft.ts";
import { REPLICATION } from "./replication.ts";
import { STORAGE } from "./storage.ts";
import { SWIM } from "./swim.ts";
import { TESTS } from "./tests/index.ts";
import type { Mutation } from "./types.ts";

export type { CampaignName, Mutation } from "./types.ts";

/** The simulator suite: every bug runs a campaign (CI runs it all, test/sim/mutate.test.ts). */
export const MUTATIONS: readonly Mutation[] = [...RAFT, ...SWIM, ...REPLICATION, ...STORAGE];
/**
 * The test suite (issue #21): bugs only the unit and integration tests see, run with
 * `npm run mutate -- --suite tests`. Too slow for CI (each runs test files in a scratch copy);
 * CI only checks that their edits apply.
 */
export const TEST_MUTATIONS: readonly Mutation[] = TESTS;
export const SUITES = { sim: MUTATIONS, tests: TEST_MUTATIONS } as const;
export type SuiteName = keyof typeof SUITES;
/** Every mutation of every suite (ids are unique across them). */
export const ALL_MUTATIONS: readonly Mutation[] = [...MUTATIONS, ...TEST_MUTATIONS];

/** Occurrences of `find` in `text` (non-overlapping). */
export function occurrences(text: string, find: string): number {
  if (find.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf(find); i >= 0; i = text.indexOf(find, i + find.length)) n++;
  return n;
}

/**
 * Problems with the list against the tree at `root`: an id used twice, a survivor without a
 * reason, a file or named test file missing, a `find` that does not occur exactly once (the code moved: the
 * mutation must be rewritten, not silently skipped).
 */
export function checkMutations(
  list: readonly Mutation[],
  read: (file: string) => string | null,
): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const m of list) {
    if (seen.has(m.id)) problems.push(`${m.id}: duplicate id`);
    seen.add(m.id);
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(m.id)) problems.push(`${m.id}: id is not kebab-case`);
    if (m.expect === "survives" && !m.reason) problems.push(`${m.id}: survivor without a reason`);
    if (m.find === m.replace) problems.push(`${m.id}: replace equals find`);
    const campaigns = m.campaign === undefined
      ? 0
      : typeof m.campaign === "string"
      ? 1
      : m.campaign.length;
    if (campaigns === 0 && (m.tests ?? []).length === 0) {
      problems.push(`${m.id}: neither a campaign nor tests: nothing could catch it`);
    }
    for (const t of m.tests ?? []) {
      if (read(t) === null) problems.push(`${m.id}: its test file ${t} does not exist`);
    }
    const text = read(m.file);
    if (text === null) {
      problems.push(`${m.id}: ${m.file} does not exist`);
      continue;
    }
    const n = occurrences(text, m.find);
    if (n !== 1) {
      problems.push(
        `${m.id}: the text to replace occurs ${n} times in ${m.file} (must be exactly once): ` +
          JSON.stringify(m.find.length > 80 ? m.find.slice(0, 77) + "..." : m.find),
      );
    }
  }
  return problems;
}
