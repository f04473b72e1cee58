// Runs SwimNodes over the shared simulation kit: seeded network (loss, duplication, delay,
// reordering, partitions), skewed clocks, crashes with restart. Event-driven: time jumps to the
// next delivery, node deadline or scripted action. Messages travel as encoded bytes.
import { EventQueue, Rng, SimClock, SimNetwork } from "../../../src/cluster/sim/index.ts";
import {
  decodeSwim,
  encodeSwim,
  type MemberAddrs,
  type MembershipEvent,
  type SwimConfig,
  SwimDecodeError,
  SwimNode,
  type SwimNodeOptions,
  type SwimOutput,
} from "../../../src/cluster/swim/index.ts";

export type NodeFactory = (opts: SwimNodeOptions) => SwimNode;

export interface ObservedEvent {
  at: number;
  observer: number;
  ev: MembershipEvent;
}

interface Slot {
  node: SwimNode;
  epoch: number;
  up: boolean;
  tick?: { at: number; handle: ReturnType<EventQueue<Action>["push"]> };
}

interface Wire {
  bytes: Uint8Array;
  epoch: number;
  /** The sender's cluster address, as a UDP transport would see it. */
  fromAddr: string;
}

type Action = { kind: "tick"; id: number } | { kind: "script"; run: () => void };

export function simAddrs(id: number, epoch: number): MemberAddrs {
  return { cluster: `n${id}.e${epoch}:7946`, kafka: `n${id}:9092`, http: `n${id}:8080` };
}

export interface CountTotals {
  crashes: number;
  restarts: number;
  joins: number;
  leaves: number;
  refutations: number;
  decodeErrors: number;
  undeliverable: number;
}

export class SwimSim {
  readonly clock = new SimClock();
  readonly net: SimNetwork<Wire>;
  readonly rng: Rng;
  readonly events: ObservedEvent[] = [];
  readonly totals: CountTotals = {
    crashes: 0,
    restarts: 0,
    joins: 0,
    leaves: 0,
    refutations: 0,
    decodeErrors: 0,
    undeliverable: 0,
  };
  /** Per node: global time of the last crash (-1 while never crashed). */
  readonly crashedAt = new Map<number, number>();
  readonly slots = new Map<number, Slot>();
  private readonly addrs = new Map<string, { id: number; epoch: number }>();
  private readonly queue = new EventQueue<Action>();
  private readonly nodeRng: Rng;

  constructor(
    seed: number,
    readonly config: Partial<SwimConfig> = {},
    readonly factory: NodeFactory = (o) => new SwimNode(o),
  ) {
    this.rng = new Rng(seed);
    this.nodeRng = this.rng.fork();
    this.net = new SimNetwork(this.rng.fork());
  }

  get now(): number {
    return this.clock.now;
  }

  node(id: number): SwimNode | undefined {
    const s = this.slots.get(id);
    return s?.up ? s.node : undefined;
  }

  liveIds(): number[] {
    return [...this.slots.entries()].filter(([, s]) => s.up).map(([id]) => id);
  }

  /** Start (or restart, with a fresh state) node `id`; `seeds` are node ids to join through. */
  start(id: number, epoch: number, seeds: number[]): void {
    const old = this.slots.get(id);
    if (old?.up) throw new Error(`node ${id} already up`);
    if (old) {
      this.refuteTotal(old.node);
      this.totals.restarts++;
    }
    const addrs = simAddrs(id, epoch);
    this.addrs.set(addrs.cluster, { id, epoch });
    const node = this.factory({
      id,
      addrs,
      rng: this.nodeRng.fork(),
      config: this.config,
      nowMs: this.local(id),
    });
    const slot: Slot = { node, epoch, up: true };
    this.slots.set(id, slot);
    this.net.setDown(id, false);
    if (seeds.length > 0) {
      this.totals.joins++;
      const seedAddrs = seeds.map((s) => this.slots.get(s)!.node.addresses.cluster);
      this.absorb(id, node.join(seedAddrs, this.local(id)));
    }
    this.reschedule(id);
  }

  crash(id: number): void {
    const s = this.slots.get(id);
    if (!s?.up) return;
    s.up = false;
    this.totals.crashes++;
    this.crashedAt.set(id, this.now);
    this.net.setDown(id, true);
    if (s.tick) this.queue.cancel(s.tick.handle);
    s.tick = undefined;
  }

  leave(id: number): void {
    const s = this.slots.get(id);
    if (!s?.up) return;
    this.totals.leaves++;
    this.absorb(id, s.node.leave(this.local(id)));
    this.reschedule(id);
  }

  rejoin(id: number, seeds: number[]): void {
    const s = this.slots.get(id);
    if (!s?.up) return;
    this.totals.joins++;
    const seedAddrs = seeds.map((x) => this.slots.get(x)!.node.addresses.cluster);
    this.absorb(id, s.node.join(seedAddrs, this.local(id)));
    this.reschedule(id);
  }

  at(globalMs: number, run: () => void): void {
    this.queue.push(globalMs, { kind: "script", run });
  }

  /** Advance to `untilMs` (global), processing deliveries, timers and scripted actions. */
  run(untilMs: number): void {
    for (let guard = 0; guard < 50_000_000; guard++) {
      const t = Math.min(this.net.nextDeliveryAt(), this.queue.peekTime());
      if (t > untilMs) break;
      this.clock.advanceTo(t);
      for (let d = this.net.popDue(t); d; d = this.net.popDue(t)) this.deliver(d.to, d.msg);
      while (this.queue.peekTime() <= t) {
        const a = this.queue.pop()!.event;
        if (a.kind === "script") a.run();
        else this.fire(a.id);
      }
    }
    this.clock.advanceTo(untilMs);
  }

  /** Sum of refutations made by every incarnation of every node so far. */
  refutations(): number {
    let n = this.totals.refutations;
    for (const s of this.slots.values()) n += s.node.stats.refutations;
    return n;
  }

  private local(id: number): number {
    return Math.floor(this.clock.localNow(id));
  }

  private refuteTotal(old: SwimNode): void {
    this.totals.refutations += old.stats.refutations;
  }

  private fire(id: number): void {
    const s = this.slots.get(id);
    if (!s?.up) return;
    s.tick = undefined;
    this.absorb(id, s.node.tick(this.local(id)));
    this.reschedule(id, true);
  }

  private deliver(to: number, m: Wire): void {
    const s = this.slots.get(to);
    // A message for a previous life's address is lost, as on a real network.
    if (!s?.up || s.epoch !== m.epoch) {
      this.totals.undeliverable++;
      return;
    }
    let msg;
    try {
      msg = decodeSwim(m.bytes);
    } catch (e) {
      if (!(e instanceof SwimDecodeError)) throw e;
      this.totals.decodeErrors++;
      return;
    }
    this.absorb(to, s.node.receive(msg, this.local(to), m.fromAddr));
    this.reschedule(to);
  }

  private absorb(from: number, o: SwimOutput): void {
    const fromAddr = this.slots.get(from)!.node.addresses.cluster;
    for (const ev of o.events) this.events.push({ at: this.now, observer: from, ev });
    for (const out of o.send) {
      const dest = this.addrs.get(out.to);
      if (!dest) {
        this.totals.undeliverable++;
        continue;
      }
      this.net.send(
        from,
        dest.id,
        { bytes: encodeSwim(out.msg), epoch: dest.epoch, fromAddr },
        this.now,
      );
    }
  }

  private reschedule(id: number, afterTick = false): void {
    const s = this.slots.get(id)!;
    const local = s.node.nextDeadline();
    let at = local === Infinity ? Infinity : this.clock.globalAt(id, local);
    // Skewed clocks round: never re-fire a tick at the instant it just ran.
    if (afterTick && at <= this.now) at = this.now + 1;
    if (s.tick && s.tick.at === at) return;
    if (s.tick) this.queue.cancel(s.tick.handle);
    s.tick = undefined;
    if (at !== Infinity) s.tick = { at, handle: this.queue.push(at, { kind: "tick", id }) };
  }
}
