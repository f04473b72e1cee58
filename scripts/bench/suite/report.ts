// From samples to the printed table, the targets and the generated block of docs/benchmarks.md.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Machine } from "./setup.ts";
import type { Plan, Results } from "./workloads.ts";

export interface Stat {
  med: number;
  min: number;
  max: number;
  n: number;
}

export function stat(xs: number[]): Stat | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const med = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { med, min: s[0], max: s[s.length - 1], n: s.length };
}

const fmtN = (x: number) =>
  x >= 100 ? Math.round(x).toLocaleString("en") : x >= 10 ? x.toFixed(1) : x.toFixed(2);

export function fmtStat(s: Stat | undefined, scale = 1): string {
  if (!s) return "–";
  if (s.n === 1) return fmtN(s.med / scale);
  return `${fmtN(s.med / scale)} (${fmtN(s.min / scale)}–${fmtN(s.max / scale)})`;
}

const ratio = (a: Stat | undefined, b: Stat | undefined) =>
  a && b && b.med > 0 ? a.med / b.med : undefined;
const fmtR = (r: number | undefined) => (r === undefined ? "–" : `${r.toFixed(2)}×`);
const fmtPct = (r: number | undefined, of: string) =>
  r === undefined ? "–" : `${(r * 100).toFixed(r < 0.1 ? 1 : 0)}% of ${of}`;

export interface Table {
  head: string[];
  rows: string[][];
}

export interface Target {
  what: string;
  value: string;
  met: boolean | undefined;
}

export interface Report {
  throughput: Table;
  cpu: Table;
  latency: Table;
  memory: Table;
  limits: Table;
  targets: Target[];
}

const CASES = [
  { id: "W1", label: "W1 100 B, 1 partition" },
  { id: "W2", label: "W2 100 B, 8 partitions" },
  { id: "W3", label: "W3 1 KiB, 1 partition" },
] as const;

export function buildReport(res: Results): Report {
  const g = (k: string) => stat(res.get(k));
  const tcp = g("limit.tcpMBs");
  const dd = g("limit.ddMBs");

  const throughput: Table = {
    head: [
      "workload (records/s)",
      "ours",
      "client ceiling",
      "JetStream",
      "Redis",
      "ours/ceiling",
      "ours/JetStream",
      "ours/Redis",
      "ours/limit",
    ],
    rows: [],
  };
  for (const c of CASES) {
    const ours = g(`${c.id}a.ours.rps`);
    const ceil = g(`${c.id}.ceiling.rps`);
    const js = g(`${c.id}a.nats.rps`);
    const rd = g(`${c.id}a.redis.rps`);
    throughput.rows.push([
      `${c.label}, (a) page cache`,
      fmtStat(ours),
      fmtStat(ceil),
      fmtStat(js),
      fmtStat(rd),
      fmtR(ratio(ours, ceil)),
      fmtR(ratio(ours, js)),
      fmtR(ratio(ours, rd)),
      fmtPct(ratio(g(`${c.id}a.ours.mbs`), tcp), "TCP"),
    ]);
    const oursB = g(`${c.id}b.ours.rps`);
    const rdB = g(`${c.id}b.redis.rps`);
    throughput.rows.push([
      `${c.label}, (b) after fsync`,
      fmtStat(oursB),
      "",
      "no such mode",
      fmtStat(rdB),
      "",
      "",
      fmtR(ratio(oursB, rdB)),
      fmtPct(ratio(g(`${c.id}b.ours.mbs`), dd), "dd"),
    ]);
  }
  const w4 = g("W4.ours.rps");
  throughput.rows.push([
    "W4 consume W1's log from the start",
    fmtStat(w4),
    "",
    fmtStat(g("W4.nats.rps")),
    fmtStat(g("W4.redis.rps")),
    "",
    fmtR(ratio(w4, g("W4.nats.rps"))),
    fmtR(ratio(w4, g("W4.redis.rps"))),
    fmtPct(ratio(g("W4.ours.mbs"), tcp), "TCP"),
  ]);
  const w4d = g("W4d.ours.rps");
  throughput.rows.push([
    "W4 with kcat's defaults (-o beginning -e)",
    fmtStat(w4d),
    "",
    "",
    "",
    "",
    fmtR(ratio(w4d, g("W4.nats.rps"))),
    fmtR(ratio(w4d, g("W4.redis.rps"))),
    "",
  ]);
  throughput.rows.push([
    "W4 in MB/s (payload)",
    fmtStat(g("W4.ours.mbs")),
    "",
    fmtStat(g("W4.nats.mbs")),
    fmtStat(g("W4.redis.mbs")),
    "",
    "",
    "",
    "",
  ]);

  const cpu: Table = {
    head: [
      "server CPU s per million records",
      "ours",
      "JetStream",
      "Redis",
      "kcat (client) on ours",
    ],
    rows: [],
  };
  for (const c of CASES) {
    for (const m of ["a", "b"] as const) {
      cpu.rows.push([
        `${c.label}, (${m})`,
        fmtStat(g(`${c.id}${m}.ours.cpuPerM`)),
        m === "a" ? fmtStat(g(`${c.id}a.nats.cpuPerM`)) : "–",
        fmtStat(g(`${c.id}${m}.redis.cpuPerM`)),
        fmtStat(g(`${c.id}${m}.ours.clientCpuPerM`)),
      ]);
    }
  }
  cpu.rows.push([
    "W4 consume",
    fmtStat(g("W4.ours.cpuPerM")),
    fmtStat(g("W4.nats.cpuPerM")),
    fmtStat(g("W4.redis.cpuPerM")),
    fmtStat(g("W4.ours.clientCpuPerM")),
  ]);

  const latency: Table = {
    head: ["W5 end-to-end latency (ms)", "p50", "p99", "p99.9", "max", "received"],
    rows: [],
  };
  for (const [sys, name] of [["ours", "ours (acks=1)"], ["nats", "JetStream"]] as const) {
    latency.rows.push([
      name,
      fmtStat(g(`W5.${sys}.p50_us`), 1000),
      fmtStat(g(`W5.${sys}.p99_us`), 1000),
      fmtStat(g(`W5.${sys}.p999_us`), 1000),
      fmtStat(g(`W5.${sys}.max_us`), 1000),
      fmtStat(g(`W5.${sys}.received`)),
    ]);
  }
  latency.rows.push([
    "p99 ours/JetStream",
    fmtR(ratio(g("W5.ours.p50_us"), g("W5.nats.p50_us"))),
    fmtR(ratio(g("W5.ours.p99_us"), g("W5.nats.p99_us"))),
    fmtR(ratio(g("W5.ours.p999_us"), g("W5.nats.p999_us"))),
    "",
    "",
  ]);

  const memory: Table = {
    head: ["W6", "ours", "JetStream", "Redis"],
    rows: [
      [
        "idle RssAnon (MB)",
        fmtStat(g("W6.ours.idleRssAnon")),
        fmtStat(g("W6.nats.idleRssAnon")),
        fmtStat(g("W6.redis.idleRssAnon")),
      ],
      [
        "RssAnon, 100 topics × 10 partitions with data (MB)",
        fmtStat(g("W6.ours.loadedRssAnon")),
        "",
        "",
      ],
      [
        "start → ready, 1000 partitions, after clean shutdown (ms)",
        fmtStat(g("W6.ours.ready.clean")),
        "",
        "",
      ],
      [
        "start → ready, 1000 partitions, after kill -9 (ms)",
        fmtStat(g("W6.ours.ready.kill9")),
        "",
        "",
      ],
      ["SIGTERM → exit, 1000 partitions (ms)", fmtStat(g("W6.ours.stopMs")), "", ""],
    ],
  };

  const limits: Table = {
    head: ["limit", "value"],
    rows: [
      ["sequential write + fdatasync (dd bs=1M conv=fdatasync), MB/s", fmtStat(dd)],
      ["loopback TCP, one connection, 1 MiB writes, MB/s", fmtStat(tcp)],
      ["one 4 KiB pwrite + fdatasync, p50 (ms)", fmtStat(g("limit.fsyncP50us"), 1000)],
      ["one 4 KiB pwrite + fdatasync, p99 (ms)", fmtStat(g("limit.fsyncP99us"), 1000)],
    ],
  };

  const tgt = (
    what: string,
    r: number | undefined,
    need: number,
    unit = "×",
    lowerIsBetter = false,
  ): Target => ({
    what,
    value: r === undefined ? "not measured" : `${unit === "×" ? r.toFixed(2) : fmtN(r)}${unit}`,
    met: r === undefined ? undefined : lowerIsBetter ? r <= need : r >= need,
  });
  const w1a = g("W1a.ours.rps");
  const targets: Target[] = [
    tgt("W1(a) ≥ 0.6 × client ceiling", ratio(w1a, g("W1.ceiling.rps")), 0.6),
    tgt("W1(a) ≥ 5 × JetStream", ratio(w1a, g("W1a.nats.rps")), 5),
    tgt("W1(a) ≥ 2.5 × Redis everysec", ratio(w1a, g("W1a.redis.rps")), 2.5),
    tgt("W1(b) ≥ 2 × Redis always", ratio(g("W1b.ours.rps"), g("W1b.redis.rps")), 2),
    tgt(
      "broker CPU ≤ 1 s per million 100 B records (W1(a))",
      g("W1a.ours.cpuPerM")?.med,
      1,
      " s",
      true,
    ),
    tgt("W4 ≥ 3 × JetStream read", ratio(w4, g("W4.nats.rps")), 3),
    tgt("W5 p99 ≤ JetStream p99", ratio(g("W5.ours.p99_us"), g("W5.nats.p99_us")), 1, "×", true),
    tgt("idle RssAnon ≤ 80 MB", g("W6.ours.idleRssAnon")?.med, 80, " MB", true),
    tgt(
      "ready ≤ 1 s after a clean shutdown, 1000 partitions",
      g("W6.ours.ready.clean")?.med,
      1000,
      " ms",
      true,
    ),
  ];
  return { throughput, cpu, latency, memory, limits, targets };
}

export function textTable(t: Table): string {
  const w = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ");
  return [line(t.head), w.map((n) => "-".repeat(n)).join("  "), ...t.rows.map(line)].join("\n");
}

export function mdTable(t: Table): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  return [
    `| ${t.head.map(esc).join(" | ")} |`,
    `| ${t.head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...t.rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ].join("\n");
}

export function targetsText(ts: Target[]): string {
  return ts.map((t) => `${t.met === undefined ? "?" : t.met ? "✔" : "✘"} ${t.what}: ${t.value}`)
    .join("\n");
}

export const BEGIN =
  "<!-- bench-suite:begin (generated by `npm run bench`; edits in here are overwritten) -->";
export const END = "<!-- bench-suite:end -->";
const HEADING = "## Suite: ours vs NATS JetStream and Redis Streams";

export interface DocInput {
  report: Report;
  machine: Machine;
  plan: Plan;
  started: Date;
  minutes: number;
  loadStart: string;
  loadEnd: string;
  errors: string[];
  chartFile: string;
}

export function docBlock(d: DocInput): string {
  const { report: r, machine: m, plan: p } = d;
  const v = Object.entries(m.versions).map(([k, x]) => `${k} ${x}`).join(", ");
  const out: string[] = [
    BEGIN,
    "",
    `Run ${d.started.toISOString().slice(0, 16).replace("T", " ")} UTC, ${
      p.quick ? "**--quick** (fewer records, 1 repetition)" : "full"
    }, ` +
    `${d.minutes.toFixed(1)} min; load average ${d.loadStart} at start, ${d.loadEnd} at end.`,
    "",
    `Machine: ${m.cores} × ${m.cpu}, ${m.memGiB} GiB RAM, ${m.os}, Linux ${m.kernel}; data on ${m.disk}.`,
    `Versions: ${v}.`,
    "",
    `Records: ${p.n100.toLocaleString("en")} × 100 B (W1, W2), ${
      p.n1k.toLocaleString("en")
    } × 1 KiB (W3); ` +
    `${p.reps} repetition(s); each cell is the median (min–max). W5: ${
      p.latRate.toLocaleString("en")
    } records/s for ` +
    `${p.latSeconds} s per repetition. W6: 100 topics × 10 partitions × ${p.w6Records} records of 100 B; ` +
    `${p.restartReps} restart(s) of each kind.`,
    "",
    `![throughput, latency and CPU of the three systems](${d.chartFile})`,
    "",
    "### Targets",
    "",
    ...r.targets.map((t) =>
      `- ${t.met === undefined ? "?" : t.met ? "✔" : "✘"} ${t.what}: ${t.value}`
    ),
    "",
    "### Throughput",
    "",
    mdTable(r.throughput),
    "",
    "ours/limit: payload MB/s over loopback TCP bandwidth (page-cache and read rows) or over `dd` " +
    "sequential write with fdatasync (after-fsync rows).",
    "",
    "### Broker CPU",
    "",
    mdTable(r.cpu),
    "",
    "### Latency (W5)",
    "",
    mdTable(r.latency),
    "",
    "### Memory and restart (W6)",
    "",
    mdTable(r.memory),
    "",
    "### Limits (same run)",
    "",
    mdTable(r.limits),
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
  out.push(END);
  return out.join("\n");
}

/** The block as `deno fmt` (the repo's lint) wants it; unchanged if deno is not there. */
export function formatMarkdown(repo: string, md: string): string {
  const deno = join(repo, "node_modules", ".bin", "deno");
  if (!existsSync(deno)) return md;
  const r = Bun.spawnSync(
    [deno, "fmt", "--config", join(repo, "deno.json"), "--ext", "md", "-"],
    { stdin: new TextEncoder().encode(md), stdout: "pipe", stderr: "pipe" },
  );
  return r.exitCode === 0 ? r.stdout.toString().trimEnd() : md;
}

/**
 * Replaces the block from the line starting with `begin` to `end` in `path`, or appends it under
 * `heading` the first time (the generated blocks of docs/benchmarks.md).
 */
export function replaceDocBlock(
  path: string,
  begin: string,
  end: string,
  block: string,
  heading: string,
): void {
  const text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  writeFileSync(
    path,
    a >= 0 && b > a
      ? text.slice(0, a) + block + text.slice(b + end.length)
      : `${text.trimEnd()}\n\n${heading}\n\n${block}\n`,
  );
}

/** Replaces the generated block in docs/benchmarks.md (appending the section the first time). */
export function writeDoc(repo: string, path: string, rawBlock: string): void {
  const block = formatMarkdown(repo, rawBlock);
  const text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const a = text.indexOf("<!-- bench-suite:begin");
  const b = text.indexOf(END);
  let next: string;
  if (a >= 0 && b > a) {
    next = text.slice(0, a) + block + text.slice(b + END.length);
  } else {
    next = `${text.trimEnd()}\n\n${HEADING}\n\n${block}\n`;
  }
  writeFileSync(path, next);
}
