// The stop-signal policy: a burst of signals does not cut the clean shutdown short.
import { describe, expect, test } from "bun:test";
import { SIGNAL_GRACE_MS, StopSignals } from "../src/signals.ts";

describe("stop signals", () => {
  test("the first signal starts the clean shutdown", () => {
    expect(new StopSignals().receive("SIGHUP", 0)).toEqual({ kind: "shutdown" });
  });

  test("a second signal within the grace period is ignored", () => {
    const s = new StopSignals();
    s.receive("SIGTERM", 1000);
    expect(s.receive("SIGINT", 1005).kind).toBe("ignore");
    expect(s.receive("SIGINT", 1000 + SIGNAL_GRACE_MS - 1).kind).toBe("exit"); // the third
  });

  test("a second signal after the grace period exits with 128 + its number", () => {
    const s = new StopSignals();
    s.receive("SIGTERM", 0);
    expect(s.receive("SIGINT", SIGNAL_GRACE_MS)).toMatchObject({ kind: "exit", code: 130 });
  });

  test("the third signal exits at once, whatever the timing", () => {
    const s = new StopSignals();
    s.receive("SIGINT", 0);
    expect(s.receive("SIGHUP", 1).kind).toBe("ignore");
    expect(s.receive("SIGTERM", 2)).toMatchObject({ kind: "exit", code: 143 });
  });
});
