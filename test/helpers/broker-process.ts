// Runs a real broker as a child process (the compiled binary when BROKER_BIN is set, else `bun src/main.ts`)
// on ports chosen by the kernel, and learns its addresses from its "broker started" log line.
// Every broker started here gets BROKER_JOIN_TOKEN=TEST_JOIN_TOKEN unless the test's env sets
// another (or "": none): the first broker of a cluster takes it as the cluster's token, and
// joiners prove it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");

/** The join token of clusters started by tests (not secret: test clusters listen on loopback). */
export const TEST_JOIN_TOKEN = "test-cluster-join-token-0123456789abcdefghij";
/** Credentials for clusterRequest against brokers started here. */
export const TEST_AUTH = { token: TEST_JOIN_TOKEN };

export function brokerCommand(): string[] {
  const bin = process.env.BROKER_BIN;
  return bin ? [bin] : [process.execPath, join(ROOT, "src", "main.ts")];
}

/** A process's anonymous resident memory in MiB (NaN once it has gone). */
export function rssAnonMiB(pid: number): number {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * A free loopback port below the kernel's ephemeral range. A broker restarted on its old ports
 * (as a real deployment is) finds a port from that range taken now and then: a client's outgoing
 * connection got it as its local port while the broker was down (EADDRINUSE).
 */
const handedOut = new Set<number>();

export function stablePort(): number {
  let low = 32768;
  try {
    low = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0],
    );
  } catch { /* not Linux: the usual default */ }
  const from = Math.max(1024, low - 12_000);
  for (let i = 0; i < 500; i++) {
    const port = from + Math.floor(Math.random() * (low - from));
    // A port checked free is free again once the check lets go of it: never hand it out twice in
    // this process (two brokers of one test, or a later test's broker while an earlier one that
    // took it still exits, failed to start with "port in use").
    if (handedOut.has(port)) continue;
    try {
      const s = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
      s.stop(true);
      handedOut.add(port);
      return port;
    } catch { /* taken: another */ }
  }
  throw new Error(`no free port in ${from}..${low}`);
}

export function tempDir(prefix = "broker-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunningBroker {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  httpUrl: string;
  kafkaPort: number;
  /** The bound cluster address (host:port), what another broker's --join takes. */
  clusterAddr: string;
  logs: string[];
  /** Resolves with the exit code. */
  exited: Promise<number>;
  kill(signal?: NodeJS.Signals | number): void;
}

export interface StartOptions {
  dataDir?: string;
  args?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
  /** The broker command (default: brokerCommand()). */
  command?: string[];
}

/** Start a broker and wait until it logs that it started; rejects with its output if it exits first. */
export async function startBrokerProcess(opts: StartOptions = {}): Promise<RunningBroker> {
  const dataDir = opts.dataDir ?? tempDir();
  const args = [
    ...(opts.command ?? brokerCommand()),
    "--data-dir",
    dataDir,
    "--http-addr",
    "127.0.0.1:0",
    "--kafka-addr",
    "127.0.0.1:0",
    "--cluster-addr",
    "127.0.0.1:0",
    ...(opts.args ?? []),
  ];
  const proc = Bun.spawn(args, {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, BROKER_JOIN_TOKEN: TEST_JOIN_TOKEN, ...opts.env },
  });
  const logs: string[] = [];
  const { promise: started, resolve: resolveStarted } = Promise.withResolvers<
    Record<string, unknown>
  >();
  (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stderr) {
      buf += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        logs.push(line);
        try {
          const rec = JSON.parse(line);
          if (rec.msg === "broker started") resolveStarted(rec);
        } catch { /* not JSON */ }
      }
    }
    if (buf) logs.push(buf);
  })();
  const exited = proc.exited;
  const timeoutMs = opts.timeoutMs ?? 20_000;
  let startedOk = false;
  void started.then(() => (startedOk = true));
  const rec = await Promise.race([
    started,
    exited.then(async (code) => {
      await Bun.sleep(50);
      throw new Error(`broker exited with ${code} before starting:\n${logs.join("\n")}`);
    }),
    Bun.sleep(timeoutMs).then(() => {
      // The race is settled once the broker started: only a broker still starting is killed.
      if (startedOk) return new Promise<never>(() => {});
      proc.kill(9);
      throw new Error(`broker did not start in ${timeoutMs} ms:\n${logs.join("\n")}`);
    }),
  ]);
  const http = String(rec.http);
  const kafka = String(rec.kafka ?? "");
  return {
    proc,
    dataDir,
    httpUrl: `http://${http}`,
    kafkaPort: Number(kafka.split(":").pop() ?? 0),
    clusterAddr: String(rec.cluster ?? ""),
    logs,
    exited,
    kill: (signal = "SIGTERM") => proc.kill(signal),
  };
}

/** Run the broker command to completion (for --help, --version, bad flags). */
export function runBrokerCommand(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([...brokerCommand(), ...args], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
