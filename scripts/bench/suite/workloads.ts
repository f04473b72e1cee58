// The workloads. Each function runs one repetition of one case against one system, on a freshly
// started server with a fresh data directory, and records samples under keys like "W1a.ours.rps".
// Servers are stopped in finally blocks; the data directory is removed after each run.
import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  cpuSeconds,
  rssAnonMB,
  run,
  type RunResult,
  type Server,
  sleep,
  stopServer,
} from "./proc.ts";
import {
  createTopic,
  type Ours,
  redisCount,
  startNats,
  startOurs,
  startRedis,
  topicRecords,
} from "./systems.ts";
import type { Tools } from "./setup.ts";

export interface Plan {
  quick: boolean;
  reps: number;
  /** Records of W1/W2 (100 B) and of W3 (1 KiB). */
  n100: number;
  n1k: number;
  latRate: number;
  latSeconds: number;
  /** W6: records per partition, 100 topics × 10 partitions. */
  w6Records: number;
  restartReps: number;
  ddMiB: number;
  tcpBytes: number;
  fsyncCount: number;
}

export class Results {
  readonly samples = new Map<string, number[]>();
  readonly errors: string[] = [];
  add(key: string, v: number): void {
    if (!Number.isFinite(v)) return;
    const a = this.samples.get(key) ?? [];
    a.push(v);
    this.samples.set(key, a);
  }
  get(key: string): number[] {
    return this.samples.get(key) ?? [];
  }
  fail(what: string, e: unknown): void {
    const msg = `${what}: ${(e as Error).message ?? String(e)}`.slice(0, 600);
    this.errors.push(msg);
    console.error(`  ! ${msg}`);
  }
}

export interface ProduceCase {
  id: "W1" | "W2" | "W3";
  partitions: number;
  size: number;
  records: number;
  file: string;
}

export interface Ctx {
  plan: Plan;
  tools: Tools;
  /** Scratch directory on the local disk; data dirs are created and removed under it. */
  dir: string;
  res: Results;
  log: (s: string) => void;
}

const CLIENT_TIMEOUT = 300_000;

function check(r: RunResult, what: string): void {
  if (r.timedOut) throw new Error(`${what} timed out`);
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(-400)}`);
}

function parseJson(r: RunResult, what: string): Record<string, number> {
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, number>;
  } catch {
    throw new Error(
      `${what}: no JSON result (exit ${r.code}): ${r.stdout.slice(-200)} ${r.stderr.slice(-400)}`,
    );
  }
}

function record(
  ctx: Ctx,
  key: string,
  records: number,
  size: number,
  seconds: number,
  serverCpu: number,
  clientCpu: number,
) {
  const rps = records / seconds;
  ctx.res.add(`${key}.rps`, rps);
  ctx.res.add(`${key}.mbs`, (rps * size) / 1e6);
  ctx.res.add(`${key}.cpuPerM`, serverCpu / (records / 1e6));
  ctx.res.add(`${key}.clientCpuPerM`, clientCpu / (records / 1e6));
  ctx.log(
    `  ${key.padEnd(16)} ${Math.round(rps).toLocaleString("en").padStart(10)} rec/s  ` +
      `${((rps * size) / 1e6).toFixed(1).padStart(7)} MB/s  server CPU ${
        serverCpu.toFixed(2)
      } s  ` +
      `client CPU ${clientCpu.toFixed(2)} s`,
  );
}

const kcatAcks = (mode: "a" | "b") => (mode === "a" ? "1" : "all");

/** The client ceiling: the same kcat command against librdkafka's in-process mock cluster. */
export async function ceiling(ctx: Ctx, c: ProduceCase): Promise<void> {
  const args = ["kcat", "-P", "-b", "127.0.0.1:9", "-X", "test.mock.num.brokers=1", "-t", "bench"];
  if (c.partitions === 1) args.push("-p", "0");
  args.push("-X", "acks=1", "-l", c.file);
  try {
    const r = await run(args, { timeoutMs: CLIENT_TIMEOUT });
    check(r, "kcat (mock)");
    record(ctx, `${c.id}.ceiling`, c.records, c.size, r.wallMs / 1000, 0, r.cpuS);
  } catch (e) {
    ctx.res.fail(`${c.id} ceiling`, e);
  }
}

/** Ours: kcat produce; for W1(a) also W4, kcat consuming the same log from the start. */
export async function oursProduce(ctx: Ctx, c: ProduceCase, mode: "a" | "b", rep: number) {
  const dataDir = join(ctx.dir, `ours-${c.id}${mode}-${rep}`);
  let o: Ours | undefined;
  try {
    o = await startOurs(ctx.tools.broker, dataDir);
    await createTopic(o, "bench", c.partitions);
    const args = ["kcat", "-P", "-b", o.kafka, "-t", "bench"];
    if (c.partitions === 1) args.push("-p", "0");
    args.push("-X", `acks=${kcatAcks(mode)}`, "-l", c.file);
    const cpu0 = cpuSeconds(o.server.pid);
    const r = await run(args, { timeoutMs: CLIENT_TIMEOUT });
    const cpu1 = cpuSeconds(o.server.pid);
    check(r, "kcat -P");
    const stored = await topicRecords(o, "bench");
    if (stored !== c.records) throw new Error(`stored ${stored} records, expected ${c.records}`);
    record(ctx, `${c.id}${mode}.ours`, c.records, c.size, r.wallMs / 1000, cpu1 - cpu0, r.cpuS);
    if (c.id === "W1" && mode === "a") {
      // W4 stops at the record count, as the JetStream and Redis readers do, and reads from
      // offset 0 (the topic is fresh, so that is the whole log) with room to queue all of it.
      // librdkafka 2.0.2's defaults add idle time that is not reading: `-o beginning` queries
      // the start offset and, when its broker thread has not yet taken the partition, retries
      // after a fixed 500 ms; its fetcher pauses once 100 000 records wait for the
      // application and looks again up to ~1 s later; `-e` alone learns of the end only from
      // a fetch at the high watermark, which the broker holds for fetch.wait.max.ms (500 ms),
      // as Kafka does. The same command with those defaults is measured too ("W4d").
      const tuned = `-o 0 -c ${c.records} -e -X queued.min.messages=${c.records}` +
        ` -X queued.max.messages.kbytes=1048576`;
      await consumeW4(ctx, o, c, "W4.ours", tuned);
      await consumeW4(ctx, o, c, "W4d.ours", "-o beginning -e");
    }
  } catch (e) {
    ctx.res.fail(`${c.id}(${mode}) ours rep ${rep}`, e);
  } finally {
    if (o) await stopServer(o.server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** kcat consuming partition 0 of `bench` to the end, counted by wc; records `key`. */
async function consumeW4(
  ctx: Ctx,
  o: Ours,
  c: ProduceCase,
  key: string,
  flags: string,
): Promise<void> {
  const k0 = cpuSeconds(o.server.pid);
  const cr = await run(
    ["bash", "-c", `kcat -C -b ${o.kafka} -t bench -p 0 ${flags} -q -f 'x\\n' | wc -l`],
    { timeoutMs: CLIENT_TIMEOUT },
  );
  const k1 = cpuSeconds(o.server.pid);
  check(cr, `kcat -C ${flags}`);
  const got = Number(cr.stdout.trim());
  if (got !== c.records) throw new Error(`${key} consumed ${got} records, expected ${c.records}`);
  record(ctx, key, got, c.size, cr.wallMs / 1000, k1 - k0, cr.cpuS);
}

/** JetStream: async publish with the C client (only the page-cache pairing exists in 2.9). */
export async function natsProduce(ctx: Ctx, c: ProduceCase, rep: number) {
  const dataDir = join(ctx.dir, `nats-${c.id}-${rep}`);
  let n: Awaited<ReturnType<typeof startNats>> | undefined;
  try {
    n = await startNats(dataDir);
    const cpu0 = cpuSeconds(n.server.pid);
    const r = await run(
      [
        ctx.tools.natsBench,
        "pub",
        n.url,
        "BENCH",
        String(c.partitions),
        String(c.records),
        String(c.size),
      ],
      { timeoutMs: CLIENT_TIMEOUT },
    );
    const cpu1 = cpuSeconds(n.server.pid);
    const j = parseJson(r, "nats_bench pub");
    check(r, "nats_bench pub");
    // Its clock starts after the stream exists and stops at the last ack; the wall time of the
    // process (connect + stream creation included) is what kcat is measured by, so use that.
    record(ctx, `${c.id}a.nats`, c.records, c.size, r.wallMs / 1000, cpu1 - cpu0, r.cpuS);
    ctx.res.add(`${c.id}a.nats.innerRps`, c.records / (j.ms / 1000));
    if (c.id === "W1") {
      const k0 = cpuSeconds(n.server.pid);
      const rr = await run([ctx.tools.natsBench, "read", n.url, "BENCH", String(c.records)], {
        timeoutMs: CLIENT_TIMEOUT,
      });
      const k1 = cpuSeconds(n.server.pid);
      check(rr, "nats_bench read");
      const jr = parseJson(rr, "nats_bench read");
      if (jr.n !== c.records) throw new Error(`read ${jr.n} of ${c.records}`);
      record(ctx, "W4.nats", c.records, c.size, rr.wallMs / 1000, k1 - k0, rr.cpuS);
    }
  } catch (e) {
    ctx.res.fail(`${c.id} JetStream rep ${rep}`, e);
  } finally {
    if (n) await stopServer(n.server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Redis Streams: XADD pipelined with redis-benchmark, 16 connections × 64 in flight (more in flight
 * than 4 × 64 lets `appendfsync always` cover more entries per fsync: its best case, not a weak one).
 */
export async function redisProduce(ctx: Ctx, c: ProduceCase, mode: "a" | "b", rep: number) {
  const dataDir = join(ctx.dir, `redis-${c.id}${mode}-${rep}`);
  let rs: Awaited<ReturnType<typeof startRedis>> | undefined;
  try {
    rs = await startRedis(dataDir, mode === "a" ? "everysec" : "always");
    const value = "x".repeat(c.size);
    const key = c.partitions === 1 ? "bench" : "bench:__rand_int__";
    const args = [
      "redis-benchmark",
      "-h",
      "127.0.0.1",
      "-p",
      String(rs.port),
      "-n",
      String(c.records),
    ];
    args.push("-c", "16", "-P", "64", "-q");
    if (c.partitions > 1) args.push("-r", String(c.partitions));
    args.push("XADD", key, "*", "v", value);
    const cpu0 = cpuSeconds(rs.server.pid);
    const r = await run(args, { timeoutMs: CLIENT_TIMEOUT, maxStdout: 4096 });
    const cpu1 = cpuSeconds(rs.server.pid);
    check(r, "redis-benchmark");
    const keys = c.partitions === 1
      ? ["bench"]
      : Array.from({ length: c.partitions }, (_, i) => `bench:${String(i).padStart(12, "0")}`);
    // redis-benchmark may overshoot -n by up to connections × pipeline; count what was stored.
    const stored = await redisCount(rs, keys);
    if (stored < c.records) throw new Error(`stored ${stored} entries, expected ≥ ${c.records}`);
    record(ctx, `${c.id}${mode}.redis`, stored, c.size, r.wallMs / 1000, cpu1 - cpu0, r.cpuS);
    if (c.id === "W1" && mode === "a") {
      const k0 = cpuSeconds(rs.server.pid);
      const rr = await run(
        [ctx.tools.redisRead, "127.0.0.1", String(rs.port), "bench", String(stored)],
        { timeoutMs: CLIENT_TIMEOUT },
      );
      const k1 = cpuSeconds(rs.server.pid);
      check(rr, "redis_read");
      record(ctx, "W4.redis", stored, c.size, rr.wallMs / 1000, k1 - k0, rr.cpuS);
    }
  } catch (e) {
    ctx.res.fail(`${c.id}(${mode}) Redis rep ${rep}`, e);
  } finally {
    if (rs) await stopServer(rs.server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function recordLatency(ctx: Ctx, key: string, j: Record<string, number>) {
  for (const f of ["p50_us", "p99_us", "p999_us", "max_us"]) ctx.res.add(`${key}.${f}`, j[f]);
  ctx.res.add(`${key}.received`, j.received);
  ctx.log(
    `  ${key.padEnd(16)} p50 ${(j.p50_us / 1000).toFixed(2)} ms  p99 ${
      (j.p99_us / 1000).toFixed(2)
    } ms  ` +
      `p99.9 ${
        (j.p999_us / 1000).toFixed(2)
      } ms  (${j.received}/${j.n} received, sent in ${j.send_ms} ms` +
      `${
        j.ack_p50_us !== undefined ? `; produce→ack p50 ${(j.ack_p50_us / 1000).toFixed(2)} ms` : ""
      })`,
  );
}

/** W5: end-to-end latency at a fixed rate, ours (acks=1, linger.ms=0) and JetStream. */
export async function latency(ctx: Ctx, rep: number) {
  const { latRate, latSeconds } = ctx.plan;
  const oursDir = join(ctx.dir, `ours-W5-${rep}`);
  let o: Ours | undefined;
  try {
    o = await startOurs(ctx.tools.broker, oursDir);
    await createTopic(o, "lat", 1);
    const r = await run(
      [ctx.tools.kafkaLat, o.kafka, "lat", String(latRate), String(latSeconds), "100", "1"],
      { timeoutMs: CLIENT_TIMEOUT },
    );
    const j = parseJson(r, "kafka_lat");
    recordLatency(ctx, "W5.ours", j);
    if (j.ack_p50_us !== undefined) ctx.res.add("W5.ours.ack_p50_us", j.ack_p50_us);
    check(r, "kafka_lat");
  } catch (e) {
    ctx.res.fail(`W5 ours rep ${rep}`, e);
  } finally {
    if (o) await stopServer(o.server);
    rmSync(oursDir, { recursive: true, force: true });
  }
  const natsDir = join(ctx.dir, `nats-W5-${rep}`);
  let n: Awaited<ReturnType<typeof startNats>> | undefined;
  try {
    n = await startNats(natsDir);
    const r = await run(
      [ctx.tools.natsBench, "lat", n.url, "LAT", String(latRate), String(latSeconds), "100"],
      { timeoutMs: CLIENT_TIMEOUT },
    );
    const j = parseJson(r, "nats_bench lat");
    recordLatency(ctx, "W5.nats", j);
    check(r, "nats_bench lat");
  } catch (e) {
    ctx.res.fail(`W5 JetStream rep ${rep}`, e);
  } finally {
    if (n) await stopServer(n.server);
    rmSync(natsDir, { recursive: true, force: true });
  }
}

/** W6: idle RssAnon of all three; ours with 100 topics × 10 partitions of data; restart times. */
export async function memoryAndRestart(ctx: Ctx) {
  const scratch = join(ctx.dir, "w6-idle");
  const idle = async (name: string, start: () => Promise<{ server: Server }>) => {
    try {
      const s = await start();
      try {
        await sleep(1000);
        ctx.res.add(`W6.${name}.idleRssAnon`, rssAnonMB(s.server.pid));
      } finally {
        await stopServer(s.server);
      }
    } catch (e) {
      ctx.res.fail(`W6 idle ${name}`, e);
    }
  };
  await idle("nats", () => startNats(join(scratch, "nats")));
  await idle("redis", () => startRedis(join(scratch, "redis"), "everysec"));
  rmSync(scratch, { recursive: true, force: true });

  const dataDir = join(ctx.dir, "ours-W6");
  let o: Ours | undefined;
  try {
    o = await startOurs(ctx.tools.broker, dataDir);
    await sleep(1000);
    ctx.res.add("W6.ours.idleRssAnon", rssAnonMB(o.server.pid));
    const topics = Array.from({ length: 100 }, (_, i) => `w6-${String(i).padStart(3, "0")}`);
    for (const t of topics) await createTopic(o, t, 10);
    const fill = await run(
      [
        ctx.tools.python,
        ctx.tools.fillPy,
        o.kafka,
        "10",
        String(ctx.plan.w6Records),
        "100",
        ...topics,
      ],
      { timeoutMs: CLIENT_TIMEOUT },
    );
    check(fill, "fill.py");
    await sleep(1000);
    ctx.res.add("W6.ours.loadedRssAnon", rssAnonMB(o.server.pid));
    ctx.log(
      `  W6 ours idle RssAnon ${ctx.res.get("W6.ours.idleRssAnon")[0]?.toFixed(1)} MB, with 1000 ` +
        `partitions of data ${ctx.res.get("W6.ours.loadedRssAnon")[0]?.toFixed(1)} MB`,
    );
    // Restarts alternate: a clean shutdown (SIGTERM), then kill -9 of a broker that was just written to.
    const expected = await topicRecords(o, topics[0]);
    for (let i = 0; i < ctx.plan.restartReps; i++) {
      for (const how of ["clean", "kill9"] as const) {
        if (how === "kill9") {
          // Some fresh writes so the unclean restart has tails to recover.
          const w = await run(
            [
              "bash",
              "-c",
              `head -c 5050 /dev/zero | tr '\\0' 'y' | fold -w 100 | kcat -P -b ${o.kafka} -t ${
                topics[1]
              } -p 0 -X acks=1`,
            ],
            { timeoutMs: 60_000 },
          );
          check(w, "kcat (pre-kill writes)");
        }
        const stopped = await stopServer(o.server, how === "clean" ? "SIGTERM" : "SIGKILL", 30_000);
        if (how === "clean") ctx.res.add("W6.ours.stopMs", stopped.ms);
        o = undefined;
        o = await startOurs(ctx.tools.broker, dataDir);
        ctx.res.add(`W6.ours.ready.${how}`, o.readyMs);
        const after = await topicRecords(o, topics[0]);
        if (after !== expected) {
          throw new Error(`after restart ${topics[0]} has ${after} records, expected ${expected}`);
        }
        ctx.log(
          `  W6 restart after ${how === "clean" ? "clean shutdown" : "kill -9"}: ready in ${
            o.readyMs.toFixed(0)
          } ms`,
        );
      }
    }
  } catch (e) {
    ctx.res.fail("W6 ours", e);
  } finally {
    if (o) await stopServer(o.server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Limits of this machine, measured in the same run. */
export async function limits(ctx: Ctx) {
  const file = join(ctx.dir, "dd.out");
  try {
    const r = await run(
      ["dd", "if=/dev/zero", `of=${file}`, "bs=1M", `count=${ctx.plan.ddMiB}`, "conv=fdatasync"],
      { timeoutMs: CLIENT_TIMEOUT },
    );
    check(r, "dd");
    ctx.res.add("limit.ddMBs", (ctx.plan.ddMiB * 2 ** 20) / 1e6 / (r.wallMs / 1000));
  } catch (e) {
    ctx.res.fail("limit dd", e);
  } finally {
    rmSync(file, { force: true });
  }
  try {
    const r = await run([ctx.tools.limits, "tcp", String(ctx.plan.tcpBytes)], {
      timeoutMs: CLIENT_TIMEOUT,
    });
    check(r, "limits tcp");
    ctx.res.add("limit.tcpMBs", parseJson(r, "limits tcp").mb_s);
  } catch (e) {
    ctx.res.fail("limit tcp", e);
  }
  try {
    const r = await run([
      ctx.tools.limits,
      "fsync",
      join(ctx.dir, "fsync.out"),
      String(ctx.plan.fsyncCount),
    ], {
      timeoutMs: CLIENT_TIMEOUT,
    });
    check(r, "limits fsync");
    const j = parseJson(r, "limits fsync");
    ctx.res.add("limit.fsyncP50us", j.p50_us);
    ctx.res.add("limit.fsyncP99us", j.p99_us);
  } catch (e) {
    ctx.res.fail("limit fsync", e);
  }
  const last = (k: string) => ctx.res.get(k).at(-1)?.toFixed(0) ?? "?";
  ctx.log(
    `  limits: dd+fdatasync ${last("limit.ddMBs")} MB/s, loopback TCP ${
      last("limit.tcpMBs")
    } MB/s, ` +
      `4 KiB fdatasync p50 ${last("limit.fsyncP50us")} µs (p99 ${last("limit.fsyncP99us")} µs)`,
  );
}
