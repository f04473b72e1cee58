// Starting the three systems with their data on the local disk, and the few admin calls the
// workloads need (create a topic, count what was stored).
import { mkdirSync } from "node:fs";
import { freePort, run, type Server, startServer, stopServer } from "./proc.ts";

export interface Ours {
  server: Server;
  kafka: string;
  http: string;
  /** ms from spawn to the "broker started" line. */
  readyMs: number;
}

/** Our broker's flags for a data dir and loopback listeners on ports the kernel picks. */
export function oursArgs(dataDir: string): string[] {
  return [
    "--data-dir",
    dataDir,
    "--kafka-addr",
    "127.0.0.1:0",
    "--http-addr",
    "127.0.0.1:0",
    "--cluster-addr",
    "127.0.0.1:0",
  ];
}

export async function startOurs(bin: string, dataDir: string): Promise<Ours> {
  mkdirSync(dataDir, { recursive: true });
  const server = startServer("broker", [bin, ...oursArgs(dataDir)]);
  try {
    const { line, ms } = await server.waitFor(/"msg":"broker started"/, 60_000);
    const j = JSON.parse(line) as { kafka: string; http: string };
    return { server, kafka: j.kafka, http: j.http, readyMs: ms };
  } catch (e) {
    await stopServer(server, "SIGKILL");
    throw e;
  }
}

export async function createTopic(o: Ours, name: string, partitions: number): Promise<void> {
  const r = await fetch(`http://${o.http}/topics`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, partitions }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!r.ok) throw new Error(`create topic ${name}: HTTP ${r.status} ${await r.text()}`);
}

/** Sum of the high watermarks of a topic's partitions. */
export async function topicRecords(o: Ours, name: string): Promise<number> {
  const r = await fetch(`http://${o.http}/topics/${encodeURIComponent(name)}`, {
    signal: AbortSignal.timeout(30_000),
  });
  if (!r.ok) throw new Error(`describe topic ${name}: HTTP ${r.status}`);
  const j = (await r.json()) as { partitions: { high_watermark: number }[] };
  return j.partitions.reduce((a, p) => a + p.high_watermark, 0);
}

export interface Nats {
  server: Server;
  url: string;
}

/** nats-server 2.9 with JetStream on the local disk, default settings otherwise. */
export async function startNats(dataDir: string): Promise<Nats> {
  mkdirSync(dataDir, { recursive: true });
  const port = freePort();
  const server = startServer("nats-server", [
    "nats-server",
    "-js",
    "-sd",
    dataDir,
    "-a",
    "127.0.0.1",
    "-p",
    String(port),
  ]);
  try {
    await server.waitFor(/Server is ready/, 30_000);
    return { server, url: `nats://127.0.0.1:${port}` };
  } catch (e) {
    await stopServer(server, "SIGKILL");
    throw e;
  }
}

export interface Redis {
  server: Server;
  port: number;
}

export type RedisFsync = "everysec" | "always";

/**
 * redis-server with the append-only file on the local disk. RDB snapshots are off (`save ""`):
 * the AOF is the durability being compared, and a background RDB fork mid-run would only add noise.
 */
export async function startRedis(dataDir: string, fsync: RedisFsync): Promise<Redis> {
  mkdirSync(dataDir, { recursive: true });
  const port = freePort();
  const server = startServer("redis-server", [
    "redis-server",
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dataDir,
    "--appendonly",
    "yes",
    "--appendfsync",
    fsync,
    "--save",
    "",
    "--daemonize",
    "no",
  ]);
  try {
    await server.waitFor(/Ready to accept connections/, 30_000);
    return { server, port };
  } catch (e) {
    await stopServer(server, "SIGKILL");
    throw e;
  }
}

export async function redisCount(r: Redis, keys: string[]): Promise<number> {
  let total = 0;
  for (const k of keys) {
    const x = await run(["redis-cli", "-p", String(r.port), "XLEN", k], { timeoutMs: 30_000 });
    const n = Number(x.stdout.trim());
    if (x.code !== 0 || !Number.isFinite(n)) throw new Error(`XLEN ${k} failed: ${x.stderr}`);
    total += n;
  }
  return total;
}
