// Simulated time. One global clock (ms) drives the event loop; each node reads a skewed local
// clock: local = offset + global * rate. Cores only ever see their local clock.
import type { NodeId } from "./network.ts";

export interface Skew {
  /** Constant offset of the node's clock, ms (may be negative). */
  offsetMs: number;
  /** Rate of the node's clock relative to global time, e.g. 1.0005 (runs 0.05% fast). */
  rate: number;
}

export class SimClock {
  /** Global simulated time, ms. Only the simulation loop advances it. */
  now = 0;
  #skews = new Map<NodeId, Skew>();

  /** Advances global time; never goes back. */
  advanceTo(ms: number): void {
    if (ms > this.now) this.now = ms;
  }

  setSkew(node: NodeId, skew: Skew): void {
    if (!(skew.rate > 0) || !Number.isFinite(skew.offsetMs)) {
      throw new RangeError("clock rate must be > 0 and offset finite");
    }
    this.#skews.set(node, skew);
  }

  skew(node: NodeId): Skew {
    return this.#skews.get(node) ?? { offsetMs: 0, rate: 1 };
  }

  /** The node's local clock at the current global time. */
  localNow(node: NodeId): number {
    return this.localAt(node, this.now);
  }

  localAt(node: NodeId, globalMs: number): number {
    const s = this.#skews.get(node);
    return s === undefined ? globalMs : s.offsetMs + globalMs * s.rate;
  }

  /** The global time at which the node's local clock reads localMs (never before now). */
  globalAt(node: NodeId, localMs: number): number {
    const s = this.#skews.get(node);
    const g = s === undefined ? localMs : (localMs - s.offsetMs) / s.rate;
    return Math.max(this.now, Math.ceil(g));
  }
}
