// SessionTracker (src/replication/sessions.ts): heartbeats keep a session, silence ends it, a
// hint shortens the wait but never ends a session by itself.
import { describe, expect, test } from "bun:test";
import { SessionTracker } from "../../src/replication/sessions.ts";

const O = { sessionTimeoutMs: 3000, heartbeatMs: 250, hintGraceMs: 750, electionMs: 1000 };

describe("SessionTracker", () => {
  test("a started session is not alive before a heartbeat, and outlasts any lease the old controller confirmed", () => {
    const s = new SessionTracker(O);
    // Cut at 0: the old controller answers heartbeats until its CheckQuorum round (up to 2 x
    // election = 2000), a broker's lease from then lasts a session timeout (to 5000); the voters
    // elect this controller no sooner than one election timeout after the cut (1000).
    s.start([1, 2], 1000);
    expect(s.alive(1, 1000)).toBe(false);
    expect(s.expire(5000)).toEqual([]);
    expect(s.expire(5001).sort()).toEqual([1, 2]);
  });

  test("a heartbeat keeps the session for sessionTimeoutMs; silence ends it, reported once", () => {
    const s = new SessionTracker(O);
    s.start([1], 0);
    s.heartbeat(1, 500, 7);
    expect(s.alive(1, 3500)).toBe(true);
    expect(s.expire(3500)).toEqual([]);
    expect(s.alive(1, 3501)).toBe(false);
    expect(s.expire(3501)).toEqual([1]);
    expect(s.expire(9999)).toEqual([]);
    expect(s.alive(1, 3501)).toBe(false);
  });

  test("an unknown broker heartbeating gets a session", () => {
    const s = new SessionTracker(O);
    s.heartbeat(4, 10, 1);
    expect(s.alive(4, 10)).toBe(true);
  });

  test("a hint shortens the deadline but does not end the session by itself", () => {
    const s = new SessionTracker(O);
    s.heartbeat(1, 0, 0);
    s.hint(1, 100);
    expect(s.alive(1, 100)).toBe(true);
    expect(s.expire(850)).toEqual([]);
    expect(s.expire(851)).toEqual([1]);
  });

  test("a heartbeat after a hint restores the full deadline; a hint never extends one", () => {
    const s = new SessionTracker(O);
    s.heartbeat(1, 0, 0);
    s.hint(1, 100);
    s.heartbeat(1, 200, 0);
    expect(s.expire(3200)).toEqual([]);
    s.hint(1, 2900); // deadline min(3200, 3650) stays 3200
    expect(s.expire(3201)).toEqual([1]);
    s.hint(9, 0); // unknown: nothing
    expect(s.alive(9, 0)).toBe(false);
  });

  test("a new controller keeps the hint about a broker still gone, not one that came back", () => {
    const s = new SessionTracker(O);
    // Hints seen before this broker became controller (the old controller died at 1000).
    s.hint(1, 1000);
    s.hint(2, 1000);
    s.hint(3, 1000 - 3000); // older than a session timeout: ignored
    s.start([1, 2, 3], 1600, (id) => id !== 2); // 2 has reconnected
    expect(s.expire(1750)).toEqual([]);
    expect(s.expire(1751)).toEqual([1]); // 1000 + grace 750
    expect(s.expire(5600)).toEqual([]); // first deadline 1600 + 3000 + 1000
    expect(s.expire(5601).sort()).toEqual([2, 3]);
    // Without a gone test, hints do not shorten a fresh session.
    const t = new SessionTracker(O);
    t.hint(1, 0);
    t.start([1], 100);
    expect(t.expire(4100)).toEqual([]);
    expect(t.expire(4101)).toEqual([1]);
  });

  test("end removes a session at once", () => {
    const s = new SessionTracker(O);
    s.heartbeat(1, 0, 0);
    s.end(1);
    expect(s.alive(1, 0)).toBe(false);
    expect(s.expire(99999)).toEqual([]);
  });

  test("the applied index never goes back; shutting down is sticky", () => {
    const s = new SessionTracker(O);
    s.heartbeat(1, 0, 10);
    s.heartbeat(1, 1, 4, true);
    expect(s.appliedIndex(1)).toBe(10);
    expect(s.shuttingDown(1)).toBe(true);
    s.heartbeat(1, 2, 12);
    expect(s.appliedIndex(1)).toBe(12);
    expect(s.shuttingDown(1)).toBe(true);
    expect(s.lastHeartbeat(1)).toBe(2);
    expect(s.appliedIndex(5)).toBe(-1);
  });

  test("start gives a new controller's sessions a clean slate", () => {
    const s = new SessionTracker(O);
    s.heartbeat(1, 0, 10, true);
    s.start([1], 100);
    expect(s.alive(1, 100)).toBe(false);
    expect(s.appliedIndex(1)).toBe(-1);
    expect(s.shuttingDown(1)).toBe(false);
  });
});
