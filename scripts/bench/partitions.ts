// Partition scale (issue 20): one broker, topics of 1,000 partitions created one after another
// (each create timed), every partition given records, then the broker restarted after a clean
// shutdown and after kill -9, at each partition count asked for. Reads the broker's idle RssAnon
// and open descriptors from /proc. Standalone: `bun scripts/bench/partitions.ts [--counts
// 1000,2000,5000,10000] [--bin dist/broker]`; `npm run bench -- --section partitions` runs it too.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { rssAnonMB, type Server, startServer, stopServer } from "./suite/proc.ts";
import { loadAverage } from "./suite/setup.ts";
import { replaceDocBlock } from "./suite/report.ts";

export interface PartitionsPlan {
  /** Partition counts to measure (multiples of `perTopic`). */
  counts: number[];
  perTopic: number;
  /** Records written to every partition before the restarts. */
  recordsPerPartition: number;
  /** Command that starts the broker (flags are appended). */
  cmd: string[];
  dir: string;
  log: (s: string) => void;
}

export interface CountResult {
  partitions: number;
  /** Seconds per topic create, in order (the first run lists every create up to the count). */
  createS: number[];
  readyCleanS: number;
  readyKill9S: number;
  /** A clean shutdown (SIGTERM to exit): every partition written since its open checkpoints. */
  stopCleanS: number;
  /** Its exit code: not 0 when the broker's shutdown budget ran out (its logs then left unclean). */
  stopCleanCode?: number | null;
  idleRssAnonMB: number;
  openFds: number;
  /** What failed, if anything (e.g. a create refused or a broker that did not come back). */
  error?: string;
}

interface Running {
  server: Server;
  http: string;
  readyS: number;
}

async function start(plan: PartitionsPlan, dataDir: string): Promise<Running> {
  const server = startServer("broker", [
    ...plan.cmd,
    "--data-dir",
    dataDir,
    "--kafka-addr",
    "127.0.0.1:0",
    "--http-addr",
    "127.0.0.1:0",
    "--cluster-addr",
    "127.0.0.1:0",
  ]);
  try {
    const { line, ms } = await server.waitFor(/"msg":"broker started"/, 300_000);
    const j = JSON.parse(line) as { http: string };
    return { server, http: j.http, readyS: ms / 1000 };
  } catch (e) {
    await stopServer(server, "SIGKILL");
    throw e;
  }
}

async function post(url: string, body: unknown, timeoutMs = 120_000): Promise<unknown> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`POST ${url}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return text === "" ? null : JSON.parse(text);
}

/** Every partition of `topic` gets `n` records (one request per 1,000 records, acks=1). */
async function fill(o: Running, topic: string, partitions: number, n: number, tag: string) {
  const records: { partition: number; value: string }[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < n; i++) records.push({ partition: p, value: `${tag}-${p}-${i}` });
  }
  for (let i = 0; i < records.length; i += 1000) {
    await post(
      `http://${o.http}/topics/${topic}/records?acks=1`,
      records.slice(i, i + 1000),
    );
  }
}

function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Creates topics `from`..`to-1` of plan.perTopic partitions, timing each create. */
async function createTopics(plan: PartitionsPlan, o: Running, from: number, to: number) {
  const times: number[] = [];
  for (let i = from; i < to; i++) {
    const t0 = performance.now();
    await post(`http://${o.http}/topics`, {
      name: `scale-${String(i).padStart(3, "0")}`,
      partitions: plan.perTopic,
      replication_factor: 1,
    });
    times.push((performance.now() - t0) / 1000);
    plan.log(
      `  create scale-${i} (${plan.perTopic} partitions, ${(i + 1) * plan.perTopic} in all): ${
        times.at(-1)!.toFixed(2)
      } s, ${openFds(o.server.pid)} fds, RssAnon ${rssAnonMB(o.server.pid).toFixed(0)} MB`,
    );
  }
  return times;
}

/** One data dir grown to each count in turn; at each: fill, idle readings, two restarts. */
export async function partitionsScale(plan: PartitionsPlan): Promise<CountResult[]> {
  const out: CountResult[] = [];
  const dataDir = join(plan.dir, "scale");
  let o = await start(plan, dataDir);
  let topics = 0;
  try {
    for (const count of plan.counts) {
      const r: CountResult = {
        partitions: count,
        createS: [],
        readyCleanS: NaN,
        readyKill9S: NaN,
        stopCleanS: NaN,
        idleRssAnonMB: NaN,
        openFds: NaN,
      };
      out.push(r);
      try {
        const want = Math.ceil(count / plan.perTopic);
        const first = topics;
        r.createS = await createTopics(plan, o, topics, want);
        topics = want;
        for (let i = first; i < topics; i++) {
          await fill(
            o,
            `scale-${String(i).padStart(3, "0")}`,
            plan.perTopic,
            plan.recordsPerPartition,
            "a",
          );
        }
        await Bun.sleep(3000); // idle: checkpoints written, timers settled
        Bun.gc?.(true);
        r.idleRssAnonMB = rssAnonMB(o.server.pid);
        r.openFds = openFds(o.server.pid);
        const stopped = await stopServer(o.server, "SIGTERM", 300_000);
        r.stopCleanS = stopped.ms / 1000;
        r.stopCleanCode = stopped.code;
        o = await start(plan, dataDir);
        r.readyCleanS = o.readyS;
        // Fresh unsynced writes to one topic, then kill -9 before a checkpoint covers them.
        await fill(o, "scale-000", plan.perTopic, 1, "b");
        await stopServer(o.server, "SIGKILL");
        o = await start(plan, dataDir);
        r.readyKill9S = o.readyS;
        plan.log(
          `${count} partitions: ready ${r.readyCleanS.toFixed(2)} s clean, ${
            r.readyKill9S.toFixed(2)
          } s after kill -9; clean stop ${r.stopCleanS.toFixed(1)} s; idle RssAnon ${
            r.idleRssAnonMB.toFixed(0)
          } MB, ${r.openFds} fds, stop exit code ${r.stopCleanCode}`,
        );
      } catch (e) {
        r.error = e instanceof Error ? e.message : String(e);
        plan.log(`${count} partitions: FAILED: ${r.error}`);
        break;
      }
    }
  } finally {
    await stopServer(o.server, "SIGKILL");
  }
  return out;
}

/** The line above the table: when, which commit and command, and the machine's load. */
export function runDescription(
  plan: PartitionsPlan,
  repo: string,
  started: string,
  loadBefore: string,
): string {
  const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: repo });
  return `${started} UTC, commit ${head.stdout.toString().trim()}, one broker ` +
    `(\`${plan.cmd.map((c) => c.replace(repo + "/", "")).join(" ")}\`), ` +
    `${plan.recordsPerPartition} records per partition, load average ${loadBefore} → ${loadAverage()}.`;
}

const BEGIN = "<!-- bench-partitions:begin";
const END = "<!-- bench-partitions:end -->";

/** The generated block of docs/benchmarks.md: one row per partition count, every create. */
export function docBlock(res: CountResult[], about: string): string {
  const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "—");
  const rows = res.map((r) =>
    `| ${r.partitions.toLocaleString("en")} | ${r.createS.map((c) => f(c)).join(", ")} | ${
      f(r.readyCleanS)
    } | ${f(r.readyKill9S)} | ${f(r.stopCleanS, 1)}${
      r.stopCleanCode !== undefined && r.stopCleanCode !== 0
        ? ` (exit ${r.stopCleanCode}: budget ran out)`
        : ""
    } | ${f(r.idleRssAnonMB, 0)} | ${Number.isFinite(r.openFds) ? r.openFds : "—"} |${
      r.error ? ` failed: ${r.error.split("\n")[0].slice(0, 120)}` : ""
    }`
  );
  return [
    `${BEGIN} (generated by \`npm run bench:partitions\`; edits in here are overwritten) -->`,
    "",
    about,
    "",
    "| partitions | creates of 1,000 partitions (s, in order) | ready after clean stop (s) | ready after kill -9 (s) | clean stop (s) | idle RssAnon (MB) | open descriptors |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    END,
  ].join("\n");
}

export function writeDoc(path: string, block: string): void {
  replaceDocBlock(path, BEGIN, END, block, "## Partition scale");
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const repo = join(import.meta.dir, "..", "..");
  const bin = opt("--bin");
  const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "bench-partitions-"));
  const plan: PartitionsPlan = {
    counts: (opt("--counts") ?? "1000,2000,5000,10000").split(",").map(Number),
    perTopic: Number(opt("--per-topic") ?? 1000),
    recordsPerPartition: Number(opt("--records") ?? 2),
    cmd: bin ? (bin.endsWith(".ts") ? ["bun", bin] : [bin]) : ["bun", join(repo, "src", "main.ts")],
    dir,
    log: (s) => console.log(s),
  };
  const load0 = loadAverage();
  const started = new Date().toISOString().slice(0, 16).replace("T", " ");
  try {
    const res = await partitionsScale(plan);
    console.log(JSON.stringify(res));
    if (argv.includes("--docs")) {
      const about = runDescription(plan, repo, started, load0);
      writeDoc(join(repo, "docs", "benchmarks.md"), docBlock(res, about));
      console.log("wrote docs/benchmarks.md (partitions)");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
