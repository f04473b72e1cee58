// The follower side of replication as pure decisions (KIPs 101, 279, 320): what a follower asks
// for, how a leader detects that the follower's log diverged from its own, and where the
// follower truncates. A follower truncates to the point where the two logs agree by epoch,
// never to the high watermark alone (which loses or forks data, KIP-101).
import type { EpochEndOffset } from "../storage/types.ts";
import { planted } from "./planted.ts";

export interface DivergingEpoch {
  epoch: number;
  endOffset: number;
}

/**
 * Leader side: the follower fetches at `fetchOffset` and says the last batch it holds has epoch
 * `lastFetchedEpoch`. If the leader's log has that epoch ending earlier, or does not have that
 * epoch at all, the follower's log diverged: answer the largest epoch ≤ it and where it ends.
 * `endOffsetFor` is the leader's epoch cache lookup (OffsetForLeaderEpoch).
 */
export function findDivergence(
  endOffsetFor: (epoch: number) => EpochEndOffset,
  lastFetchedEpoch: number,
  fetchOffset: number,
  logStartOffset: number,
): DivergingEpoch | undefined {
  if (lastFetchedEpoch < 0) return undefined; // an empty follower log cannot diverge
  const e = endOffsetFor(lastFetchedEpoch);
  if (e.leaderEpoch < 0 || e.endOffset < 0) {
    // The leader holds no epoch at or below the follower's: everything the follower has below
    // the leader's log start is gone here anyway; it restarts from the log start.
    return { epoch: lastFetchedEpoch, endOffset: logStartOffset };
  }
  const shorter = e.endOffset < fetchOffset &&
    !(planted.size !== 0 && planted.has("divergence-ignores-shorter-epoch"));
  if (shorter || e.leaderEpoch < lastFetchedEpoch) {
    return { epoch: e.leaderEpoch, endOffset: e.endOffset };
  }
  return undefined;
}

/**
 * Follower side, on a diverging epoch: the offset to truncate to. If the follower holds the
 * leader's epoch, the logs agree up to the smaller end of it; if not, cut to the end of the
 * follower's own largest epoch below it and ask again (the next fetch carries that epoch), as
 * Kafka does, so rapid leader changes converge (KIP-279) instead of forking.
 */
export function truncationOffset(
  localEndOffsetFor: (epoch: number) => EpochEndOffset,
  localLogEnd: number,
  diverging: DivergingEpoch,
  localLogStart: number,
): number {
  const local = localEndOffsetFor(diverging.epoch);
  if (local.leaderEpoch < 0 || local.endOffset < 0) {
    // Nothing of ours at or below that epoch: every batch we hold is of a later epoch, and the
    // leader has none of those up to our last (it answered the largest it has), so nothing we
    // hold is common history: back to our log start (Kafka answers an epoch below the first
    // with the first epoch's start offset, to the same effect). Keeping up to the leader's
    // answer instead kept diverged records and asked about the same epoch again, forever.
    return Math.min(diverging.endOffset, localLogStart, localLogEnd);
  }
  if (local.leaderEpoch === diverging.epoch) {
    return Math.min(diverging.endOffset, local.endOffset, localLogEnd);
  }
  return Math.min(local.endOffset, diverging.endOffset, localLogEnd);
}

/** What a follower sends per partition in each fetch to its leader. */
export interface ReplicaFetchPartition {
  topicId: string;
  topic: string;
  partition: number;
  /** The leader epoch the follower believes current (the leader fences a mismatch). */
  currentLeaderEpoch: number;
  /** The follower's log end. */
  fetchOffset: number;
  /** The epoch of the follower's last batch (-1 when its log is empty). */
  lastFetchedEpoch: number;
  /** What the follower has fsynced: only this counts for the high watermark. */
  durableEnd: number;
  logStartOffset: number;
}

/** What the leader answers per partition. */
export interface ReplicaFetchResult {
  topicId: string;
  partition: number;
  /** A Kafka error code (0, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER…). */
  errorCode: number;
  highWatermark: number;
  logStartOffset: number;
  logEndOffset: number;
  diverging?: DivergingEpoch;
  /** Record batches follow the header in the frame; this is their length here. */
  bytes: number;
}

/**
 * The follower's next step for a fetch result: the actions are applied in order by the shell.
 * `logStart > localEnd` means the leader deleted what we would fetch next (retention, DeleteRecords):
 * the follower's log restarts empty at the leader's log start.
 */
export type FollowerAction =
  | { kind: "truncate"; offset: number }
  | { kind: "reset"; offset: number }
  | { kind: "append" }
  | { kind: "deleteBefore"; offset: number }
  | { kind: "highWatermark"; offset: number };

export function followerActions(
  r: ReplicaFetchResult,
  local: {
    logEnd: number;
    logStart: number;
    endOffsetFor: (epoch: number) => EpochEndOffset;
  },
): FollowerAction[] {
  if (r.errorCode !== 0) return [];
  if (r.diverging !== undefined) {
    if (planted.size !== 0 && planted.has("truncate-to-hw")) {
      return [{ kind: "truncate", offset: Math.min(r.highWatermark, local.logEnd) }];
    }
    return [{
      kind: "truncate",
      offset: truncationOffset(local.endOffsetFor, local.logEnd, r.diverging, local.logStart),
    }];
  }
  const out: FollowerAction[] = [];
  if (r.logStartOffset > local.logEnd) {
    out.push({ kind: "reset", offset: r.logStartOffset });
    return out; // fetch again from there
  }
  if (r.bytes > 0) out.push({ kind: "append" });
  if (r.logStartOffset > local.logStart) {
    out.push({ kind: "deleteBefore", offset: r.logStartOffset });
  }
  out.push({ kind: "highWatermark", offset: r.highWatermark });
  return out;
}

/** Answers smaller than this are not a bulk copy: the follower asks again once it appended. */
export const AHEAD_MIN_BYTES = 1 << 20;

/**
 * A follower far behind (a reassignment's new replica, a follower back from a restart) may send
 * its next fetch before it appends this answer, so the leader's read and send of the next records
 * overlap the append here. Only for a plain answer of at least AHEAD_MIN_BYTES that leaves more
 * to copy: that early fetch then never reports the follower caught up nor waits at the leader,
 * and its synced end stays true (it reports what is durable when it is sent). Returns where the
 * next fetch starts and the epoch of the last batch (the log's state once the append is done,
 * which the caller checks before using the early answer), or undefined: fetch after appending.
 */
export function fetchAhead(
  fetchOffset: number,
  r: ReplicaFetchResult,
  records: Uint8Array,
): { fetchOffset: number; lastFetchedEpoch: number } | undefined {
  if (
    r.errorCode !== 0 || r.diverging !== undefined || r.logStartOffset > fetchOffset ||
    records.length < AHEAD_MIN_BYTES || r.bytes !== records.length
  ) return undefined;
  const v = new DataView(records.buffer, records.byteOffset, records.byteLength);
  let next = fetchOffset;
  let epoch = -1;
  // Walk the batch headers (a few hundred per MiB at most): any doubt, and the answer is just
  // appended first, as every answer used to be.
  for (let p = 0; p < records.length;) {
    if (p + BATCH_HEADER_BYTES > records.length || v.getInt8(p + 16) !== 2) return undefined;
    const size = 12 + v.getInt32(p + 8);
    const base = v.getInt32(p) * 4294967296 + v.getUint32(p + 4);
    const last = base + v.getInt32(p + 23);
    if (size < BATCH_HEADER_BYTES || p + size > records.length || base < next || last < base) {
      return undefined;
    }
    next = last + 1;
    epoch = v.getInt32(p + 12);
    p += size;
  }
  return next < r.logEndOffset ? { fetchOffset: next, lastFetchedEpoch: epoch } : undefined;
}

/** A v2 record batch's header: base offset .. records count. */
const BATCH_HEADER_BYTES = 61;
