// broker topic create|list|describe|alter|delete|elect-leaders
import { enc, UsageError } from "./client.ts";
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
  results: {
    topic: string;
    partition: number;
    error_code: number;
    error: string | null;
    message: string | null;
  }[];
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
