// npm run bench -- --section cli: the broker binary's own client (`broker produce`, `broker
// consume`, over HTTP) against kcat (librdkafka, over the Kafka protocol) on one broker, in the
// same run: 500 000 records of 80 bytes (40 MB) produced from a file and consumed to /dev/null,
// repetitions interleaved. The target (issue 18): at least half of kcat's throughput each way.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, stopServer } from "./proc.ts";
import { loadAverage, writeRecordFile } from "./setup.ts";
import { createTopic, startOurs, topicRecords } from "./systems.ts";
import { formatMarkdown, mdTable, type Table } from "./report.ts";

export interface CliPlan {
  records: number;
  size: number;
  reps: number;
}

export const cliPlan = (quick: boolean): CliPlan =>
  quick ? { records: 100_000, size: 80, reps: 1 } : { records: 500_000, size: 80, reps: 3 };

type Tool = "broker" | "kcat";
type Dir = "produce" | "consume";

export interface CliResult {
  plan: CliPlan;
  /** Seconds per run, by tool and direction. */
  secs: Record<`${Tool} ${Dir}`, number[]>;
  errors: string[];
  loadStart: string;
  loadEnd: string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)];
};

/** Runs `script` in bash (for its redirections), bounded; returns seconds and stdout. */
async function timed(script: string, args: string[]): Promise<{ s: number; out: string }> {
  const r = await run(["bash", "-c", script, "bash", ...args], { timeoutMs: 300_000 });
  if (r.code !== 0) {
    throw new Error(`${args.join(" ")} failed (${r.code}): ${r.stderr.slice(-500)}`);
  }
  return { s: r.wallMs / 1000, out: r.stdout };
}

export async function cliBench(
  bin: string,
  dir: string,
  plan: CliPlan,
  log: (s: string) => void,
  stop: () => boolean,
): Promise<CliResult> {
  const res: CliResult = {
    plan,
    secs: { "broker produce": [], "kcat produce": [], "broker consume": [], "kcat consume": [] },
    errors: [],
    loadStart: loadAverage(),
    loadEnd: "",
  };
  const file = join(dir, "records-cli.txt");
  writeRecordFile(file, plan.records, plan.size);
  const ours = await startOurs(bin, join(dir, "data-cli"));
  const server = ours.http;
  try {
    // Rep 0 is not measured: the broker is fresh, and the paths each tool exercises (Kafka fetch
    // and produce, HTTP …/batches and bulk produce) are compiled by the JIT only after some
    // thousands of calls; whichever ran first paid for it.
    for (let rep = 0; rep <= plan.reps && !stop(); rep++) {
      for (const tool of ["kcat", "broker"] as Tool[]) {
        const topic = `cli-${tool}-${rep}`;
        await createTopic(ours, topic, 1);
        try {
          const p = tool === "kcat"
            ? await timed('kcat -b "$1" -P -t "$2" -l "$3"', [ours.kafka, topic, file])
            : await timed('"$1" produce "$2" --server "$3" < "$4"', [bin, topic, server, file]);
          const stored = await topicRecords(ours, topic);
          if (stored !== plan.records) throw new Error(`${tool} produced ${stored} records`);
          if (rep > 0) res.secs[`${tool} produce`].push(p.s);
          const c = tool === "kcat"
            ? await timed('kcat -b "$1" -C -t "$2" -o beginning -e -q | wc -l', [
              ours.kafka,
              topic,
            ])
            : await timed('"$1" consume "$2" --server "$3" | wc -l', [bin, topic, server]);
          if (Number(c.out.trim()) !== plan.records) {
            throw new Error(`${tool} consumed ${c.out.trim()} records`);
          }
          if (rep > 0) res.secs[`${tool} consume`].push(c.s);
          log(
            `  ${rep > 0 ? `rep ${rep}` : "warm-up"} ${tool}: produce ${p.s.toFixed(2)} s, ` +
              `consume ${c.s.toFixed(2)} s`,
          );
        } catch (e) {
          res.errors.push(`rep ${rep} ${tool}: ${(e as Error).message}`);
          log(`  rep ${rep} ${tool}: ${(e as Error).message}`);
        }
      }
    }
  } finally {
    await stopServer(ours.server, "SIGTERM");
  }
  res.loadEnd = loadAverage();
  return res;
}

export function cliTable(r: CliResult): Table {
  const mb = r.plan.records * (r.plan.size + 1) / 1e6;
  const rows: string[][] = [];
  for (const d of ["produce", "consume"] as Dir[]) {
    const ours = median(r.secs[`broker ${d}`]);
    const kcat = median(r.secs[`kcat ${d}`]);
    const ratio = kcat / ours;
    rows.push([
      d,
      `${kcat.toFixed(2)} s (${Math.round(r.plan.records / kcat / 1000)}k rec/s)`,
      `${ours.toFixed(2)} s (${Math.round(r.plan.records / ours / 1000)}k rec/s, ${
        (mb / ours).toFixed(0)
      } MB/s)`,
      Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "-",
      Number.isFinite(ratio) ? (ratio >= 0.5 ? "met" : "missed") : "-",
    ]);
  }
  return {
    head: ["direction", "kcat", "broker CLI", "CLI / kcat throughput", "target ≥ 0.5x"],
    rows,
  };
}

export const C_BEGIN =
  "<!-- bench-cli:begin (generated by `npm run bench -- --section cli`; edits in here are overwritten) -->";
export const C_END = "<!-- bench-cli:end -->";

export function cliDocBlock(r: CliResult, started: Date, quick: boolean, versions: string): string {
  const t = cliTable(r);
  return [
    C_BEGIN,
    "",
    `${r.plan.records.toLocaleString("en-US")} records of ${r.plan.size} bytes ` +
    `(${(r.plan.records * (r.plan.size + 1) / 1e6).toFixed(1)} MB) on one broker, median of ` +
    `${r.plan.reps} interleaved run(s) after one unmeasured run of each; ${
      started.toISOString().slice(0, 16)
    } UTC${
      quick ? ", --quick" : ""
    }, load average ${r.loadStart} → ${r.loadEnd}; ${versions}. Produce: from a file ` +
    "(`kcat -P -l`, `broker produce < file`); consume: from the beginning to the end, into " +
    "`wc -l`. Each time includes the client's start.",
    "",
    mdTable(t),
    ...(r.errors.length ? ["", `Errors: ${r.errors.join("; ")}`] : []),
    "",
    C_END,
  ].join("\n");
}

/** Replaces the generated block in docs/benchmarks.md (appends it the first time). */
export function writeCliDoc(repo: string, path: string, rawBlock: string): void {
  const block = formatMarkdown(repo, rawBlock);
  const text = readFileSync(path, "utf8");
  const a = text.indexOf("<!-- bench-cli:begin");
  const b = text.indexOf(C_END);
  const next = a >= 0 && b > a
    ? text.slice(0, a) + block + text.slice(b + C_END.length)
    : `${text.trimEnd()}\n\n## The CLI against kcat\n\n${block}\n`;
  writeFileSync(path, next);
}
