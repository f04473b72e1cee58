// The replicated section of `npm run bench` (`--section replicated` runs it alone): three of our
// brokers on this machine, RF 3, acks=all, 100 B records, against NATS JetStream as a three-server
// cluster with an R3 file stream, in the same run. Measures produce throughput (and our RF 1
// acks=1 figure on the same cluster), follower lag while it runs, broker CPU per million records
// (the three processes summed), one-at-a-time produce latency, failover after SIGKILL of a
// partition leader, and produce unavailability per partition during a rolling restart.
// Every loop is bounded by a count and a deadline; all traffic is on 127.0.0.1.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { run, type RunResult, sleep, stopServer } from "./proc.ts";
import { NatsCluster, OursCluster } from "./repl-systems.ts";
import type { Results } from "./workloads.ts";

export interface ReplPlan {
  quick: boolean;
  reps: number;
  /** Records per throughput run (100 B each), ours and JetStream alike. */
  records: number;
  /** Latency: records sent before measuring (≤ 16 in flight), then samples one at a time. */
  latWarmup: number;
  latSamples: number;
  /** Steady state: acks=all records at this rate (both systems sustain it) for this long. */
  steadyRate: number;
  steadySeconds: number;
  kills: number;
  rollingRounds: number;
}

export function replPlan(quick: boolean): ReplPlan {
  return quick
    ? {
      quick,
      reps: 1,
      records: 100_000,
      latWarmup: 20_000,
      latSamples: 1000,
      steadyRate: 10_000,
      steadySeconds: 5,
      kills: 4,
      rollingRounds: 1,
    }
    : {
      quick,
      reps: 3,
      records: 500_000,
      latWarmup: 30_000,
      latSamples: 5000,
      steadyRate: 10_000,
      steadySeconds: 10,
      kills: 20,
      rollingRounds: 2,
    };
}

export interface ReplTools {
  broker: string;
  replKafka: string;
  replNats: string;
}

export interface ReplCtx {
  plan: ReplPlan;
  tools: ReplTools;
  dir: string;
  /** Record file: plan.records lines of 100 B. */
  file: string;
  res: Results;
  log: (s: string) => void;
}

const SIZE = 100;
const CLIENT_TIMEOUT = 300_000;
/** A silence longer than this between two acks of one partition counts as unavailability. */
export const GAP_MS = 50;

/** Compiles the two C clients of this section into `dir`. */
export async function buildReplTools(dir: string, repo: string, broker: string) {
  const src = join(repo, "scripts", "bench", "suite", "c");
  const cc = async (name: string, libs: string[]) => {
    const out = join(dir, name);
    const r = await run(["gcc", "-O2", "-Wall", "-o", out, join(src, `${name}.c`), ...libs], {
      timeoutMs: 120_000,
    });
    if (r.code !== 0) throw new Error(`gcc ${name} failed:\n${r.stderr}`);
    return out;
  };
  const [replKafka, replNats] = await Promise.all([
    cc("repl_kafka", ["-lrdkafka", "-lpthread"]),
    cc("repl_nats", ["-lnats", "-lpthread"]),
  ]);
  return { broker, replKafka, replNats };
}

function check(r: RunResult, what: string): void {
  if (r.timedOut) throw new Error(`${what} timed out`);
  if (r.code !== 0) {
    throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(-400)} ${r.stdout.slice(-300)}`);
  }
}

function lastJson(r: RunResult, what: string): Record<string, number> {
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, number>;
  } catch {
    throw new Error(
      `${what}: no JSON (exit ${r.code}): ${r.stdout.slice(-200)} ${r.stderr.slice(-400)}`,
    );
  }
}

const fmtRps = (x: number) => Math.round(x).toLocaleString("en").padStart(9);

// ---- throughput, lag, CPU, latency --------------------------------------------------------

/** Leader log end minus each follower's, sampled every 200 ms until `done()`. */
async function sampleLag(
  c: OursCluster,
  topic: string,
  leader: number,
  done: () => boolean,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 3000 && !done(); i++) {
    const ends = await Promise.all(c.nodes.map((n) => c.logEnds(n.id, topic)));
    const lead = ends[leader]?.get(0);
    if (lead !== undefined && lead > 0) {
      for (const n of c.nodes) {
        const e = ends[n.id]?.get(0);
        if (n.id !== leader && e !== undefined) out.push(Math.max(0, lead - e));
      }
    }
    await sleep(200);
  }
  return out;
}

async function oursProduce(
  ctx: ReplCtx,
  c: OursCluster,
  topic: string,
  rf: 1 | 3,
  key: string,
): Promise<void> {
  await c.createTopic(topic, 1, rf);
  const parts = await c.describe(topic);
  const leader = parts?.[0]?.leader ?? -1;
  if (leader < 0) throw new Error(`${topic} has no leader`);
  let finished = false;
  const lag = rf === 3 ? sampleLag(c, topic, leader, () => finished) : Promise.resolve([]);
  const acks = rf === 3 ? "all" : "1";
  const cpu0 = c.cpu();
  const r = await run(
    ["kcat", "-P", "-b", c.bootstrap, "-t", topic, "-p", "0", "-X", `acks=${acks}`, "-l", ctx.file],
    { timeoutMs: CLIENT_TIMEOUT },
  );
  const cpu1 = c.cpu();
  finished = true;
  const lags = await lag;
  check(r, `kcat -P (${key})`);
  const stored = (await c.describe(topic, leader))?.[0]?.high_watermark ?? -1;
  if (stored !== ctx.plan.records) {
    throw new Error(`${key}: high watermark ${stored} after the run, expected ${ctx.plan.records}`);
  }
  const rps = ctx.plan.records / (r.wallMs / 1000);
  const cpuPerM = (cpu1 - cpu0) / (ctx.plan.records / 1e6);
  ctx.res.add(`${key}.rps`, rps);
  ctx.res.add(`${key}.cpuPerM`, cpuPerM);
  ctx.res.add(`${key}.clientCpuPerM`, r.cpuS / (ctx.plan.records / 1e6));
  for (const l of lags) ctx.res.add(`${key}.lagSample`, l);
  const sorted = [...lags].sort((a, b) => a - b);
  const lagText = sorted.length > 0
    ? `  follower lag p50 ${sorted[sorted.length >> 1]} max ${
      sorted.at(-1)
    } records (${sorted.length} samples)`
    : "";
  ctx.log(
    `  ${key.padEnd(14)} ${fmtRps(rps)} rec/s  broker CPU ${(cpu1 - cpu0).toFixed(2)} s ` +
      `(${cpuPerM.toFixed(2)} s/M, leader ${leader})${lagText}`,
  );
}

/** The same kcat run as oursProduce, to a topic of its own, not measured. */
async function oursWarmUp(ctx: ReplCtx, c: OursCluster, rf: 1 | 3): Promise<void> {
  const topic = `warm-rf${rf}`;
  await c.createTopic(topic, 1, rf);
  const r = await run(
    [
      "kcat",
      "-P",
      "-b",
      c.bootstrap,
      "-t",
      topic,
      "-p",
      "0",
      "-X",
      `acks=${rf === 3 ? "all" : "1"}`,
      "-l",
      ctx.file,
    ],
    { timeoutMs: CLIENT_TIMEOUT },
  );
  check(r, `kcat -P (warm-up RF ${rf})`);
}

async function oursLatency(
  ctx: ReplCtx,
  c: OursCluster,
  topic: string,
  rf: 1 | 3,
  key: string,
): Promise<void> {
  await c.createTopic(topic, 1, rf);
  const { latWarmup, latSamples } = ctx.plan;
  const r = await run(
    [
      ctx.tools.replKafka,
      "lat",
      c.bootstrap,
      topic,
      "0",
      rf === 3 ? "all" : "1",
      String(latWarmup),
      String(latSamples),
      String(SIZE),
    ],
    { timeoutMs: CLIENT_TIMEOUT },
  );
  const j = lastJson(r, "repl_kafka lat");
  check(r, "repl_kafka lat");
  recordLatency(ctx, key, j);
}

function recordLatency(ctx: ReplCtx, key: string, j: Record<string, number>) {
  for (const f of ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"]) {
    ctx.res.add(`${key}.${f}`, j[f]);
  }
  ctx.log(
    `  ${key.padEnd(14)} one at a time: p50 ${(j.p50_us / 1000).toFixed(3)} ms  p99 ${
      (j.p99_us / 1000).toFixed(3)
    } ms  max ${(j.max_us / 1000).toFixed(2)} ms  (${j.got} samples after ${latWarmupText(j)})`,
  );
}

const latWarmupText = (j: Record<string, number>) => `a ${(j.warm_ms / 1000).toFixed(1)} s warm-up`;

/** Follower lag and produce → ack latency at a fixed rate both systems sustain. */
async function oursSteady(ctx: ReplCtx, c: OursCluster): Promise<void> {
  const topic = "steady";
  await c.createTopic(topic, 1, 3);
  const leader = (await c.describe(topic))?.[0]?.leader ?? -1;
  if (leader < 0) throw new Error(`${topic} has no leader`);
  const { steadyRate, steadySeconds } = ctx.plan;
  let finished = false;
  const lag = sampleLag(c, topic, leader, () => finished);
  const r = await run(
    [
      ctx.tools.replKafka,
      "pace",
      c.bootstrap,
      topic,
      String(steadyRate),
      String(steadySeconds),
      String(SIZE),
    ],
    { timeoutMs: CLIENT_TIMEOUT },
  );
  finished = true;
  const lags = await lag;
  const j = lastJson(r, "repl_kafka pace");
  check(r, "repl_kafka pace");
  recordSteady(ctx, "R.steady.ours3", j, lags);
}

function recordSteady(ctx: ReplCtx, key: string, j: Record<string, number>, lags: number[]) {
  ctx.res.add(`${key}.ack_p50_us`, j.ack_p50_us);
  ctx.res.add(`${key}.ack_p99_us`, j.ack_p99_us);
  for (const l of lags) ctx.res.add(`${key}.lagSample`, l);
  const s = [...lags].sort((a, b) => a - b);
  ctx.log(
    `  ${key.padEnd(14)} ${
      ctx.plan.steadyRate.toLocaleString("en")
    } rec/s for ${ctx.plan.steadySeconds} s: ` +
      `produce → ack p50 ${(j.ack_p50_us / 1000).toFixed(2)} ms p99 ${
        (j.ack_p99_us / 1000).toFixed(2)
      } ms; ` +
      (s.length === 0
        ? ""
        : `follower lag p50 ${s[s.length >> 1]} max ${s.at(-1)} records (${s.length} samples)`),
  );
}

/** CPU of a freshly started, idle cluster (the three processes summed), % of one core. */
async function idleCpu(ctx: ReplCtx, key: string, cpu: () => number): Promise<void> {
  await sleep(1000);
  const ms = ctx.plan.quick ? 3000 : 5000;
  const c0 = cpu();
  await sleep(ms);
  const pct = ((cpu() - c0) / (ms / 1000)) * 100;
  ctx.res.add(key, pct);
  ctx.log(`  ${key.padEnd(18)} idle: ${pct.toFixed(1)}% of one core (3 processes, ${ms / 1000} s)`);
}

async function oursRep(ctx: ReplCtx, rep: number): Promise<void> {
  const dir = join(ctx.dir, `ours-repl-${rep}`);
  const c = new OursCluster([ctx.tools.broker], dir);
  try {
    await c.start();
    await idleCpu(ctx, "R.ours3.idleCpuPct", () => c.cpu());
    // Each system's first load on a fresh cluster is not measured: our brokers' hot paths are
    // compiled by the JIT only after some thousands of calls (a 500,000-record run lasts 1-2 s,
    // much of it before that), and JetStream gets the same unmeasured run below.
    for (const rf of [3, 1] as const) {
      try {
        await oursWarmUp(ctx, c, rf);
      } catch (e) {
        ctx.res.fail(`replicated ours RF ${rf} warm-up rep ${rep}`, e);
      }
    }
    // Order alternates between repetitions so neither side always runs on a fresher cluster.
    const order = rep % 2 === 1 ? ([3, 1] as const) : ([1, 3] as const);
    for (const rf of order) {
      const key = rf === 3 ? "R.ours3" : "R.ours1";
      try {
        await oursProduce(ctx, c, `tp-rf${rf}`, rf, key);
      } catch (e) {
        ctx.res.fail(`replicated ours RF ${rf} throughput rep ${rep}`, e);
      }
    }
    try {
      await oursSteady(ctx, c);
    } catch (e) {
      ctx.res.fail(`replicated ours steady state rep ${rep}`, e);
    }
    for (const rf of [3, 1] as const) {
      try {
        await oursLatency(ctx, c, `lat-rf${rf}`, rf, rf === 3 ? "R.lat.ours3" : "R.lat.ours1");
      } catch (e) {
        ctx.res.fail(`replicated ours RF ${rf} latency rep ${rep}`, e);
      }
    }
  } catch (e) {
    ctx.res.fail(`replicated ours cluster rep ${rep}`, e);
  } finally {
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function natsRep(ctx: ReplCtx, rep: number): Promise<void> {
  const dir = join(ctx.dir, `nats-repl-${rep}`);
  const n = new NatsCluster(dir);
  try {
    await n.start();
    await idleCpu(ctx, "R.nats3.idleCpuPct", () => n.cpu());
    const create = async (stream: string) => {
      const r = await run([ctx.tools.replNats, "create", n.urls, stream, "3"], {
        timeoutMs: 60_000,
      });
      check(r, `repl_nats create ${stream}`);
      return lastJson(r, "repl_nats create") as unknown as { leader: string };
    };
    try {
      // Not measured, as our side's warm-up (see oursRep).
      await create("WARM");
      check(
        await run(
          [ctx.tools.replNats, "pub", n.urls, "WARM", String(ctx.plan.records), String(SIZE)],
          { timeoutMs: CLIENT_TIMEOUT },
        ),
        "repl_nats pub (warm-up)",
      );
    } catch (e) {
      ctx.res.fail(`replicated JetStream R3 warm-up rep ${rep}`, e);
    }
    try {
      const { leader } = await create("BENCH");
      const cpu0 = n.cpu();
      const r = await run(
        [ctx.tools.replNats, "pub", n.urls, "BENCH", String(ctx.plan.records), String(SIZE)],
        { timeoutMs: CLIENT_TIMEOUT },
      );
      const cpu1 = n.cpu();
      const j = lastJson(r, "repl_nats pub");
      check(r, "repl_nats pub");
      // As for kcat: the client process's wall time (connect included, stream created before).
      const rps = ctx.plan.records / (r.wallMs / 1000);
      const cpuPerM = (cpu1 - cpu0) / (ctx.plan.records / 1e6);
      ctx.res.add("R.nats3.rps", rps);
      ctx.res.add("R.nats3.cpuPerM", cpuPerM);
      ctx.res.add("R.nats3.clientCpuPerM", r.cpuS / (ctx.plan.records / 1e6));
      ctx.res.add("R.nats3.lagP50", j.lag_p50);
      ctx.res.add("R.nats3.lagMax", j.lag_max);
      ctx.log(
        `  ${"R.nats3".padEnd(14)} ${fmtRps(rps)} rec/s  server CPU ${
          (cpu1 - cpu0).toFixed(2)
        } s ` +
          `(${cpuPerM.toFixed(2)} s/M, stream leader ${leader})  replica lag p50 ${j.lag_p50} ` +
          `max ${j.lag_max} (${j.lag_samples} samples)`,
      );
    } catch (e) {
      ctx.res.fail(`replicated JetStream R3 throughput rep ${rep}`, e);
    }
    try {
      await create("STEADY");
      const r = await run(
        [
          ctx.tools.replNats,
          "pace",
          n.urls,
          "STEADY",
          String(ctx.plan.steadyRate),
          String(ctx.plan.steadySeconds),
          String(SIZE),
        ],
        { timeoutMs: CLIENT_TIMEOUT },
      );
      const j = lastJson(r, "repl_nats pace");
      check(r, "repl_nats pace");
      ctx.res.add("R.steady.nats3.lagP50", j.lag_p50);
      ctx.res.add("R.steady.nats3.lagMax", j.lag_max);
      recordSteady(ctx, "R.steady.nats3", j, []);
      ctx.log(
        `  ${
          "".padEnd(14)
        } replica lag p50 ${j.lag_p50} max ${j.lag_max} (${j.lag_samples} samples)`,
      );
    } catch (e) {
      ctx.res.fail(`replicated JetStream R3 steady state rep ${rep}`, e);
    }
    try {
      await create("LAT");
      const r = await run(
        [
          ctx.tools.replNats,
          "lat",
          n.urls,
          "LAT",
          String(ctx.plan.latWarmup),
          String(ctx.plan.latSamples),
          String(SIZE),
        ],
        { timeoutMs: CLIENT_TIMEOUT },
      );
      const j = lastJson(r, "repl_nats lat");
      check(r, "repl_nats lat");
      recordLatency(ctx, "R.lat.nats3", j);
    } catch (e) {
      ctx.res.fail(`replicated JetStream R3 latency rep ${rep}`, e);
    }
  } catch (e) {
    ctx.res.fail(`replicated JetStream cluster rep ${rep}`, e);
  } finally {
    await n.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- failover and rolling restart ---------------------------------------------------------

interface WatchEvent {
  ev: string;
  [k: string]: unknown;
}

/** The `repl_kafka watch` client: commands in on stdin, one JSON event per line out. */
class Watch {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  readonly #events: WatchEvent[] = [];
  readonly #waiters: (() => void)[] = [];
  #stderr = "";

  constructor(bin: string, bootstrap: string, topic: string, partitions: number, maxS: number) {
    this.proc = Bun.spawn(
      [
        bin,
        "watch",
        bootstrap,
        topic,
        String(partitions),
        String(SIZE),
        String(GAP_MS),
        String(maxS),
      ],
      { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    );
    void this.#read();
    void this.#readErr();
  }

  async #readErr() {
    const dec = new TextDecoder();
    try {
      for await (const ch of this.proc.stderr) {
        this.#stderr = (this.#stderr + dec.decode(ch)).slice(-4000);
      }
    } catch { /* the client went away */ }
  }

  async #read() {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for await (const ch of this.proc.stdout) {
        buf += dec.decode(ch, { stream: true });
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          try {
            this.#events.push(JSON.parse(line) as WatchEvent);
          } catch { /* not an event */ }
          for (const w of this.#waiters.splice(0)) w();
        }
      }
    } catch { /* the client went away */ }
    for (const w of this.#waiters.splice(0)) w();
  }

  send(cmd: string): void {
    this.proc.stdin.write(cmd + "\n");
    this.proc.stdin.flush();
  }

  /** Takes the first event of kind `ev` (events before it of other kinds are dropped). */
  async next(ev: string, timeoutMs: number): Promise<WatchEvent> {
    const until = performance.now() + timeoutMs;
    for (let i = 0; i < 100_000; i++) {
      const at = this.#events.findIndex((e) => e.ev === ev || e.ev === "error");
      if (at >= 0) {
        const e = this.#events.splice(0, at + 1).pop()!;
        if (e.ev === "error") throw new Error(`watch client: ${String(e.error)}`);
        return e;
      }
      const left = until - performance.now();
      if (left <= 0 || this.proc.exitCode !== null) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    throw new Error(
      `watch client: no "${ev}" event within ${timeoutMs} ms (exit ${this.proc.exitCode}): ${
        this.#stderr.slice(-500)
      }`,
    );
  }

  async stop(): Promise<void> {
    try {
      this.send("quit");
    } catch { /* stdin closed */ }
    const done = await Promise.race([
      this.proc.exited.then(() => true),
      sleep(10_000).then(() => false),
    ]);
    if (!done) {
      this.proc.kill("SIGKILL");
      await this.proc.exited;
    }
  }
}

interface GapsEvent {
  window_ms: number;
  partitions: { acks: number; max_gap_ms: number; unavailable_ms: number; long_gaps: number }[];
}

const FO_PARTITIONS = 3;
/**
 * How long to wait for leadership to return to the preferred replicas. The controller checks
 * every 5 s and moves it only when a broker's share of not-led preferred partitions is above
 * 10 % (Kafka's leader.imbalance.per.broker.percentage), which __consumer_offsets' partitions
 * can keep it below: so wait one check, not until it happens.
 */
const PREFERRED_WAIT_MS = 7000;

/**
 * One cluster, one 3-partition RF 3 topic (each broker leads one partition), one acks=all record
 * in flight per partition. Kills: SIGKILL of partition (k mod 3)'s leader by the client itself
 * (a fresh one per kill), failover = kill → first ack on that partition from another broker, on
 * the client's clock; the broker then restarts on its data dir and rejoins. Then rolling
 * restarts: SIGTERM (controlled shutdown), restart, wait for the full ISR, next broker.
 */
export async function failoverAndRolling(ctx: ReplCtx): Promise<void> {
  const dir = join(ctx.dir, "ours-failover");
  const c = new OursCluster([ctx.tools.broker], dir);
  let w: Watch | undefined;
  const topic = "fo";
  try {
    await c.start();
    await c.createTopic(topic, FO_PARTITIONS, 3);
    await c.waitHealthy(topic, FO_PARTITIONS, true, 30_000);
    for (let k = 0; k < ctx.plan.kills; k++) {
      try {
        // Steady state first: full ISR, leaders back on their preferred replicas.
        await c.waitHealthy(topic, FO_PARTITIONS, false, 60_000);
        await c.waitHealthy(topic, FO_PARTITIONS, true, PREFERRED_WAIT_MS).catch(() => {});
        // A fresh client per kill, connected to every leader: one that lived through the
        // previous kill would carry librdkafka's reconnect backoff (growing to 10 s) towards the
        // broker restarted then, which added up to 7.6 s when leadership moved to it.
        await w?.stop();
        w = new Watch(ctx.tools.replKafka, c.bootstrap, topic, FO_PARTITIONS, 120);
        await w.next("ready", 30_000);
        const part = k % FO_PARTITIONS;
        const ps = await c.describe(topic);
        const leader = ps?.find((p) => p.partition === part)?.leader ?? -1;
        if (leader < 0 || !c.isLive(leader)) {
          throw new Error(`partition ${part} has no live leader`);
        }
        const controller = (await c.view())?.controller ?? -1;
        const survivor = c.nodes.find((n) => n.id !== leader && c.isLive(n.id))!.id;
        await sleep(500);
        w.send("mark");
        const sentAt = performance.now();
        w.send(`kill ${c.pid(leader)} ${part} ${leader}`);
        // Server side: when a survivor's metadata names another leader (polled every 20 ms).
        const elected = (async () => {
          for (let i = 0; i < 3000 && performance.now() - sentAt < 60_000; i++) {
            const p = (await c.describe(topic, survivor))?.find((x) => x.partition === part);
            if (p && p.leader >= 0 && p.leader !== leader) return performance.now() - sentAt;
            await sleep(20);
          }
          return NaN;
        })();
        await w.next("killed", 5000);
        const fo = await w.next("failover", 60_000);
        const ms = Number(fo.ms);
        const electedMs = await elected;
        ctx.res.add("R.failover.ms", ms);
        ctx.res.add("R.failover.electedMs", electedMs);
        ctx.res.add(leader === controller ? "R.failover.ctrl.ms" : "R.failover.other.ms", ms);
        // The other partitions lost a follower: their acks=all waits until it leaves the ISR.
        await sleep(1000);
        w.send("gaps");
        const g = (await w.next("gaps", 5000)) as unknown as GapsEvent;
        const stall = Math.max(
          ...g.partitions.filter((_, i) => i !== part).map((p) => p.max_gap_ms),
        );
        ctx.res.add("R.failover.followerStall.ms", stall);
        ctx.log(
          `  kill ${k + 1}/${ctx.plan.kills}: broker ${leader} (partition ${part} leader${
            leader === controller ? ", also the controller" : ""
          }) → new leader in the metadata after ${
            electedMs.toFixed(0)
          } ms, acked by broker ${fo.by} ` +
            `after ${ms.toFixed(0)} ms; other partitions' ` +
            `longest stall ${stall.toFixed(0)} ms`,
        );
        await c.nodes[leader].server!.proc.exited;
        const readyMs = await c.startNode(leader);
        ctx.res.add("R.restart.kill9.readyMs", readyMs);
      } catch (e) {
        ctx.res.fail(`replicated failover kill ${k + 1}`, e);
        // Whatever happened, bring every broker back before the next kill.
        for (const n of c.nodes) if (!c.isLive(n.id)) await c.startNode(n.id).catch(() => {});
      }
    }
    // One client for the baseline and the rolling restarts (its own deadline bounds it too).
    await w?.stop();
    w = new Watch(
      ctx.tools.replKafka,
      c.bootstrap,
      topic,
      FO_PARTITIONS,
      60 + ctx.plan.rollingRounds * 150,
    );
    await w.next("ready", 30_000);
    // Baseline: the same measure over 10 s with nothing restarted (scheduling noise on this host).
    try {
      await c.waitHealthy(topic, FO_PARTITIONS, false, 60_000);
      await c.waitHealthy(topic, FO_PARTITIONS, true, PREFERRED_WAIT_MS).catch(() => {});
      w.send("mark");
      await sleep(10_000);
      w.send("gaps");
      const g = (await w.next("gaps", 5000)) as unknown as GapsEvent;
      for (const p of g.partitions) {
        ctx.res.add("R.rolling.baseline.unavailableMs", p.unavailable_ms);
        ctx.res.add("R.rolling.baseline.maxGapMs", p.max_gap_ms);
      }
      ctx.log(
        `  baseline, 10 s without restarts: ` +
          g.partitions.map((p, i) =>
            `p${i} ${p.unavailable_ms.toFixed(0)} ms in gaps > ${GAP_MS} ms (longest ${
              p.max_gap_ms.toFixed(0)
            })`
          ).join(", "),
      );
    } catch (e) {
      ctx.res.fail("replicated rolling-restart baseline", e);
    }
    for (let round = 1; round <= ctx.plan.rollingRounds; round++) {
      try {
        await c.waitHealthy(topic, FO_PARTITIONS, false, 60_000);
        await c.waitHealthy(topic, FO_PARTITIONS, true, PREFERRED_WAIT_MS).catch(() => {});
        await sleep(500);
        const t0 = performance.now();
        const sum = [0, 0, 0];
        const longest = [0, 0, 0];
        for (const n of c.nodes) {
          const led = (await c.describe(topic))?.filter((p) => p.leader === n.id)
            .map((p) => p.partition) ?? [];
          // Gaps per phase: the window closes (and the next opens) at each phase boundary.
          const phases: { name: string; g: GapsEvent }[] = [];
          const watch = w;
          const phase = async (name: string) => {
            watch.send("gaps");
            watch.send("mark");
            phases.push({ name, g: (await watch.next("gaps", 5000)) as unknown as GapsEvent });
          };
          w.send("mark");
          const stopped = await stopServer(n.server!, "SIGTERM", 30_000);
          ctx.res.add("R.rolling.stopMs", stopped.ms);
          await phase("shutdown");
          await c.startNode(n.id);
          await phase("start");
          await c.waitHealthy(topic, FO_PARTITIONS, false, 60_000);
          await phase("catchup");
          // Leadership moves back to the preferred replicas (auto rebalance): that move counts.
          await c.waitHealthy(topic, FO_PARTITIONS, true, PREFERRED_WAIT_MS).catch(() => {});
          await sleep(500);
          await phase("back");
          const per = [0, 1, 2].map((i) => ({
            unavailable_ms: phases.reduce((a, p) => a + p.g.partitions[i].unavailable_ms, 0),
            max_gap_ms: Math.max(...phases.map((p) => p.g.partitions[i].max_gap_ms)),
          }));
          per.forEach((p, i) => {
            sum[i] += p.unavailable_ms;
            longest[i] = Math.max(longest[i], p.max_gap_ms);
            const key = led.includes(i) ? "led" : "followed";
            ctx.res.add(`R.rolling.${key}.maxGapMs`, p.max_gap_ms);
          });
          for (const p of phases) {
            const u = p.g.partitions.reduce((a, x) => a + x.unavailable_ms, 0) / FO_PARTITIONS;
            ctx.res.add(`R.rolling.phase.${p.name}.ms`, p.g.window_ms);
            ctx.res.add(`R.rolling.phase.${p.name}.unavailableMs`, u);
          }
          ctx.log(
            `    restart of broker ${n.id} (led ${led.join(",") || "nothing"}): ` +
              per.map((p, i) =>
                `p${i} ${p.unavailable_ms.toFixed(0)} ms (longest ${p.max_gap_ms.toFixed(0)})`
              ).join(", ") + "; phases (mean unavailable per partition / phase length): " +
              phases.map((p) =>
                `${p.name} ${
                  (p.g.partitions.reduce((a, x) => a + x.unavailable_ms, 0) / FO_PARTITIONS)
                    .toFixed(0)
                }/${p.g.window_ms.toFixed(0)} ms`
              ).join(", "),
          );
        }
        const totalMs = performance.now() - t0;
        const g = {
          partitions: sum.map((u, i) => ({ unavailable_ms: u, max_gap_ms: longest[i] })),
        };
        g.partitions.forEach((p, i) => {
          ctx.res.add(`R.rolling.p${i}.unavailableMs`, p.unavailable_ms);
          ctx.res.add(`R.rolling.p${i}.maxGapMs`, p.max_gap_ms);
          ctx.res.add("R.rolling.unavailableMs", p.unavailable_ms);
          ctx.res.add("R.rolling.maxGapMs", p.max_gap_ms);
        });
        ctx.res.add("R.rolling.totalMs", totalMs);
        ctx.log(
          `  rolling restart ${round}/${ctx.plan.rollingRounds} (${
            (totalMs / 1000).toFixed(1)
          } s): ` +
            g.partitions.map((p, i) =>
              `p${i} unavailable ${p.unavailable_ms.toFixed(0)} ms (longest ${
                p.max_gap_ms.toFixed(0)
              } ms)`
            ).join("; "),
        );
      } catch (e) {
        ctx.res.fail(`replicated rolling restart ${round}`, e);
        for (const n of c.nodes) if (!c.isLive(n.id)) await c.startNode(n.id).catch(() => {});
      }
    }
  } catch (e) {
    ctx.res.fail("replicated failover cluster", e);
  } finally {
    if (w) await w.stop();
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The whole section; results under keys "R.*". */
export async function replicated(ctx: ReplCtx, interrupted: () => boolean): Promise<void> {
  for (let rep = 1; rep <= ctx.plan.reps && !interrupted(); rep++) {
    ctx.log(`replicated: repetition ${rep}/${ctx.plan.reps}`);
    await oursRep(ctx, rep);
    if (interrupted()) return;
    await natsRep(ctx, rep);
  }
  if (interrupted()) return;
  ctx.log(`replicated: failover (${ctx.plan.kills} kills) and rolling restart`);
  await failoverAndRolling(ctx);
}
