// Cluster configurations and single-server changes.
import type { ConfChange, Config, NodeId } from "./types.ts";

export function emptyConfig(): Config {
  return { voters: [], learners: [] };
}

export function isVoter(c: Config, id: NodeId): boolean {
  return c.voters.includes(id);
}

export function isMember(c: Config, id: NodeId): boolean {
  return c.voters.includes(id) || c.learners.includes(id);
}

/** Votes needed for a majority of the voters. */
export function quorum(c: Config): number {
  return Math.floor(c.voters.length / 2) + 1;
}

/** The highest value that a majority of voters has reached (f gives each voter's value). */
export function quorumMin(c: Config, f: (id: NodeId) => number): number {
  const vs = c.voters.map(f).sort((a, b) => b - a);
  return vs[quorum(c) - 1] ?? 0;
}

/** Why the change cannot apply to c, or undefined when it can. */
export function checkConfChange(c: Config, ch: ConfChange): string | undefined {
  if (!Number.isSafeInteger(ch.node) || ch.node < 0) return "bad node id";
  switch (ch.op) {
    case "addLearner":
      return isMember(c, ch.node) ? `node ${ch.node} is already a member` : undefined;
    case "promote":
      return c.learners.includes(ch.node) ? undefined : `node ${ch.node} is not a learner`;
    case "remove":
      if (!isMember(c, ch.node)) return `node ${ch.node} is not a member`;
      if (c.voters.length === 1 && c.voters[0] === ch.node) return "cannot remove the last voter";
      return undefined;
    default:
      return "unknown change";
  }
}

/** The configuration after ch (unchanged when ch does not apply). */
export function applyConfChange(c: Config, ch: ConfChange): Config {
  if (checkConfChange(c, ch) !== undefined) return c;
  const n = ch.node;
  switch (ch.op) {
    case "addLearner":
      return { voters: c.voters, learners: [...c.learners, n].sort((a, b) => a - b) };
    case "promote":
      return {
        voters: [...c.voters, n].sort((a, b) => a - b),
        learners: c.learners.filter((x) => x !== n),
      };
    case "remove":
      return {
        voters: c.voters.filter((x) => x !== n),
        learners: c.learners.filter((x) => x !== n),
      };
  }
}

export function copyConfig(c: Config): Config {
  return { voters: [...c.voters], learners: [...c.learners] };
}
