// broker consume TOPIC: read a topic (or follow it, or consume as a group member), like kcat -C.
import { ApiClient, CliError, enc } from "./client.ts";
import { type Command, intFlag, need } from "./command.ts";
import { out } from "./format.ts";

interface Rec {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
}

function printer(template: string | undefined, asJson: boolean): (r: Rec) => void {
  if (asJson) return (r) => out(JSON.stringify(r) + "\n");
  const t = (template ?? "{value}").replaceAll("\\n", "\n").replaceAll("\\t", "\t");
  return (r) =>
    out(
      t.replace(/\{(topic|partition|offset|timestamp|key|value|headers)\}/g, (_, k: string) => {
        if (k === "headers") return r.headers.map((h) => `${h.key}=${h.value ?? ""}`).join(",");
        const v = r[k as keyof Rec];
        return v === null ? "" : String(v);
      }) + "\n",
    );
}

async function readPartitions(
  client: ApiClient,
  topic: string,
  partitions: number[],
  from: string,
  max: number,
  print: (r: Rec) => void,
): Promise<number> {
  let n = 0;
  for (const p of partitions) {
    const start = isTime(from) ? `timestamp=${enc(from)}` : `offset=${from}`;
    let q = start;
    // Bounded: each round returns records or reaches the high watermark.
    for (let round = 0; round < 1_000_000 && n < max; round++) {
      const r = await client.call<{ records: Rec[]; next_offset: number; high_watermark: number }>(
        "GET",
        `/topics/${enc(topic)}/partitions/${p}/records?${q}&format=text&limit=${
          Math.min(10_000, max - n)
        }`,
      );
      for (const rec of r.records) print(rec);
      n += r.records.length;
      if (r.next_offset >= r.high_watermark || r.records.length === 0) break;
      q = `offset=${r.next_offset}`;
    }
  }
  return n;
}

/** An offset has at most 12 digits; 13 and more are epoch milliseconds (as in reset-offsets). */
function isTime(from: string): boolean {
  return from !== "earliest" && from !== "latest" && !/^\d{1,12}$/.test(from);
}

/** The `from` the topic stream takes: an epoch-ms time becomes ISO-8601 (digits are offsets there). */
function streamFrom(from: string): string {
  if (/^\d{13,}$/.test(from)) {
    const d = new Date(Number(from));
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  return from;
}

async function follow(
  client: ApiClient,
  topic: string,
  from: string,
  partition: number | undefined,
  max: number,
  print: (r: Rec) => void,
): Promise<void> {
  const res = await client.raw(
    "GET",
    `/topics/${enc(topic)}/records?follow=true&from=${enc(streamFrom(from))}&format=text`,
    { headers: { accept: "application/x-ndjson" } },
  );
  if (!res.ok || !res.body) {
    const text = await res.text();
    let msg = text;
    try {
      msg = JSON.parse(text).message ?? text;
    } catch { /* not JSON */ }
    throw new CliError(`${res.status}: ${msg}${client.hint(res.status)}`);
  }
  const decoder = new TextDecoder();
  let buf = "";
  let n = 0;
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line === "") continue; // heartbeat
      const r = JSON.parse(line) as Rec & { error_code?: number; message?: string };
      if (r.error_code !== undefined) throw new CliError(r.message ?? "stream ended");
      if (partition !== undefined && r.partition !== partition) continue;
      print(r);
      if (++n >= max) return;
    }
  }
}

async function consumeGroup(
  client: ApiClient,
  group: string,
  topic: string,
  from: string,
  keepGoing: boolean,
  max: number,
  print: (r: Rec) => void,
): Promise<void> {
  const join = (memberId?: string) =>
    client.call<{ member_id: string; generation_id: number }>(
      "POST",
      `/groups/${enc(group)}/members`,
      { topics: [topic], member_id: memberId, client_id: "broker-cli" },
    );
  let m = await join();
  let stopping = false;
  const leave = () => {
    stopping = true;
  };
  process.once("SIGINT", leave);
  process.once("SIGTERM", leave);
  let n = 0;
  const reset = from === "latest" ? "latest" : "earliest";
  try {
    for (let round = 0; round < Number.MAX_SAFE_INTEGER && !stopping && n < max; round++) {
      let r;
      try {
        r = await client.call<{ records: Rec[]; cursor: string }>(
          "GET",
          `/groups/${enc(group)}/records?member_id=${
            enc(m.member_id)
          }&generation_id=${m.generation_id}&max_wait_ms=${
            keepGoing ? 2000 : 500
          }&format=text&reset=${reset}&limit=${Math.min(10_000, max - n)}`,
        );
      } catch (e) {
        // The group rebalanced (a member came or went): rejoin as the same member.
        if (/^409|^404/.test((e as Error).message)) {
          m = await join(m.member_id);
          continue;
        }
        throw e;
      }
      for (const rec of r.records) print(rec);
      n += r.records.length;
      if (r.records.length > 0) {
        await client.call("POST", `/groups/${enc(group)}/offsets`, {
          member_id: m.member_id,
          generation_id: m.generation_id,
          cursor: r.cursor,
        }).catch(() => {/* a rebalance: the next fetch rejoins; records may repeat */});
      } else if (!keepGoing) break;
    }
  } finally {
    await client.call("DELETE", `/groups/${enc(group)}/members/${enc(m.member_id)}`).catch(
      () => {},
    );
  }
}

export const consumeCommand: Command = {
  name: "consume",
  usage:
    "consume TOPIC [--from earliest|latest|OFFSET|TIME] [--partition N] [--group G] [--follow] [--format FMT] [--count N]",
  summary: "Print records of a topic (all partitions by default), like kcat -C.",
  flags: [
    "-o, --from POS       earliest (default), latest, an offset or a time (ISO-8601, or epoch ms: 13+ digits)",
    "-p, --partition N    only this partition",
    "-G, --group G        consume as a member of group G (commits as it goes)",
    "-f, --follow         keep waiting for new records (Ctrl-C stops)",
    "--format FMT         output template with {key} {value} {offset} {partition} {timestamp} {topic} {headers}",
    "-c, --count N        stop after N records",
  ],
  examples: [
    "broker consume orders",
    "broker consume orders --from latest --follow",
    "broker consume orders --format '{partition}:{offset} {key}={value}'",
    "broker consume orders --group billing --follow",
    "broker consume orders --from 2024-06-01T00:00:00Z --json",
  ],
  options: {
    from: { type: "string", short: "o" },
    partition: { type: "string", short: "p" },
    group: { type: "string", short: "G" },
    follow: { type: "boolean", short: "f" },
    format: { type: "string" },
    count: { type: "string", short: "c" },
  },
  async run(ctx) {
    const topic = need(ctx, 0, "topic", "consume");
    const from = (ctx.values.from as string | undefined) ?? "earliest";
    if (isTime(from) && Number.isNaN(/^\d+$/.test(from) ? Number(from) : Date.parse(from))) {
      throw new CliError(
        `--from must be earliest, latest, an offset or a time (ISO-8601 or epoch ms), not ${from}`,
      );
    }
    const partition = intFlag(ctx.values.partition, "partition");
    const max = intFlag(ctx.values.count, "count") ?? Number.MAX_SAFE_INTEGER;
    const print = printer(ctx.values.format as string | undefined, ctx.json);
    const group = ctx.values.group as string | undefined;
    if (group !== undefined) {
      await consumeGroup(ctx.client, group, topic, from, ctx.values.follow === true, max, print);
      return 0;
    }
    if (ctx.values.follow) {
      await follow(ctx.client, topic, from, partition, max, print);
      return 0;
    }
    const t = await ctx.client.call<{ partitions: { partition: number; leader: number }[] }>(
      "GET",
      `/topics/${enc(topic)}`,
    );
    const parts = partition !== undefined
      ? t.partitions.filter((p) => p.partition === partition)
      : t.partitions;
    if (parts.length === 0) throw new CliError(`topic ${topic} has no partition ${partition}`);
    // In a cluster each partition is read from its leader's HTTP address.
    const clients = await leaderClients(ctx.client, parts.map((p) => p.leader));
    let n = 0;
    for (const p of parts) {
      const client = clients.get(p.leader) ?? ctx.client;
      n += await readPartitions(client, topic, [p.partition], from, max - n, print);
      if (n >= max) break;
    }
    return 0;
  },
};

/**
 * An API client per partition leader other than the broker the CLI talks to, from GET /cluster's
 * registered HTTP addresses (the same token is used); none on a single broker.
 */
async function leaderClients(
  client: ApiClient,
  leaders: number[],
): Promise<Map<number, ApiClient>> {
  const out = new Map<number, ApiClient>();
  const c = await client.call<
    { node_id: number; brokers: { node_id: number; host: string; http_port: number }[] }
  >(
    "GET",
    "/cluster",
  );
  for (const id of new Set(leaders)) {
    if (id === c.node_id) continue;
    const b = c.brokers.find((x) => x.node_id === id);
    if (b === undefined) continue;
    const host = b.host.includes(":") ? `[${b.host}]` : b.host;
    out.set(id, new ApiClient({ ...client.opts, server: `http://${host}:${b.http_port}` }));
  }
  return out;
}
