// The standard process_* metrics (the names every Prometheus client library exports, which
// dashboards and alerts expect) and broker_build_info, computed at scrape time. Linux figures
// come from /proc/self; where /proc is missing those families are left out, not reported as 0.
import { readdirSync, readFileSync } from "node:fs";
import type { GaugeFamily } from "./metrics.ts";
import { openFileLimit } from "./fd-limit.ts";

export interface ProcessSource {
  cpuMicros(): { user: number; system: number };
  rssBytes(): number;
  /** /proc/self/stat's text, or undefined without /proc. */
  stat(): string | undefined;
  openFds(): number | undefined;
  maxFds(): number | undefined;
  /** Unix seconds at which the process started. */
  startSeconds: number;
}

export const realProcess: ProcessSource = {
  cpuMicros: () => process.cpuUsage(),
  rssBytes: () => process.memoryUsage.rss(),
  stat: () => {
    try {
      return readFileSync("/proc/self/stat", "utf8");
    } catch {
      return undefined;
    }
  },
  openFds: () => {
    try {
      return readdirSync("/proc/self/fd").length;
    } catch {
      return undefined;
    }
  },
  maxFds: () => openFileLimit(),
  startSeconds: performance.timeOrigin / 1000,
};

/** vsize (bytes), field 23 of /proc/self/stat; the command name (field 2) may hold spaces. */
export function virtualMemoryBytes(stat: string): number | undefined {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const v = Number(rest[20]);
  return Number.isSafeInteger(v) ? v : undefined;
}

const one = (
  name: string,
  help: string,
  value: number | undefined,
  type: "gauge" | "counter" = "gauge",
): GaugeFamily[] =>
  value === undefined ? [] : [{ name, help, type, samples: [{ labels: {}, value }] }];

export function processFamilies(src: ProcessSource = realProcess): GaugeFamily[] {
  const cpu = src.cpuMicros();
  const stat = src.stat();
  return [
    ...one(
      "process_cpu_seconds_total",
      "Total user and system CPU time spent in seconds.",
      (cpu.user + cpu.system) / 1e6,
      "counter",
    ),
    ...one("process_resident_memory_bytes", "Resident memory size in bytes.", src.rssBytes()),
    ...one(
      "process_virtual_memory_bytes",
      "Virtual memory size in bytes.",
      stat === undefined ? undefined : virtualMemoryBytes(stat),
    ),
    ...one("process_open_fds", "Number of open file descriptors.", src.openFds()),
    ...one("process_max_fds", "Maximum number of open file descriptors.", src.maxFds()),
    ...one(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
      src.startSeconds,
    ),
  ];
}

/** Constant 1, labelled with what is running (the Prometheus *_build_info convention). */
export function buildInfo(version: string): GaugeFamily {
  return {
    name: "broker_build_info",
    help: "1, labelled with the broker's version and the Bun runtime it runs on",
    samples: [{
      labels: { version, bun_version: Bun.version },
      value: 1,
    }],
  };
}
