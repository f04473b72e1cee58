// A global byte budget shared by all connections: it caps the produce data held in memory
// (read but not yet appended and answered). A connection that cannot get bytes stops reading
// until another connection releases some, so memory stays bounded however many clients push.
import type { GaugeFamily } from "../core/metrics.ts";

export class ByteBudget {
  #used = 0;
  readonly #waiters = new Set<() => void>();

  constructor(readonly limit: number) {}

  get used(): number {
    return this.#used;
  }

  /** The bytes held (gauge `name`, described by `help`) and the bound, set by `setting`. */
  gauges(name: string, help: string, setting: string): GaugeFamily[] {
    return [
      { name, help, samples: [{ labels: {}, value: this.used }] },
      {
        name: `${name}_max`,
        help: `${setting}: the bound on ${name}`,
        samples: [{ labels: {}, value: this.limit }],
      },
    ];
  }

  /**
   * Take n bytes if they fit. A request larger than the whole budget is let through when
   * nothing else is held, so one maximum-size frame can always make progress.
   */
  tryAcquire(n: number): boolean {
    if (this.#used > 0 && this.#used + n > this.limit) return false;
    this.#used += n;
    return true;
  }

  release(n: number): void {
    this.#used = Math.max(0, this.#used - n);
    if (this.#waiters.size === 0) return;
    const ws = [...this.#waiters];
    this.#waiters.clear();
    for (const w of ws) w();
  }

  /** Call `wake` once, the next time bytes are released. */
  onRelease(wake: () => void): void {
    this.#waiters.add(wake);
  }

  cancel(wake: () => void): void {
    this.#waiters.delete(wake);
  }
}
