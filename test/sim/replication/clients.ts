// The clients: two idempotent acks=all producers (a retried batch keeps its producer id and
// sequence) and a consumer reading up to the high watermark. They find the leader the way a
// Kafka client does, from metadata that may be stale: usually the newest committed leader,
// sometimes the one they used before, now and then any broker.
import type { Env } from "./cluster.ts";
import { BROKERS, CONSUMER, type Msg, PRODUCERS } from "./model.ts";

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
  producing = true;

  constructor(readonly env: Env) {
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
  }

  /** Some request still waits for its answer. */
  get waiting(): boolean {
    for (const x of this.producers.values()) if (x.waiting) return true;
    return false;
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

  receive(node: number, m: Msg): void {
    const env = this.env;
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
