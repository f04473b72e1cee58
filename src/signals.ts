// What a stop signal (SIGTERM, SIGINT, SIGHUP) does while the broker runs. Sans-IO: main.ts
// feeds it signals and a clock and acts on the answers.
//
// The first signal starts the clean shutdown. Signals often come in bursts that do not mean
// "hurry": `timeout -s INT` and a process-group kill can deliver a second one milliseconds after
// the first, and closing an SSH session sends SIGHUP then SIGTERM/SIGCONT. So a second signal
// within the grace period is logged and otherwise ignored; only a third signal, or a second one
// after the grace period (the operator has waited and insists), exits at once.

/** Stop signals the broker handles, with their numbers (exit status 128 + n when forced). */
export const STOP_SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** How long after the first signal a second one is taken as part of the same burst. */
export const SIGNAL_GRACE_MS = 2000;

export type SignalAction =
  | { kind: "shutdown" }
  | { kind: "ignore"; why: string }
  | { kind: "exit"; code: number; why: string };

export class StopSignals {
  #first: number | null = null;
  #count = 0;

  constructor(readonly graceMs = SIGNAL_GRACE_MS) {}

  /** The action for a signal received at `now` (ms, any monotonic clock). */
  receive(signal: StopSignal, now: number): SignalAction {
    this.#count++;
    if (this.#first === null) {
      this.#first = now;
      return { kind: "shutdown" };
    }
    const code = 128 + STOP_SIGNALS[signal];
    if (this.#count >= 3) {
      return { kind: "exit", code, why: `signal ${this.#count} during the shutdown` };
    }
    const since = now - this.#first;
    if (since >= this.graceMs) {
      return { kind: "exit", code, why: `second signal ${Math.round(since)} ms into the shutdown` };
    }
    return {
      kind: "ignore",
      why: `second signal ${Math.round(since)} ms after the first: the clean shutdown goes on ` +
        `(a third signal, or one after ${this.graceMs / 1000} s, exits at once)`,
    };
  }
}
