// broker cluster rebalance | decommission: cluster expansion and shrinking as one command each,
// over the documented HTTP calls (/reassignments/generate, POST /reassignments, GET
// /reassignments, /cluster/elect-leaders, DELETE /cluster/members/{id}). The plan is printed
// first (and only, with --dry-run), the moves run as a reassignment with progress, and
// leadership is evened out (rebalance) or handed on (decommission) at the end.
import { CliError, UsageError } from "./client.ts";
import { nodeIdArg } from "./cluster.ts";
import { type Command, intFlag, type RunContext } from "./command.ts";
import { json, out, table } from "./format.ts";
import { type PlanEntry, submitPlan, watchUntilDone } from "./reassign.ts";

interface Assigned {
  topic: string;
  partition: number;
  replicas: number[];
}

interface ClusterView {
  brokers: { node_id: number; fenced: boolean; state: string }[];
  quorum: { voters: number[]; learners: number[]; leader: number };
}

interface PartitionNow {
  partition: number;
  leader: number;
  size_bytes: number | null;
}

/** A partition whose replica list changes, with the bytes its new replicas copy. */
export interface Move {
  topic: string;
  partition: number;
  from: number[];
  to: number[];
  /** Leader's log size × replicas added (0 for a reorder). */
  copyBytes: number;
}

export interface BrokerLoad {
  broker: number;
  replicas: number;
  replicasAfter: number;
  leaders: number;
  /** Preferred leaders (first replicas) of the proposal: who leads after the election. */
  leadersAfter: number;
}

export interface PlanSummary {
  moves: Move[];
  brokers: BrokerLoad[];
  copyBytes: number;
}

const key = (t: string, p: number) => `${t}\u0000${p}`;

/**
 * What a proposal changes: the partitions that move (order changes included: they change the
 * preferred leader) and, per broker, replicas and leaders now and after. Pure.
 */
export function summarize(
  current: readonly Assigned[],
  proposed: readonly Assigned[],
  now: ReadonlyMap<string, { leader: number; sizeBytes: number | null }>,
  brokers: readonly number[],
): PlanSummary {
  const load = new Map<number, BrokerLoad>();
  const at = (id: number) => {
    let b = load.get(id);
    if (b === undefined) {
      load.set(id, b = { broker: id, replicas: 0, replicasAfter: 0, leaders: 0, leadersAfter: 0 });
    }
    return b;
  };
  for (const id of brokers) at(id);
  const next = new Map(proposed.map((p) => [key(p.topic, p.partition), p.replicas]));
  const moves: Move[] = [];
  for (const c of current) {
    const to = next.get(key(c.topic, c.partition)) ?? c.replicas;
    const n = now.get(key(c.topic, c.partition));
    for (const id of c.replicas) at(id).replicas++;
    for (const id of to) at(id).replicasAfter++;
    if (n !== undefined && n.leader >= 0) at(n.leader).leaders++;
    if (to.length > 0) at(to[0]).leadersAfter++;
    if (to.length === c.replicas.length && to.every((id, i) => id === c.replicas[i])) continue;
    const added = to.filter((id) => !c.replicas.includes(id)).length;
    moves.push({
      topic: c.topic,
      partition: c.partition,
      from: [...c.replicas],
      to: [...to],
      copyBytes: added * (n?.sizeBytes ?? 0),
    });
  }
  return {
    moves,
    brokers: [...load.values()].sort((a, b) => a.broker - b.broker),
    copyBytes: moves.reduce((s, m) => s + m.copyBytes, 0),
  };
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** The plan as an operator reads it: what moves, then replicas and leaders per broker. */
export function renderPlan(s: PlanSummary): string {
  const parts: string[] = [];
  if (s.moves.length === 0) parts.push("No partition needs to move.\n");
  else {
    parts.push(
      `${s.moves.length} partition(s) move, copying about ${bytes(s.copyBytes)}:\n`,
      table(
        ["PARTITION", "REPLICAS NOW", "REPLICAS AFTER", "COPY"],
        s.moves.map((m) => [
          `${m.topic}-${m.partition}`,
          `[${m.from}]`,
          `[${m.to}]`,
          m.copyBytes === 0 ? "-" : bytes(m.copyBytes),
        ]),
      ),
    );
  }
  parts.push(
    "\n",
    table(
      ["BROKER", "REPLICAS", "AFTER", "LEADERS", "AFTER"],
      s.brokers.map((b) => [b.broker, b.replicas, b.replicasAfter, b.leaders, b.leadersAfter]),
    ),
  );
  return parts.join("");
}

function planJson(s: PlanSummary) {
  return {
    moves: s.moves.map((m) => ({
      topic: m.topic,
      partition: m.partition,
      from: m.from,
      to: m.to,
      copy_bytes: m.copyBytes,
    })),
    copy_bytes: s.copyBytes,
    brokers: s.brokers.map((b) => ({
      broker: b.broker,
      replicas: b.replicas,
      replicas_after: b.replicasAfter,
      leaders: b.leaders,
      leaders_after: b.leadersAfter,
    })),
  };
}

/** Leaders and sizes of the partitions of `topics`, from GET /topics/{t}. */
async function partitionsNow(
  ctx: RunContext,
  topics: Iterable<string>,
): Promise<Map<string, { leader: number; sizeBytes: number | null }>> {
  const m = new Map<string, { leader: number; sizeBytes: number | null }>();
  for (const t of new Set(topics)) {
    const d = await ctx.client.call<{ partitions: PartitionNow[] }>(
      "GET",
      `/topics/${encodeURIComponent(t)}`,
    );
    for (const p of d.partitions) {
      m.set(key(t, p.partition), { leader: p.leader, sizeBytes: p.size_bytes });
    }
  }
  return m;
}

/**
 * A proposal over `brokers` for every topic (`__consumer_offsets` too), and its summary; with
 * `only`, the partitions it does not pick keep their replicas.
 */
async function propose(
  ctx: RunContext,
  brokers: number[],
  only?: (a: Assigned) => boolean,
): Promise<PlanSummary> {
  const g = await ctx.client.call<{
    current: { partitions: Assigned[] };
    proposed: { partitions: Assigned[] };
  }>("POST", "/reassignments/generate", { topics: [], brokers, include_internal: true });
  const cur = g.current.partitions;
  const proposed = only === undefined
    ? g.proposed.partitions
    : g.proposed.partitions.map((p, i) => (only(cur[i]) ? p : cur[i]));
  const now = await partitionsNow(ctx, cur.map((p) => p.topic));
  const all = new Set([...brokers, ...cur.flatMap((p) => p.replicas)]);
  return summarize(cur, proposed, now, [...all]);
}

function throttleOf(ctx: RunContext): number | undefined {
  const t = intFlag(ctx.values.throttle, "throttle");
  if (t !== undefined && t < 0) throw new UsageError("--throttle must be >= 0 (bytes/s)");
  return t;
}

/** Submits the moves and, unless `wait` is false, shows progress until they are done. */
async function runMoves(
  ctx: RunContext,
  moves: readonly Move[],
  throttle: number | undefined,
  wait: boolean,
): Promise<void> {
  if (moves.length === 0) return;
  const plan: PlanEntry[] = moves.map((m) => ({
    topic: m.topic,
    partition: m.partition,
    replicas: m.to,
  }));
  const r = await submitPlan(ctx.client, plan, throttle);
  const bad = r.results.filter((x) => x.error_code !== 0);
  if (bad.length > 0) {
    throw new CliError(
      `${bad.length} of ${plan.length} move(s) refused (the others run: broker reassign status): ` +
        bad.slice(0, 5).map((b) => `${b.topic}-${b.partition}: ${b.error}: ${b.message}`).join(
          "; ",
        ),
    );
  }
  if (!wait) return;
  if (!ctx.json) out(`Moving ${plan.length} partition(s)...\n`);
  await watchUntilDone(ctx, new Set(plan.map((p) => `${p.topic}-${p.partition}`)));
}

async function clusterView(ctx: RunContext): Promise<ClusterView> {
  return await ctx.client.call<ClusterView>("GET", "/cluster");
}

/** Live brokers: registered and unfenced. */
function liveBrokers(c: ClusterView): number[] {
  return c.brokers.filter((b) => !b.fenced).map((b) => b.node_id).sort((a, b) => a - b);
}

function brokerIds(v: unknown): number[] | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^\d+(,\d+)*$/.test(v)) {
    throw new UsageError("--broker-list must be broker ids separated by commas, e.g. 1,2,3,4");
  }
  return v.split(",").map(Number);
}

const rebalance: Command = {
  name: "cluster rebalance",
  usage: "cluster rebalance [--dry-run] [--broker-list IDS] [--throttle B] [--no-wait]",
  summary: "Spread replicas and leaderships evenly over the brokers (after a broker joined).",
  flags: [
    "--dry-run          print the plan (moves, replicas and leaders per broker) and change nothing",
    "--broker-list IDS  the brokers to spread over (default: every live broker)",
    "--throttle B       bytes/s for the copy to new replicas (cleared when each move ends)",
    "--no-wait          submit the moves and return (follow them with broker reassign status)",
  ],
  examples: [
    "broker cluster rebalance --dry-run",
    "broker cluster rebalance --throttle 50000000",
    "broker cluster rebalance --broker-list 101,102,103,104 --json",
  ],
  options: {
    "dry-run": { type: "boolean" },
    "broker-list": { type: "string" },
    throttle: { type: "string" },
    "no-wait": { type: "boolean" },
  },
  async run(ctx) {
    const throttle = throttleOf(ctx);
    const brokers = brokerIds(ctx.values["broker-list"]) ?? liveBrokers(await clusterView(ctx));
    const plan = await propose(ctx, brokers);
    const dry = ctx.values["dry-run"] === true;
    if (ctx.json && dry) {
      json({ dry_run: true, ...planJson(plan) });
      return 0;
    }
    if (!ctx.json) out(renderPlan(plan) + (dry ? "\nDry run: nothing changed.\n" : "\n"));
    if (dry) return 0;
    const wait = ctx.values["no-wait"] !== true;
    await runMoves(ctx, plan.moves, throttle, wait);
    if (!wait) {
      if (ctx.json) json({ dry_run: false, submitted: true, ...planJson(plan) });
      else out(`Submitted ${plan.moves.length} move(s): broker reassign status --watch\n`);
      return 0;
    }
    // The moves gave each partition its balanced first replica: make it the leader.
    const e = await ctx.client.call<{ elected: number }>("POST", "/cluster/elect-leaders", {});
    const after = await propose(ctx, brokers);
    if (ctx.json) {
      json({
        dry_run: false,
        ...planJson(plan),
        leaders_elected: e.elected,
        after: planJson(after),
      });
      return 0;
    }
    out(
      `Done: ${plan.moves.length} partition(s) moved, ${e.elected} leader(s) moved to their ` +
        "preferred replica.\n\n" +
        table(
          ["BROKER", "REPLICAS", "LEADERS"],
          after.brokers.map((b) => [b.broker, b.replicas, b.leaders]),
        ),
    );
    return 0;
  },
};

const decommission: Command = {
  name: "cluster decommission",
  usage: "cluster decommission NODE_ID [--dry-run] [--throttle B] [--force]",
  summary: "Move every replica and leadership off a broker, take it out of the metadata quorum, " +
    "and say when it can be stopped.",
  flags: [
    "--dry-run     print the moves and the quorum change and change nothing",
    "--throttle B  bytes/s for the copy to the replicas that replace it",
    "--force       decommission a broker that is down (fenced): its replicas are rebuilt from",
    "              the others; a dead voter leaves the quorum",
  ],
  examples: [
    "broker cluster decommission 101 --dry-run",
    "broker cluster decommission 101 --throttle 50000000",
    "broker cluster decommission 3 --force      # broker 3 is gone for good",
  ],
  options: {
    "dry-run": { type: "boolean" },
    throttle: { type: "string" },
    force: { type: "boolean" },
  },
  async run(ctx) {
    const id = nodeIdArg(ctx, "cluster decommission");
    const throttle = throttleOf(ctx);
    const force = ctx.values.force === true;
    const c = await clusterView(ctx);
    const reg = c.brokers.find((b) => b.node_id === id);
    const voter = c.quorum.voters.includes(id);
    if (reg === undefined && !voter && !c.quorum.learners.includes(id)) {
      throw new CliError(`broker ${id} is neither registered nor a member of the metadata quorum`);
    }
    if (reg?.fenced === true && !force) {
      throw new CliError(
        `broker ${id} is fenced (down, or not caught up): --force decommissions a broker that ` +
          "is gone (its replicas are rebuilt from the others)",
      );
    }
    const others = liveBrokers(c).filter((b) => b !== id);
    if (others.length === 0) throw new CliError(`broker ${id} is the only live broker`);
    // Only the partitions it holds move (rebalancing the rest is `cluster rebalance`).
    const holds = (a: Assigned) => a.replicas.includes(id);
    const plan = await propose(ctx, others, holds);
    const spare = c.quorum.learners.filter((l) => l !== id && others.includes(l));
    const quorumStep = voter
      ? `leaves the metadata voters [${c.quorum.voters}]${
        spare.length > 0 ? `; a caught-up learner (of [${spare}]) is promoted in its place` : "; " +
          "no learner can take its place: the quorum shrinks by one"
      }`
      : "leaves the metadata quorum (a learner)";
    if (ctx.values["dry-run"] === true) {
      if (ctx.json) json({ dry_run: true, broker: id, voter, ...planJson(plan) });
      else {
        out(
          renderPlan(plan) +
            `\nThen broker ${id} ${quorumStep}.\nDry run: nothing changed.\n`,
        );
      }
      return 0;
    }
    if (!ctx.json) out(renderPlan(plan) + "\n");
    await runMoves(ctx, plan.moves, throttle, true);
    const left = (await propose(ctx, others, holds)).moves;
    if (left.length > 0) {
      throw new CliError(
        `broker ${id} still holds ${left.length} replica(s) (${
          left.slice(0, 5).map((m) => `${m.topic}-${m.partition}`).join(", ")
        }): run the command again`,
      );
    }
    if (!ctx.json) out(`Broker ${id} holds no replica and leads no partition.\n`);
    // Alive by design (it is being drained), so forced; a leader hands leadership on first.
    let r: { removed: boolean; voters: number[]; learners: number[] } | undefined;
    for (let attempt = 0; r === undefined; attempt++) {
      try {
        r = await ctx.client.call("DELETE", `/cluster/members/${id}?force=true`);
      } catch (e) {
        // A hand-off of the metadata leadership can outlast one request: ask again.
        if (attempt >= 5 || !/\b503\b/.test(String(e))) throw e;
        await Bun.sleep(1000);
      }
    }
    let voters = r.voters;
    let learners = r.learners;
    if (voter && spare.length > 0) {
      // The metadata leader promotes a caught-up learner while voters are fewer than wanted.
      const until = Date.now() + 30_000;
      while (voters.length < c.quorum.voters.length && Date.now() < until) {
        await Bun.sleep(500);
        const q = (await clusterView(ctx)).quorum;
        voters = q.voters;
        learners = q.learners;
      }
    }
    if (ctx.json) {
      json({
        broker: id,
        moved: plan.moves.length,
        removed: r.removed,
        voters,
        learners,
        stoppable: true,
      });
      return 0;
    }
    out(
      `${
        r.removed
          ? `Removed broker ${id} from the metadata quorum`
          : `Broker ${id} was not in the metadata quorum`
      }: voters [${voters}], learners [${learners}].\n` +
        `Broker ${id} can be stopped now.\n`,
    );
    return 0;
  },
};

export const rebalanceCommands: Command[] = [rebalance, decommission];
