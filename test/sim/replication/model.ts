// What every part of the replication model shares: the cluster's shape and timings, the
// messages and timers of the event loop, and the metadata as each broker applies it.
//
// The metadata is the production record format (src/meta/records.ts: BrokerRegistered,
// BrokerFenced, PartitionChanged, NoOp), carried as the data of Raft entries, validated by
// parseRecord and applied with applyOrSkip's semantics: a record that does not fit the state
// consumes its index and changes nothing. PartitionChanged goes through the very function
// apply.ts runs (src/meta/partition-rules.ts: stale partition epoch, leader epoch going back,
// new leader without a new epoch, leader outside the ISR, fenced broker in an online ISR).
import type { Message, RaftOptions } from "../../../src/cluster/raft/types.ts";
import { MetaError } from "../../../src/meta/errors.ts";
import { changedPartition, type PartitionRow } from "../../../src/meta/partition-rules.ts";
import {
  encodeRecord,
  type MetadataRecord,
  parseRecord,
  type ReassignmentState,
} from "../../../src/meta/records.ts";
import type { ReplicaFetchResult } from "../../../src/replication/follower.ts";

export const BROKERS = [1, 2, 3] as const;
export const PRODUCERS = [11, 12] as const;
export const CONSUMER = 13;
/** A consumer group's member: commits offsets and reads them back (OffsetCommit/OffsetFetch). */
export const GROUP = 14;
export const MIN_INSYNC = 2;
export const LAG_TIME_MAX_MS = 600;
export const TICK_MS = 25;
export const CTL_TICK_MS = 50;
export const FETCH_TIMEOUT_MS = 500;
export const MAX_FETCH_RECORDS = 4;
export const PREFERRED_EVERY_MS = 1000;
export const CHECKPOINT_MS = 1000;
/** registerBroker: a failed or unanswered registration is tried again after this. */
export const REGISTER_RETRY_MS = 300;
/** The metadata quorum's Raft options: production's ratios (election 1 s vs session 3 s). */
export const RAFT_OPTIONS: Omit<RaftOptions, "id"> = {
  electionMs: 400,
  heartbeatMs: 80,
  preVote: true,
  checkQuorum: true,
  maxBatchEntries: 32,
  maxInflight: 4,
  snapshotThreshold: 16,
  catchUpMargin: 8,
};
/** Production: 3000 / 250 / 300 and Raft's election timeout; scaled down with everything else. */
export const SESSIONS = {
  sessionTimeoutMs: 1000,
  heartbeatMs: 100,
  hintGraceMs: 300,
  electionMs: RAFT_OPTIONS.electionMs,
};

export const TOPIC = "t";
export const TOPIC_ID = "00000000-0000-4000-8000-000000000001";

export const E = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  NOT_LEADER_OR_FOLLOWER: 6,
  NOT_COORDINATOR: 16,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  OUT_OF_ORDER_SEQUENCE: 45,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
} as const;

export class InvariantError extends Error {}

export interface Rec {
  epoch: number;
  pid: number;
  seq: number;
  /** Unique per produced record: `${pid}.${seq}.${n}`. */
  id: string;
  /** An offset commit (pid GROUP, one record per attempt): the committed position. */
  commit?: number;
}

export type Msg =
  | { t: "raft"; m: Message }
  /** registerBroker, forwarded to the metadata leader (origin: the registering broker). */
  | { t: "register"; inc: number; origin: number; hops: number }
  /** index: the registration's log index, or -1 (refused, not the controller, lost). */
  | { t: "registerResp"; inc: number; index: number }
  | { t: "hb"; inc: number; seq: number; applied: number }
  /** ok false: the callee is not the controller (the call failed). */
  | { t: "hbResp"; inc: number; seq: number; ok: boolean; fenced: boolean }
  | {
    t: "alter";
    inc: number;
    aid: number;
    leaderEpoch: number;
    partitionEpoch: number;
    isr: number[];
  }
  /** errorCode -1: the call failed (the callee is not the controller). */
  | { t: "alterResp"; inc: number; aid: number; errorCode: number }
  | {
    t: "fetch";
    inc: number;
    fid: number;
    currentLeaderEpoch: number;
    fetchOffset: number;
    lastFetchedEpoch: number;
    durableEnd: number;
  }
  | { t: "fetchResp"; inc: number; fid: number; res: ReplicaFetchResult; records: Rec[] }
  | { t: "produce"; rid: number; pid: number; seq: number; n: number }
  | { t: "produceResp"; rid: number; errorCode: number; base: number }
  | { t: "read"; rid: number; offset: number }
  | { t: "readResp"; rid: number; errorCode: number; offset: number; ids: string[] }
  /** OffsetCommit: `attempt` is unique per request (a retry is a new attempt, as in Kafka). */
  | { t: "commit"; rid: number; attempt: number; value: number }
  | { t: "commitResp"; rid: number; errorCode: number; base: number }
  | { t: "offsetFetch"; rid: number }
  /** `at`: the log offset of the commit record the answer comes from (-1: none). */
  | { t: "offsetFetchResp"; rid: number; errorCode: number; value: number; at: number };

export type Timer =
  | { k: "tick"; node: number }
  | { k: "sync"; node: number; inc: number; gen: number; target: number }
  | { k: "raftWake"; node: number; gen: number }
  | { k: "raftSynced"; node: number; gen: number }
  | { k: "restart"; node: number }
  | { k: "resume"; node: number }
  | { k: "client"; node: number }
  | { k: "fn"; fn: () => void };

// ---- metadata ------------------------------------------------------------------------------

export interface BrokerRow {
  fenced: boolean;
  /** The log index of its registration (the broker epoch). */
  epoch: number;
}

/** One broker's applied metadata: the brokers table and the one partition's row. */
export interface MetaState {
  brokers: Map<number, BrokerRow>;
  part: PartitionRow;
}

export function cloneMeta(s: MetaState): MetaState {
  return {
    brokers: new Map([...s.brokers].map(([k, v]) => [k, { ...v }])),
    part: { ...s.part, replicas: [...s.part.replicas], isr: [...s.part.isr] },
  };
}

/** The state machine's image (Raft snapshots, and the state hash the checker compares). */
export function metaImage(s: MetaState): string {
  const bs = [...s.brokers].sort((a, b) => a[0] - b[0]).map(([id, b]) => [id, b.fenced, b.epoch]);
  const p = s.part;
  // A reassignment in flight is appended only when there is one: runs without reassignments
  // keep the images (and so the hashes and traces) they always had.
  return JSON.stringify([
    bs,
    p.leader,
    p.leaderEpoch,
    p.partitionEpoch,
    p.replicas,
    p.isr,
    ...(p.reassignment ? [p.reassignment] : []),
  ]);
}

export function parseImage(data: string): MetaState {
  const [bs, leader, leaderEpoch, partitionEpoch, replicas, isr, reassignment] = JSON.parse(
    data,
  ) as [
    [number, boolean, number][],
    number,
    number,
    number,
    number[],
    number[],
    ReassignmentState | undefined,
  ];
  return {
    brokers: new Map(bs.map(([id, fenced, epoch]) => [id, { fenced, epoch }])),
    part: {
      leader,
      leaderEpoch,
      partitionEpoch,
      replicas,
      isr,
      ...(reassignment ? { reassignment } : {}),
    },
  };
}

const isFenced = (s: MetaState) => ({ has: (id: number) => s.brokers.get(id)?.fenced === true });

/**
 * Applies one committed record the way applyOrSkip does: on a MetaError nothing changes (the
 * index is consumed) and the error is returned.
 */
export function applyMeta(s: MetaState, r: MetadataRecord, index: number): MetaError | undefined {
  switch (r.type) {
    case "BrokerRegistered":
      s.brokers.set(r.nodeId, { fenced: r.fenced ?? false, epoch: index });
      return undefined;
    case "BrokerFenced": {
      const b = s.brokers.get(r.nodeId);
      if (b === undefined) {
        return new MetaError("BROKER_NOT_AVAILABLE", `Broker ${r.nodeId} is not registered`);
      }
      b.fenced = r.fenced;
      return undefined;
    }
    case "PartitionChanged": {
      if (r.topicId !== TOPIC_ID || r.partition !== 0) {
        return new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `Unknown partition ${r.partition}`);
      }
      try {
        s.part = changedPartition(s.part, r, s.brokers, isFenced(s), `${TOPIC}-0`);
      } catch (e) {
        if (e instanceof MetaError) return e;
        throw e;
      }
      return undefined;
    }
    default:
      return undefined; // NoOp and records this model does not write change no table here
  }
}

/** A Raft entry's data as the broker's shell decodes it (production parseRecord). */
export function decodeEntry(data: string): MetadataRecord {
  return parseRecord(data);
}

/** As RaftMetadataLog.append: the record is validated, then proposed in its encoded form. */
export function encodeEntry(r: MetadataRecord): string {
  return encodeRecord(parseRecord(encodeRecord(r)));
}

export function registration(id: number): MetadataRecord {
  return {
    type: "BrokerRegistered",
    nodeId: id,
    host: `broker-${id}`,
    kafkaPort: 9092,
    httpPort: 8080,
    clusterPort: 9093,
    rack: null,
    timestamp: 0,
    fenced: true,
  };
}
