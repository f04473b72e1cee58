// broker reassign generate|execute|verify|cancel|status|throttle: Kafka's
// kafka-reassign-partitions workflow and file formats over the HTTP API (/reassignments), and the
// decommission helper `broker cluster remove-node --move-replicas` uses.
import { readFileSync } from "node:fs";
import type { ApiClient, PartitionOutcome } from "./client.ts";
import { CliError, UsageError } from "./client.ts";
import { type Command, intFlag, type RunContext } from "./command.ts";
import { json, out, table } from "./format.ts";

export interface PlanEntry {
  topic: string;
  partition: number;
  replicas: number[] | null;
}

interface Results {
  accepted: number;
  results: PartitionOutcome[];
}

interface Progress {
  broker: number;
  copied_bytes: number;
  total_bytes: number;
  in_isr: boolean;
  rate_bytes_per_sec: number | null;
  eta_sec: number | null;
}

interface Moving {
  topic: string;
  partition: number;
  state: "queued" | "copying";
  replicas: number[];
  target: number[];
  original: number[];
  adding: number[];
  removing: number[];
  throttle: number;
  progress: Progress[];
}

interface View {
  partitions: Moving[];
  copied_bytes: number;
  total_bytes: number;
  rate_bytes_per_sec: number | null;
  eta_sec: number | null;
}

interface Assignment {
  version: 1;
  partitions: { topic: string; partition: number; replicas: number[] }[];
}

function readJson(path: unknown, flag: string): unknown {
  if (typeof path !== "string" || path === "") throw new UsageError(`--${flag} FILE is required`);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not JSON`);
  }
}

/** Kafka's reassignment JSON: {"version":1,"partitions":[{"topic","partition","replicas"}]}. */
export function parsePlanFile(v: unknown, path: string): PlanEntry[] {
  const ps = (v as { partitions?: unknown } | null)?.partitions;
  if (!Array.isArray(ps)) throw new CliError(`${path}: no "partitions" list`);
  return ps.map((x, i) => {
    const o = x as Record<string, unknown> | null;
    if (
      o === null || typeof o !== "object" || typeof o.topic !== "string" ||
      !Number.isInteger(o.partition) ||
      !(o.replicas === null || (Array.isArray(o.replicas) && o.replicas.every(Number.isInteger)))
    ) throw new CliError(`${path}: partitions[${i}] needs topic, partition and replicas`);
    return { topic: o.topic, partition: o.partition as number, replicas: o.replicas as number[] };
  });
}

/** Kafka's topics-to-move JSON: {"version":1,"topics":[{"topic":"t"}]}. */
function parseTopicsFile(v: unknown, path: string): string[] {
  const ts = (v as { topics?: unknown } | null)?.topics;
  if (!Array.isArray(ts)) throw new CliError(`${path}: no "topics" list`);
  return ts.map((x, i) => {
    const t = (x as { topic?: unknown } | null)?.topic;
    if (typeof t !== "string") throw new CliError(`${path}: topics[${i}] has no topic`);
    return t;
  });
}

function brokerList(v: unknown): number[] {
  if (typeof v !== "string" || !/^\d+(,\d+)*$/.test(v)) {
    throw new UsageError("--broker-list must be broker ids separated by commas, e.g. 1,2,3,4");
  }
  return v.split(",").map(Number);
}

function throttleFlag(v: unknown): number | undefined {
  const n = intFlag(v, "throttle");
  if (n !== undefined && n < 0) throw new UsageError("--throttle must be >= 0 (bytes/s)");
  return n;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function eta(s: number | null): string {
  if (s === null) return "?";
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

function bar(done: number, total: number, width = 24): string {
  const f = total <= 0 ? 1 : Math.min(1, done / total);
  const n = Math.round(f * width);
  return `[${"#".repeat(n)}${".".repeat(width - n)}] ${(f * 100).toFixed(0).padStart(3)}%`;
}

function failures(r: Results): string[] {
  return r.results.filter((x) => x.error_code !== 0).map((x) =>
    `${x.topic}-${x.partition}: ${x.error ?? x.error_code}: ${x.message ?? ""}`
  );
}

/** The progress view as text: a table, with bars when `bars`. */
export function renderStatus(v: View, bars: boolean): string {
  if (v.partitions.length === 0) return "No partition reassignment is in progress.\n";
  const rows: unknown[][] = [];
  for (const m of v.partitions) {
    const name = `${m.topic}-${m.partition}`;
    const moveTxt = `[${m.original}] -> [${m.target}]`;
    if (m.state === "queued" || m.progress.length === 0) {
      rows.push([name, moveTxt, m.state, "-", "-", "-", "-"]);
      continue;
    }
    for (const p of m.progress) {
      rows.push([
        name,
        moveTxt,
        p.in_isr ? `${p.broker} in sync` : `${p.broker} copying`,
        bars ? bar(p.copied_bytes, p.total_bytes) : `${bytes(p.copied_bytes)}`,
        bytes(p.total_bytes),
        p.rate_bytes_per_sec === null ? "-" : `${bytes(p.rate_bytes_per_sec)}/s`,
        p.in_isr ? "0s" : eta(p.eta_sec),
      ]);
    }
  }
  const head = ["PARTITION", "MOVE", "REPLICA", bars ? "PROGRESS" : "COPIED", "OF", "RATE", "ETA"];
  const total = `${v.partitions.length} partition(s) moving: ${bytes(v.copied_bytes)} of ${
    bytes(v.total_bytes)
  }${v.rate_bytes_per_sec === null ? "" : `, ${bytes(v.rate_bytes_per_sec)}/s`}, ETA ${
    v.total_bytes === v.copied_bytes ? "0s" : eta(v.eta_sec)
  }\n`;
  return table(head, rows) + total;
}

/** Submits a plan; returns the controller's answer. */
export async function submitPlan(
  client: ApiClient,
  partitions: PlanEntry[],
  throttle?: number,
  keepReplicationFactor = false,
): Promise<Results> {
  return await client.call<Results>("POST", "/reassignments", {
    version: 1,
    partitions,
    ...(throttle !== undefined ? { throttle } : {}),
    ...(keepReplicationFactor ? { allow_replication_factor_change: false } : {}),
  });
}

/** Polls the progress view until nothing listed is moving, redrawing it on a terminal. */
export async function watchUntilDone(
  ctx: RunContext,
  only?: ReadonlySet<string>,
  timeoutMs = 24 * 3600_000,
): Promise<void> {
  const tty = process.stdout.isTTY === true;
  const deadline = Date.now() + timeoutMs;
  let lines = 0;
  for (;;) {
    const v = await ctx.client.call<View>("GET", "/reassignments");
    if (only !== undefined) {
      v.partitions = v.partitions.filter((m) => only.has(`${m.topic}-${m.partition}`));
    }
    const text = renderStatus(v, tty);
    if (tty) {
      if (lines > 0) out(`\x1b[${lines}A\x1b[0J`);
      out(text);
      lines = text.split("\n").length - 1;
    } else if (!ctx.json) out(text);
    if (v.partitions.length === 0) return;
    if (Date.now() > deadline) throw new CliError("still moving when the wait ended");
    await Bun.sleep(1000);
  }
}

export const reassignCommands: Command[] = [
  {
    name: "reassign generate",
    usage:
      "reassign generate (--topics-to-move-json-file F | --topic T...) --broker-list IDS [--replication-factor N]",
    summary: "Propose moving topics onto a broker list (balanced, moving as little as it can).",
    flags: [
      '--topics-to-move-json-file F  Kafka\'s {"version":1,"topics":[{"topic":"t"}]} file',
      "--topic T                     a topic to move (repeatable; instead of the file)",
      "--broker-list IDS             the brokers to spread over, e.g. 101,102,103,104",
      "--replication-factor N        a new replication factor (default: each partition's own)",
      "--all                         every topic, __consumer_offsets included",
    ],
    examples: [
      "broker reassign generate --topic orders --broker-list 101,102,103,104 > plan.txt",
      "broker reassign generate --topics-to-move-json-file topics.json --broker-list 1,2,3,4 --json",
    ],
    options: {
      "topics-to-move-json-file": { type: "string" },
      topic: { type: "string", multiple: true },
      "broker-list": { type: "string" },
      "replication-factor": { type: "string" },
      all: { type: "boolean" },
    },
    async run(ctx) {
      const file = ctx.values["topics-to-move-json-file"];
      const topics = file !== undefined
        ? parseTopicsFile(readJson(file, "topics-to-move-json-file"), file as string)
        : (ctx.values.topic as string[] | undefined) ?? [];
      if (topics.length === 0 && ctx.values.all !== true) {
        throw new UsageError("name the topics: --topic T, --topics-to-move-json-file F, or --all");
      }
      const rf = intFlag(ctx.values["replication-factor"], "replication-factor");
      const g = await ctx.client.call<{ current: Assignment; proposed: Assignment }>(
        "POST",
        "/reassignments/generate",
        {
          topics,
          brokers: brokerList(ctx.values["broker-list"]),
          ...(rf !== undefined ? { replication_factor: rf } : {}),
          ...(ctx.values.all === true ? { include_internal: true } : {}),
        },
      );
      if (ctx.json) {
        json(g);
        return 0;
      }
      const moved =
        g.proposed.partitions.filter((p, i) =>
          JSON.stringify(p.replicas) !== JSON.stringify(g.current.partitions[i]?.replicas)
        ).length;
      out(
        `Current partition replica assignment\n${JSON.stringify(g.current)}\n\n` +
          `Proposed partition reassignment configuration (${moved} of ${g.proposed.partitions.length} partitions change)\n${
            JSON.stringify(g.proposed)
          }\n`,
      );
      return 0;
    },
  },
  {
    name: "reassign execute",
    usage:
      "reassign execute --reassignment-json-file F [--throttle BYTES_PER_S] [--wait] [--disallow-replication-factor-change]",
    summary: "Start the moves of a plan (Kafka's reassignment JSON); --wait shows progress.",
    flags: [
      '--reassignment-json-file F  the plan ({"version":1,"partitions":[...]}; null replicas cancel)',
      "--throttle BYTES_PER_S      limit the copy to new replicas (leader and follower side); cleared",
      "                            when each move completes (no --verify needed to clear it)",
      "--wait                      show progress until every move is done",
      "--disallow-replication-factor-change",
      "                            refuse moves that change a partition's replication factor",
    ],
    examples: [
      "broker reassign execute --reassignment-json-file plan.json",
      "broker reassign execute --reassignment-json-file plan.json --throttle 10000000 --wait",
    ],
    options: {
      "reassignment-json-file": { type: "string" },
      throttle: { type: "string" },
      wait: { type: "boolean" },
      "disallow-replication-factor-change": { type: "boolean" },
    },
    async run(ctx) {
      const file = ctx.values["reassignment-json-file"] as string;
      const plan = parsePlanFile(readJson(file, "reassignment-json-file"), file);
      // The current replicas of what moves: the rollback file Kafka's tool prints too.
      const rollback: Assignment = { version: 1, partitions: [] };
      const seen = new Map<string, { partitions: { partition: number; replicas: number[] }[] }>();
      for (const e of plan) {
        let t = seen.get(e.topic);
        if (t === undefined) {
          t = await ctx.client.call("GET", `/topics/${encodeURIComponent(e.topic)}`);
          seen.set(e.topic, t!);
        }
        const cur = t!.partitions.find((p) => p.partition === e.partition);
        if (cur) rollback.partitions.push({ ...e, replicas: cur.replicas });
      }
      const r = await submitPlan(
        ctx.client,
        plan,
        throttleFlag(ctx.values.throttle),
        ctx.values["disallow-replication-factor-change"] === true,
      );
      if (ctx.json && ctx.values.wait !== true) {
        json(r);
        return r.accepted === plan.length ? 0 : 1;
      }
      const bad = failures(r);
      out(
        `Current partition replica assignment\n${JSON.stringify(rollback)}\n\n` +
          "Save this to use as the --reassignment-json-file option during rollback\n" +
          `Started ${r.accepted} of ${plan.length} partition reassignment(s).\n` +
          bad.map((b) => `  refused ${b}\n`).join(""),
      );
      if (ctx.values.wait === true) {
        const ok = new Set(
          r.results.filter((x) => x.error_code === 0).map((x) => `${x.topic}-${x.partition}`),
        );
        await watchUntilDone(ctx, ok);
        out("Every started reassignment is done.\n");
      }
      return bad.length === 0 ? 0 : 1;
    },
  },
  {
    name: "reassign verify",
    usage: "reassign verify --reassignment-json-file F",
    summary: "Say for each partition of a plan whether its move is done (exit 0 when all are).",
    flags: ["--reassignment-json-file F  the plan that was executed"],
    examples: ["broker reassign verify --reassignment-json-file plan.json"],
    options: { "reassignment-json-file": { type: "string" } },
    async run(ctx) {
      const file = ctx.values["reassignment-json-file"] as string;
      const plan = parsePlanFile(readJson(file, "reassignment-json-file"), file);
      const v = await ctx.client.call<View>("GET", "/reassignments");
      const moving = new Map(v.partitions.map((m) => [`${m.topic}-${m.partition}`, m]));
      const topics = new Map<string, { partitions: { partition: number; replicas: number[] }[] }>();
      const rows: { partition: string; status: string }[] = [];
      let done = 0;
      for (const e of plan) {
        const name = `${e.topic}-${e.partition}`;
        let status: string;
        if (moving.has(name)) status = "in progress";
        else {
          let t = topics.get(e.topic);
          if (t === undefined) {
            t = await ctx.client.call("GET", `/topics/${encodeURIComponent(e.topic)}`);
            topics.set(e.topic, t!);
          }
          const cur = t!.partitions.find((p) => p.partition === e.partition)?.replicas;
          const want = e.replicas;
          if (want === null) status = "cancelled (not moving)";
          else if (cur !== undefined && JSON.stringify(cur) === JSON.stringify(want)) {
            status = "complete";
            done++;
          } else status = `not done: replicas are [${cur ?? "?"}], not [${want}]`;
        }
        rows.push({ partition: name, status });
      }
      if (ctx.json) json({ complete: done === plan.length, partitions: rows });
      else {
        for (const r of rows) out(`Reassignment of partition ${r.partition}: ${r.status}\n`);
        out(
          "Throttles end with each move: nothing to clear.\n",
        );
      }
      return done === plan.length ? 0 : 1;
    },
  },
  {
    name: "reassign cancel",
    usage: "reassign cancel [--reassignment-json-file F | --topic T [--partition P]]",
    summary: "Cancel moves in flight: back to the original replicas (and leader where possible).",
    flags: [
      "--reassignment-json-file F  cancel the partitions of this plan",
      "--topic T                   only this topic's moves",
      "--partition P               only this partition (with --topic)",
    ],
    examples: [
      "broker reassign cancel --reassignment-json-file plan.json",
      "broker reassign cancel --topic orders --partition 2",
      "broker reassign cancel        # every move in flight",
    ],
    options: {
      "reassignment-json-file": { type: "string" },
      topic: { type: "string" },
      partition: { type: "string" },
    },
    async run(ctx) {
      const file = ctx.values["reassignment-json-file"] as string | undefined;
      let r: Results;
      if (file !== undefined) {
        const plan = parsePlanFile(readJson(file, "reassignment-json-file"), file);
        r = await submitPlan(ctx.client, plan.map((e) => ({ ...e, replicas: null })));
      } else {
        const p = intFlag(ctx.values.partition, "partition");
        if (p !== undefined && ctx.values.topic === undefined) {
          throw new UsageError("--partition needs --topic");
        }
        const q = new URLSearchParams();
        if (ctx.values.topic !== undefined) q.set("topic", ctx.values.topic as string);
        if (p !== undefined) q.set("partition", String(p));
        r = await ctx.client.call<Results>("DELETE", `/reassignments?${q}`);
      }
      if (ctx.json) json(r);
      else {
        out(`Cancelled ${r.accepted} reassignment(s).\n`);
        for (const b of failures(r)) out(`  not cancelled ${b}\n`);
      }
      return failures(r).length === 0 ? 0 : 1;
    },
  },
  {
    name: "reassign status",
    usage: "reassign status [--topic T] [--watch]",
    summary: "Moves in flight with progress: bytes copied per new replica, rate, ETA.",
    flags: [
      "--topic T   only this topic's moves",
      "--watch     refresh every second until nothing moves (progress bars on a terminal)",
    ],
    examples: [
      "broker reassign status",
      "broker reassign status --watch",
      "broker reassign status --json",
    ],
    options: { topic: { type: "string" }, watch: { type: "boolean" } },
    async run(ctx) {
      if (ctx.values.watch === true && !ctx.json) {
        await watchUntilDone(ctx);
        return 0;
      }
      const q = ctx.values.topic !== undefined
        ? `?topic=${encodeURIComponent(ctx.values.topic as string)}`
        : "";
      const v = await ctx.client.call<View>("GET", `/reassignments${q}`);
      if (ctx.json) json(v);
      else out(renderStatus(v, process.stdout.isTTY === true));
      return 0;
    },
  },
  {
    name: "reassign throttle",
    usage: "reassign throttle --throttle BYTES_PER_S [--topic T]",
    summary: "Change the copy rate of moves in flight (0: unthrottled).",
    flags: [
      "--throttle BYTES_PER_S  the new rate, leader and follower side",
      "--topic T               only this topic's moves",
    ],
    examples: ["broker reassign throttle --throttle 50000000"],
    options: { throttle: { type: "string" }, topic: { type: "string" } },
    async run(ctx) {
      const t = throttleFlag(ctx.values.throttle);
      if (t === undefined) throw new UsageError("--throttle BYTES_PER_S is required");
      const r = await ctx.client.call<Results>("PUT", "/reassignments/throttle", {
        throttle: t,
        ...(ctx.values.topic !== undefined ? { topic: ctx.values.topic } : {}),
      });
      if (ctx.json) json(r);
      else out(`Throttle set to ${t} B/s on ${r.accepted} moving partition(s).\n`);
      return 0;
    },
  },
];
