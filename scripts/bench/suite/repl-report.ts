// The replicated section's tables, targets and generated block of docs/benchmarks.md (between
// its own markers, under "## Replicated"; the suite's block is left alone).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fmtStat, mdTable, type Stat, stat, type Table, type Target } from "./report.ts";
import type { Machine } from "./setup.ts";
import type { Results } from "./workloads.ts";
import { GAP_MS, type ReplPlan } from "./replicated.ts";

const fmtN = (x: number) =>
  x >= 100 ? Math.round(x).toLocaleString("en") : x >= 10 ? x.toFixed(1) : x.toFixed(2);
const ratio = (a: Stat | undefined, b: Stat | undefined) =>
  a && b && b.med > 0 ? a.med / b.med : undefined;
const fmtR = (r: number | undefined) => (r === undefined ? "–" : `${r.toFixed(2)}×`);
const one = (x: number | undefined, scale = 1) => (x === undefined ? "–" : fmtN(x / scale));

export interface ReplReport {
  produce: Table;
  failover: Table;
  rolling: Table;
  targets: Target[];
}

export function buildReplReport(res: Results, plan: ReplPlan): ReplReport {
  const g = (k: string) => stat(res.get(k));
  const steadyRate = `${plan.steadyRate.toLocaleString("en")} records/s`;
  const sLag = g("R.steady.ours3.lagSample");
  const o3 = g("R.ours3.rps");
  const o1 = g("R.ours1.rps");
  const n3 = g("R.nats3.rps");
  const lag = g("R.ours3.lagSample");
  const lagMs = (s: Stat | undefined, x: number | undefined) =>
    s && x !== undefined && s.med > 0 ? `${fmtN((x / s.med) * 1000)} ms` : "–";

  const produce: Table = {
    head: [
      "100 B records, 1 partition / stream",
      "ours RF 3, acks=all",
      "JetStream R3",
      "ours RF 1, acks=1",
      "RF 3 / JetStream",
      "RF 3 / RF 1",
    ],
    rows: [
      [
        "produce, records/s (kcat; async publish)",
        fmtStat(o3),
        fmtStat(n3),
        fmtStat(o1),
        fmtR(ratio(o3, n3)),
        fmtR(ratio(o3, o1)),
      ],
      [
        "server CPU s per million records (3 processes summed)",
        fmtStat(g("R.ours3.cpuPerM")),
        fmtStat(g("R.nats3.cpuPerM")),
        fmtStat(g("R.ours1.cpuPerM")),
        fmtR(ratio(g("R.ours3.cpuPerM"), g("R.nats3.cpuPerM"))),
        fmtR(ratio(g("R.ours3.cpuPerM"), g("R.ours1.cpuPerM"))),
      ],
      [
        "idle cluster: CPU of the 3 processes, % of one core",
        fmtStat(g("R.ours3.idleCpuPct")),
        fmtStat(g("R.nats3.idleCpuPct")),
        "",
        "",
        "",
      ],
      [
        "client CPU s per million records",
        fmtStat(g("R.ours3.clientCpuPerM")),
        fmtStat(g("R.nats3.clientCpuPerM")),
        fmtStat(g("R.ours1.clientCpuPerM")),
        "",
        "",
      ],
      [
        "at full speed: follower lag p50 / max (records)",
        `${one(lag?.med)} / ${one(lag?.max)}`,
        `${one(g("R.nats3.lagP50")?.med)} / ${one(g("R.nats3.lagMax")?.max)}`,
        "",
        "",
        "",
      ],
      [
        "at full speed: follower lag p50 / max as time at that rate",
        `${lagMs(o3, lag?.med)} / ${lagMs(o3, lag?.max)}`,
        `${lagMs(n3, g("R.nats3.lagP50")?.med)} / ${lagMs(n3, g("R.nats3.lagMax")?.max)}`,
        "",
        "",
        "",
      ],
      [
        `steady ${steadyRate}: follower lag p50 / max (records)`,
        `${one(sLag?.med)} / ${one(sLag?.max)}`,
        `${one(g("R.steady.nats3.lagP50")?.med)} / ${one(g("R.steady.nats3.lagMax")?.max)}`,
        "",
        "",
        "",
      ],
      ...(["p50", "p99"] as const).map((q) => [
        `steady ${steadyRate}: produce → ack ${q} ms`,
        fmtStat(g(`R.steady.ours3.ack_${q}_us`), 1000),
        fmtStat(g(`R.steady.nats3.ack_${q}_us`), 1000),
        "",
        fmtR(ratio(g(`R.steady.ours3.ack_${q}_us`), g(`R.steady.nats3.ack_${q}_us`))),
        "",
      ]),
      ...(["p50", "p90", "p99", "p999", "max"] as const).map((q) => [
        `one at a time (acks=all; sync publish), ${q === "p999" ? "p99.9" : q} ms`,
        fmtStat(g(`R.lat.ours3.${q}_us`), 1000),
        fmtStat(g(`R.lat.nats3.${q}_us`), 1000),
        fmtStat(g(`R.lat.ours1.${q}_us`), 1000),
        fmtR(ratio(g(`R.lat.ours3.${q}_us`), g(`R.lat.nats3.${q}_us`))),
        fmtR(ratio(g(`R.lat.ours3.${q}_us`), g(`R.lat.ours1.${q}_us`))),
      ]),
    ],
  };

  const fo = (k: string) => {
    const s = g(k);
    return s ? [fmtN(s.med), fmtN(s.max), String(s.n)] : ["–", "–", "0"];
  };
  const failover: Table = {
    head: ["ours, SIGKILL of a partition leader (ms)", "p50", "max", "kills"],
    rows: [
      [
        "kill → a survivor's metadata names the new leader (server side, polled every 20 ms)",
        ...fo("R.failover.electedMs"),
      ],
      ["kill → first acks=all ack from the new leader, seen by the client", ...fo("R.failover.ms")],
      ["· kills of the controller (metadata quorum leader) too", ...fo("R.failover.ctrl.ms")],
      ["· kills of another broker", ...fo("R.failover.other.ms")],
      [
        "the other partitions (lost a follower): longest time without an ack",
        ...fo("R.failover.followerStall.ms"),
      ],
      ["the killed broker: restart → ready", ...fo("R.restart.kill9.readyMs")],
    ],
  };

  const rolling: Table = {
    head: [
      "ours, rolling restart: SIGTERM, restart, full ISR; each broker in turn",
      `unavailable ms (gaps > ${GAP_MS} ms)`,
      "longest gap ms (phases: their length)",
    ],
    rows: [],
  };
  for (let p = 0; p < 3; p++) {
    rolling.rows.push([
      `partition ${p}: whole rolling restart (3 brokers)`,
      fmtStat(g(`R.rolling.p${p}.unavailableMs`)),
      fmtStat(g(`R.rolling.p${p}.maxGapMs`)),
    ]);
  }
  rolling.rows.push([
    "baseline: 10 s without restarts, per partition",
    fmtStat(g("R.rolling.baseline.unavailableMs")),
    fmtStat(g("R.rolling.baseline.maxGapMs")),
  ]);
  rolling.rows.push([
    "per restart: longest gap, partitions the restarted broker led",
    "",
    fmtStat(g("R.rolling.led.maxGapMs")),
  ]);
  rolling.rows.push([
    "per restart: longest gap, partitions it followed",
    "",
    fmtStat(g("R.rolling.followed.maxGapMs")),
  ]);
  for (
    const [k, label] of [
      ["shutdown", "SIGTERM → exit"],
      ["start", "exit → ready again"],
      ["catchup", "ready → full ISR"],
      ["back", "full ISR → preferred leaders (≤ 7 s) + 0.5 s"],
    ] as const
  ) {
    rolling.rows.push([
      `per restart, phase ${label} (mean of the partitions)`,
      fmtStat(g(`R.rolling.phase.${k}.unavailableMs`)),
      fmtStat(g(`R.rolling.phase.${k}.ms`)),
    ]);
  }
  rolling.rows.push([
    "whole rolling restart, wall time (ms)",
    fmtStat(g("R.rolling.totalMs")),
    "",
  ]);
  rolling.rows.push(["SIGTERM → exit, per broker (ms)", fmtStat(g("R.rolling.stopMs")), ""]);

  const tgt = (what: string, r: number | undefined, need: number): Target => ({
    what,
    value: r === undefined ? "not measured" : `${r.toFixed(2)}×`,
    met: r === undefined ? undefined : r >= need,
  });
  const targets = [
    tgt("RF 3 acks=all produce ≥ 10 × JetStream R3 async publish", ratio(o3, n3), 10),
    tgt("RF 3 acks=all produce ≥ 0.3 × our RF 1 acks=1 (same run)", ratio(o3, o1), 0.3),
  ];
  return { produce, failover, rolling, targets };
}

export const R_BEGIN =
  "<!-- bench-replicated:begin (generated by `npm run bench -- --section replicated`; edits in here are overwritten) -->";
export const R_END = "<!-- bench-replicated:end -->";
const HEADING = "## Replicated";

export interface ReplDocInput {
  report: ReplReport;
  machine: Machine;
  plan: ReplPlan;
  started: Date;
  minutes: number;
  loadStart: string;
  loadEnd: string;
  errors: string[];
  source: string;
}

export function replDocBlock(d: ReplDocInput): string {
  const { report: r, machine: m, plan: p } = d;
  const v = ["ours", "bun", "nats-server", "librdkafka", "kcat", "nats.c"]
    .map((k) => `${k} ${m.versions[k] ?? "?"}`).join(", ");
  const out = [
    R_BEGIN,
    "",
    `Run ${d.started.toISOString().slice(0, 16).replace("T", " ")} UTC, ${
      p.quick ? "**--quick**" : "full"
    }, ${d.minutes.toFixed(1)} min; load average ${d.loadStart} at start, ${d.loadEnd} at end. ` +
    `Source: ${d.source}.`,
    "",
    `Machine: ${m.cores} × ${m.cpu}, ${m.memGiB} GiB RAM, ${m.os}, Linux ${m.kernel}; data on ${m.disk}. ` +
    `**All six servers (3 brokers, 3 nats-servers; one system at a time) and the clients share these ${m.cores} cores.** ` +
    `Versions: ${v}.`,
    "",
    `Plan: ${p.reps} repetition(s) of ${p.records.toLocaleString("en")} × 100 B records per ` +
    `throughput run (each cell the median (min–max)), after one unmeasured run of the same size ` +
    `on each fresh cluster (ours: RF 3 and RF 1; JetStream: R3); latency ${
      p.latSamples.toLocaleString("en")
    } one-at-a-time records after ${p.latWarmup.toLocaleString("en")} warm-up records, per ` +
    `repetition; steady state ${
      p.steadyRate.toLocaleString("en")
    } records/s for ${p.steadySeconds} s ` +
    `per repetition; ${p.kills} leader kills; ${p.rollingRounds} rolling restart(s) of the 3 brokers.`,
    "",
    "### Targets",
    "",
    ...r.targets.map((t) =>
      `- ${t.met === undefined ? "?" : t.met ? "✔" : "✘"} ${t.what}: ${t.value}`
    ),
    "",
    "### Produce, CPU, lag, latency",
    "",
    mdTable(r.produce),
    "",
    "### Failover",
    "",
    mdTable(r.failover),
    "",
    "### Rolling restart",
    "",
    mdTable(r.rolling),
    "",
  ];
  if (d.errors.length > 0) {
    out.push(
      "### Errors in this run",
      "",
      ...d.errors.map((e) => `- ${e.replaceAll("\n", " ")}`),
      "",
    );
  }
  out.push(R_END);
  return out.join("\n");
}

function formatMarkdown(repo: string, md: string): string {
  const deno = join(repo, "node_modules", ".bin", "deno");
  if (!existsSync(deno)) return md;
  const r = Bun.spawnSync(
    [deno, "fmt", "--config", join(repo, "deno.json"), "--ext", "md", "-"],
    { stdin: new TextEncoder().encode(md), stdout: "pipe", stderr: "pipe" },
  );
  return r.exitCode === 0 ? r.stdout.toString().trimEnd() : md;
}

/** Replaces the replicated block (or appends the section with it the first time). */
export function writeReplDoc(repo: string, path: string, rawBlock: string): void {
  const block = formatMarkdown(repo, rawBlock);
  const text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const a = text.indexOf("<!-- bench-replicated:begin");
  const b = text.indexOf(R_END);
  const next = a >= 0 && b > a
    ? text.slice(0, a) + block + text.slice(b + R_END.length)
    : `${text.trimEnd()}\n\n${HEADING}\n\n${block}\n`;
  writeFileSync(path, next);
}
