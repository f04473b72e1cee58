// The invariants of the replication model, checked at every step against global knowledge no
// broker has:
// (1) an acked record is at its offset in every later leader's log and in every final log;
// (2) logs agree below the high watermark (each offset passed by any broker's HW holds one
//     record, whichever broker passed it);
// (3) a consumed record never disappears or changes, and no broker truncates below its HW;
// (4) one appender per leader epoch, a broker's append epochs only grow, and no log gets an
//     older epoch after a newer one;
// (5) leader in ISR within the replicas, ISR never empty, no fenced broker leading or in the ISR
//     of an online partition, no election from outside the ISR, no controller decision refused
//     except as computed from a stale view (partition epoch moved, or a broker fenced since);
// (6) no record (producer id, sequence) twice below the HW or in a final log;
// (7) the metadata quorum: at most one Raft leader per term, log matching, leader completeness,
//     committed metadata never diverges (same record at each index on every broker, same state
//     after it, snapshots included) — test/sim/raft's checker, run over the brokers' Raft nodes;
// (8) in every broker's applied metadata, partition epochs and leader epochs only grow;
// (9) a reassignment's replica set is its original set while queued, original ∪ target while
//     copying, and it ends on the target (completed) or on the original set (cancelled);
// (10) with group offsets: an OffsetFetch answer is no older than the last commit acknowledged
//     before it was asked (whoever answers, as coordinator, holds that commit and answers from it
//     or a later one).
import type { RaftNode } from "../../../src/cluster/raft/node.ts";
import type { Entry } from "../../../src/cluster/raft/types.ts";
import type { MetaError } from "../../../src/meta/errors.ts";
import type { PartitionRow } from "../../../src/meta/partition-rules.ts";
import type { MetadataRecord } from "../../../src/meta/records.ts";
import { NO_LEADER } from "../../../src/replication/elections.ts";
import { Checker as RaftChecker, hashStep } from "../raft/checker.ts";
import { InvariantError, type MetaState, type Rec } from "./model.ts";

export type Counts = Record<string, number>;

/** Data-path knowledge: what was committed, acknowledged, consumed, appended per epoch. */
export class Checker {
  /** offset -> record id, for every offset some broker's high watermark has passed. */
  committed: (string | undefined)[] = [];
  /** offset -> the leader epoch in which a high watermark first passed it. */
  committedIn: number[] = [];
  committedAt = new Map<string, number>();
  /** offset -> id of every record acknowledged at acks=all. */
  acked = new Map<number, string>();
  /** offset -> id of every record a consumer saw. */
  seen = new Map<number, string>();
  /** leader epoch -> the broker that appended client records in it. */
  appender = new Map<number, number>();

  fail(msg: string): never {
    throw new InvariantError(msg);
  }

  /** Broker `b`, in leader epoch `epoch`, moved its high watermark from `from` to `to`. */
  hwPassed(b: number, epoch: number, log: Rec[], from: number, to: number): void {
    for (let o = from; o < to; o++) {
      const id = log[o].id;
      const c = this.committed[o];
      if (c === undefined) {
        const prev = this.committedAt.get(id);
        if (prev !== undefined && prev !== o) {
          this.fail(`(6) record ${id} is below the high watermark twice, at ${prev} and ${o}`);
        }
        this.committed[o] = id;
        this.committedIn[o] = epoch;
        this.committedAt.set(id, o);
      } else if (c !== id) {
        this.fail(
          `(2) logs differ below the high watermark: offset ${o} is ${id} at broker ${b}, ${c} elsewhere`,
        );
      }
    }
  }

  ack(b: number, epoch: number, base: number, ids: string[], log: Rec[]): void {
    ids.forEach((id, i) => {
      const o = base + i;
      if (log[o]?.id !== id) {
        this.fail(`(1) broker ${b} acked ${id} at ${o} but holds ${log[o]?.id}`);
      }
      if (this.committed[o] !== id) {
        this.fail(
          `(1) broker ${b} (epoch ${epoch}) acked ${id} at ${o}, committed there: ${
            this.committed[o]
          }`,
        );
      }
      const prev = this.acked.get(o);
      if (prev !== undefined && prev !== id) {
        this.fail(`(1) offset ${o} acked as ${prev} and as ${id}`);
      }
      this.acked.set(o, id);
    });
  }

  /**
   * `log` holds every acked record committed in a leader epoch up to `epoch` (a leader of an
   * epoch must hold what was committed before it; a broker taking up an older epoch late, as
   * it applies the metadata in order after a pause, is no later leader of what came after).
   */
  holdsAcked(what: string, log: Rec[], epoch = Infinity): void {
    for (const [o, id] of this.acked) {
      if (this.committedIn[o] > epoch) continue;
      if (log[o]?.id !== id) {
        this.fail(`(1) ${what} lacks acked record ${id} at ${o} (holds ${log[o]?.id})`);
      }
    }
  }

  holdsSeen(what: string, log: Rec[], epoch = Infinity): void {
    for (const [o, id] of this.seen) {
      if (this.committedIn[o] > epoch) continue;
      if (log[o]?.id !== id) {
        this.fail(`(3) ${what} lacks consumed record ${id} at ${o} (holds ${log[o]?.id})`);
      }
    }
  }

  consumed(o: number, id: string): void {
    const prev = this.seen.get(o);
    if (prev !== undefined && prev !== id) {
      this.fail(`(3) a consumer saw ${prev} at ${o}, later ${id}`);
    }
    if (this.committed[o] !== id) {
      this.fail(`(3) a consumer saw ${id} at ${o} above every high watermark`);
    }
    this.seen.set(o, id);
  }

  /** The newest offset commit acknowledged to the group member: its log offset and record. */
  lastCommit: { at: number; id: string } | undefined;
  /** OffsetFetch request -> the newest acknowledged commit when it was sent. */
  readonly fetchAsked = new Map<number, { at: number; id: string } | undefined>();

  commitAcked(at: number, id: string): void {
    if (this.lastCommit === undefined || at > this.lastCommit.at) this.lastCommit = { at, id };
  }

  offsetAsked(rid: number): void {
    this.fetchAsked.set(rid, this.lastCommit);
  }

  /**
   * Broker `b` answers OffsetFetch `rid` from the commit at log offset `at` of its `log`: that
   * must be no older than the commit acknowledged last before the request was sent, and its log
   * must hold that commit.
   */
  offsetAnswer(rid: number, b: number, epoch: number, log: Rec[], at: number): void {
    const need = this.fetchAsked.get(rid);
    if (need === undefined) return;
    if (at < need.at || log[need.at]?.id !== need.id) {
      this.fail(
        `(10) broker ${b} (epoch ${epoch}) answered OffsetFetch from the commit at ${at}, older than ${need.id} at ${need.at}, acknowledged before it was asked (its log holds ${
          log[need.at]?.id
        } there)`,
      );
    }
  }

  leaderAppend(b: number, epoch: number): void {
    const who = this.appender.get(epoch);
    if (who !== undefined && who !== b) {
      this.fail(`(4) brokers ${who} and ${b} both appended in epoch ${epoch}`);
    }
    this.appender.set(epoch, b);
  }
}

/** Test/sim/raft's checker's failures, numbered (7) here. */
function raft<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Error && e.name === "InvariantError") {
      throw new InvariantError(`(7) ${e.message}`);
    }
    throw e;
  }
}

/** Refusals a controller decision may meet when it was computed from a stale view. */
const STALE_REFUSALS = new Set(["INVALID_UPDATE_VERSION", "INELIGIBLE_REPLICA"]);

/** The metadata quorum and the metadata as applied: invariants (5), (7) and (8). */
export class MetaChecker {
  readonly raft = new RaftChecker();
  /** Leader epoch -> when a broker first applied the record that started it. */
  readonly epochSince = new Map<number, number>();
  /** Indexes some broker has applied (the first to apply one checks and counts it). */
  #firstApplied: boolean[] = [];

  constructor(
    readonly counts: Counts,
    readonly log: (line: string) => void,
    readonly now: () => number,
  ) {}

  fail(msg: string): never {
    throw new InvariantError(msg);
  }

  becameLeader(node: RaftNode, term: number): void {
    raft(() => this.raft.becameLeader(node, term));
  }

  appended(node: RaftNode, entries: Entry[]): void {
    raft(() => this.raft.appended(node, entries));
  }

  committed(entries: Entry[], leaders: RaftNode[], leaderTerm: number): void {
    raft(() => this.raft.committed(entries, leaders, leaderTerm));
  }

  /** Broker `id` restored a snapshot (image) at `index`. */
  restored(id: number, index: number, before: PartitionRow, image: string, after: MetaState): void {
    raft(() => this.raft.stateAt(id, index, hashStep(0, image, index)));
    this.#grows(id, index, before, after.part);
  }

  /** Broker `id` applied entry `e` (record `r`, refused with `err`), going from `before`. */
  applied(
    id: number,
    e: Entry,
    r: MetadataRecord,
    err: MetaError | undefined,
    before: PartitionRow,
    after: MetaState,
    image: string,
  ): void {
    raft(() => this.raft.applied(id, e, hashStep(0, image, e.index)));
    this.#grows(id, e.index, before, after.part);
    if (this.#firstApplied[e.index]) return;
    this.#firstApplied[e.index] = true;
    if (err !== undefined) return this.#refused(r, err, e.index);
    if (r.type === "PartitionChanged") {
      this.#partitionChanged(r, before, after, e.index);
      this.#online(after, e.index);
    }
  }

  #grows(id: number, index: number, before: PartitionRow, p: PartitionRow): void {
    if (p.partitionEpoch < before.partitionEpoch || p.leaderEpoch < before.leaderEpoch) {
      this.fail(
        `(8) broker ${id} at index ${index}: partition epoch ${before.partitionEpoch} -> ${p.partitionEpoch}, leader epoch ${before.leaderEpoch} -> ${p.leaderEpoch}`,
      );
    }
  }

  #refused(r: MetadataRecord, err: MetaError, index: number): void {
    if (r.type !== "PartitionChanged") {
      this.fail(`(5) ${r.type} refused at ${index}: ${err.message}`);
    }
    // A leader's ISR change (AlterPartition) may be refused: its leader learns why.
    if (r.reason?.startsWith("leader ")) return;
    if (!STALE_REFUSALS.has(err.codeName)) {
      this.fail(
        `(5) a controller's decision was refused at ${index}: ${err.message} (${r.reason})`,
      );
    }
    this.counts.staleDecisions++;
    this.log(`index ${index}: stale decision refused: ${err.message} (${r.reason})`);
  }

  #partitionChanged(
    r: Extract<MetadataRecord, { type: "PartitionChanged" }>,
    before: PartitionRow,
    after: MetaState,
    index: number,
  ): void {
    const p = after.part;
    if (p.leaderEpoch !== before.leaderEpoch) this.epochSince.set(p.leaderEpoch, this.now());
    if (p.leader !== before.leader) {
      this.counts.elections++;
      if (p.leader !== NO_LEADER && !before.isr.includes(p.leader)) {
        this.fail(
          `(5) broker ${p.leader} elected from outside the ISR [${before.isr}] (${r.reason})`,
        );
      }
    } else if (p.isr.length < before.isr.length) this.counts.isrShrinks++;
    else if (p.isr.length > before.isr.length) this.counts.isrExpands++;
    this.#reassignment(r, before, p, index);
    this.log(
      `committed ${index}: leader ${p.leader} epoch ${p.leaderEpoch} isr [${p.isr}] pe ${p.partitionEpoch} (${r.reason})`,
    );
  }

  /**
   * A reassignment only passes through the states the protocol allows: queued on its original
   * replicas, started on original ∪ target, ended on the target (completed, every adding replica
   * in the ISR before) or on the original set (cancelled).
   */
  #reassignment(
    r: Extract<MetadataRecord, { type: "PartitionChanged" }>,
    before: PartitionRow,
    p: PartitionRow,
    index: number,
  ): void {
    const same = (a: readonly number[], b: readonly number[]) =>
      a.length === b.length && a.every((x) => b.includes(x));
    const ra = p.reassignment;
    if (ra) {
      const union = [...ra.original, ...ra.target.filter((id) => !ra.original.includes(id))];
      if (!same(p.replicas, ra.started ? union : ra.original)) {
        this.fail(`(9) replicas [${p.replicas}] during a move [${ra.original}] -> [${ra.target}]`);
      }
      return;
    }
    const was = before.reassignment;
    if (!was) return;
    if (r.reason?.includes("cancelled")) {
      this.counts.reassignCancelled++;
      if (!same(p.replicas, was.original)) {
        this.fail(
          `(9) a cancelled move ended on [${p.replicas}], not its original [${was.original}]`,
        );
      }
      return;
    }
    this.counts.reassignCompleted++;
    if (!same(p.replicas, was.target)) {
      this.fail(`(9) a move to [${was.target}] ended on [${p.replicas}] at ${index}`);
    }
  }

  #online(s: MetaState, index: number): void {
    const p = s.part;
    if (p.isr.length === 0) this.fail(`(5) the ISR is empty at ${index}`);
    if (p.isr.some((id) => !p.replicas.includes(id))) {
      this.fail(`(5) ISR [${p.isr}] not within the replicas at ${index}`);
    }
    if (p.leader === NO_LEADER) return;
    if (!p.isr.includes(p.leader)) {
      this.fail(`(5) leader ${p.leader} not in the ISR [${p.isr}] at ${index}`);
    }
    const bad = p.isr.find((id) => s.brokers.get(id)?.fenced !== false);
    if (bad !== undefined) {
      this.fail(`(5) fenced broker ${bad} in the ISR of an online partition at ${index}`);
    }
  }
}
