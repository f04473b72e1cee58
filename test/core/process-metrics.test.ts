// process_* and build info: the names and types every Prometheus client exports.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "bun:test";
import {
  buildInfo,
  processFamilies,
  realProcess,
  virtualMemoryBytes,
} from "../../src/core/process-metrics.ts";

describe("process metrics", () => {
  test("vsize is field 23 of /proc/self/stat, even with spaces in the command name", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[20] = "123456789"; // field 23 (the first after ") " is field 3)
    expect(virtualMemoryBytes(`42 (bun main) ${fields.join(" ")}`)).toBe(123456789);
  });

  test("from this process: plausible values, cpu as a counter", () => {
    const fams = new Map(processFamilies(realProcess).map((f) => [f.name, f]));
    const v = (n: string) => fams.get(n)!.samples[0].value;
    expect(fams.get("process_cpu_seconds_total")!.type).toBe("counter");
    expect(v("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(v("process_resident_memory_bytes")).toBeGreaterThan(1 << 20);
    expect(v("process_virtual_memory_bytes")).toBeGreaterThan(v("process_resident_memory_bytes"));
    expect(v("process_open_fds")).toBeGreaterThan(2);
    expect(v("process_max_fds")).toBeGreaterThanOrEqual(v("process_open_fds"));
    const start = v("process_start_time_seconds");
    expect(Date.now() / 1000 - start).toBeGreaterThan(0);
    // This process's own start as the kernel tells it (boot time + start ticks, USER_HZ 100),
    // whatever the suite ran before this file (a bound of 600 s from now failed a whole suite).
    const ticks = Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")[19]);
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]);
    expect(Math.abs(start - (btime + ticks / 100))).toBeLessThan(5);
  });

  test("without /proc the Linux-only families are left out, not reported as 0", () => {
    const names = processFamilies({
      ...realProcess,
      stat: () => undefined,
      openFds: () => undefined,
      maxFds: () => undefined,
    }).map((f) => f.name);
    expect(names).toEqual([
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
    ]);
  });

  test("build info is 1 with the version", () => {
    expect(buildInfo("9.9.9").samples).toEqual([
      { labels: { version: "9.9.9", bun_version: Bun.version }, value: 1 },
    ]);
  });
});
