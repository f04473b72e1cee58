// broker topic create|list|describe|alter|delete|elect-leaders|repair
import { ApiClient, enc, type PartitionOutcome, UsageError } from "./client.ts";
import { type Command, intFlag, need, pairs } from "./command.ts";
import { json, out, table } from "./format.ts";

interface TopicDesc {
  name: string;
  configs: Record<string, string>;
  partitions: {
    partition: number;
    leader: number;
    leader_epoch?: number;
    replicas: number[];
    isr: number[];
    log_start_offset: number | null;
    high_watermark: number | null;
    log_end_offset?: number | null;
    size_bytes: number | null;
    under_replicated?: boolean;
    offline?: boolean;
    replica_positions?: {
      broker_id: number;
      in_sync: boolean;
      log_end_offset: number | null;
      lag: number | null;
    }[];
  }[];
}

/** "2:0 3:15": each follower's lag in records behind the leader ("?" when unknown). */
function followerLags(p: TopicDesc["partitions"][number]): string {
  const rows = (p.replica_positions ?? []).filter((r) => r.broker_id !== p.leader);
  if (rows.length === 0 || p.offline) return "-";
  return rows.map((r) => `${r.broker_id}:${r.lag ?? "?"}`).join(" ");
}

function partitionStatus(p: TopicDesc["partitions"][number]): string {
  if (p.offline ?? p.leader < 0) return "offline";
  return (p.under_replicated ?? p.isr.length < p.replicas.length) ? "under-replicated" : "ok";
}

function printTopic(t: TopicDesc): void {
  out(`topic ${t.name}, ${t.partitions.length} partition(s)\n`);
  const cfg = Object.entries(t.configs);
  if (cfg.length) out(`configs: ${cfg.map(([k, v]) => `${k}=${v}`).join(", ")}\n`);
  out(table(
    [
      "PARTITION",
      "LEADER",
      "EPOCH",
      "REPLICAS",
      "ISR",
      "LOG-START",
      "HIGH-WATERMARK",
      "LOG-END",
      "SIZE",
      "LAG",
      "STATUS",
    ],
    t.partitions.map((p) => [
      p.partition,
      p.leader,
      p.leader_epoch,
      p.replicas.join(","),
      p.isr.join(","),
      p.log_start_offset,
      p.high_watermark,
      p.log_end_offset,
      p.size_bytes,
      followerLags(p),
      partitionStatus(p),
    ]),
  ));
}

interface ElectionResults {
  elected: number;
  results: PartitionOutcome[];
}

export const topicCommands: Command[] = [
  {
    name: "topic create",
    usage: "topic create NAME [--partitions N] [--replication-factor N] [--config K=V]...",
    summary: "Create a topic.",
    flags: [
      "--partitions N            partition count (default: the broker's num.partitions)",
      "--replication-factor N    replicas per partition (default: the broker's " +
      "default.replication.factor, 3 or every live broker when fewer)",
      "--config KEY=VALUE        a topic config, repeatable",
    ],
    examples: [
      "broker topic create orders --partitions 3",
      "broker topic create audit --config retention.ms=86400000 --config cleanup.policy=delete",
    ],
    options: {
      partitions: { type: "string", short: "p" },
      "replication-factor": { type: "string", short: "r" },
      config: { type: "string", short: "c", multiple: true },
    },
    async run(ctx) {
      const name = need(ctx, 0, "topic name", "topic create");
      const t = await ctx.client.call<TopicDesc>("POST", "/topics", {
        name,
        partitions: intFlag(ctx.values.partitions, "partitions"),
        replication_factor: intFlag(ctx.values["replication-factor"], "replication-factor"),
        configs: pairs(ctx.values.config, "config"),
      });
      if (ctx.json) json(t);
      else out(`created topic ${t.name} with ${t.partitions.length} partition(s)\n`);
      return 0;
    },
  },
  {
    name: "topic list",
    usage: "topic list [--internal]",
    summary: "List topics.",
    flags: ["--internal    include internal topics"],
    examples: ["broker topic list", "broker topic list --json | jq -r '.[].name'"],
    options: { internal: { type: "boolean" } },
    async run(ctx) {
      const list = await ctx.client.call<
        { name: string; partitions: number; replication_factor: number }[]
      >("GET", `/topics${ctx.values.internal ? "?internal=true" : ""}`);
      if (ctx.json) json(list);
      else {
        out(table(
          ["NAME", "PARTITIONS", "REPLICATION"],
          list.map((t) => [t.name, t.partitions, t.replication_factor]),
        ));
      }
      return 0;
    },
  },
  {
    name: "topic describe",
    usage: "topic describe NAME",
    summary:
      "Show a topic's partitions (leader, epoch, replicas, ISR, offsets, follower lag) and configs.",
    examples: ["broker topic describe orders"],
    async run(ctx) {
      const name = need(ctx, 0, "topic name", "topic describe");
      const t = await ctx.client.call<TopicDesc>("GET", `/topics/${enc(name)}`);
      if (ctx.json) json(t);
      else printTopic(t);
      return 0;
    },
  },
  {
    name: "topic alter",
    usage: "topic alter NAME [--config K=V]... [--delete-config K]... [--partitions N]",
    summary: "Change a topic's configs or grow its partition count.",
    flags: [
      "--config KEY=VALUE     set a config, repeatable",
      "--delete-config KEY    reset a config to its default, repeatable",
      "--partitions N         the new total partition count",
    ],
    examples: [
      "broker topic alter orders --config retention.ms=3600000",
      "broker topic alter orders --partitions 6",
    ],
    options: {
      config: { type: "string", short: "c", multiple: true },
      "delete-config": { type: "string", multiple: true },
      partitions: { type: "string", short: "p" },
    },
    async run(ctx) {
      const name = need(ctx, 0, "topic name", "topic alter");
      const set = pairs(ctx.values.config, "config");
      const del = (ctx.values["delete-config"] as string[] | undefined) ?? [];
      const count = intFlag(ctx.values.partitions, "partitions");
      let t: TopicDesc | undefined;
      if (Object.keys(set).length || del.length) {
        t = await ctx.client.call("PATCH", `/topics/${enc(name)}/configs`, { set, delete: del });
      }
      if (count !== undefined) {
        t = await ctx.client.call("POST", `/topics/${enc(name)}/partitions`, { count });
      }
      if (!t) {
        process.stderr.write("broker: nothing to change (see broker topic alter --help)\n");
        return 2;
      }
      if (ctx.json) json(t);
      else printTopic(t);
      return 0;
    },
  },
  {
    name: "topic elect-leaders",
    usage: "topic elect-leaders [--topic T [--partition P]...] [--unclean]",
    summary: "Move leadership back to preferred replicas, or elect leaders of offline partitions.",
    flags: [
      "--topic T        only this topic (default: every partition of every topic)",
      "--partition P    only this partition of --topic, repeatable",
      "--unclean        elect a leader for partitions that have none: a live in-sync replica, " +
      "else any live replica (records only the old leader had are lost)",
    ],
    examples: [
      "broker topic elect-leaders",
      "broker topic elect-leaders --topic orders --partition 0 --partition 2",
      "broker topic elect-leaders --topic orders --partition 1 --unclean",
    ],
    options: {
      topic: { type: "string", short: "t" },
      partition: { type: "string", short: "p", multiple: true },
      unclean: { type: "boolean" },
    },
    async run(ctx) {
      const topic = ctx.values.topic as string | undefined;
      const parts = ((ctx.values.partition as string[] | undefined) ?? []).map((p) =>
        intFlag(p, "partition")!
      );
      if (parts.length > 0 && topic === undefined) {
        throw new UsageError("--partition needs --topic (see broker topic elect-leaders --help)");
      }
      const r = await ctx.client.call<ElectionResults>("POST", "/cluster/elect-leaders", {
        type: ctx.values.unclean ? "unclean" : "preferred",
        topic,
        partitions: parts.length > 0 ? parts : undefined,
      });
      // Failed: any answer but elected or "no election needed".
      const failed = r.results.filter((x) => x.error_code !== 0 && x.error_code !== 84).length;
      if (ctx.json) json(r);
      else if (r.results.length === 0) out("no partition needs an election\n");
      else {
        out(table(
          ["TOPIC", "PARTITION", "RESULT", "MESSAGE"],
          r.results.map((x) => [
            x.topic,
            x.partition,
            x.error_code === 0 ? "elected" : (x.error ?? String(x.error_code)),
            x.message,
          ]),
        ));
        out(`${r.elected} leader(s) elected${failed ? `, ${failed} failed` : ""}\n`);
      }
      return failed > 0 ? 1 : 0;
    },
  },
  {
    name: "topic repair",
    usage: "topic repair NAME [--partition P --accept-loss [--force]]",
    summary: "Show copies of a topic whose damaged records are quarantined, and decide what " +
      "becomes of them.",
    flags: [
      "--partition P   the partition to decide about",
      "--accept-loss   give up its quarantined records: the broker holding the damaged copy " +
      "continues the log after them at its next start (their offsets stay a gap, never reused)",
      "--force         even when other replicas may hold the records (the broker refuses " +
      "otherwise: a follower copy refetches them from its leader)",
    ],
    examples: [
      "broker topic repair orders",
      "broker topic repair orders --partition 0 --accept-loss",
    ],
    options: {
      partition: { type: "string", short: "p" },
      "accept-loss": { type: "boolean" },
      force: { type: "boolean" },
    },
    async run(ctx) {
      const name = need(ctx, 0, "topic name", "topic repair");
      const partition = intFlag(ctx.values.partition, "partition");
      const accept = ctx.values["accept-loss"] === true;
      if (accept && partition === undefined) {
        throw new UsageError("--accept-loss needs --partition (see broker topic repair --help)");
      }
      if (ctx.values.force === true && !accept) {
        throw new UsageError("--force goes with --accept-loss (see broker topic repair --help)");
      }
      const copies = await damagedCopies(ctx.client, name);
      const chosen = copies.filter((d) => partition === undefined || d.partition === partition);
      if (!accept) {
        if (ctx.json) json(chosen);
        else printDamage(name, chosen);
        return 0;
      }
      const quarantined = chosen.filter((d) => d.damage?.state === "quarantined");
      if (quarantined.length === 0) {
        process.stderr.write(
          `broker: no broker reports quarantined offsets in ${name}-${partition}` +
            `${chosen.some((d) => d.unreachable) ? " (some brokers did not answer)" : ""}\n`,
        );
        return 1;
      }
      const done = [];
      for (const d of quarantined) {
        const client = new ApiClient({ ...ctx.client.opts, servers: [d.url] });
        done.push(
          await client.call<RepairAnswer>(
            "POST",
            `/topics/${enc(name)}/partitions/${d.partition}/repair`,
            { accept_loss: true, ...(ctx.values.force === true ? { force: true } : {}) },
          ),
        );
      }
      if (ctx.json) json(done);
      else {
        for (const r of done) {
          out(
            `broker ${r.node_id}: the records at offsets ${r.lost_from_offset}-` +
              `${r.lost_to_offset - 1} of ${r.topic}-${r.partition} are given up; restart broker ` +
              `${r.node_id} to apply it (its log then continues at offset ${r.lost_to_offset})\n`,
          );
        }
      }
      return 0;
    },
  },
  {
    name: "topic delete",
    usage: "topic delete NAME",
    summary: "Delete a topic and its data.",
    examples: ["broker topic delete orders"],
    async run(ctx) {
      const name = need(ctx, 0, "topic name", "topic delete");
      await ctx.client.call("DELETE", `/topics/${enc(name)}`);
      if (ctx.json) json({ deleted: name });
      else out(`deleted topic ${name}\n`);
      return 0;
    },
  },
];

interface DamageView {
  state: "quarantined" | "unreadable";
  from_offset: number;
  to_offset: number | null;
  files: string[];
  reason: string;
}

interface RepairAnswer {
  topic: string;
  partition: number;
  node_id: number;
  lost_from_offset: number;
  lost_to_offset: number;
}

interface CopyDamage {
  broker: number;
  url: string;
  partition: number;
  leader: number;
  damage: DamageView | null;
  unreachable?: true;
}

/** Each broker's own copies of `name` that know of damage (GET /topics/{t} on every broker). */
async function damagedCopies(client: ApiClient, name: string): Promise<CopyDamage[]> {
  // An unknown topic is said once, as every command says it (not as brokers that did not answer).
  await client.call("GET", `/topics/${enc(name)}`);
  const c = await client.call<{ brokers: { node_id: number; host: string; http_port: number }[] }>(
    "GET",
    "/cluster",
  );
  const scheme = client.server.startsWith("https:") ? "https" : "http";
  const out: CopyDamage[] = [];
  await Promise.all(c.brokers.map(async (b) => {
    const host = b.host.includes(":") ? `[${b.host}]` : b.host;
    const url = `${scheme}://${host}:${b.http_port}`;
    const one = new ApiClient({ ...client.opts, servers: [url], timeoutMs: 10_000 });
    try {
      const t = await one.call<{
        partitions: { partition: number; leader: number; damage?: DamageView | null }[];
      }>("GET", `/topics/${enc(name)}`);
      for (const p of t.partitions) {
        if (p.damage) {
          out.push({
            broker: b.node_id,
            url,
            partition: p.partition,
            leader: p.leader,
            damage: p.damage,
          });
        }
      }
    } catch {
      out.push({
        broker: b.node_id,
        url,
        partition: -1,
        leader: -1,
        damage: null,
        unreachable: true,
      });
    }
  }));
  return out.sort((a, b) => a.partition - b.partition || a.broker - b.broker);
}

function printDamage(name: string, copies: CopyDamage[]): void {
  for (const d of copies.filter((x) => x.unreachable)) {
    out(`broker ${d.broker} did not answer: its copies are not shown\n`);
  }
  const damaged = copies.filter((x) => x.damage !== null);
  if (damaged.length === 0) {
    out(`no damaged copy of ${name}\n`);
    return;
  }
  out(table(
    ["PARTITION", "BROKER", "LEADER", "STATE", "OFFSETS", "FILES"],
    damaged.map((d) => [
      d.partition,
      d.broker,
      d.leader,
      d.damage!.state,
      `${d.damage!.from_offset}-${d.damage!.to_offset === null ? "?" : d.damage!.to_offset - 1}`,
      d.damage!.files.join(" ") || "-",
    ]),
  ));
  out(
    "\nquarantined: writes are refused so those offsets are never reused. The choices:\n" +
      "  - a follower copy refetches the offsets from its leader and is writable again by " +
      "itself;\n" +
      "  - restore: stop the broker, put good copies of the files back in the partition " +
      "directory, start it (recovery verifies them);\n" +
      `  - give the records up: broker topic repair ${name} --partition P --accept-loss, then ` +
      "restart that broker.\n" +
      "unreadable: damage found in place by a read; the records around it are served and " +
      "writes go on.\n",
  );
}
