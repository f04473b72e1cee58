// The decisions of a broker's session with the controller, without IO or clocks: when the next
// heartbeat is due, what it carries, what an answer changes, and whether the lease holds. The
// caller passes the time; SessionClient (session-client.ts) runs it over timers and the cluster
// transport, the replication simulator (test/sim/replication) over simulated time and messages.

/** What a heartbeat tells the controller. */
export interface HeartbeatBody {
  appliedIndex: number;
  shuttingDown: boolean;
}

export class SessionCore {
  #fenced = true;
  #shuttingDown = false;
  #alone = false;
  /** When the last heartbeat that the controller answered "unfenced" was sent. */
  #confirmedAt = -Infinity;
  /** When the heartbeat in flight was sent (null: none). */
  #inFlight: number | null = null;
  /** The earliest time the next heartbeat goes out. */
  #nextAt = -Infinity;

  constructor(readonly heartbeatMs = 250, readonly sessionTimeoutMs = 3000) {}

  get fenced(): boolean {
    return this.#fenced;
  }
  get confirmedAt(): number {
    return this.#confirmedAt;
  }
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }
  get inFlight(): number | null {
    return this.#inFlight;
  }

  /** How long a heartbeat call may take before it counts as failed. */
  get callTimeoutMs(): number {
    return Math.max(1000, this.heartbeatMs * 4);
  }

  /** One heartbeat at a time, `heartbeatMs` after the previous one ended (answered or failed). */
  heartbeatDue(now: number): boolean {
    return this.#inFlight === null && now >= this.#nextAt;
  }

  /** How long until the next heartbeat is due (0: now). */
  nextHeartbeatIn(now: number): number {
    return Math.max(0, this.#nextAt - now);
  }

  /**
   * A heartbeat goes out at `now`. `alone`: this broker is the controller of a one-voter quorum,
   * so no other leader can exist whatever it stalled for (see leaseValid).
   */
  onHeartbeatSent(now: number, appliedIndex: number, alone: boolean): HeartbeatBody {
    this.#inFlight = now;
    this.#alone = alone;
    return { appliedIndex, shuttingDown: this.#shuttingDown };
  }

  /**
   * The controller answered the heartbeat sent at `sentAt`; anything but `fenced: false` means
   * fenced. Returns whether the fencing changed. An unfenced answer confirms the lease from the
   * send time (the controller's session deadline starts no earlier than the arrival), and never
   * moves it back: a late answer to an older heartbeat confirms less than a newer one did.
   */
  onAnswer(sentAt: number, answer: unknown, now: number): boolean {
    this.#ended(now);
    const fenced = (answer as { fenced?: unknown } | null)?.fenced !== false;
    if (!fenced) this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
    const changed = fenced !== this.#fenced;
    this.#fenced = fenced;
    return changed;
  }

  /** The heartbeat call failed or timed out: nothing is learnt, the next one is due later. */
  onFailure(now: number): void {
    this.#ended(now);
  }

  #ended(now: number): void {
    this.#inFlight = null;
    this.#nextAt = now + this.heartbeatMs;
  }

  /** Controlled shutdown started: every later heartbeat says so. */
  beginShutdown(): void {
    this.#shuttingDown = true;
  }

  /**
   * Whether this broker may act as a leader now: unfenced, and confirmed so by a heartbeat sent
   * less than a session timeout ago. The controller ends a session no sooner than that after the
   * heartbeat arrived, so a broker that was paused (SIGSTOP, a long stall) and may have been
   * fenced and replaced meanwhile writes nothing as a zombie until a fresh answer says it is not.
   */
  leaseValid(now: number): boolean {
    if (this.#alone) return !this.#fenced;
    return !this.#fenced && now - this.#confirmedAt < this.sessionTimeoutMs;
  }
}
