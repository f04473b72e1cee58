// npm run chaos: real broker processes in network namespaces under faults drawn from a seed, with
// a checker of everything the clients saw (docs/chaos.md). Exit 0: no violation; 1: violations
// (the summary lists them, the run's folder holds the history and every broker's log); 2: bad
// usage; 3: this machine cannot run it (not root, no ip netns or nft).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { check } from "./chaos/checker.ts";
import type { History } from "./chaos/history.ts";
import { netAvailable } from "./chaos/net.ts";
import { summary } from "./chaos/report.ts";
import { runChaos } from "./chaos/run.ts";
import { FAULT_KINDS, type FaultKind } from "./chaos/schedule.ts";

const HELP = `usage: npm run chaos -- [options]

Runs a cluster of real broker processes, each in its own network namespace, under faults drawn
from a seed, with acks=all producers (kafkajs and librdkafka, idempotent and plain) and a consumer
group committing offsets; then heals everything, reads every replica back and checks the history.

options:
  --duration T     how long faults are injected: seconds, or 90s, 20m, 1h (default 120); setup
                   and the final check add one to three minutes
  --seed N         the schedule's seed (default: drawn and printed)
  --faults LIST    fault kinds, comma-separated, from: ${FAULT_KINDS.join(", ")} (default: all)
  --brokers N      3 or 5 (default 3)
  --steps N        at most N faults
  --out DIR        the run's folder (default: $TMPDIR/broker-chaos/<time>-seed-<N>)
  --keep-data      keep the brokers' data directories after a clean run
  --check DIR      check a run's saved history (DIR/history.json) again and print its summary
  --quick          CI's small run: --faults partition,kill --steps 2 --duration 60, short holds,
                   one librdkafka producer and one group member
  -h, --help       this text

exit status: 0 no violation, 1 violations, 2 bad usage, 3 cannot run here (needs root, ip netns,
nft). BROKER_BIN=path runs a compiled broker instead of bun src/main.ts.`;

function fail(msg: string): never {
  console.error(`chaos: ${msg}\n\n${HELP}`);
  process.exit(2);
}

function intArg(v: string | undefined, name: string, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min) fail(`--${name}: expected an integer >= ${min}`);
  return Number(v);
}

/** --duration: seconds, or with a unit: 90s, 20m, 1h. */
function durationArg(v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const m = /^(\d+)(s|m|h)?$/.exec(v);
  const n = m ? Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[m[2] ?? "s"] ?? 1) : 0;
  if (!(n >= 1 && n <= 7 * 86_400)) {
    fail("--duration: seconds (>= 1), or with a unit: 90s, 20m, 1h");
  }
  return n;
}

let args;
try {
  args = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      duration: { type: "string" },
      seed: { type: "string" },
      faults: { type: "string" },
      brokers: { type: "string" },
      steps: { type: "string" },
      out: { type: "string" },
      "keep-data": { type: "boolean" },
      quick: { type: "boolean" },
      check: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (e) {
  fail((e as Error).message);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
if (args.check !== undefined) {
  let h: History;
  try {
    h = JSON.parse(readFileSync(join(args.check, "history.json"), "utf8"));
  } catch (e) {
    fail(`--check: cannot read ${join(args.check, "history.json")}: ${(e as Error).message}`);
  }
  const v = check(h);
  const r = h.run ?? { seed: -1, durationS: 0, faults: [], brokers: 0 };
  console.log(summary({ ...r, out: args.check }, h, v, v.sent.librdkafka !== undefined));
  process.exit(v.ok ? 0 : 1);
}
const quick = args.quick === true;
const durationS = durationArg(args.duration, quick ? 60 : 120);
const seed = intArg(args.seed, "seed", Math.floor(Math.random() * 1_000_000), 0);
const brokers = intArg(args.brokers, "brokers", 3, 3);
if (brokers !== 3 && brokers !== 5) fail("--brokers: 3 or 5");
const steps = args.steps !== undefined ? intArg(args.steps, "steps", 0, 1) : quick ? 2 : undefined;
const faults = (args.faults ?? (quick ? "partition,kill" : FAULT_KINDS.join(","))).split(",")
  .map((f) => f.trim()).filter((f) => f !== "");
for (const f of faults) {
  if (!(FAULT_KINDS as readonly string[]).includes(f)) {
    fail(`--faults: unknown fault ${JSON.stringify(f)} (known: ${FAULT_KINDS.join(", ")})`);
  }
}
if (faults.length === 0) fail("--faults: at least one");
const why = netAvailable();
if (why !== undefined) {
  console.error(`chaos: cannot run here: ${why} (it needs root, ip netns and nft)`);
  process.exit(3);
}
const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
const out = args.out ?? join(tmpdir(), "broker-chaos", `${stamp}-seed-${seed}`);
// A run's brokers start from empty data directories: an old run's folder is never reused.
if (existsSync(out) && readdirSync(out).length > 0) fail(`--out: ${out} is not empty`);
console.log(
  `chaos: seed ${seed}, ${brokers} brokers, ${durationS} s, faults ${
    faults.join(",")
  }; run folder ${out}`,
);
const r = await runChaos({
  durationS,
  seed,
  faults: faults as FaultKind[],
  brokers,
  out,
  steps,
  keepData: args["keep-data"] === true,
  quick,
});
console.log("\n" + r.text);
process.exit(r.verdict.ok ? 0 : 1);
