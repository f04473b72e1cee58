// npm run bench [-- --quick] [-- --no-docs] [-- --section S], S one of suite, replicated, cli,
// partitions, reassign, all (the default): our broker side by side with NATS JetStream and Redis
// Streams, plus the client's ceiling and the machine's limits ("suite"), and three of our brokers
// (RF 3, acks=all) against a three-server JetStream cluster (R3) on the same machine
// ("replicated"), the binary's CLI against kcat ("cli"), one broker grown to thousands of
// partitions ("partitions", scripts/bench/partitions.ts), and a partition moved between two
// brokers ("reassign", scripts/bench/reassign.ts: 1 GiB, 256 MiB with --quick); alone, the last
// two run from source and need none of the other tools. Prints tables of ratios, writes the
// generated blocks of docs/benchmarks.md and docs/benchmarks-chart.svg (suite).
// Every server it starts is stopped, also on failure or Ctrl-C.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { killAll, run } from "./suite/proc.ts";
import {
  buildTools,
  describeMachine,
  ensurePackages,
  loadAverage,
  type Machine,
  type Tools,
  writeRecordFile,
} from "./suite/setup.ts";
import {
  ceiling,
  type Ctx,
  latency,
  limits,
  memoryAndRestart,
  natsProduce,
  oursProduce,
  type Plan,
  type ProduceCase,
  redisProduce,
  Results,
} from "./suite/workloads.ts";
import { buildReport, docBlock, targetsText, textTable, writeDoc } from "./suite/report.ts";
import { chartSvg } from "./suite/chart.ts";
import { buildReplTools, replicated, replPlan } from "./suite/replicated.ts";
import { buildReplReport, replDocBlock, writeReplDoc } from "./suite/repl-report.ts";
import { cliBench, cliDocBlock, cliPlan, cliTable, writeCliDoc } from "./suite/cli.ts";
import {
  docBlock as partitionsDocBlock,
  partitionsScale,
  runDescription,
  writeDoc as writePartitionsDoc,
} from "./partitions.ts";
import {
  reassignBench,
  reassignDocBlock,
  reassignOpts,
  reassignTable,
  writeReassignDoc,
} from "./reassign.ts";

const repo = join(import.meta.dir, "..", "..");
const SECTIONS = ["all", "suite", "replicated", "cli", "partitions", "reassign"] as const;
const args = new Set<string>();
let section: (typeof SECTIONS)[number] = "all";
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const sec = a === "--section" ? argv[++i] : a.startsWith("--section=") ? a.slice(10) : undefined;
  if (sec !== undefined) {
    if (!(SECTIONS as readonly string[]).includes(sec)) {
      console.error(`bench: unknown section ${sec} (use ${SECTIONS.join(", ")})`);
      process.exit(2);
    }
    section = sec as (typeof SECTIONS)[number];
  } else if (["--quick", "--no-docs"].includes(a)) {
    args.add(a);
  } else {
    console.error(
      `bench: unknown argument ${a} (use --quick, --no-docs, --section ${SECTIONS.join("|")})`,
    );
    process.exit(2);
  }
}
const quick = args.has("--quick");

const plan: Plan = quick
  ? {
    quick,
    reps: 1,
    n100: 150_000,
    n1k: 30_000,
    latRate: 50_000,
    latSeconds: 2,
    w6Records: 10,
    restartReps: 1,
    ddMiB: 256,
    tcpBytes: 1 << 30,
    fsyncCount: 200,
  }
  : {
    quick,
    reps: 3,
    n100: 1_000_000,
    // 200 MB per W3 run keeps the full run near 15 minutes on 2 shared cores.
    n1k: 200_000,
    latRate: 50_000,
    latSeconds: 5,
    w6Records: 100,
    restartReps: 2,
    ddMiB: 512,
    tcpBytes: 2 * 2 ** 30,
    fsyncCount: 500,
  };

const log = (s: string) => console.log(s);
const started = new Date();
const loadStart = loadAverage();
// The scratch directory holds every data dir: on the local disk (not tmpfs) so fsync means something.
const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "bench-suite-"));

let interrupted = false;
process.on("SIGINT", () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.error("bench: interrupted; stopping servers");
  void killAll().finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
});

async function main(): Promise<number> {
  log(
    `bench ${section === "all" ? "suite, replicated, cli, partitions and reassign" : section} (${
      quick ? "quick" : "full"
    }), ` +
      `scratch ${dir}, load average ${loadStart}`,
  );
  if (section === "partitions") {
    return await partitionsSection([process.execPath, join(repo, "src", "main.ts")]) > 0 ? 1 : 0;
  }
  if (section === "reassign") {
    return await reassignSection([process.execPath, join(repo, "src", "main.ts")]);
  }
  await ensurePackages(log);
  log("building the C clients and our broker…");
  const tools = await buildTools(dir, repo);
  const machine = await describeMachine(tools, dir);
  log(
    `machine: ${machine.cores} × ${machine.cpu}, ${machine.memGiB} GiB, ${machine.os}, disk ${machine.disk}`,
  );
  log(`versions: ${Object.entries(machine.versions).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  let errors = 0;
  if (section === "all" || section === "suite") errors += await suite(tools, machine);
  if ((section === "all" || section === "replicated") && !interrupted) {
    errors += await replicatedSection(tools, machine);
  }
  if ((section === "all" || section === "cli") && !interrupted) {
    errors += await cliSection(tools, machine);
  }
  if (section === "all" && !interrupted) errors += await partitionsSection([tools.broker]);
  if (section === "all" && !interrupted) errors += await reassignSection([tools.broker]);
  return errors > 0 ? 1 : 0;
}

/** Issue 15: a partition of 1 GiB (256 MiB with --quick) moved, throttled and cancelled. */
async function reassignSection(cmd: string[]): Promise<number> {
  const o = reassignOpts({ mib: quick ? 256 : 1024, cmd });
  let r;
  try {
    r = await reassignBench(o, dir, log);
  } catch (e) {
    log(`reassign failed: ${(e as Error).message}`);
    return 1;
  }
  log("");
  log(reassignTable(r));
  if (!args.has("--no-docs") && !interrupted) {
    const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: repo });
    const shown = cmd.map((c) => c === process.execPath ? "bun" : c.replace(repo + "/", ""))
      .join(" ");
    writeReassignDoc(
      repo,
      join(repo, "docs", "benchmarks.md"),
      reassignDocBlock(
        r,
        head.stdout.toString().trim(),
        `npm run bench -- --section reassign${quick ? " --quick" : ""} (${shown})`,
      ),
    );
    log("wrote docs/benchmarks.md (reassign section)");
  }
  return 0;
}

/** Issue 20: topics of 1,000 partitions up to 10,000 (2,000 with --quick), restarts at each. */
async function partitionsSection(cmd: string[]): Promise<number> {
  const started = new Date().toISOString().slice(0, 16).replace("T", " ");
  const load0 = loadAverage();
  const plan = {
    counts: quick ? [1000, 2000] : [1000, 2000, 5000, 10000],
    perTopic: 1000,
    recordsPerPartition: 2,
    cmd,
    dir,
    log,
  };
  log(`partitions: one broker grown to ${plan.counts.join(", ")} partitions`);
  const res = await partitionsScale(plan);
  const failed = res.filter((r) => r.error !== undefined).length;
  if (!args.has("--no-docs") && !interrupted) {
    const about = runDescription(plan, repo, started, load0);
    writePartitionsDoc(join(repo, "docs", "benchmarks.md"), partitionsDocBlock(res, about));
    log("wrote docs/benchmarks.md (partitions section)");
  }
  return failed;
}

async function suite(tools: Tools, machine: Machine): Promise<number> {
  const t0 = performance.now();
  const loadStart = loadAverage();
  const f100 = join(dir, "records-100.txt");
  const f1k = join(dir, "records-1k.txt");
  writeRecordFile(f100, plan.n100, 100);
  writeRecordFile(f1k, plan.n1k, 1024);
  const cases: ProduceCase[] = [
    { id: "W1", partitions: 1, size: 100, records: plan.n100, file: f100 },
    { id: "W2", partitions: 8, size: 100, records: plan.n100, file: f100 },
    { id: "W3", partitions: 1, size: 1024, records: plan.n1k, file: f1k },
  ];
  const res = new Results();
  const ctx: Ctx = { plan, tools, dir, res, log };

  log("limits");
  await limits(ctx);
  // Repetitions on the outside and systems interleaved inside, so a noisy minute on this shared
  // machine hits every system rather than one.
  for (let rep = 1; rep <= plan.reps && !interrupted; rep++) {
    log(`repetition ${rep}/${plan.reps}`);
    for (const c of cases) {
      await ceiling(ctx, c);
      await oursProduce(ctx, c, "a", rep);
      await natsProduce(ctx, c, rep);
      await redisProduce(ctx, c, "a", rep);
      await oursProduce(ctx, c, "b", rep);
      await redisProduce(ctx, c, "b", rep);
    }
    await latency(ctx, rep);
  }
  log("W6 memory and restart");
  await memoryAndRestart(ctx);
  rmSync(f100, { force: true });
  rmSync(f1k, { force: true });

  const minutes = (performance.now() - t0) / 60_000;
  const loadEnd = loadAverage();
  const report = buildReport(res);
  log("");
  log(textTable(report.throughput));
  log("");
  log(textTable(report.cpu));
  log("");
  log(textTable(report.latency));
  log("");
  log(textTable(report.memory));
  log("");
  log(textTable(report.limits));
  log("");
  log("targets:");
  log(targetsText(report.targets));
  if (res.errors.length > 0) log(`\n${res.errors.length} error(s):\n${res.errors.join("\n")}`);
  log(`\n${minutes.toFixed(1)} min; load average ${loadStart} → ${loadEnd}`);

  if (!args.has("--no-docs")) {
    const chartFile = "benchmarks-chart.svg";
    const subtitle = `${started.toISOString().slice(0, 10)}, ${quick ? "--quick" : "full run"}, ` +
      `${machine.cores} vCPU ${machine.cpu}, load ${loadStart} → ${loadEnd}; ours ${machine.versions.ours}, ` +
      `nats-server ${machine.versions["nats-server"]}, Redis ${machine.versions["redis-server"]}`;
    writeFileSync(join(repo, "docs", chartFile), chartSvg(res, subtitle));
    writeDoc(
      repo,
      join(repo, "docs", "benchmarks.md"),
      docBlock({
        report,
        machine,
        plan,
        started,
        minutes,
        loadStart,
        loadEnd,
        errors: res.errors,
        chartFile,
      }),
    );
    log(`wrote docs/benchmarks.md (suite section) and docs/${chartFile}`);
  }
  return res.errors.length;
}

/** The commit the broker was built from, and whether the work tree differed from it. */
async function sourceDescription(): Promise<string> {
  const git = async (a: string[]) => (await run(["git", ...a], { cwd: repo, timeoutMs: 10_000 }));
  const head = (await git(["rev-parse", "--short", "HEAD"])).stdout.trim() || "?";
  const dirty = (await git(["status", "--porcelain", "--", "src"])).stdout.trim() !== "";
  return `commit ${head}${dirty ? " plus uncommitted changes under src/" : ""}`;
}

async function replicatedSection(tools: Tools, machine: Machine): Promise<number> {
  const t0 = performance.now();
  const loadStart = loadAverage();
  const rplan = replPlan(quick);
  const file = join(dir, "records-repl-100.txt");
  writeRecordFile(file, rplan.records, 100);
  const rtools = await buildReplTools(dir, repo, tools.broker);
  const res = new Results();
  log("replicated: 3 brokers (RF 3, acks=all) and 3 nats-servers (R3), one system at a time");
  await replicated({ plan: rplan, tools: rtools, dir, file, res, log }, () => interrupted);
  rmSync(file, { force: true });
  const minutes = (performance.now() - t0) / 60_000;
  const loadEnd = loadAverage();
  const report = buildReplReport(res, rplan);
  log("");
  log(textTable(report.produce));
  log("");
  log(textTable(report.failover));
  log("");
  log(textTable(report.rolling));
  log("");
  log("replicated targets:");
  log(targetsText(report.targets));
  if (res.errors.length > 0) log(`\n${res.errors.length} error(s):\n${res.errors.join("\n")}`);
  log(`\nreplicated: ${minutes.toFixed(1)} min; load average ${loadStart} → ${loadEnd}`);
  if (!args.has("--no-docs") && !interrupted) {
    writeReplDoc(
      repo,
      join(repo, "docs", "benchmarks.md"),
      replDocBlock({
        report,
        machine,
        plan: rplan,
        started: new Date(Date.now() - (performance.now() - t0)),
        minutes,
        loadStart,
        loadEnd,
        errors: res.errors,
        source: await sourceDescription(),
      }),
    );
    log("wrote docs/benchmarks.md (replicated section)");
  }
  return res.errors.length;
}

async function cliSection(tools: Tools, machine: Machine): Promise<number> {
  const started = new Date();
  log("cli: broker produce/consume against kcat, one broker, interleaved");
  const r = await cliBench(tools.broker, dir, cliPlan(quick), log, () => interrupted);
  log("");
  log(textTable(cliTable(r)));
  if (r.errors.length > 0) log(`\n${r.errors.length} error(s):\n${r.errors.join("\n")}`);
  if (!args.has("--no-docs") && !interrupted) {
    const versions = `ours ${machine.versions.ours}, kcat ${machine.versions.kcat ?? "?"}`;
    writeCliDoc(
      repo,
      join(repo, "docs", "benchmarks.md"),
      cliDocBlock(r, started, quick, versions),
    );
    log("wrote docs/benchmarks.md (cli section)");
  }
  return r.errors.length;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  console.error(`bench: ${(e as Error).stack ?? e}`);
} finally {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
