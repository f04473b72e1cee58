// Data types of the Raft core: entries, configurations, snapshots, messages, and the Ready
// batch of effects the IO shell carries out.

export type NodeId = number;

/** Sentinel for "no node". */
export const NONE = -1;

export interface Config {
  voters: NodeId[];
  learners: NodeId[];
}

/** A single-server membership change. */
export type ConfChange =
  | { op: "addLearner"; node: NodeId }
  | { op: "promote"; node: NodeId }
  | { op: "remove"; node: NodeId };

export type Entry =
  | { index: number; term: number; kind: "normal"; data: string }
  /** Appended by a new leader; commits its term before any configuration change. */
  | { index: number; term: number; kind: "noop" }
  | { index: number; term: number; kind: "conf"; change: ConfChange };

export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /** The configuration in force at `index`. */
  config: Config;
}

export interface Snapshot {
  meta: SnapshotMeta;
  /** Opaque state-machine image. */
  data: string;
}

export type Message =
  | {
    type: "app";
    from: NodeId;
    to: NodeId;
    term: number;
    prevIndex: number;
    prevTerm: number;
    entries: Entry[];
    commit: number;
  }
  | {
    type: "appResp";
    from: NodeId;
    to: NodeId;
    term: number;
    /** On success: last index now matching. On reject: the prevIndex that did not match. */
    index: number;
    reject: boolean;
    /** On reject: the follower's last index (lets the leader skip back at once). */
    hint: number;
  }
  | {
    type: "vote" | "prevote";
    from: NodeId;
    to: NodeId;
    /** For prevote: the term the sender would campaign in. */
    term: number;
    lastIndex: number;
    lastTerm: number;
    /** Set by a leadership transfer: voters ignore their leader lease. */
    transfer: boolean;
  }
  | { type: "voteResp" | "prevoteResp"; from: NodeId; to: NodeId; term: number; granted: boolean }
  | { type: "hb"; from: NodeId; to: NodeId; term: number; commit: number; readSeq: number }
  | { type: "hbResp"; from: NodeId; to: NodeId; term: number; readSeq: number }
  | { type: "snap"; from: NodeId; to: NodeId; term: number; snapshot: Snapshot }
  | { type: "timeoutNow"; from: NodeId; to: NodeId; term: number }
  /** A follower forwards a read-index request to its leader (term 0: never changes terms). */
  | { type: "readReq"; from: NodeId; to: NodeId; term: number; ctx: string }
  | { type: "readResp"; from: NodeId; to: NodeId; term: number; ctx: string; index: number };

export type MessageType = Message["type"];

export type Role = "follower" | "precandidate" | "candidate" | "leader";

export interface ReadState {
  /** The read may be served once the local applied index is >= index. */
  index: number;
  ctx: string;
}

export type RaftEvent =
  | { type: "role"; role: Role; term: number; leader: NodeId }
  | { type: "readFailed"; ctx: string; reason: string };

/**
 * One batch of effects. The shell must, in this order: (1) durably persist `snapshot` (if
 * any), then `entries` (replacing any stored entries from entries[0].index on), then
 * `hardState`, with a full sync when mustSync; (2) only then send `messages`; (3) restore the
 * state machine from `snapshot` if any, then apply `committed` in order; (4) if
 * `snapshotDue`, capture a snapshot of the state machine (now at snapshotDue.index) and pass
 * it to compact(); (5) call advance(ready).
 */
export interface Ready {
  hardState?: HardState;
  entries: Entry[];
  snapshot?: Snapshot;
  mustSync: boolean;
  messages: Message[];
  committed: Entry[];
  readStates: ReadState[];
  events: RaftEvent[];
  snapshotDue?: { index: number; term: number; config: Config };
}

export interface RaftOptions {
  id: NodeId;
  /** Base election timeout, ms; each wait is drawn uniformly from [electionMs, 2*electionMs). */
  electionMs: number;
  heartbeatMs: number;
  preVote: boolean;
  checkQuorum: boolean;
  /** Entries per append message (batching). */
  maxBatchEntries: number;
  /** Append messages in flight per follower while replicating (pipelining). */
  maxInflight: number;
  /** Ask for a snapshot once this many entries are applied past the last snapshot (0: never). */
  snapshotThreshold: number;
  /**
   * Unused: a learner counts as caught up only once it has acknowledged the leader's commit
   * index (RaftNode.caughtUpLearners), never by a margin. Kept so option sets still type-check.
   */
  catchUpMargin: number;
}

export const DEFAULT_OPTIONS: Omit<RaftOptions, "id"> = {
  electionMs: 1000,
  heartbeatMs: 100,
  preVote: true,
  checkQuorum: true,
  maxBatchEntries: 64,
  maxInflight: 8,
  snapshotThreshold: 10_000,
  catchUpMargin: 16,
};

/** Test-only fault injection (the simulator proves its invariant checkers catch these). */
export interface RaftBugs {
  /** Grant votes without checking the candidate's log is up to date. */
  voteIgnoresLog?: boolean;
  /** Commit as soon as one follower acknowledges, majority or not. */
  commitWithoutMajority?: boolean;
}

export interface PersistedState {
  hardState: HardState;
  snapshot?: Snapshot;
  /** Entries after the snapshot, contiguous. */
  entries: Entry[];
}

export interface RandomSource {
  /** Uniform in [0, 1). */
  next(): number;
}

export type ProposeResult =
  | { ok: true; index: number; term: number }
  | {
    ok: false;
    reason: "not_leader" | "transferring" | "conf_pending" | "invalid";
    detail?: string;
  };
