// Pieces of the listeners' limits: the rate-limited warnings for refused input and the
// descriptor reserve that caps max.connections.
import { describe, expect, test } from "bun:test";
import { createLogger, WarnLimiter } from "../../src/log.ts";
import { cappedConnections, descriptorReserve, openFileLimit } from "../../src/core/fd-limit.ts";

describe("WarnLimiter", () => {
  test("one line per kind per interval, then one line counting the rest", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger("info", {}, (l) => lines.push(JSON.parse(l)));
    let now = 1_000_000;
    const w = new WarnLimiter(log, 60, () => now);
    for (let i = 0; i < 70; i++) w.warn("max_connections_per_ip", "refusing", { n: i });
    w.warn("request_too_large", "refusing a frame", { size: 1 });
    expect(lines.map((l) => [l.msg, l.kind, l.n])).toEqual([
      ["refusing", "max_connections_per_ip", 0],
      ["refusing a frame", "request_too_large", undefined],
    ]);
    // The interval ends: the 69 held back are counted in one line.
    now += 60;
    await Bun.sleep(120);
    expect(lines.length).toBe(3);
    expect(lines[2].msg).toBe("refusing (and 69 more in the last 0 s)");
    expect(lines[2].suppressed).toBe(69);
    // A new interval logs the next one in full again.
    w.warn("max_connections_per_ip", "refusing", { n: 70 });
    expect(lines.length).toBe(4);
    expect(lines[3].n).toBe(70);
    w.warn("max_connections_per_ip", "refusing", { n: 71 });
    w.flush();
    expect(lines.length).toBe(5);
    expect(lines[4].suppressed).toBe(1);
  });
});

describe("descriptor reserve", () => {
  test("reads the soft limit from /proc/self/limits", () => {
    const text = "Limit                     Soft Limit           Hard Limit           Units\n" +
      "Max open files            20000                20000                files\n";
    expect(openFileLimit(() => text)).toBe(20000);
    expect(openFileLimit(() => text.replace("20000 ", "unlimited "))).toBeUndefined();
    expect(openFileLimit(() => {
      throw new Error("no /proc");
    })).toBeUndefined();
    // On this machine (Linux) it is readable.
    expect(openFileLimit()).toBeGreaterThan(0);
  });

  test("10% or at least 1024 stays free, never more than half", () => {
    expect(descriptorReserve(20_000)).toBe(2000);
    expect(descriptorReserve(4096)).toBe(1024);
    expect(descriptorReserve(1024)).toBe(512);
    expect(descriptorReserve(1_048_576)).toBe(104_858);
    expect(cappedConnections(10_000, 20_000)).toEqual({ max: 10_000, capped: false });
    expect(cappedConnections(10_000, 4096)).toEqual({ max: 3072, capped: true });
    expect(cappedConnections(10_000, 1024)).toEqual({ max: 512, capped: true });
    expect(cappedConnections(10_000, undefined)).toEqual({ max: 10_000, capped: false });
  });
});
