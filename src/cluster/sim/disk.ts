// A node's simulated stable storage. Writes apply at once to the live state and queue as
// unsynced; sync() makes them durable; crash() keeps only the durable state plus a random
// prefix of the unsynced writes (a write may or may not have reached the platter), which is
// exactly what a core that does not sync before acting would lose.
import type { Rng } from "./rng.ts";

export type Mutation<S> = (state: S) => void;

export class SimDisk<S> {
  #durable: S;
  #live: S;
  #pending: Mutation<S>[] = [];
  #clone: (s: S) => S;

  /** clone must deep-copy whatever mutations touch. */
  constructor(initial: S, clone: (s: S) => S) {
    this.#clone = clone;
    this.#durable = clone(initial);
    this.#live = clone(initial);
  }

  /** The state as the running node sees it (durable + unsynced writes). Do not mutate. */
  get live(): S {
    return this.#live;
  }

  /** The state a crash right now would be guaranteed to keep. Do not mutate. */
  get durable(): S {
    return this.#durable;
  }

  get unsynced(): number {
    return this.#pending.length;
  }

  /** Applies a mutation; it must be replayable (it runs again on the durable copy). */
  write(m: Mutation<S>): void {
    m(this.#live);
    this.#pending.push(m);
  }

  /** Makes every write so far durable. */
  sync(): void {
    for (const m of this.#pending) m(this.#durable);
    this.#pending = [];
  }

  /**
   * Loses the unsynced writes except a random prefix (rng given) or none (no rng), and returns
   * the state a restarted node reads.
   */
  crash(rng?: Rng): S {
    const keep = rng === undefined ? 0 : rng.int(0, this.#pending.length + 1);
    for (let i = 0; i < keep; i++) this.#pending[i](this.#durable);
    this.#pending = [];
    this.#live = this.#clone(this.#durable);
    return this.#live;
  }
}
