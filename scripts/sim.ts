// Deterministic simulation campaigns: `bun scripts/sim.ts [--core raft|swim|replication|all]
// --seeds N --from S [--verbose]` (the core may also come first, bare: `npm run sim --
// replication --seeds 100`). Runs seeds S..S+N-1 of each registered campaign, prints summed event
// counts, prints a replay command for every failing seed, and exits non-zero when an
// invariant failed or a required count stayed zero.
import { type Campaign, CAMPAIGNS } from "../src/cluster/sim/campaigns.ts";

function usage(msg: string): never {
  console.error(
    `${msg}\nusage: bun scripts/sim.ts [NAME|--core NAME|all] [--seeds N] [--from S] [--verbose]`,
  );
  console.error(`cores: ${Object.keys(CAMPAIGNS).join(", ")}`);
  process.exit(2);
}

function intArg(v: string | undefined, name: string): number {
  const n = Number(v);
  if (v === undefined || !Number.isSafeInteger(n) || n < 0) {
    usage(`${name} needs a non-negative integer`);
  }
  return n;
}

const args = process.argv.slice(2);
let core = "all";
let seeds = 100;
let from = 1;
let verbose = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--core") core = args[++i] ?? usage("--core needs a value");
  else if (a === "--seeds") seeds = intArg(args[++i], a);
  else if (a === "--from") from = intArg(args[++i], a);
  else if (a === "--verbose") verbose = true;
  else if (i === 0 && !a.startsWith("-")) core = a;
  else usage(`unknown argument ${a}`);
}
const names = core === "all" ? Object.keys(CAMPAIGNS) : [core];
for (const n of names) if (!(n in CAMPAIGNS)) usage(`unknown core ${n}`);

let failed = false;
for (const name of names) {
  const c: Campaign = await CAMPAIGNS[name]();
  const counts: Record<string, number> = {};
  const maxes: Record<string, number> = {};
  let failures = 0;
  let simMs = 0;
  const t0 = performance.now();
  for (let seed = from; seed < from + seeds; seed++) {
    const out = c.runSeed(seed, { verbose, log: (l) => console.log(`[${name} ${seed}] ${l}`) });
    simMs += out.simulatedMs;
    for (const [k, v] of Object.entries(out.counts)) counts[k] = (counts[k] ?? 0) + v;
    for (const [k, v] of Object.entries(out.measures ?? {})) {
      maxes[k] = Math.max(maxes[k] ?? -Infinity, v);
    }
    if (out.failure !== undefined) {
      failures++;
      console.log(`FAIL ${name} seed ${seed}: ${out.failure}`);
      console.log(`  replay: npm run sim -- --core ${name} --seeds 1 --from ${seed} --verbose`);
    }
  }
  const wall = (performance.now() - t0) / 1000;
  console.log(
    `${name}: ${seeds} seeds (${from}..${from + seeds - 1}), ${failures} failed, ` +
      `${(simMs / 1000).toFixed(0)} simulated s in ${wall.toFixed(2)} s (${
        (seeds / wall).toFixed(1)
      } seeds/s)`,
  );
  console.log(`  counts: ${Object.entries(counts).map(([k, v]) => `${k}=${v}`).join(" ")}`);
  if (Object.keys(maxes).length > 0) {
    console.log(`  max: ${Object.entries(maxes).map(([k, v]) => `${k}=${v}`).join(" ")}`);
  }
  const zero = c.requiredCounts.filter((k) => !counts[k]);
  if (zero.length > 0) console.log(`  FAIL: zero counts: ${zero.join(", ")}`);
  if (failures > 0 || zero.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
