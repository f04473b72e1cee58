// Structured log lines on stderr: one JSON object per line (level, time, msg, fields).
import type { LogLevelName } from "./config.ts";

const RANK: Record<LogLevelName, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

function serialise(v: unknown): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message };
  if (typeof v === "bigint") return v.toString();
  return v;
}

export function createLogger(
  level: LogLevelName = "info",
  base: LogFields = {},
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevelName, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    const rec: Record<string, unknown> = { level: lvl, time: new Date().toISOString(), msg };
    for (const [k, v] of Object.entries(base)) rec[k] = serialise(v);
    if (fields) { for (const [k, v] of Object.entries(fields)) rec[k] = serialise(v); }
    write(JSON.stringify(rec) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createLogger(level, { ...base, ...f }, write),
  };
}
