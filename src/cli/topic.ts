// broker topic create|list|describe|alter|delete
import { enc } from "./client.ts";
import { type Command, intFlag, need, pairs } from "./command.ts";
import { json, out, table } from "./format.ts";

interface TopicDesc {
  name: string;
  configs: Record<string, string>;
  partitions: {
    partition: number;
    leader: number;
    replicas: number[];
    isr: number[];
    log_start_offset: number | null;
    high_watermark: number | null;
    size_bytes: number | null;
  }[];
}

function printTopic(t: TopicDesc): void {
  out(`topic ${t.name}, ${t.partitions.length} partition(s)\n`);
  const cfg = Object.entries(t.configs);
  if (cfg.length) out(`configs: ${cfg.map(([k, v]) => `${k}=${v}`).join(", ")}\n`);
  out(table(
    ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START", "HIGH-WATERMARK", "SIZE"],
    t.partitions.map((p) => [
      p.partition,
      p.leader,
      p.replicas.join(","),
      p.isr.join(","),
      p.log_start_offset,
      p.high_watermark,
      p.size_bytes,
    ]),
  ));
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
    summary: "Show a topic's partitions (leader, replicas, ISR, offsets, size) and configs.",
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
