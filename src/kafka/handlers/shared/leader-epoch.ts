// The leader epoch check of Fetch, ListOffsets and OffsetForLeaderEpoch (KIP-320).
import { ErrorCode } from "../../../protocol/kafka/index.ts";

/** -1 = no check; below the leader's epoch = fenced (74); above = unknown (75). */
export function leaderEpochError(current: number, leader: number): number {
  if (current < 0 || current === leader) return 0;
  return current < leader ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
}
