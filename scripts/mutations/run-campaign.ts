// Child process of scripts/mutate.ts, run inside a scratch copy of the repository that holds one
// planted bug: runs one simulation campaign from seed --from on, stops at the first seed that
// fails (an invariant, or an exception thrown by the code under test), at --seeds seeds, or
// once --budget-ms is spent, and prints one machine-readable line:
//
//   MUTATE-RESULT {"caught":true,"seed":7,"failure":"...","seedsRun":7,"ms":812,"budgetHit":false}
//
// Before each seed it prints "MUTATE-SEED n", so a seed that never ends (a planted bug can make
// a loop spin) is named by the parent when it kills this process.
//
//   bun scripts/mutations/run-campaign.ts --campaign raft --seeds 200 [--from 1] [--budget-ms N]
import type { SeedOutcome } from "../../src/cluster/sim/campaigns.ts";

interface AnyCampaign {
  runSeed(
    seed: number,
    o: { verbose: boolean; log: (l: string) => void },
  ): SeedOutcome | Promise<SeedOutcome>;
}

async function load(name: string): Promise<AnyCampaign> {
  if (name === "storage-crash") {
    return (await import("../../test/sim/storage/campaign.ts")).campaign;
  }
  if (name === "swim-loss") return (await import("../../test/sim/swim/loss-campaign.ts")).campaign;
  if (name === "raft-figure8") return (await import("../../test/sim/raft/figure8.ts")).campaign;
  const { CAMPAIGNS } = await import("../../src/cluster/sim/campaigns.ts");
  const loader = CAMPAIGNS[name];
  if (loader === undefined) throw new Error(`unknown campaign ${name}`);
  return await loader();
}

/** An exception's message and the first frame in the repository's own code. */
function describe(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const frame = (err.stack ?? "").split("\n").map((l) => l.trim())
    .find((l) => /\/(src|test)\//.test(l));
  const where = frame?.match(/((?:src|test)\/[^\s):]+:\d+)/)?.[1];
  return `exception: ${err.name}: ${err.message.split("\n")[0]}${where ? ` (at ${where})` : ""}`;
}

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) {
    console.error(`missing ${name}`);
    process.exit(2);
  }
  return v;
}

const campaignName = arg("--campaign");
const seeds = Number(arg("--seeds"));
const from = Number(arg("--from", "1"));
const budgetMs = Number(arg("--budget-ms", "600000"));

let campaign: AnyCampaign;
try {
  campaign = await load(campaignName);
} catch (e) {
  // The mutated code does not even load (a syntax error in the edit): not a catch, a bad entry.
  console.log(`MUTATE-ERROR ${JSON.stringify(describe(e))}`);
  process.exit(3);
}

const t0 = performance.now();
const quiet = { verbose: false, log: () => {} };
let result = {
  caught: false,
  seed: null as number | null,
  failure: null as string | null,
  seedsRun: 0,
  ms: 0,
  budgetHit: false,
};
for (let seed = from; seed < from + seeds; seed++) {
  if (performance.now() - t0 > budgetMs) {
    result.budgetHit = true;
    break;
  }
  console.log(`MUTATE-SEED ${seed}`);
  let failure: string | undefined;
  try {
    failure = (await campaign.runSeed(seed, quiet)).failure;
  } catch (e) {
    failure = describe(e);
  }
  result.seedsRun++;
  if (failure !== undefined) {
    result = { ...result, caught: true, seed, failure };
    break;
  }
}
result.ms = Math.round(performance.now() - t0);
console.log(`MUTATE-RESULT ${JSON.stringify(result)}`);
process.exit(0);
