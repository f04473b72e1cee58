// Piggyback queue: at most one pending update per member (a newer one replaces it), each
// retransmitted a bounded number of times, least-sent first, newest first among equals.
import { updateWireSize } from "./codec.ts";
import type { Update } from "./types.ts";

interface Pending {
  update: Update;
  transmits: number;
  order: number;
  size: number;
}

export class BroadcastQueue {
  private readonly pending = new Map<number, Pending>();
  private counter = 0;

  get size(): number {
    return this.pending.size;
  }

  enqueue(update: Update): void {
    this.pending.set(update.id, {
      update,
      transmits: 0,
      order: this.counter++,
      size: updateWireSize(update),
    });
  }

  has(id: number): boolean {
    return this.pending.has(id);
  }

  /** The pending update about `id`, if any (tests, diagnostics). */
  peek(id: number): Update | undefined {
    return this.pending.get(id)?.update;
  }

  /**
   * Take up to `maxCount` updates totalling at most `maxBytes` encoded bytes, skipping ids in
   * `skip`; every taken update counts a transmission and retires after `limit` of them.
   */
  take(maxCount: number, maxBytes: number, limit: number, skip?: ReadonlySet<number>): Update[] {
    if (maxCount <= 0 || this.pending.size === 0) return [];
    const all = [...this.pending.values()].sort((a, b) =>
      a.transmits - b.transmits || b.order - a.order
    );
    const out: Update[] = [];
    let bytes = 0;
    for (const p of all) {
      if (out.length >= maxCount) break;
      if (skip?.has(p.update.id)) continue;
      if (bytes + p.size > maxBytes) continue;
      bytes += p.size;
      out.push(p.update);
      p.transmits++;
      if (p.transmits >= limit) this.pending.delete(p.update.id);
    }
    return out;
  }
}
