// Load generators of the HTTP benchmark: wrk (with a generated Lua script) and kcat, each a
// bounded child process, with the CPU of the client (its rusage) and of the server (/proc) per run.
import * as fs from "node:fs";
import * as path from "node:path";

const CLK_TCK = 100;

/** User + system CPU of a live process, from /proc/PID/stat (Linux). */
export function brokerCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the ")" that closes the command name: utime is the 12th, stime the 13th.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
}

export function pct(cpuMs: number, seconds: number): string {
  return `${Math.round(cpuMs / (seconds * 10))}%`;
}

function childCpuMs(p: { resourceUsage(): { cpuTime: { total: bigint } } | undefined }): number {
  const u = p.resourceUsage();
  return u ? Number(u.cpuTime.total) / 1000 : NaN;
}

export interface WrkResult {
  rps: number;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  clientCpuMs: number;
  serverCpuMs: number;
}

export interface WrkOptions {
  url: string;
  connections: number;
  seconds: number;
  /** POST this JSON body on every request. */
  body?: string;
  /** GET, walking offsets 0, limit, 2×limit … (wrapping before `end`) with `query` appended. */
  walk?: { limit: number; end: number; query: string };
  serverPid: number;
  dir: string;
}

function luaScript(o: WrkOptions): string {
  if (o.body !== undefined) {
    if (o.body.includes("]==]")) throw new Error("the body cannot go in a Lua long string");
    return [
      'wrk.method = "POST"',
      'wrk.headers["Content-Type"] = "application/json"',
      `wrk.body = [==[${o.body}]==]`,
    ].join("\n");
  }
  const w = o.walk!;
  const p = new URL(o.url).pathname;
  return [
    "local off = 0",
    "request = function()",
    "  local o = off",
    `  off = off + ${w.limit}`,
    `  if off + ${w.limit} > ${w.end} then off = 0 end`,
    `  return wrk.format("GET", "${p}?offset=" .. o .. "&limit=${w.limit}${w.query}")`,
    "end",
  ].join("\n");
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(out: string, q: string): number {
  const m = new RegExp(`^\\s+${q}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(out);
  return m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
}

export async function wrkRun(o: WrkOptions): Promise<WrkResult> {
  const script = path.join(o.dir, `wrk-${process.pid}.lua`);
  fs.writeFileSync(script, luaScript(o));
  const cpu0 = brokerCpuMs(o.serverPid);
  const proc = Bun.spawn([
    "wrk",
    "-t1",
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    "--timeout",
    "10s",
    "--latency",
    "-s",
    script,
    o.url,
  ], { stdout: "pipe", stderr: "pipe", timeout: (o.seconds + 30) * 1000 });
  const [out, err] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  const code = await proc.exited;
  const serverCpuMs = brokerCpuMs(o.serverPid) - cpu0;
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${err || out}`);
  const done = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!done || !rps) throw new Error(`cannot read wrk's output:\n${out}`);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(rps[1]),
    requests: Number(done[1]),
    seconds: (Number(done[2]) * UNIT_MS[done[3]]) / 1000,
    p50Ms: latencyMs(out, "50"),
    p99Ms: latencyMs(out, "99"),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0,
    clientCpuMs: childCpuMs(proc),
    serverCpuMs,
  };
}

export interface ClientRun {
  records: number;
  seconds: number;
  clientCpuMs: number;
  serverCpuMs: number;
}

async function timed(
  argv: string[],
  serverPid: number,
  stdout: "ignore" | "pipe",
): Promise<ClientRun & { err: string }> {
  const cpu0 = brokerCpuMs(serverPid);
  const t0 = performance.now();
  const proc = Bun.spawn(argv, { stdout, stderr: "pipe", timeout: 180_000 });
  const err = await new Response(proc.stderr).text();
  const code = await proc.exited;
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`${argv[0]} exited with ${code}: ${err}`);
  return {
    records: 0,
    seconds,
    clientCpuMs: childCpuMs(proc),
    serverCpuMs: brokerCpuMs(serverPid) - cpu0,
    err,
  };
}

/** kcat -P of every line of `file` to partition 0 (librdkafka batching, no compression). */
export function kcatProduce(o: {
  kafka: string;
  topic: string;
  file: string;
  acks: string;
  serverPid: number;
}): Promise<ClientRun> {
  return timed(
    [
      "kcat",
      "-P",
      "-b",
      o.kafka,
      "-t",
      o.topic,
      "-p",
      "0",
      "-z",
      "none",
      "-X",
      `acks=${o.acks === "all" ? "-1" : o.acks}`,
      "-l",
      o.file,
    ],
    o.serverPid,
    "ignore",
  );
}

/** kcat -C of partition 0 from the beginning to the end; checks it reached `expected`. */
export async function kcatConsume(o: {
  kafka: string;
  topic: string;
  expected: number;
  serverPid: number;
}): Promise<ClientRun> {
  const r = await timed(
    [
      "kcat",
      "-C",
      "-b",
      o.kafka,
      "-t",
      o.topic,
      "-p",
      "0",
      "-o",
      "beginning",
      "-e",
      "-f",
      "%s\n",
    ],
    o.serverPid,
    "ignore",
  );
  const end = /Reached end of topic .* at offset (\d+)/.exec(r.err);
  if (!end || Number(end[1]) !== o.expected) {
    throw new Error(`kcat -C did not reach offset ${o.expected}: ${r.err}`);
  }
  return { ...r, records: o.expected };
}
