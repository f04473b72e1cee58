// Broker sessions with the controller, as a pure core: heartbeats keep a session, silence ends
// it, a hint (the broker's connection to the controller closed, gossip suspects it) shortens the
// wait but never ends a session by itself. A new controller gives every broker a fresh session
// that outlasts any lease the old controller can still have confirmed (a broker seen to be gone
// is the exception: nothing of it can still answer).
import { DEFAULT_OPTIONS as RAFT_DEFAULTS } from "../cluster/raft/types.ts";

export interface SessionOptions {
  /** broker.session.timeout.ms: silence that ends a session. */
  sessionTimeoutMs: number;
  /** How often brokers heartbeat. */
  heartbeatMs: number;
  /** After a hint, a broker silent this long (from the hint) is ended. */
  hintGraceMs: number;
  /**
   * The metadata quorum's base election timeout (Raft `electionMs`). A controller cut off from
   * the quorum keeps answering heartbeats until its CheckQuorum round notices, up to two election
   * timeouts after the cut, while the voters elect a successor no sooner than one election
   * timeout after it: the successor must wait a session timeout plus one election timeout before
   * it may fence a broker whose lease the old controller can still have confirmed.
   */
  electionMs: number;
}

export const DEFAULT_SESSIONS: SessionOptions = {
  sessionTimeoutMs: 3000,
  heartbeatMs: 250,
  // Every connection of the broker closed: its process is gone (a live one keeps its Raft
  // connection), so a short grace only covers a quick reconnect.
  hintGraceMs: 300,
  electionMs: RAFT_DEFAULTS.electionMs,
};

interface Session {
  deadlineMs: number;
  lastHeartbeatMs: number;
  /** The broker's applied metadata index, from its last heartbeat. */
  appliedIndex: number;
  shuttingDown: boolean;
}

export class SessionTracker {
  readonly #s = new Map<number, Session>();
  /** The last hint about each broker, kept while not controller too (see start). */
  readonly #hintedAt = new Map<number, number>();
  constructor(readonly o: SessionOptions = DEFAULT_SESSIONS) {}

  /**
   * This broker became controller: every known broker gets a fresh session, long enough that a
   * lease the previous controller confirmed has run out before it ends (a live broker heartbeats
   * the new controller within a few heartbeats, so only a silent one waits it out; ending it
   * sooner let a broker cut off from the new controller serve stale reads and `acks=1` writes as
   * the old leader while its replacement already led). One this broker saw go (a hint within the
   * session timeout) and `gone` still says is gone (no connection from it now) keeps the hint's
   * deadline: a controller elected because the old one died fences it at once.
   */
  start(
    brokers: Iterable<number>,
    nowMs: number,
    gone: (id: number) => boolean = () => false,
  ): void {
    this.#s.clear();
    const first = this.o.sessionTimeoutMs + this.o.electionMs;
    for (const id of brokers) {
      const hinted = this.#hintedAt.get(id);
      const early = hinted !== undefined && nowMs - hinted < this.o.sessionTimeoutMs && gone(id)
        ? hinted + this.o.hintGraceMs
        : Infinity;
      this.#s.set(id, {
        deadlineMs: Math.min(nowMs + first, early),
        lastHeartbeatMs: -1,
        appliedIndex: -1,
        shuttingDown: false,
      });
    }
  }

  heartbeat(id: number, nowMs: number, appliedIndex: number, shuttingDown = false): void {
    const s = this.#s.get(id);
    const next: Session = {
      deadlineMs: nowMs + this.o.sessionTimeoutMs,
      lastHeartbeatMs: nowMs,
      appliedIndex: Math.max(appliedIndex, s?.appliedIndex ?? -1),
      shuttingDown: shuttingDown || (s?.shuttingDown ?? false),
    };
    this.#s.set(id, next);
  }

  /** A sign the broker may be gone (connection closed, gossip suspicion). */
  hint(id: number, nowMs: number): void {
    this.#hintedAt.set(id, nowMs);
    const s = this.#s.get(id);
    if (s === undefined) return;
    s.deadlineMs = Math.min(s.deadlineMs, nowMs + this.o.hintGraceMs);
  }

  /**
   * A session that has not heartbeat yet (a broker registering): it ends after the session
   * timeout unless a heartbeat comes; until then the broker does not count as alive.
   */
  expect(id: number, nowMs: number): void {
    this.#s.set(id, {
      deadlineMs: nowMs + this.o.sessionTimeoutMs,
      lastHeartbeatMs: -1,
      appliedIndex: -1,
      shuttingDown: false,
    });
  }

  /** Ends a session at once (a restarted broker re-registered: its old incarnation is gone). */
  end(id: number): void {
    this.#s.delete(id);
  }

  alive(id: number, nowMs: number): boolean {
    const s = this.#s.get(id);
    return s !== undefined && nowMs <= s.deadlineMs && s.lastHeartbeatMs >= 0;
  }

  appliedIndex(id: number): number {
    return this.#s.get(id)?.appliedIndex ?? -1;
  }

  shuttingDown(id: number): boolean {
    return this.#s.get(id)?.shuttingDown ?? false;
  }

  /** Brokers whose session ended by `nowMs` (each reported once; it must heartbeat again). */
  expire(nowMs: number): number[] {
    const out: number[] = [];
    for (const [id, s] of this.#s) {
      if (nowMs > s.deadlineMs) {
        out.push(id);
        this.#s.delete(id);
      }
    }
    return out;
  }

  lastHeartbeat(id: number): number {
    return this.#s.get(id)?.lastHeartbeatMs ?? -1;
  }
}
