// Processes of the suite: bounded client runs, long-lived servers that are always stopped, and the
// /proc readings (CPU, RssAnon) the report is built from.
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64; checked by setup with getconf

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  /** user + system seconds of the process and every child it waited for (wait4 rusage). */
  cpuS: number;
  timedOut: boolean;
}

export interface RunOptions {
  timeoutMs: number;
  cwd?: string;
  env?: Record<string, string>;
  /** Keep at most this many characters of stdout (the rest is drained and dropped). */
  maxStdout?: number;
}

const live = new Set<Subprocess>();
let shuttingDown = false;

function refuseWhenStopping(what: string) {
  if (shuttingDown) throw new Error(`not starting ${what}: the suite is stopping`);
}

/** Runs a client to completion, killed after timeoutMs. The clock covers spawn to exit. */
export async function run(cmd: string[], opts: RunOptions): Promise<RunResult> {
  refuseWhenStopping(cmd[0]);
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env ?? (process.env as Record<string, string>),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  live.add(proc);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, opts.timeoutMs);
  try {
    const [stdout, stderr] = await Promise.all([
      drain(proc.stdout, opts.maxStdout ?? 1 << 20),
      drain(proc.stderr, 64 << 10),
    ]);
    const code = await proc.exited;
    const wallMs = performance.now() - t0;
    const ru = proc.resourceUsage();
    const cpuS = ru ? Number(ru.cpuTime.total) / 1e6 : NaN;
    return { code, stdout, stderr, wallMs, cpuS, timedOut };
  } finally {
    clearTimeout(timer);
    live.delete(proc);
  }
}

/** Reads a stream to its end, keeping the first `max` characters. */
async function drain(stream: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const dec = new TextDecoder();
  let out = "";
  for await (const chunk of stream) {
    if (out.length < max) out += dec.decode(chunk, { stream: true }).slice(0, max - out.length);
  }
  return out;
}

export interface Server {
  name: string;
  proc: Subprocess;
  pid: number;
  spawnedAt: number;
  /** Last lines of its stdout and stderr, for error messages. */
  tail: string[];
  /** Resolves with the first output line matching the pattern and the ms since spawn. */
  waitFor(re: RegExp, timeoutMs: number): Promise<{ line: string; ms: number }>;
}

/** Starts a server whose output is drained continuously (a full pipe would block it). */
export function startServer(name: string, cmd: string[], cwd?: string): Server {
  refuseWhenStopping(name);
  const spawnedAt = performance.now();
  const proc = Bun.spawn(cmd, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const tail: string[] = [];
  const waiters: { re: RegExp; resolve: (v: { line: string; ms: number }) => void }[] = [];
  const seen: { line: string; ms: number }[] = [];
  const onLine = (line: string) => {
    const ms = performance.now() - spawnedAt;
    tail.push(line);
    if (tail.length > 40) tail.shift();
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].re.test(line)) {
        waiters[i].resolve({ line, ms });
        waiters.splice(i, 1);
      }
    }
    // Lines that announce readiness are kept, so a waiter registered late still sees them.
    if (seen.length < 100 && /started|ready|Listening|accept/i.test(line)) seen.push({ line, ms });
  };
  void readLines(proc.stdout, onLine);
  void readLines(proc.stderr, onLine);
  return {
    name,
    proc,
    pid: proc.pid,
    spawnedAt,
    tail,
    waitFor(re, timeoutMs) {
      const hit = seen.find((s) => re.test(s.line));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new Error(
              `${name}: no line matching ${re} within ${timeoutMs} ms:\n${tail.join("\n")}`,
            ),
          );
        }, timeoutMs);
        waiters.push({
          re,
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
        });
        void proc.exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (${code}) before ${re}:\n${tail.join("\n")}`));
        });
      });
    },
  };
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (l: string) => void) {
  const dec = new TextDecoder();
  let buf = "";
  try {
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
      if (buf.length > 1 << 16) buf = buf.slice(-4096); // a line without end: keep the tail only
    }
  } catch {
    // the process went away; nothing more to read
  }
}

/** Stops a server: the signal, then SIGKILL if it has not exited within graceMs. */
export async function stopServer(
  s: Server,
  signal: "SIGTERM" | "SIGKILL" | "SIGINT" = "SIGTERM",
  graceMs = 10_000,
): Promise<{ code: number | null; ms: number }> {
  const t0 = performance.now();
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) {
    return { code: s.proc.exitCode, ms: 0 };
  }
  s.proc.kill(signal);
  const timer = setTimeout(() => s.proc.kill("SIGKILL"), graceMs);
  const code = await s.proc.exited;
  clearTimeout(timer);
  live.delete(s.proc);
  return { code, ms: performance.now() - t0 };
}

/** Kills every process still running and refuses to start new ones (finally blocks, SIGINT). */
export async function killAll(): Promise<void> {
  shuttingDown = true;
  const procs = [...live];
  for (const p of procs) {
    try {
      p.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  await Promise.all(procs.map((p) => p.exited.catch(() => null)));
  live.clear();
}

/** CPU seconds (user + system, including reaped children) of a live process, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "pid (comm) ": index 0 is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  return ticks / CLK_TCK;
}

/** RssAnon of a live process in MB (10^6 bytes), from /proc/<pid>/status. */
export function rssAnonMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /^RssAnon:\s+(\d+) kB/m.exec(status);
  if (!m) throw new Error(`no RssAnon for pid ${pid}`);
  return (Number(m[1]) * 1024) / 1e6;
}

/** A free TCP port on 127.0.0.1 (bound and released; the caller binds it right after). */
export function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
