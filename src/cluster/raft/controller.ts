// Membership policy, kept out of the Raft core: promote caught-up learners while the quorum
// has fewer voters than wanted. Pure; the broker calls it on the leader after each Ready.
import type { ConfChange, Config, NodeId } from "./types.ts";

export type VoterTarget = 1 | 3 | 5;

export interface MembershipView {
  config: Config;
  /** Learners the leader reports as caught up (RaftNode.caughtUpLearners()). */
  caughtUp: readonly NodeId[];
  /** Desired number of voters. */
  voters: VoterTarget;
}

/** The next change to propose, or undefined. Promotes the lowest caught-up learner id. */
export function nextMembershipChange(v: MembershipView): ConfChange | undefined {
  if (v.config.voters.length >= v.voters) return undefined;
  const ready = v.caughtUp.filter((id) => v.config.learners.includes(id)).sort((a, b) => a - b);
  return ready.length === 0 ? undefined : { op: "promote", node: ready[0] };
}
