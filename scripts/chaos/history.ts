// The history of a chaos run: everything the clients did and saw, the faults, and what every
// replica held at the end. The checker (checker.ts) judges it; `npm run chaos` writes it to
// history.json next to the brokers' logs, so a run can be checked again or doctored in a test.

/** A send begun (a batch of keys is one send per key, same time). */
export interface SendEvent {
  key: string;
  src: string;
  at: number;
}

/** An acknowledgement: `key` at offset `o` of partition `p`. */
export interface AckEvent {
  key: string;
  p: number;
  o: number;
  src: string;
  sentAt: number;
  ackAt: number;
}

/** A send that failed (the record may or may not be in the log). */
export interface FailEvent {
  key: string;
  src: string;
  at: number;
  error: string;
}

/** A consumer read `key` at offset `o` of partition `p`. */
export interface ReadEvent {
  p: number;
  o: number;
  key: string;
  at: number;
  by: string;
}

/** An OffsetCommit; ackAt is set once it was acknowledged (undefined: failed or unanswered). */
export interface CommitEvent {
  p: number;
  offset: number;
  by: string;
  sentAt: number;
  ackAt?: number;
}

/** An OffsetFetch answer: the committed offset the coordinator served for partition `p`. */
export interface FetchEvent {
  p: number;
  offset: number;
  sentAt: number;
  answeredAt: number;
  by: string;
}

/** A fault as injected: what, on whom, when it started and when it was healed. */
export interface FaultEvent {
  kind: string;
  variant: string;
  /** The brokers it hit (for a partition: the minority side, or the side that cannot send). */
  targets: number[];
  /** Why those: "controller", "leader of 2", "broker 1", "coordinator". */
  role: string;
  startAt: number;
  endAt: number;
  /** Partitions of the topic the targets led when the fault started. */
  led: number[];
  /** When the cluster was whole again (every ISR full) after the heal, if it was. */
  recoveredAt?: number;
  note?: string;
}

/** One replica's copy of a partition at the end, up to its own high watermark. */
export interface ReplicaLog {
  p: number;
  broker: number;
  leader: boolean;
  highWatermark: number;
  /** [offset, key] pairs in offset order. */
  records: [number, string][];
}

/** A record batch's producer fields, as the leader stored it (read from its segment files). */
export interface BatchInfo {
  p: number;
  base: number;
  last: number;
  pid: number;
  epoch: number;
  seq: number;
}

export interface History {
  /** How the run was started (for the summary and the replay command). */
  run?: {
    seed: number;
    durationS: number;
    faults: string[];
    brokers: number;
    steps?: number;
    quick?: boolean;
  };
  topic: string;
  partitions: number;
  /** Sources whose producer is idempotent: a duplicate of one of their keys is a violation. */
  idempotent: string[];
  startAt: number;
  endAt: number;
  /** When the producers were told to stop (later gaps between acknowledgements are not outages). */
  loadEndAt?: number;
  sends: SendEvent[];
  acks: AckEvent[];
  fails: FailEvent[];
  reads: ReadEvent[];
  commits: CommitEvent[];
  fetches: FetchEvent[];
  faults: FaultEvent[];
  replicas: ReplicaLog[];
  /** The leaders' batches at the end: who wrote a duplicate, under which producer epoch. */
  batches: BatchInfo[];
  /** Violations the runner saw as they happened (the harness's Ledger, crashes). */
  live: string[];
  /** Liveness problems (not violations): a broker that would not start, ISRs not full again. */
  liveness: string[];
  /** The machine's 1-minute load average, sampled every 5 s (a loaded machine slows failover). */
  load: number[];
}

export function emptyHistory(topic: string, partitions: number, idempotent: string[]): History {
  return {
    topic,
    partitions,
    idempotent,
    startAt: Date.now(),
    endAt: 0,
    sends: [],
    acks: [],
    fails: [],
    reads: [],
    commits: [],
    fetches: [],
    faults: [],
    replicas: [],
    batches: [],
    live: [],
    liveness: [],
    load: [],
  };
}
