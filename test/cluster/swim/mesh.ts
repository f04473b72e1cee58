// A zero-latency, lossless-unless-told in-memory network for SwimNode unit tests. Every message
// goes through the wire codec, so the tests also exercise encode/decode.
import { Rng } from "../../../src/cluster/sim/index.ts";
import {
  decodeSwim,
  encodeSwim,
  type MembershipEvent,
  type Outbound,
  type SwimConfig,
  SwimNode,
  type SwimOutput,
} from "../../../src/cluster/swim/index.ts";

export interface Sent {
  at: number;
  from: number;
  out: Outbound;
  bytes: number;
}

export function addrsOf(id: number, epoch = 0) {
  return { cluster: `n${id}.${epoch}:7946`, kafka: `n${id}:9092`, http: `n${id}:8080` };
}

export class Mesh {
  now = 0;
  readonly nodes = new Map<number, SwimNode>();
  readonly byAddr = new Map<string, number>();
  readonly events: { at: number; node: number; ev: MembershipEvent }[] = [];
  readonly sent: Sent[] = [];
  /** Return true to drop a message. */
  drop: (from: number, out: Outbound) => boolean = () => false;
  private readonly inflight: { from: number; out: Outbound }[] = [];
  private readonly rng: Rng;

  constructor(seed = 1, readonly config: Partial<SwimConfig> = {}) {
    this.rng = new Rng(seed);
  }

  add(id: number, epoch = 0, incarnation = 0): SwimNode {
    const n = new SwimNode({
      id,
      addrs: addrsOf(id, epoch),
      rng: this.rng.fork(),
      config: this.config,
      incarnation,
      nowMs: this.now,
    });
    this.put(n);
    return n;
  }

  /** Register a node built elsewhere (e.g. a fault-injecting subclass). */
  put(n: SwimNode): void {
    for (const [a, id] of this.byAddr) if (id === n.id) this.byAddr.delete(a);
    this.nodes.set(n.id, n);
    this.byAddr.set(n.addresses.cluster, n.id);
  }

  remove(id: number): void {
    this.nodes.delete(id);
    for (const [a, x] of this.byAddr) if (x === id) this.byAddr.delete(a);
  }

  absorb(from: number, o: SwimOutput): void {
    for (const ev of o.events) this.events.push({ at: this.now, node: from, ev });
    for (const out of o.send) {
      const bytes = encodeSwim(out.msg).length;
      this.sent.push({ at: this.now, from, out, bytes });
      if (!this.drop(from, out)) this.inflight.push({ from, out });
    }
  }

  /** Deliver until quiet (zero latency). */
  flush(): void {
    for (let i = 0; i < 100_000 && this.inflight.length > 0; i++) {
      const { from, out } = this.inflight.shift()!;
      const id = this.byAddr.get(out.to);
      const n = id === undefined ? undefined : this.nodes.get(id);
      if (!n) continue;
      const msg = decodeSwim(encodeSwim(out.msg));
      void from;
      this.absorb(n.id, n.receive(msg, this.now));
    }
  }

  run(untilMs: number): void {
    this.flush();
    for (let i = 0; i < 1_000_000; i++) {
      let t = Infinity;
      for (const n of this.nodes.values()) t = Math.min(t, n.nextDeadline());
      if (t > untilMs) break;
      this.now = Math.max(this.now, t);
      for (const n of [...this.nodes.values()]) {
        if (n.nextDeadline() <= this.now) this.absorb(n.id, n.tick(this.now));
      }
      this.flush();
    }
    this.now = Math.max(this.now, untilMs);
  }

  /** Start node 0 alone and join the others through it; run until all see all. */
  static cluster(size: number, seed = 1, config: Partial<SwimConfig> = {}): Mesh {
    const m = new Mesh(seed, config);
    m.add(0);
    for (let i = 1; i < size; i++) {
      const n = m.add(i);
      m.absorb(i, n.join(addrsOf(0).cluster, m.now));
    }
    m.run(m.now + 20_000);
    return m;
  }

  state(observer: number, subject: number): string | undefined {
    return this.nodes.get(observer)?.member(subject)?.state;
  }

  eventsOf(type: MembershipEvent["type"], subject?: number) {
    return this.events.filter((e) =>
      e.ev.type === type && (subject === undefined || e.ev.member.id === subject)
    );
  }
}
