// The Raft checker's leader completeness: a leader must hold every entry committed in an earlier
// term, and nothing more (a candidate of an older term may still win with a delayed vote).
import { expect, test } from "bun:test";
import type { RaftNode } from "../../../src/cluster/raft/node.ts";
import type { Entry } from "../../../src/cluster/raft/types.ts";
import { Checker } from "./checker.ts";

/** The slice of a RaftNode the checker reads: its id, term and log. */
function node(id: number, term: number, entries: Entry[]): RaftNode {
  const log = {
    snapIndex: 0,
    entry: (i: number) => entries.find((e) => e.index === i),
    term: (i: number) => entries.find((e) => e.index === i)?.term ?? 0,
  };
  return { id, term, log } as unknown as RaftNode;
}

const noop6: Entry = { index: 1, term: 6, kind: "noop" };

test("a leader of an older term, elected after a later term committed, is no violation", () => {
  const c = new Checker();
  c.committed([noop6], [], 6); // committed by the leader of term 6
  // Node 1's term-5 election completes with a vote delayed past that commit (seed 470).
  expect(() => c.becameLeader(node(1, 5, []), 5)).not.toThrow();
});

test("a leader of a later term lacking a committed entry is", () => {
  const c = new Checker();
  c.committed([noop6], [], 6);
  expect(() => c.becameLeader(node(2, 7, []), 7)).toThrow(/leader completeness/);
  // Reported first by a follower: the entry's own term bounds the commit term from below.
  const d = new Checker();
  d.committed([{ index: 1, term: 3, kind: "noop" }], [], 0);
  expect(() => d.becameLeader(node(2, 4, []), 4)).toThrow(/leader completeness/);
  expect(() => d.becameLeader(node(3, 5, [{ index: 1, term: 3, kind: "noop" }]), 5)).not
    .toThrow();
});
