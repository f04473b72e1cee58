// The group coordinator on a broker, as GroupService runs it over its __consumer_offsets
// partition (here the model's one partition): OffsetCommit appends one record through the
// produce path and applies it to the coordinator's cache once acknowledged (appendDone); a new
// leader loads its groups from the log it holds; OffsetFetch answers from the cache. Whoever
// leads as far as it knows coordinates, while its lease holds (GroupService.coordinates).
import { planted } from "../../../src/replication/planted.ts";
import type { Broker } from "./broker.ts";
import { E, GROUP, MIN_INSYNC, type Msg } from "./model.ts";

export class GroupShell {
  /** The cache: the last commit loaded or acknowledged here (its log offset and value). */
  offsets = { at: -1, value: -1 };

  constructor(readonly b: Broker) {}

  /** GroupService.coordinates: the replica leads, its groups are loaded, its lease holds. */
  #coordinates(): boolean {
    const b = this.b;
    if (!b.isLeader) return false;
    return b.leaseValid() || (planted.size !== 0 && planted.has("coordinator-without-lease"));
  }

  /** A new coordinator loads its groups: the last commit in the log it holds. */
  load(): void {
    const log = this.b.log;
    this.offsets = { at: -1, value: -1 };
    for (let o = log.length - 1; o >= 0; o--) {
      const v = log[o].commit;
      if (v !== undefined) {
        this.offsets = { at: o, value: v };
        return;
      }
    }
  }

  /** OffsetCommit: one record per request, appended at acks=all (min.insync checked first). */
  commit(from: number, m: Extract<Msg, { t: "commit" }>): void {
    const b = this.b;
    const reply = (errorCode: number, base = -1) =>
      b.env.send(b.id, from, { t: "commitResp", rid: m.rid, errorCode, base });
    if (!this.#coordinates()) return reply(E.NOT_COORDINATOR);
    // The append path checks the lease itself (partition-manager append).
    if (!b.leaseValid()) return reply(E.NOT_LEADER_OR_FOLLOWER);
    if (b.isr.length < MIN_INSYNC) return reply(E.NOT_ENOUGH_REPLICAS);
    // Not idempotent (a duplicated request is appended twice): each copy is its own record.
    const id = `g.${m.attempt}@${b.id}.${b.logEnd}.${b.leaderEpoch}`;
    const base = b.leaderAppend([
      { epoch: b.leaderEpoch, pid: GROUP, seq: m.attempt, id, commit: m.value },
    ]);
    b.awaitHw({
      lastOffset: base,
      base,
      ids: [id],
      reply: (code) => {
        if (code === E.NONE) this.offsets = { at: base, value: m.value };
        reply(code, base);
      },
    });
  }

  /** OffsetFetch, answered from the cache (invariant 10 checks it against what was acked). */
  offsetFetch(from: number, m: Extract<Msg, { t: "offsetFetch" }>): void {
    const b = this.b;
    const { at, value } = this.offsets;
    if (!this.#coordinates()) {
      const errorCode = E.NOT_COORDINATOR;
      b.env.send(b.id, from, { t: "offsetFetchResp", rid: m.rid, errorCode, value: -1, at: -1 });
      return;
    }
    b.env.check.offsetAnswer(m.rid, b.id, b.leaderEpoch, b.log, at);
    b.env.counts.offsetFetches++;
    b.env.send(b.id, from, { t: "offsetFetchResp", rid: m.rid, errorCode: E.NONE, value, at });
  }
}
