// Stop signals on a real broker process: SIGHUP shuts down cleanly (each partition's recovery
// checkpoint says clean, so the next start scans nothing), a burst of two signals does too, and
// a third signal exits at once. Also: the advertised host of a wildcard listener.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import {
  brokerCommand,
  type RunningBroker,
  startBrokerProcess,
  tempDir,
  TEST_JOIN_TOKEN,
} from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

const running: RunningBroker[] = [];
async function start(args: string[] = []) {
  const b = await startBrokerProcess({ args });
  running.push(b);
  return b;
}
afterAll(() => {
  for (const b of running) b.kill("SIGKILL");
});

/** Each partition dir's recovery checkpoint: the clean shutdown marker (docs/storage.md). */
function checkpoints(dataDir: string): Map<string, boolean | undefined> {
  const logs = join(dataDir, "logs");
  const out = new Map<string, boolean | undefined>();
  for (const d of readdirSync(logs)) {
    const f = join(logs, d, "recovery-checkpoint.json");
    out.set(d, existsSync(f) ? JSON.parse(readFileSync(f, "utf8")).clean : undefined);
  }
  return out;
}

/** A broker with topic t written to, its checkpoint already saying "not clean" (running). */
async function busy(args: string[] = []) {
  const b = await start([...args, "--flush", "interval:100"]);
  expect((await api(b.httpUrl, "POST", "/topics", { name: "t", partitions: 2 })).status).toBe(201);
  for (let i = 0; i < 10; i++) {
    await api(b.httpUrl, "POST", "/topics/t/records?acks=1", { value: `v${i}`, partition: i % 2 });
  }
  // The checkpoint follows the syncs (--flush interval:1000) and says clean only after a stop.
  const t0 = Date.now();
  while (checkpoints(b.dataDir).get("t-0") !== false && Date.now() - t0 < 5000) await Bun.sleep(50);
  expect(checkpoints(b.dataDir).get("t-0")).toBe(false);
  return b;
}

const msgs = (b: RunningBroker) =>
  b.logs.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return {};
    }
  });

/** The log record `msg`, waited for: stderr is read asynchronously, even after the exit. */
async function logged(b: RunningBroker, msg: string) {
  for (let i = 0; i < 100; i++) {
    const rec = msgs(b).find((m) => m.msg === msg);
    if (rec) return rec;
    await Bun.sleep(20);
  }
  return undefined;
}

describe("stop signals", () => {
  // Started side by side: each start waits mostly on timers, not on the CPU.
  let hup: RunningBroker, two: RunningBroker, three: RunningBroker;
  beforeAll(async () => {
    // hup's Kafka listener is a wildcard one: its advertised host is checked too.
    [hup, two, three] = await Promise.all([busy(["--kafka-addr", "0.0.0.0:0"]), busy(), busy()]);
  }, 30_000);

  test(
    "SIGHUP shuts down cleanly: exit 0 and every partition's checkpoint says clean",
    async () => {
      const b = hup;
      await advertisesAnAddress(b);
      b.kill("SIGHUP");
      expect(await b.exited).toBe(0);
      expect((await logged(b, "shutting down"))?.signal).toBe("SIGHUP");
      const cps = checkpoints(b.dataDir);
      expect(cps.size).toBeGreaterThan(2); // t-0, t-1 and __consumer_offsets
      for (const [dir, clean] of cps) expect([dir, clean]).toEqual([dir, true]);
    },
    30_000,
  );

  test("a second signal 5 ms after the first does not cut the clean shutdown short", async () => {
    const b = two;
    b.kill("SIGTERM");
    await Bun.sleep(5);
    b.kill("SIGINT");
    expect(await b.exited).toBe(0);
    expect(await logged(b, "shutdown already under way")).toBeDefined();
    for (const [dir, clean] of checkpoints(b.dataDir)) expect([dir, clean]).toEqual([dir, true]);
  }, 30_000);

  test("a third signal exits at once with 128 + its number", async () => {
    const b = three;
    // Apart, and of three kinds: pending signals of one kind are merged into one by the kernel.
    b.kill("SIGTERM");
    await Bun.sleep(10);
    b.kill("SIGINT");
    await Bun.sleep(10);
    b.kill("SIGHUP");
    expect(await b.exited).toBe(129);
    expect(await logged(b, "exiting now, without finishing the clean shutdown")).toBeDefined();
  }, 30_000);
});

describe("a signal while starting", () => {
  test("stops the broker cleanly once it has started, instead of killing it", async () => {
    const dataDir = tempDir();
    const proc = Bun.spawn([
      ...brokerCommand(),
      ...["--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--kafka-addr", "127.0.0.1:0"],
      ...["--cluster-addr", "127.0.0.1:0"],
    ], {
      stdout: "ignore",
      stderr: "pipe",
      env: { ...process.env, BROKER_JOIN_TOKEN: TEST_JOIN_TOKEN },
    });
    const lines: Record<string, unknown>[] = [];
    let signalled = false;
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stderr) {
      buf += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
        // The first line comes from the start itself, well before "broker started".
        if (!signalled) {
          signalled = true;
          proc.kill("SIGTERM");
        }
      }
    }
    expect(await proc.exited).toBe(0);
    const msgs = lines.map((l) => l.msg);
    const at = (m: string) => msgs.indexOf(m);
    expect(at("stop signal while starting: stopping once started")).toBeGreaterThanOrEqual(0);
    expect(at("stop signal while starting: stopping once started")).toBeLessThan(
      at("broker started"),
    );
    expect(at("broker started")).toBeLessThan(at("shutting down"));
    expect(msgs.at(-1)).toBe("stopped");
    for (const [dir, clean] of checkpoints(dataDir)) expect([dir, clean]).toEqual([dir, true]);
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);
});

/** A wildcard Kafka listener advertises an address, not the hostname, and logs it. */
async function advertisesAnAddress(b: RunningBroker) {
  const started = msgs(b).find((m) => m.msg === "broker started")!;
  const [host, port] = String(started.advertised_kafka).split(":");
  expect(["interface", "loopback"]).toContain(String(started.advertised_from));
  expect(host).toMatch(/^\d+\.\d+\.\d+\.\d+$|:/); // an IP address
  expect(host).not.toBe(hostname());
  expect(Number(port)).toBe(b.kafkaPort);
  // What clients are told (Metadata's brokers) is what was logged.
  const cluster = await api(b.httpUrl, "GET", "/cluster");
  expect(cluster.json.brokers[0].host).toBe(host);
}

/** Pids of processes whose command line names `needle`. */
function pidsWith(needle: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(needle);
    } catch {
      return false;
    }
  }).map(Number);
}

describe("on a terminal", () => {
  test.skipIf(!existsSync("/usr/bin/script"))(
    "logs are text lines, and closing the terminal (SIGHUP) shuts down cleanly",
    async () => {
      const dataDir = tempDir();
      const cmd = [
        ...brokerCommand(),
        ...["--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--kafka-addr", "127.0.0.1:0"],
        ...["--cluster-addr", "127.0.0.1:0"],
      ];
      // script(1) runs the broker on a pseudo-terminal, as an SSH session would.
      const term = Bun.spawn(
        ["script", "-qfec", cmd.map((a) => `'${a}'`).join(" "), "/dev/null"],
        {
          stdin: "pipe",
          stdout: "pipe",
          stderr: "pipe",
          env: { ...process.env, BROKER_JOIN_TOKEN: TEST_JOIN_TOKEN },
        },
      );
      let out = "";
      const reader = (async () => {
        for await (const chunk of term.stdout) out += new TextDecoder().decode(chunk);
      })();
      const t0 = Date.now();
      while (!out.includes("broker started") && Date.now() - t0 < 20_000) await Bun.sleep(50);
      const line = out.split(/\r?\n/).find((l) => l.includes("broker started"))!;
      expect(line).toMatch(/^\S+Z INFO {2}broker started node_id=0 cluster_id=\S+ version=/);
      expect(out).not.toMatch(/^\{/m);
      const [pid] = pidsWith(dataDir).filter((p) => p !== term.pid);
      expect(pid).toBeGreaterThan(0);
      await api(`http://${/ http=(\S+)/.exec(line)![1]}`, "POST", "/topics", { name: "t" });
      // The terminal goes away: the kernel sends the broker SIGHUP, and its stderr fails (EIO).
      term.kill("SIGKILL");
      await reader.catch(() => {});
      const t1 = Date.now();
      while (existsSync(`/proc/${pid}`) && Date.now() - t1 < 15_000) await Bun.sleep(50);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      const cps = checkpoints(dataDir);
      expect(cps.has("t-0")).toBe(true);
      for (const [dir, clean] of cps) expect([dir, clean]).toEqual([dir, true]);
      rmSync(dataDir, { recursive: true, force: true });
    },
    30_000,
  );
});
