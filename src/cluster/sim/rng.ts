// Seeded PRNG (xoshiro128**, seeded through splitmix32). Every random choice of a simulation
// comes from one of these, so a seed replays exactly.

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    const st = { s: (seed | 0) ^ Math.floor(seed / 0x100000000) };
    this.#a = splitmix32(st);
    this.#b = splitmix32(st);
    this.#c = splitmix32(st);
    this.#d = splitmix32(st);
    if ((this.#a | this.#b | this.#c | this.#d) === 0) this.#a = 1;
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const r = Math.imul(rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = rotl(this.#d, 11);
    return r;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 0x100000000;
  }

  /** Uniform integer in [lo, hi). Returns lo when hi <= lo. */
  int(lo: number, hi: number): number {
    if (hi <= lo) return lo;
    return lo + Math.floor(this.next() * (hi - lo));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new RangeError("pick from an empty array");
    return xs[this.int(0, xs.length)];
  }

  /** Fisher-Yates in place; returns xs. */
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(0, i + 1);
      const t = xs[i];
      xs[i] = xs[j];
      xs[j] = t;
    }
    return xs;
  }

  /** An independent stream derived from this one (e.g. one per node). */
  fork(): Rng {
    return new Rng(this.u32() * 0x10000 + (this.u32() & 0xffff));
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
