// A token bucket for reassignment traffic (Kafka's leader/follower.replication.throttled.rate):
// bytes may go while the bucket holds tokens; a read larger than what is left takes the bucket
// below zero, and the next one waits until it refilled, so the average holds to the rate while
// single batches still go whole. Pure over the clock it is given.

/** At most this much unused rate is saved up (a burst after an idle spell). */
const BURST_SEC = 1;

export class Throttle {
  #tokens = 0;
  #at: number | undefined;

  constructor(readonly now: () => number) {}

  #refill(rate: number): void {
    const t = this.now();
    if (this.#at === undefined) this.#tokens = Math.min(rate * BURST_SEC, 64 * 1024);
    else this.#tokens = Math.min(this.#tokens + (t - this.#at) * rate / 1000, rate * BURST_SEC);
    this.#at = t;
  }

  /** Bytes that may go now at `rate` bytes/s (0 when the bucket is empty or overdrawn). */
  allowance(rate: number): number {
    this.#refill(rate);
    return Math.max(0, Math.floor(this.#tokens));
  }

  /** `bytes` went at `rate`: returns how many ms to wait before the next read may go. */
  take(bytes: number, rate: number): number {
    this.#refill(rate);
    this.#tokens -= bytes;
    return this.#tokens >= 0 ? 0 : Math.ceil(-this.#tokens * 1000 / rate);
  }
}
