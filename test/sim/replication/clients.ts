// The clients: two idempotent acks=all producers (a retried batch keeps its producer id and
// sequence) and a consumer reading up to the high watermark. They find the leader the way a
// Kafka client does, from metadata that may be stale: usually the newest committed leader,
// sometimes the one they used before, now and then any broker. With group offsets, a group
// member commits a rising position (one commit at a time, a timed-out one retried as a new
// request, as Kafka clients do) and reads it back with OffsetFetch from whoever it believes
// coordinates the group, independently.
import type { Rng } from "../../../src/cluster/sim/index.ts";
import type { Env } from "./cluster.ts";
import { BROKERS, CONSUMER, GROUP, type Msg, PRODUCERS } from "./model.ts";

interface Producer {
  seq: number;
  n: number;
  rid: number;
  target: number;
  sentAt: number;
  waiting: boolean;
  acked: number;
}

export class Clients {
  readonly producers = new Map<number, Producer>();
  consumer = { pos: 0, rid: 0, target: -1, waiting: false, sentAt: 0 };
  /** The group member: its commit and its OffsetFetch, each one request at a time. */
  group = {
    value: 0,
    attempt: 0,
    commit: { rid: 0, target: -1, waiting: false, sentAt: 0 },
    fetch: { rid: 0, target: -1, waiting: false, sentAt: 0 },
  };
  producing = true;

  /** `groupRng`: the group member's own draws (runs without it replay as before). */
  constructor(readonly env: Env, readonly groupRng?: Rng) {
    for (const p of PRODUCERS) {
      this.producers.set(p, {
        seq: 0,
        n: 1,
        rid: 0,
        target: -1,
        sentAt: 0,
        waiting: false,
        acked: 0,
      });
      env.timers.push(env.rng.int(0, 50), { k: "client", node: p });
    }
    env.timers.push(env.rng.int(0, 50), { k: "client", node: CONSUMER });
    if (groupRng !== undefined) env.timers.push(groupRng.int(0, 50), { k: "client", node: GROUP });
  }

  /** Some request still waits for its answer. */
  get waiting(): boolean {
    for (const x of this.producers.values()) if (x.waiting) return true;
    return false;
  }

  /**
   * FindCoordinator: a group member asks any broker, which answers from its own applied
   * metadata (a broker whose metadata lags names an old leader, itself included).
   */
  #findCoordinator(prev: number, rng: Rng): number {
    if (prev >= 0) return prev;
    const b = this.env.brokers.get(rng.pick(BROKERS))!;
    return b.up ? b.meta.part.leader : -1;
  }

  #guessLeader(prev: number): number {
    const rng = this.env.rng;
    if (prev >= 0 && rng.chance(0.3)) return prev;
    if (rng.chance(0.05)) return rng.pick(BROKERS);
    return this.env.latest().part.leader;
  }

  tick(node: number): void {
    const env = this.env;
    const now = env.now;
    env.timers.push(now + 20, { k: "client", node });
    if (node === GROUP) return this.#groupTick();
    if (node === CONSUMER) {
      const c = this.consumer;
      if (c.waiting && now - c.sentAt < 300) return;
      c.target = this.#guessLeader(c.target);
      if (c.target < 0) return;
      if (env.rng.chance(0.05)) c.pos = 0; // read everything again
      c.waiting = true;
      c.sentAt = now;
      env.send(CONSUMER, c.target, { t: "read", rid: ++c.rid, offset: c.pos });
      return;
    }
    const p = this.producers.get(node)!;
    if (p.waiting && now - p.sentAt < 400) return;
    if (!p.waiting && !this.producing) return;
    if (!p.waiting && env.rng.chance(0.5)) return; // think time
    p.target = this.#guessLeader(p.target);
    if (p.target < 0) return;
    p.waiting = true;
    p.sentAt = now;
    env.send(node, p.target, { t: "produce", rid: ++p.rid, pid: node, seq: p.seq, n: p.n });
  }

  #groupTick(): void {
    const env = this.env;
    const rng = this.groupRng!;
    const g = this.group;
    const c = g.commit;
    if (
      (c.waiting && env.now - c.sentAt >= 400) || (!c.waiting && this.producing && rng.chance(0.3))
    ) {
      c.target = this.#findCoordinator(c.target, rng);
      if (c.target >= 0) {
        c.waiting = true;
        c.sentAt = env.now;
        const attempt = ++g.attempt;
        env.send(GROUP, c.target, { t: "commit", rid: ++c.rid, attempt, value: g.value + 1 });
      }
    }
    const f = g.fetch;
    if (f.waiting && env.now - f.sentAt < 300) return;
    // Half the reads come from a member starting up (or an admin tool), which asks a random
    // broker FindCoordinator first; the others go where the last answer came from.
    f.target = this.#findCoordinator(rng.chance(0.5) ? -1 : f.target, rng);
    if (f.target < 0) return;
    f.waiting = true;
    f.sentAt = env.now;
    env.check.offsetAsked(++f.rid);
    env.send(GROUP, f.target, { t: "offsetFetch", rid: f.rid });
  }

  #groupReceive(m: Msg): void {
    const g = this.group;
    if (m.t === "offsetFetchResp" && m.rid === g.fetch.rid) {
      g.fetch.waiting = false;
      if (m.errorCode !== 0) g.fetch.target = -1;
    } else if (m.t === "commitResp" && m.rid === g.commit.rid) {
      g.commit.waiting = false;
      if (m.errorCode !== 0) {
        g.commit.target = -1;
        return;
      }
      g.value++;
      this.env.counts.offsetCommits++;
      this.env.check.commitAcked(m.base, this.env.check.acked.get(m.base)!);
    }
  }

  receive(node: number, m: Msg): void {
    const env = this.env;
    if (node === GROUP) return this.#groupReceive(m);
    if (m.t === "readResp") {
      const c = this.consumer;
      if (m.rid !== c.rid) return;
      c.waiting = false;
      if (m.errorCode !== 0) {
        c.target = -1;
        return;
      }
      m.ids.forEach((id, i) => env.check.consumed(m.offset + i, id));
      env.counts.consumed += m.ids.length;
      if (m.offset === c.pos) c.pos += m.ids.length;
      return;
    }
    if (m.t !== "produceResp") return;
    const p = this.producers.get(node);
    if (p === undefined || m.rid !== p.rid) return;
    p.waiting = false;
    if (m.errorCode !== 0) {
      p.target = -1;
      return;
    }
    p.acked++;
    p.seq++;
    p.n = 1 + env.rng.int(0, 3);
  }
}
