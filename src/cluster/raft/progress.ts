// The leader's view of one peer's log: how far it matches, what to send next, and the flow
// state (probe: one message per heartbeat until the match point is found; replicate: pipeline
// up to maxInflight messages; snapshot: wait for an install to finish).
export type ProgressState = "probe" | "replicate" | "snapshot";

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = "probe";
  /** Probe: a message is out; wait for an answer or the next heartbeat response. */
  probeSent = false;
  /** Last index of each append in flight (replicate state). */
  inflight: number[] = [];
  pendingSnapshot = 0;
  snapshotSentAt = 0;
  /** Heard from since the last CheckQuorum round. */
  recentActive = false;
  /** Highest read-index round this peer acknowledged (in this term). */
  readAck = 0;

  constructor(next: number) {
    this.next = Math.max(1, next);
  }

  becomeProbe(): void {
    this.state = "probe";
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflight = [];
    this.pendingSnapshot = 0;
  }

  becomeReplicate(): void {
    this.state = "replicate";
    this.next = this.match + 1;
    this.inflight = [];
  }

  becomeSnapshot(index: number, now: number): void {
    this.state = "snapshot";
    this.pendingSnapshot = index;
    this.snapshotSentAt = now;
    this.inflight = [];
  }

  /** An acknowledgement up to n; false when stale. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    if (this.next < n + 1) this.next = n + 1;
    while (this.inflight.length > 0 && this.inflight[0] <= n) this.inflight.shift();
    return updated;
  }

  /** A rejection of an append after `rejected`; false when stale. */
  maybeDecrTo(rejected: number, hint: number): boolean {
    if (this.state === "replicate") {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, hint + 1), this.match + 1, 1);
    this.probeSent = false;
    return true;
  }

  isPaused(maxInflight: number): boolean {
    switch (this.state) {
      case "probe":
        return this.probeSent;
      case "replicate":
        return this.inflight.length >= maxInflight;
      case "snapshot":
        return true;
    }
  }
}
