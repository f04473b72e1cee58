// SessionCore (src/replication/session-core.ts): the heartbeat schedule, what an answer changes,
// and the lease a broker leads under.
import { describe, expect, test } from "bun:test";
import { SessionCore } from "../../src/replication/session-core.ts";

/** A core that sent a heartbeat at `sentAt` and got `answer` back at `answeredAt`. */
function answered(core: SessionCore, sentAt: number, answeredAt: number, answer: unknown) {
  core.onHeartbeatSent(sentAt, 7, false);
  return core.onAnswer(sentAt, answer, answeredAt);
}

describe("SessionCore", () => {
  test("starts fenced with no lease, its first heartbeat due at once", () => {
    const c = new SessionCore(250, 3000);
    expect(c.fenced).toBe(true);
    expect(c.leaseValid(0)).toBe(false);
    expect(c.heartbeatDue(0)).toBe(true);
    expect(c.nextHeartbeatIn(0)).toBe(0);
  });

  test("one heartbeat at a time, the next heartbeatMs after the previous one ended", () => {
    const c = new SessionCore(250, 3000);
    expect(c.onHeartbeatSent(0, 12, false)).toEqual({ appliedIndex: 12, shuttingDown: false });
    expect(c.inFlight).toBe(0);
    expect(c.heartbeatDue(5000)).toBe(false); // still in flight, however long
    c.onAnswer(0, { fenced: false }, 40);
    expect(c.heartbeatDue(289)).toBe(false);
    expect(c.nextHeartbeatIn(100)).toBe(190);
    expect(c.heartbeatDue(290)).toBe(true);
    c.onHeartbeatSent(290, 12, false);
    c.onFailure(1290);
    expect(c.heartbeatDue(1539)).toBe(false);
    expect(c.heartbeatDue(1540)).toBe(true);
  });

  test("the call timeout is max(1000, 4 heartbeats)", () => {
    expect(new SessionCore(100, 1000).callTimeoutMs).toBe(1000);
    expect(new SessionCore(500, 3000).callTimeoutMs).toBe(2000);
  });

  test("an answer reports whether fencing changed; anything but fenced: false is fenced", () => {
    const c = new SessionCore(250, 3000);
    expect(answered(c, 0, 10, { fenced: true })).toBe(false);
    expect(answered(c, 300, 310, { fenced: false })).toBe(true);
    expect(c.fenced).toBe(false);
    expect(answered(c, 600, 610, { fenced: false })).toBe(false);
    for (const junk of [null, undefined, {}, { fenced: "no" }, { fenced: 0 }, 5]) {
      const d = new SessionCore(250, 3000);
      answered(d, 0, 1, { fenced: false });
      expect(answered(d, 300, 301, junk)).toBe(true);
      expect(d.fenced).toBe(true);
      expect(d.leaseValid(302)).toBe(false);
    }
  });

  test("the lease runs a session timeout from the SEND time of the confirming heartbeat", () => {
    const c = new SessionCore(250, 3000);
    // Sent at 1000, answered 900 ms later (a slow controller or network): the controller's
    // session deadline may start at the arrival, just after 1000, so the lease must not count
    // from 1900.
    answered(c, 1000, 1900, { fenced: false });
    expect(c.confirmedAt).toBe(1000);
    expect(c.leaseValid(3999)).toBe(true);
    expect(c.leaseValid(4000)).toBe(false);
    expect(c.leaseValid(4899)).toBe(false);
  });

  test("a late answer to an old heartbeat never moves the lease back", () => {
    const c = new SessionCore(250, 3000);
    answered(c, 2000, 2010, { fenced: false });
    // An answer to a heartbeat sent at 500 arrives now (it was delayed): it confirms less.
    c.onAnswer(500, { fenced: false }, 2500);
    expect(c.confirmedAt).toBe(2000);
    expect(c.leaseValid(4999)).toBe(true);
  });

  test("a failed heartbeat keeps the state; the lease lapses a session timeout after the last confirmation", () => {
    const c = new SessionCore(250, 3000);
    answered(c, 0, 10, { fenced: false });
    for (let t = 260; t < 4000; t += 1250) {
      c.onHeartbeatSent(t, 7, false);
      c.onFailure(t + 1000);
    }
    expect(c.fenced).toBe(false);
    expect(c.leaseValid(2999)).toBe(true);
    expect(c.leaseValid(3000)).toBe(false); // a paused broker writes nothing as a zombie
  });

  test("fenced ends the lease at once, however fresh", () => {
    const c = new SessionCore(250, 3000);
    answered(c, 0, 10, { fenced: false });
    answered(c, 260, 270, { fenced: true });
    expect(c.leaseValid(271)).toBe(false);
    expect(c.confirmedAt).toBe(0);
  });

  test("a lone controller's lease holds while unfenced, whatever it stalled for", () => {
    const c = new SessionCore(250, 3000);
    c.onHeartbeatSent(0, 3, true);
    c.onAnswer(0, { fenced: false }, 1);
    expect(c.leaseValid(1_000_000)).toBe(true);
    c.onHeartbeatSent(1_000_000, 3, true);
    c.onAnswer(1_000_000, { fenced: true }, 1_000_001);
    expect(c.leaseValid(1_000_002)).toBe(false);
    // Joined by others: the lease needs fresh confirmations again.
    c.onHeartbeatSent(1_000_300, 3, false);
    c.onAnswer(1_000_300, { fenced: false }, 1_000_301);
    expect(c.leaseValid(1_003_299)).toBe(true);
    expect(c.leaseValid(1_003_300)).toBe(false);
  });

  test("after a controlled shutdown starts, every heartbeat says so", () => {
    const c = new SessionCore(250, 3000);
    expect(c.onHeartbeatSent(0, 1, false).shuttingDown).toBe(false);
    c.onFailure(1);
    c.beginShutdown();
    expect(c.shuttingDown).toBe(true);
    expect(c.onHeartbeatSent(300, 2, false)).toEqual({ appliedIndex: 2, shuttingDown: true });
  });
});
