// broker group list|describe|reset-offsets|delete, and broker cluster status.
import { enc, UsageError } from "./client.ts";
import { type Command, need } from "./command.ts";
import { json, out, table } from "./format.ts";

interface GroupDesc {
  group_id: string;
  state: string;
  protocol: string;
  generation_id: number;
  members: {
    member_id: string;
    client_id: string;
    client_host: string;
    assignment: { topic: string; partitions: number[] }[];
  }[];
  offsets: {
    topic: string;
    partition: number;
    committed_offset: number | null;
    end_offset: number | null;
    lag: number | null;
  }[];
  lag: number | null;
}

export const groupCommands: Command[] = [
  {
    name: "group list",
    usage: "group list",
    summary: "List consumer groups (Kafka and HTTP members alike).",
    examples: ["broker group list"],
    async run(ctx) {
      const list = await ctx.client.call<{ group_id: string; state: string; members: number }[]>(
        "GET",
        "/groups",
      );
      if (ctx.json) json(list);
      else {out(
          table(["GROUP", "STATE", "MEMBERS"], list.map((g) => [g.group_id, g.state, g.members])),
        );}
      return 0;
    },
  },
  {
    name: "group describe",
    usage: "group describe GROUP",
    summary: "Show a group's members, assignment, committed offsets and lag.",
    examples: ["broker group describe billing"],
    async run(ctx) {
      const g = need(ctx, 0, "group", "group describe");
      const d = await ctx.client.call<GroupDesc>("GET", `/groups/${enc(g)}`);
      if (ctx.json) {
        json(d);
        return 0;
      }
      out(
        `group ${d.group_id}: ${d.state}, generation ${d.generation_id}, protocol ${
          d.protocol || "-"
        }, total lag ${d.lag ?? "unknown (a partition's leader did not answer)"}\n`,
      );
      const owner = new Map<string, string>();
      for (const m of d.members) {
        for (const a of m.assignment) {
          for (const p of a.partitions) owner.set(`${a.topic}:${p}`, m.member_id);
        }
      }
      out(table(
        ["TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "MEMBER"],
        d.offsets.map((
          o,
        ) => [
          o.topic,
          o.partition,
          o.committed_offset,
          o.end_offset,
          o.lag,
          owner.get(`${o.topic}:${o.partition}`),
        ]),
      ));
      return 0;
    },
  },
  {
    name: "group reset-offsets",
    usage: "group reset-offsets GROUP --to earliest|latest|OFFSET|TIME [--topic T]... [--dry-run]",
    summary: "Reset the committed offsets of an inactive group.",
    flags: [
      "--to POS        earliest, latest, an offset (every partition) or a time (ISO-8601 or epoch ms)",
      "--topic T       topics to reset, repeatable (default: those the group has offsets for)",
      "--dry-run       show the new offsets without committing them",
    ],
    examples: [
      "broker group reset-offsets billing --to earliest",
      "broker group reset-offsets billing --to 2024-06-01T00:00:00Z --topic orders",
      "broker group reset-offsets billing --to 42 --topic orders --dry-run",
    ],
    options: {
      to: { type: "string" },
      topic: { type: "string", multiple: true },
      "dry-run": { type: "boolean" },
    },
    async run(ctx) {
      const g = need(ctx, 0, "group", "group reset-offsets");
      const to = ctx.values.to as string | undefined;
      if (!to) throw new UsageError("--to is required (see broker group reset-offsets --help)");
      const topics = ctx.values.topic as string[] | undefined;
      const dry = ctx.values["dry-run"] === true;
      let body: Record<string, unknown>;
      if (to === "earliest" || to === "latest") body = { to, topics, dry_run: dry };
      else if (/^\d+$/.test(to) && to.length < 13) {
        if (!topics?.length) throw new UsageError("--to OFFSET needs --topic");
        const offsets = [];
        for (const t of topics) {
          const d = await ctx.client.call<{ partitions: { partition: number }[] }>(
            "GET",
            `/topics/${enc(t)}`,
          );
          for (const p of d.partitions) {
            offsets.push({ topic: t, partition: p.partition, offset: Number(to) });
          }
        }
        body = { to: "offsets", offsets, dry_run: dry };
      } else {
        const ts = /^\d+$/.test(to) ? Number(to) : to;
        body = { to: "timestamp", timestamp: ts, topics, dry_run: dry };
      }
      const r = await ctx.client.call<
        { offsets: { topic: string; partition: number; offset: number }[] }
      >(
        "POST",
        `/groups/${enc(g)}/offsets/reset`,
        body,
      );
      if (ctx.json) json(r);
      else {
        out(
          table(
            ["TOPIC", "PARTITION", "NEW-OFFSET"],
            r.offsets.map((o) => [o.topic, o.partition, o.offset]),
          ),
        );
        if (dry) out("(dry run: nothing committed)\n");
      }
      return 0;
    },
  },
  {
    name: "group delete",
    usage: "group delete GROUP",
    summary: "Delete an inactive group and its committed offsets.",
    examples: ["broker group delete billing"],
    async run(ctx) {
      const g = need(ctx, 0, "group", "group delete");
      await ctx.client.call("DELETE", `/groups/${enc(g)}`);
      if (ctx.json) json({ deleted: g });
      else out(`deleted group ${g}\n`);
      return 0;
    },
  },
  {
    name: "cluster status",
    usage: "cluster status",
    summary: "Show the cluster id, controller, brokers (session states) and quorum.",
    examples: [
      "broker cluster status",
      "broker cluster status --server http://broker-2:8080 --json",
    ],
    async run(ctx) {
      const c = await ctx.client.call<{
        cluster_id: string;
        controller: number | null;
        topics: number;
        partitions: number;
        groups: number;
        brokers: {
          node_id: number;
          host: string;
          kafka_port: number;
          http_port: number;
          fenced: boolean;
          state?: string;
          heartbeat_age_ms?: number | null;
        }[];
        broker_states_from?: string;
        members?: {
          id: number;
          addresses: { cluster: string; kafka: string; http: string };
          state: string;
        }[];
        quorum?: {
          voters: number[];
          learners: number[];
          leader: number;
          term: number;
          commit_index: number;
        };
      }>("GET", "/cluster");
      if (ctx.json) {
        json(c);
        return 0;
      }
      out(
        `cluster ${c.cluster_id}, controller ${
          c.controller ?? "-"
        }, ${c.topics} topic(s), ${c.partitions} partition(s), ${c.groups} group(s)\n`,
      );
      out(table(
        ["NODE", "HOST", "KAFKA", "HTTP", "STATE", "HEARTBEAT"],
        c.brokers.map((b) => [
          b.node_id,
          b.host,
          b.kafka_port,
          b.http_port,
          b.state ?? (b.fenced ? "fenced" : "alive"),
          b.heartbeat_age_ms === null || b.heartbeat_age_ms === undefined
            ? "-"
            : `${b.heartbeat_age_ms} ms ago`,
        ]),
      ));
      if (c.broker_states_from === "metadata") {
        out("(states from the metadata: the controller did not answer)\n");
      }
      if (c.quorum) {
        const q = c.quorum;
        out(
          `\nquorum: leader ${
            q.leader < 0 ? "-" : q.leader
          }, term ${q.term}, commit index ${q.commit_index}, ` +
            `voters [${q.voters.join(", ")}], learners [${q.learners.join(", ")}]\n`,
        );
      }
      if (c.members) {
        out(table(
          ["MEMBER", "CLUSTER", "KAFKA", "HTTP", "GOSSIP"],
          c.members.map((
            m,
          ) => [m.id, m.addresses.cluster, m.addresses.kafka, m.addresses.http, m.state]),
        ));
      }
      return 0;
    },
  },
];
