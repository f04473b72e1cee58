// Structured log lines on stderr: one JSON object per line (level, time, msg, fields), or the
// same fields as one readable line per record on a terminal (--log-format).
import type { LogLevelName } from "./config.ts";

export type LogFormat = "json" | "text";

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

/** Control characters as \uXXXX: a client's id may carry them, none reaches the terminal. */
function escapeControl(s: string): string {
  return s.replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x1f\x7f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A value in a text line: bare when it cannot be misread, else JSON (quoted, escaped). */
function textValue(v: unknown): string {
  if (typeof v === "string") {
    // deno-lint-ignore no-control-regex
    return /^[^\s"=\\\x00-\x1f\x7f]+$/.test(v) ? v : escapeControl(JSON.stringify(v));
  }
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  return escapeControl(JSON.stringify(v) ?? String(v));
}

/** `2026-12-05T08:50:01.234Z INFO  broker started node_id=0 http=127.0.0.1:8080` */
export function textLine(rec: Record<string, unknown>): string {
  const { level, time, msg, ...fields } = rec;
  let out = `${time} ${String(level).toUpperCase().padEnd(5)} ${escapeControl(String(msg))}`;
  for (const [k, v] of Object.entries(fields)) out += ` ${k}=${textValue(v)}`;
  return out + "\n";
}

/** A log line that cannot be written (the terminal went away with its SSH session) is dropped. */
function writeStderr(line: string): void {
  try {
    process.stderr.write(line);
  } catch {
    // Nowhere left to report it.
  }
}

export function createLogger(
  level: LogLevelName = "info",
  base: LogFields = {},
  write: (line: string) => void = writeStderr,
  format: LogFormat = "json",
): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevelName, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    const rec: Record<string, unknown> = { level: lvl, time: new Date().toISOString(), msg };
    for (const [k, v] of Object.entries(base)) rec[k] = serialise(v);
    if (fields) { for (const [k, v] of Object.entries(fields)) rec[k] = serialise(v); }
    write(format === "text" ? textLine(rec) : JSON.stringify(rec) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createLogger(level, { ...base, ...f }, write, format),
  };
}

/** How long one kind of refused-input warning stays quiet after it was logged. */
export const WARN_INTERVAL_MS = 10_000;

/**
 * Warnings about refused input (oversized frames and bodies, connections over a limit), which a
 * client can cause as fast as it can send: each kind is logged at most once per interval, and
 * the ones held back meanwhile are summed up in one line when the interval ends ("and N more").
 */
export class WarnLimiter {
  readonly #kinds = new Map<
    string,
    { until: number; held: number; msg: string; timer: ReturnType<typeof setTimeout> | null }
  >();

  constructor(
    readonly log: Logger,
    readonly intervalMs = WARN_INTERVAL_MS,
    readonly now: () => number = Date.now,
  ) {}

  warn(kind: string, msg: string, fields: LogFields = {}): void {
    const t = this.now();
    const k = this.#kinds.get(kind);
    if (k === undefined || t >= k.until) {
      if (k?.timer) clearTimeout(k.timer);
      if (k && k.held > 0) this.#summary(kind, k.msg, k.held);
      this.#kinds.set(kind, { until: t + this.intervalMs, held: 0, msg, timer: null });
      this.log.warn(msg, { ...fields, kind });
      return;
    }
    k.held++;
    k.msg = msg;
    if (k.timer === null) {
      k.timer = setTimeout(() => {
        k.timer = null;
        if (k.held > 0) this.#summary(kind, k.msg, k.held);
        k.held = 0;
      }, Math.max(0, k.until - t));
      (k.timer as { unref?: () => void }).unref?.();
    }
  }

  #summary(kind: string, msg: string, held: number): void {
    this.log.warn(`${msg} (and ${held} more in the last ${Math.round(this.intervalMs / 1000)} s)`, {
      kind,
      suppressed: held,
    });
  }

  /** Held-back counts are logged now (shutdown); no timer stays behind. */
  flush(): void {
    for (const [kind, k] of this.#kinds) {
      if (k.timer) clearTimeout(k.timer);
      k.timer = null;
      if (k.held > 0) this.#summary(kind, k.msg, k.held);
      k.held = 0;
    }
  }
}
