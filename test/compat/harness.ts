// The compatibility suite's harness: one interface over four real clients (kcat, confluent-kafka,
// kafka-python, @platformatic/kafka), each driven as a separate process, plus the checks every
// client goes through. Drivers live in scripts/compat and print JSON lines.
import { join } from "node:path";
import { expect } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

const ROOT = join(import.meta.dir, "..", "..");
const DRIVERS = join(ROOT, "scripts", "compat");
/** Debian's interpreter: pyenv's python3 on PATH cannot see python3-confluent-kafka. */
export const PYTHON = "/usr/bin/python3";
export const SEGMENT_BYTES = 1024 * 1024;

export type Codec = "none" | "gzip" | "snappy" | "lz4" | "zstd";
export const CODECS: Codec[] = ["gzip", "snappy", "lz4", "zstd"];

export interface Rec {
  p: number;
  o: number;
  k: string;
  v: string;
  h: Record<string, string>;
}
export interface MemberEvent {
  /** join/rebalance: group events some drivers report, for diagnosing a failed run. */
  ev: "rec" | "commit" | "commit-failed" | "left" | "join" | "rebalance";
  p?: number;
  o?: number;
  k?: string;
  t?: number;
  /** join: the partitions assigned. */
  a?: number[];
}

export interface ProduceOpts {
  topic: string;
  count: number;
  acks: "1" | "all";
  idempotent?: boolean;
  codec?: Codec;
  prefix: string;
  size?: number;
  partition?: number;
}

/** A running group member: its events so far, and a graceful stop (LeaveGroup). */
export interface Member {
  events: MemberEvent[];
  stop(): Promise<void>;
  exited: Promise<number>;
}

export interface Client {
  name: string;
  /** Whether the client has an idempotent producer. */
  idempotent: boolean;
  /** Whether it reports its commits (kcat commits in the background, unseen). */
  reportsCommits: boolean;
  produce(o: ProduceOpts): Promise<void>;
  consume(topic: string, expected: number): Promise<Rec[]>;
  member(topic: string, group: string, max?: number): Member;
  /** Create, list, describe and delete a topic through the client's admin API. */
  admin?(topic: string): Promise<Record<string, unknown>>;
}

export function recordValue(prefix: string, i: number, size: number): string {
  const head = `${prefix}-${i}|`;
  return head + "x".repeat(Math.max(0, size - head.length));
}

/** Run to completion; stdout as lines. A failure carries stderr. */
async function run(cmd: string[], timeoutMs = 120_000): Promise<string[]> {
  const proc = Bun.spawn(cmd, { cwd: DRIVERS, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => proc.kill(9), timeoutMs);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  if (code !== 0) {
    throw new Error(`${cmd.slice(0, 3).join(" ")} exited ${code}: ${err.slice(-2000)}`);
  }
  return out.split("\n").filter((l) => l.length > 0);
}

/** Spawn a long-running member whose stdout lines are JSON events. */
function spawnMember(cmd: string[], parse: (line: string) => MemberEvent | null): Member {
  const proc = Bun.spawn(cmd, { cwd: DRIVERS, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const events: MemberEvent[] = [];
  const reading = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const e = parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (e) events.push(e);
      }
    }
  })();
  const exited = proc.exited;
  return {
    events,
    exited,
    stop: async () => {
      proc.kill("SIGTERM");
      const code = await Promise.race([exited, Bun.sleep(15_000).then(() => -1)]);
      if (code === -1) proc.kill(9);
      await reading;
    },
  };
}

function driverArgs(b: string, o: Partial<ProduceOpts> & { topic: string }): string[] {
  const a = ["--bootstrap", b, "--topic", o.topic];
  if (o.count !== undefined) a.push("--count", String(o.count));
  if (o.acks) a.push("--acks", o.acks);
  if (o.idempotent) a.push("--idempotent");
  if (o.codec) a.push("--codec", o.codec);
  if (o.prefix) a.push("--prefix", o.prefix);
  if (o.size !== undefined) a.push("--size", String(o.size));
  if (o.partition !== undefined) a.push("--partition", String(o.partition));
  return a;
}

const parseJson = (l: string) => {
  try {
    return JSON.parse(l);
  } catch {
    return null;
  }
};

function scripted(name: string, cmd: string[], idempotent: boolean, bootstrap: string): Client {
  return {
    name,
    idempotent,
    reportsCommits: true,
    async produce(o) {
      const lines = await run([...cmd, "produce", ...driverArgs(bootstrap, o)]);
      const r = JSON.parse(lines.at(-1)!);
      expect({ produced: r.produced, errors: r.errors }).toEqual({ produced: o.count, errors: [] });
    },
    async consume(topic, expected) {
      const lines = await run([
        ...cmd,
        "consume",
        ...driverArgs(bootstrap, { topic }),
        "--expect",
        String(expected),
      ]);
      return lines.map(parseJson).filter((r) => r && r.k !== undefined) as Rec[];
    },
    member(topic, group, max = 0) {
      return spawnMember(
        [
          ...cmd,
          "member",
          ...driverArgs(bootstrap, { topic }),
          "--group",
          group,
          "--max",
          String(max),
        ],
        parseJson,
      );
    },
    async admin(topic) {
      const lines = await run([...cmd, "admin", ...driverArgs(bootstrap, { topic })]);
      return JSON.parse(lines.at(-1)!);
    },
  };
}

export function confluent(bootstrap: string): Client {
  return scripted("confluent-kafka", [PYTHON, "confluent_driver.py"], true, bootstrap);
}
export function kafkaPython(bootstrap: string): Client {
  return scripted("kafka-python", [PYTHON, "kafka_python_driver.py"], false, bootstrap);
}
export function platformatic(bootstrap: string): Client {
  return scripted("platformatic", [process.execPath, "platformatic_driver.ts"], true, bootstrap);
}

/** kcat: no admin API and no per-record headers; its group consumer commits in the background. */
export function kcat(bootstrap: string): Client {
  const base = ["kcat", "-b", bootstrap, "-q"];
  const fmt = "%p\\t%o\\t%k\\t%s\\t%h\\n";
  const parseLine = (l: string): Rec | null => {
    const [p, o, k, v, h] = l.split("\t");
    if (v === undefined) return null;
    const headers: Record<string, string> = {};
    for (const kv of (h ?? "").split(",")) {
      const at = kv.indexOf("=");
      if (at > 0) headers[kv.slice(0, at)] = kv.slice(at + 1);
    }
    return { p: Number(p), o: Number(o), k, v, h: headers };
  };
  return {
    name: "kcat",
    idempotent: true,
    reportsCommits: false,
    async produce(o) {
      const size = o.size ?? 200;
      const lines: string[] = [];
      for (let i = 0; i < o.count; i++) {
        lines.push(`${o.prefix}-${i}\t${recordValue(o.prefix, i, size)}`);
      }
      const cmd = [
        ...base,
        "-P",
        "-t",
        o.topic,
        "-K",
        "\t",
        "-H",
        "src=kcat",
        "-X",
        `acks=${o.acks}`,
      ];
      if (o.idempotent) cmd.push("-X", "enable.idempotence=true");
      if (o.codec) cmd.push("-z", o.codec);
      if (o.partition !== undefined) cmd.push("-p", String(o.partition));
      const proc = Bun.spawn(cmd, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      proc.stdin.write(lines.join("\n") + "\n");
      await proc.stdin.end();
      const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`kcat -P exited ${code}: ${err.slice(-2000)}`);
    },
    async consume(topic, expected) {
      const lines = await run([
        ...base,
        "-C",
        "-t",
        topic,
        "-o",
        "beginning",
        "-e",
        "-c",
        String(expected),
        "-X",
        "check.crcs=true",
        "-f",
        fmt,
      ]);
      return lines.map(parseLine).filter((r): r is Rec => r !== null);
    },
    member(topic, group, max = 0) {
      const cmd = [
        ...base,
        "-G",
        group,
        // Not -o beginning: with -G that forces every assignment to offset 0, ignoring commits.
        "-X",
        "auto.offset.reset=earliest",
        "-X",
        "auto.commit.interval.ms=100",
        "-X",
        "session.timeout.ms=6000",
        "-X",
        "heartbeat.interval.ms=500",
        "-f",
        "%p\\t%o\\t%k\\t%s\\t\\n",
        "-u",
        ...(max > 0 ? ["-c", String(max)] : []),
        topic,
      ];
      return spawnMember(cmd, (l) => {
        const r = parseLine(l);
        return r ? { ev: "rec", p: r.p, o: r.o, k: r.k, t: Date.now() * 1e6 } : null;
      });
    },
  };
}

export async function startCompatBroker(): Promise<{ broker: RunningBroker; bootstrap: string }> {
  const broker = await startBrokerProcess({
    args: [
      "--group-initial-rebalance-delay-ms",
      "0",
      "--topic-default",
      `segment.bytes=${SEGMENT_BYTES}`,
    ],
  });
  return { broker, bootstrap: `127.0.0.1:${broker.kafkaPort}` };
}

export async function createTopic(
  broker: RunningBroker,
  name: string,
  partitions: number,
  configs: Record<string, string> = {},
) {
  const r = await api(broker.httpUrl, "POST", "/topics", { name, partitions, configs });
  expect([200, 201]).toContain(r.status);
}

export async function topicInfo(broker: RunningBroker, name: string) {
  const r = await api(broker.httpUrl, "GET", `/topics/${name}`);
  expect(r.status).toBe(200);
  return r.json as {
    partitions: { partition: number; log_start_offset: number; high_watermark: number }[];
  };
}

/** Poll until `pred` holds (every 50 ms) or fail after `ms`. */
export async function until(
  pred: () => boolean | Promise<boolean>,
  ms: number,
  what: string | (() => string),
) {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out: ${typeof what === "string" ? what : what()}`);
    await Bun.sleep(50);
  }
}

/** The expected key/value/header of record `i` with `prefix`, as produced by `client`. */
export function checkRecord(r: Rec, prefix: string, i: number, size: number, producer: string) {
  const ok = r.k === `${prefix}-${i}` && r.v === recordValue(prefix, i, size) &&
    (producer === "kcat" ? r.h.src === "kcat" : r.h.i === String(i));
  if (!ok) throw new Error(`record ${prefix}-${i} differs: ${JSON.stringify(r).slice(0, 200)}`);
}
