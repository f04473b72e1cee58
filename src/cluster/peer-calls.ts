// Calls to other brokers on behalf of HTTP clients (forwarded produce, reads, tails, group
// requests), bounded per peer: each peer gets a few lanes, each its own identified connection
// (a PeerLink) with at most `limit` calls in flight and a bounded queue; a call waits for a slot
// only until the caller's deadline. Lanes keep kinds of traffic apart: long-polls cannot hold up
// appends, and a slow group join cannot time out (and so reset) the connection of a read.
import type { ClusterService } from "./node.ts";
import type { CallResult, PeerLink } from "./peer-link.ts";

export type Lane = "data" | "poll" | "group";

/** Calls in flight per peer and lane (a PeerLink takes 64). */
export const LANE_LIMITS: Record<Lane, number> = { data: 32, poll: 48, group: 48 };
/** Callers waiting for a slot per peer and lane; beyond this a call is refused at once. */
const MAX_QUEUED = 4096;

/** Why a forwarded call failed: the caller maps it to its protocol's error. */
export type PeerCallFailure =
  | "unknown" // no address known for the broker
  | "busy" // no slot before the deadline, or the queue is full
  | "timeout" // sent, but no answer before the deadline (the outcome is unknown)
  | "failed"; // connection lost, refused, or the peer answered with an error

export class PeerCallError extends Error {
  override readonly name = "PeerCallError";
  constructor(readonly kind: PeerCallFailure, readonly nodeId: number, message: string) {
    super(message);
  }
}

class Slots {
  active = 0;
  readonly queue: { grant: () => void }[] = [];
  constructor(readonly limit: number) {}

  acquire(deadline: number): Promise<boolean> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(true);
    }
    if (this.queue.length >= MAX_QUEUED) return Promise.resolve(false);
    const left = deadline - performance.now();
    if (left <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const w = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        resolve(false);
      }, left);
      this.queue.push(w);
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next.grant(); // the slot passes on: `active` stays
    else this.active--;
  }
}

interface PeerLanes {
  links: Partial<Record<Lane, PeerLink>>;
  slots: Record<Lane, Slots>;
}

export class PeerCalls {
  readonly #peers = new Map<number, PeerLanes>();
  #closed = false;

  constructor(readonly cluster: Pick<ClusterService, "nodeId" | "link" | "peerAddress">) {}

  /**
   * One call to `nodeId` on `lane`, answered before `deadline` (performance.now() time) or
   * failed with a PeerCallError. `tail` carries raw bytes (record batches).
   */
  async call(
    nodeId: number,
    lane: Lane,
    method: string,
    body: unknown,
    deadline: number,
    tail: readonly Uint8Array[] = [],
  ): Promise<CallResult> {
    const addr = this.#closed ? undefined : this.cluster.peerAddress(nodeId);
    if (addr === undefined || nodeId === this.cluster.nodeId) {
      throw new PeerCallError("unknown", nodeId, `no cluster address known for broker ${nodeId}`);
    }
    let p = this.#peers.get(nodeId);
    if (p === undefined) {
      p = {
        links: {},
        slots: {
          data: new Slots(LANE_LIMITS.data),
          poll: new Slots(LANE_LIMITS.poll),
          group: new Slots(LANE_LIMITS.group),
        },
      };
      this.#peers.set(nodeId, p);
    }
    const slots = p.slots[lane];
    if (!(await slots.acquire(deadline))) {
      throw new PeerCallError(
        "busy",
        nodeId,
        `too many requests forwarded to broker ${nodeId} right now (at most ${slots.limit} at a time)`,
      );
    }
    try {
      let link = p.links[lane];
      if (link === undefined) {
        link = this.cluster.link(nodeId);
        if (link === undefined) {
          throw new PeerCallError(
            "unknown",
            nodeId,
            `no cluster address known for broker ${nodeId}`,
          );
        }
        p.links[lane] = link;
      }
      link.retarget(addr);
      const left = Math.floor(deadline - performance.now());
      if (left <= 0 || this.#closed) {
        throw new PeerCallError("timeout", nodeId, `no time left to ask broker ${nodeId}`);
      }
      try {
        return await link.call(method, body, left, tail);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        const timedOut = /no answer in \d+ ms/.test(msg);
        throw new PeerCallError(
          timedOut ? "timeout" : "failed",
          nodeId,
          timedOut ? `broker ${nodeId} did not answer in time` : `broker ${nodeId}: ${msg}`,
        );
      }
    } finally {
      slots.release();
    }
  }

  close(): void {
    this.#closed = true;
    for (const p of this.#peers.values()) {
      for (const l of Object.values(p.links)) l?.close();
    }
    this.#peers.clear();
  }
}
