// The invariant checkers must be able to fail: inject known Raft bugs (reachable only from
// tests) and see the simulation catch each on some seed.
import { expect, test } from "bun:test";
import type { RaftBugs } from "../../../src/cluster/raft/types.ts";
import { runRaftSeed } from "./scenario.ts";

function firstFailure(bugs: RaftBugs, maxSeeds: number): string | undefined {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const out = runRaftSeed(seed, { bugs });
    if (out.failure !== undefined) return out.failure;
  }
  return undefined;
}

test("a vote granted without the log check is caught", () => {
  const f = firstFailure({ voteIgnoresLog: true }, 40);
  expect(f).toMatch(/leader completeness|lost commit|committed entry|state machine safety/);
});

test("a commit without a majority is caught", () => {
  const f = firstFailure({ commitWithoutMajority: true }, 40);
  expect(f).toMatch(/leader completeness|lost commit|committed entry|state machine safety/);
});

test("the same seed replays exactly", () => {
  const a = runRaftSeed(77);
  const b = runRaftSeed(77);
  expect(a).toEqual(b);
  expect(a.failure).toBeUndefined();
});
