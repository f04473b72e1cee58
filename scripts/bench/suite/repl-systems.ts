// The two three-server clusters of the replicated section, all on 127.0.0.1: three of our brokers
// joined with --join (fixed ports, so a killed broker restarts on its data dir and addresses), and
// three nats-server processes with JetStream, routed to each other. Servers go through proc.ts,
// so the suite's killAll stops them on failure or Ctrl-C. Our brokers share one join token, made
// up per cluster: the first takes it as the cluster's, the others prove it (docs/security.md).
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cpuSeconds, freePort, type Server, sleep, startServer, stopServer } from "./proc.ts";

export interface Node {
  id: number;
  dataDir: string;
  /** 0 until the first start, which binds kernel-chosen ports; restarts reuse them. */
  kafkaPort: number;
  httpPort: number;
  clusterPort: number;
  server?: Server;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  high_watermark: number | null;
}

interface ClusterView {
  controller: number | null;
  brokers: { node_id: number; fenced: boolean }[];
  quorum: { voters: number[]; leader: number };
}

const live = (n: Node) =>
  n.server !== undefined && n.server.proc.exitCode === null && n.server.proc.signalCode === null;

async function getJson<T>(url: string, timeoutMs = 3000): Promise<T | undefined> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) {
      await r.text();
      return undefined;
    }
    return (await r.json()) as T;
  } catch {
    return undefined;
  }
}

export class OursCluster {
  readonly nodes: Node[];
  readonly joinToken = randomBytes(32).toString("base64url");

  /** `cmd`: the broker command (the built binary, or `bun [--cpu-prof…] src/main.ts`). */
  constructor(readonly cmd: string[], dir: string, readonly size = 3) {
    this.nodes = Array.from({ length: size }, (_, id) => ({
      id,
      dataDir: join(dir, `broker-${id}`),
      kafkaPort: 0,
      httpPort: 0,
      clusterPort: 0,
    }));
  }

  get bootstrap(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.kafkaPort}`).join(",");
  }

  http(id: number): string {
    return `http://127.0.0.1:${this.nodes[id].httpPort}`;
  }

  isLive(id: number): boolean {
    return live(this.nodes[id]);
  }

  pid(id: number): number {
    const s = this.nodes[id].server;
    if (s === undefined) throw new Error(`broker ${id} is not running`);
    return s.pid;
  }

  /** CPU seconds of the live brokers, summed (from /proc). */
  cpu(): number {
    let s = 0;
    for (const n of this.nodes) if (live(n)) s += cpuSeconds(n.server!.pid);
    return s;
  }

  /** Starts (or restarts, on its data dir and ports) one broker; joins through a live one. */
  async startNode(id: number): Promise<number> {
    const n = this.nodes[id];
    mkdirSync(n.dataDir, { recursive: true });
    const seed = this.nodes.find((m) => m.id !== id && live(m));
    const args = [
      ...this.cmd,
      "--data-dir",
      n.dataDir,
      "--node-id",
      String(id),
      "--voters",
      String(this.size),
      "--kafka-addr",
      `127.0.0.1:${n.kafkaPort}`,
      "--http-addr",
      `127.0.0.1:${n.httpPort}`,
      "--cluster-addr",
      `127.0.0.1:${n.clusterPort}`,
      `--join-token=${this.joinToken}`,
      ...(seed ? ["--join", `127.0.0.1:${seed.clusterPort}`] : []),
    ];
    const server = startServer(`broker-${id}`, args);
    n.server = server;
    try {
      const { line, ms } = await server.waitFor(/"msg":"broker started"/, 60_000);
      const j = JSON.parse(line) as { kafka: string; http: string; cluster: string };
      const port = (hp: string) => Number(hp.slice(hp.lastIndexOf(":") + 1));
      n.kafkaPort = port(j.kafka);
      n.httpPort = port(j.http);
      n.clusterPort = port(j.cluster);
      return ms;
    } catch (e) {
      await stopServer(server, "SIGKILL");
      throw e;
    }
  }

  async start(): Promise<void> {
    await this.startNode(0);
    await Promise.all(this.nodes.slice(1).map((n) => this.startNode(n.id)));
    await this.waitFor("3 unfenced brokers and a quorum of 3", 60_000, async () => {
      const v = await this.view();
      return v !== undefined && v.brokers.length === this.size &&
        v.brokers.every((b) => !b.fenced) && v.quorum.leader >= 0 &&
        v.quorum.voters.length === this.size;
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => {
      if (n.server) await stopServer(n.server, "SIGKILL");
    }));
  }

  /** GET /cluster from the first live broker that answers. */
  async view(): Promise<ClusterView | undefined> {
    for (const n of this.nodes) {
      if (!live(n)) continue;
      const v = await getJson<ClusterView>(this.http(n.id) + "/cluster", 2000);
      if (v) return v;
    }
    return undefined;
  }

  async createTopic(name: string, partitions: number, rf: number): Promise<void> {
    let last = "";
    for (let i = 0; i < 20; i++) {
      const n = this.nodes.find(live);
      if (n === undefined) throw new Error("no live broker");
      try {
        const r = await fetch(this.http(n.id) + "/topics", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name, partitions, replication_factor: rf }),
          signal: AbortSignal.timeout(10_000),
        });
        last = `HTTP ${r.status} ${await r.text()}`;
        if (r.status === 201) {
          await this.waitHealthy(name, partitions, false, 30_000);
          return;
        }
      } catch (e) {
        last = String(e);
      }
      await sleep(500);
    }
    throw new Error(`create topic ${name}: ${last}`);
  }

  /** The partitions of a topic as the first live broker that answers sees them. */
  async describe(name: string, fromId?: number): Promise<PartitionInfo[] | undefined> {
    const ids = fromId !== undefined ? [fromId] : this.nodes.filter(live).map((n) => n.id);
    for (const id of ids) {
      const t = await getJson<{ partitions: PartitionInfo[] }>(
        `${this.http(id)}/topics/${encodeURIComponent(name)}`,
        5000,
      );
      if (t) return t.partitions;
    }
    return undefined;
  }

  /**
   * Every partition has a leader and its full replica set in the ISR (and, with `preferred`, is
   * led by its first replica), as every live broker sees it.
   */
  async healthy(name: string, partitions: number, preferred: boolean): Promise<boolean> {
    for (const n of this.nodes) {
      if (!live(n)) return false;
      const ps = await this.describe(name, n.id);
      if (ps === undefined || ps.length !== partitions) return false;
      for (const p of ps) {
        if (p.leader < 0 || p.isr.length !== p.replicas.length) return false;
        if (preferred && p.leader !== p.replicas[0]) return false;
      }
    }
    return true;
  }

  waitHealthy(name: string, partitions: number, preferred: boolean, timeoutMs: number) {
    return this.waitFor(
      `${name}: ${preferred ? "preferred leaders and " : ""}full ISR`,
      timeoutMs,
      () => this.healthy(name, partitions, preferred),
    );
  }

  async waitFor(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
    const until = performance.now() + timeoutMs;
    for (let i = 0; i < 100_000 && performance.now() < until; i++) {
      if (await ok()) return;
      await sleep(100);
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }

  /** Log end offsets of `topic` on broker `id`, by partition (the /metrics gauge, local log). */
  async logEnds(id: number, topic: string): Promise<Map<number, number> | undefined> {
    try {
      const r = await fetch(this.http(id) + "/metrics", { signal: AbortSignal.timeout(2000) });
      const text = await r.text();
      const out = new Map<number, number>();
      // broker_partition_high_watermark reports each local log's end offset (render.ts: logEndOffset).
      const re = new RegExp(
        `^broker_partition_high_watermark\\{topic="${topic}",partition="(\\d+)"\\} (\\d+)$`,
        "gm",
      );
      for (const m of text.matchAll(re)) out.set(Number(m[1]), Number(m[2]));
      return out;
    } catch {
      return undefined;
    }
  }
}

export class NatsCluster {
  ports: number[] = [];
  routePorts: number[] = [];
  servers: Server[] = [];

  constructor(readonly dir: string, readonly size = 3) {}

  get urls(): string {
    return this.ports.map((p) => `nats://127.0.0.1:${p}`).join(",");
  }

  cpu(): number {
    let s = 0;
    for (const sv of this.servers) {
      if (sv.proc.exitCode === null && sv.proc.signalCode === null) s += cpuSeconds(sv.pid);
    }
    return s;
  }

  /**
   * nats-server 2.9 ×3: JetStream on the local disk (file storage), routes on loopback. Ports are
   * picked free just before; another process may take one meanwhile, so a failed start is retried
   * on fresh ports.
   */
  async start(): Promise<void> {
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#startOnce(attempt);
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
  }

  async #startOnce(attempt: number): Promise<void> {
    this.ports = Array.from({ length: this.size }, () => freePort());
    this.routePorts = Array.from({ length: this.size }, () => freePort());
    this.servers = [];
    for (let i = 0; i < this.size; i++) {
      const sd = join(this.dir, `nats-${i}-${attempt}`);
      mkdirSync(sd, { recursive: true });
      const routes = this.routePorts.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`);
      this.servers.push(startServer(`nats-${i}`, [
        "nats-server",
        "-js",
        "-sd",
        sd,
        "-a",
        "127.0.0.1",
        "-p",
        String(this.ports[i]),
        "-n",
        `s${i}`,
        "--cluster_name",
        "bench",
        "--cluster",
        `nats://127.0.0.1:${this.routePorts[i]}`,
        "--routes",
        routes.join(","),
      ]));
    }
    try {
      await Promise.all(this.servers.map((s) => s.waitFor(/Server is ready/, 30_000)));
      // The JetStream meta group elects its leader once the routes are up; `repl_nats create`
      // retries until it has one.
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => stopServer(s, "SIGTERM")));
  }
}
