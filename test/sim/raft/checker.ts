// Global safety invariants of a Raft simulation, checked incrementally at every step:
// election safety (one leader per term), log matching (same index+term => same entry and same
// predecessor term, which by induction gives identical prefixes), leader completeness (a leader
// holds every entry committed in an earlier term), state-machine safety (every node applies the
// same entry, and reaches the same state hash, at each index), no committed entry ever changes,
// and linearizable reads (a read-index is at least every commit known when the read began).
import type { RaftNode } from "../../../src/cluster/raft/node.ts";
import type { Entry } from "../../../src/cluster/raft/types.ts";

export class InvariantError extends Error {
  override readonly name = "InvariantError";
}

export function fingerprint(e: Entry): string {
  switch (e.kind) {
    case "normal":
      return e.data;
    case "noop":
      return "#noop";
    case "conf":
      return `#${e.change.op}:${e.change.node}`;
  }
}

/** FNV-1a style 32-bit rolling hash of the applied sequence. */
export function hashStep(h: number, fp: string, index: number): number {
  let x = (h ^ index) >>> 0;
  for (let i = 0; i < fp.length; i++) x = Math.imul(x ^ fp.charCodeAt(i), 16777619) >>> 0;
  return x;
}

export class Checker {
  #leaders = new Map<number, number>();
  /** index*2^21+term -> [fingerprint, prevTerm] */
  #seen = new Map<number, [string, number | undefined]>();
  committedTerm: number[] = [];
  committedFp: string[] = [];
  /**
   * The term each index was committed in, as first reported: the reporting leader's term, else
   * the entry's own (a lower bound). Raft promises an entry only to leaders of later terms: a
   * candidate of an older term can still win with a vote that was delayed past the commit.
   */
  #commitTerm: number[] = [];
  /** State hash after applying each index (the first node to get there sets it). */
  #hashAt: number[] = [];
  commitMax = 0;

  #fail(msg: string): never {
    throw new InvariantError(msg);
  }

  becameLeader(node: RaftNode, term: number): void {
    const prev = this.#leaders.get(term);
    if (prev !== undefined && prev !== node.id) {
      this.#fail(`election safety: nodes ${prev} and ${node.id} both lead term ${term}`);
    }
    this.#leaders.set(term, node.id);
    for (let i = 1; i <= this.commitMax; i++) {
      if ((this.#commitTerm[i] ?? Infinity) < term) this.#leaderHas(node, i, "leader completeness");
    }
  }

  #leaderHas(node: RaftNode, i: number, what: string): void {
    const t = this.committedTerm[i];
    if (t === undefined || i <= node.log.snapIndex) return;
    const e = node.log.entry(i);
    if (e === undefined || e.term !== t || fingerprint(e) !== this.committedFp[i]) {
      this.#fail(
        `${what}: node ${node.id} leads term ${node.term} but lacks committed entry ${i} (term ${t})`,
      );
    }
  }

  /** Entries a node is about to persist (its in-memory log already holds them). */
  appended(node: RaftNode, entries: Entry[]): void {
    for (const e of entries) {
      const key = e.index * 2097152 + e.term;
      const fp = fingerprint(e);
      const prevTerm = node.log.term(e.index - 1);
      const s = this.#seen.get(key);
      if (s === undefined) {
        this.#seen.set(key, [fp, prevTerm]);
        continue;
      }
      if (s[0] !== fp) {
        this.#fail(`log matching: two different entries at index ${e.index} term ${e.term}`);
      }
      if (prevTerm !== undefined && s[1] !== undefined && s[1] !== prevTerm) {
        this.#fail(
          `log matching: entry ${e.index}/${e.term} follows terms ${s[1]} and ${prevTerm}`,
        );
      }
      if (s[1] === undefined) s[1] = prevTerm;
    }
  }

  /** A node reports entries as committed (leaderTerm: the reporting leader's term, or 0). */
  committed(entries: Entry[], leaders: RaftNode[], leaderTerm: number): void {
    for (const e of entries) {
      const fp = fingerprint(e);
      const t = this.committedTerm[e.index];
      if (t === undefined) {
        this.committedTerm[e.index] = e.term;
        this.committedFp[e.index] = fp;
        this.#commitTerm[e.index] = leaderTerm > 0 ? leaderTerm : e.term;
        if (e.index > this.commitMax) this.commitMax = e.index;
        for (const l of leaders) {
          if (leaderTerm > 0 && l.term > leaderTerm) this.#leaderHas(l, e.index, "lost commit");
        }
      } else if (t !== e.term || this.committedFp[e.index] !== fp) {
        this.#fail(`committed entry ${e.index} changed from term ${t} to term ${e.term}`);
      }
    }
  }

  /** A node applied entry e and reached state hash h. */
  applied(nodeId: number, e: Entry, h: number): void {
    const fp = this.committedFp[e.index];
    if (fp !== undefined && fp !== fingerprint(e)) {
      this.#fail(`state machine safety: node ${nodeId} applied a different entry at ${e.index}`);
    }
    this.stateAt(nodeId, e.index, h);
  }

  /** A node's state machine is at index with hash h (after apply or snapshot install). */
  stateAt(nodeId: number, index: number, h: number): void {
    const want = this.#hashAt[index];
    if (want === undefined) this.#hashAt[index] = h;
    else if (want !== h) {
      this.#fail(`state machine safety: node ${nodeId} state at ${index} differs from others`);
    }
  }

  /** A read that began when commitMax was `before` got read index `index`. */
  readServed(nodeId: number, before: number, index: number): void {
    if (index < before) {
      this.#fail(`linearizability: node ${nodeId} read at index ${index} < ${before} committed`);
    }
  }
}
