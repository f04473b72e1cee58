// Simulated network: each send becomes zero, one or two deliveries at random future times
// (loss, duplication, delay; different delays reorder). Symmetric and one-way partitions and
// down nodes are checked both at send and at delivery time, so messages in flight when a
// partition starts are lost, as on a real network. Messages are opaque values.
import { EventQueue } from "./queue.ts";
import type { Rng } from "./rng.ts";

export type NodeId = number;

export interface NetworkOptions {
  /** Inclusive lower bound of the one-way delay, ms. */
  minDelayMs: number;
  /** Exclusive upper bound of the one-way delay, ms. */
  maxDelayMs: number;
  /** Probability a message is dropped. */
  lossRate: number;
  /** Probability a (not dropped) message is delivered twice. */
  dupRate: number;
  /** Probability a message gets an extra delay of up to 10x maxDelayMs (a straggler). */
  stragglerRate: number;
}

export const DEFAULT_NETWORK: NetworkOptions = {
  minDelayMs: 1,
  maxDelayMs: 10,
  lossRate: 0,
  dupRate: 0,
  stragglerRate: 0,
};

export interface Delivery<M> {
  at: number;
  from: NodeId;
  to: NodeId;
  msg: M;
}

export interface NetworkStats {
  sent: number;
  delivered: number;
  dropped: number;
  duplicated: number;
}

export class SimNetwork<M> {
  #rng: Rng;
  #opts: NetworkOptions;
  #queue = new EventQueue<Delivery<M>>();
  /** "from>to" pairs that cannot carry messages. */
  #blocked = new Set<string>();
  #down = new Set<NodeId>();
  readonly stats: NetworkStats = { sent: 0, delivered: 0, dropped: 0, duplicated: 0 };

  constructor(rng: Rng, opts: Partial<NetworkOptions> = {}) {
    this.#rng = rng;
    this.#opts = { ...DEFAULT_NETWORK, ...opts };
  }

  get options(): Readonly<NetworkOptions> {
    return this.#opts;
  }

  setOptions(opts: Partial<NetworkOptions>): void {
    this.#opts = { ...this.#opts, ...opts };
  }

  /** Queues msg from `from` to `to`, sent at nowMs (global time). */
  send(from: NodeId, to: NodeId, msg: M, nowMs: number): void {
    this.stats.sent++;
    const o = this.#opts;
    if (this.#down.has(from) || !this.canReach(from, to) || this.#rng.chance(o.lossRate)) {
      this.stats.dropped++;
      return;
    }
    const copies = this.#rng.chance(o.dupRate) ? 2 : 1;
    if (copies === 2) this.stats.duplicated++;
    for (let i = 0; i < copies; i++) {
      let delay = this.#rng.int(o.minDelayMs, Math.max(o.minDelayMs + 1, o.maxDelayMs));
      if (this.#rng.chance(o.stragglerRate)) delay += this.#rng.int(0, 10 * o.maxDelayMs);
      this.#queue.push(nowMs + delay, { at: nowMs + delay, from, to, msg });
    }
  }

  /** Global time of the next pending delivery, or Infinity. */
  nextDeliveryAt(): number {
    return this.#queue.peekTime();
  }

  /**
   * Removes and returns the earliest pending delivery if it is due at or before nowMs and can
   * still arrive; a delivery that cannot arrive (partition, down node) is dropped and the next
   * is tried. Returns undefined when nothing is due.
   */
  popDue(nowMs: number): Delivery<M> | undefined {
    for (;;) {
      if (this.#queue.peekTime() > nowMs) return undefined;
      const d = this.#queue.pop()!.event;
      if (this.#down.has(d.to) || !this.canReach(d.from, d.to)) {
        this.stats.dropped++;
        continue;
      }
      this.stats.delivered++;
      return d;
    }
  }

  canReach(from: NodeId, to: NodeId): boolean {
    return this.#blocked.size === 0 || !this.#blocked.has(`${from}>${to}`);
  }

  /** Cuts every link between group a and group b, both ways. */
  partition(a: readonly NodeId[], b: readonly NodeId[]): void {
    for (const x of a) {
      for (const y of b) {
        if (x === y) continue;
        this.#blocked.add(`${x}>${y}`);
        this.#blocked.add(`${y}>${x}`);
      }
    }
  }

  /** Cuts messages from `from` to `to` only (to can still reach from). */
  blockOneWay(from: NodeId, to: NodeId): void {
    if (from !== to) this.#blocked.add(`${from}>${to}`);
  }

  /** Removes every partition and one-way block. */
  heal(): void {
    this.#blocked.clear();
  }

  get partitioned(): boolean {
    return this.#blocked.size > 0;
  }

  /** A down node neither sends nor receives (its in-flight inbound messages are lost). */
  setDown(node: NodeId, down: boolean): void {
    if (down) this.#down.add(node);
    else this.#down.delete(node);
  }

  isDown(node: NodeId): boolean {
    return this.#down.has(node);
  }

  /** Drops every message in flight. */
  clear(): void {
    this.#queue.clear();
  }
}
