// The harness of test/cluster/replication-processes.test.ts (Kafka's `replication_test` on real
// processes): a cluster of broker processes that keep their addresses across restarts, idempotent
// acks=all producers (kafkajs in-process, librdkafka through python3) and a kafkajs consumer group,
// a ledger of everything sent, acknowledged, read and committed, and the checker that reads every
// replica back.
import "./kafkajs-stop-fix.ts"; // scripts/chaos runs this harness outside bun test
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { type Admin, type Consumer, Kafka, logLevel, type Producer } from "kafkajs";
import { type RunningBroker, stablePort, startBrokerProcess, tempDir } from "./broker-process.ts";
import { RawClient } from "../kafka/raw-client.ts";
import { voterArgs } from "./processes.ts";
import { readBatches } from "../../scripts/chaos/segments.ts";

export const TOPIC = "replicated";
export const GROUP = "replicated-group";
export const PARTITIONS = 3;
export const IDS = [0, 1, 2];
export const SESSION_TIMEOUT_MS = 3000;
/** Debian's interpreter: pyenv's python3 on PATH cannot see python3-confluent-kafka. */
export const PYTHON = "/usr/bin/python3";
export const RDKAFKA_DRIVER = join(import.meta.dir, "rdkafka_load.py");
/** kafkajs producers: one batch of BATCH records per partition every PACE_MS. */
export const BATCH = 5;
export const PACE_MS = 25;

export const now = () => Date.now();
export const sleep = (ms: number) => Bun.sleep(ms);

// ---- bounded waiting ------------------------------------------------------------------------

export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined> | T | undefined,
  everyMs = 100,
): Promise<T> {
  const until = now() + timeoutMs;
  for (let i = 0; i < 10_000 && now() < until; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** `p`, or undefined once `ms` passed (the promise is left to settle on its own). */
export function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p, sleep(ms).then(() => undefined)]);
}

export async function getJson(url: string, timeoutMs = 1500): Promise<unknown> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) {
      await r.text();
      return undefined;
    }
    return await r.json();
  } catch {
    return undefined;
  }
}

// ---- the cluster --------------------------------------------------------------------------------

export interface Node {
  id: number;
  dataDir: string;
  /** Addresses kept across restarts, as a real deployment's are. */
  kafkaAddr?: string;
  httpAddr?: string;
  clusterAddr?: string;
  proc?: RunningBroker;
  stopped: boolean;
}

export interface PartitionView {
  partition: number;
  leader: number;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
  high_watermark: number | null;
}

/** How a Cluster runs its brokers (npm run chaos: each in a network namespace of its own). */
export interface ClusterOptions {
  /** The command broker `id` runs under (default: brokerCommand()). */
  command?: (id: number) => string[];
  /** Flags after the harness's own (the last flag wins): addresses, voters, timeouts. */
  args?: (id: number) => string[];
  /** The host clients reach broker `id` on (default: 127.0.0.1). */
  host?: (id: number) => string;
  /** Broker `id`'s data directory (default: a fresh temporary one). */
  dataDir?: (id: number) => string;
  /** How long a start may take before the broker is killed (default 30 s). */
  startTimeoutMs?: number;
}

export class Cluster {
  readonly nodes = new Map<number, Node>();
  readonly exits: { id: number; code: number; signal: string }[] = [];
  /** Brokers that exited without being told to. */
  readonly crashes: string[] = [];
  /** Every process started, for its log lines. */
  readonly history: { id: number; proc: RunningBroker }[] = [];

  constructor(readonly options: ClusterOptions = {}) {}

  async start(id: number): Promise<Node> {
    let n = this.nodes.get(id);
    if (n === undefined) {
      n = {
        id,
        dataDir: this.options.dataDir?.(id) ?? tempDir(`replication-${id}-`),
        stopped: false,
      };
      if (this.options.host === undefined) {
        // Kept across restarts, and out of the range clients' outgoing connections take theirs.
        n.kafkaAddr = `127.0.0.1:${stablePort()}`;
        n.httpAddr = `127.0.0.1:${stablePort()}`;
        n.clusterAddr = `127.0.0.1:${stablePort()}`;
      }
      this.nodes.set(id, n);
    }
    const seed = [...this.nodes.values()].find((m) => m !== n && m.proc && !m.stopped);
    const args = [
      ...voterArgs(id, seed?.clusterAddr, SESSION_TIMEOUT_MS),
      // The same ports as before a restart (parseArgs: the last flag wins).
      ...(n.kafkaAddr ? ["--kafka-addr", n.kafkaAddr] : []),
      ...(n.httpAddr ? ["--http-addr", n.httpAddr] : []),
      ...(n.clusterAddr ? ["--cluster-addr", n.clusterAddr] : []),
      ...(this.options.args?.(id) ?? []),
    ];
    const b = await startBrokerProcess({
      dataDir: n.dataDir,
      args,
      timeoutMs: this.options.startTimeoutMs ?? 30_000,
      command: this.options.command?.(id),
    });
    n.proc = b;
    this.history.push({ id, proc: b });
    const node = n;
    void b.exited.then((code) => {
      // kill() and terminate() let go of the process before it exits: anything else is a crash.
      if (node.proc !== b) return;
      node.proc = undefined;
      this.crashes.push(
        `broker ${id} exited by itself with code ${code}; its last lines:\n${
          b.logs.slice(-12).join("\n")
        }`,
      );
      console.log(`CRASH: broker ${id} exited by itself with code ${code}`);
    });
    n.stopped = false;
    n.kafkaAddr = `${this.options.host?.(id) ?? "127.0.0.1"}:${b.kafkaPort}`;
    n.httpAddr = b.httpUrl.replace("http://", "");
    n.clusterAddr = b.clusterAddr;
    return n;
  }

  /** The last `n` log lines of broker `id`'s latest process. */
  lastLogs(id: number, n = 8): string[] {
    const h = this.history.findLast((x) => x.id === id);
    return h === undefined ? [] : h.proc.logs.slice(-n);
  }

  /** Starts again any broker that is not running (one that crashed). */
  async startMissing(): Promise<void> {
    for (const n of this.nodes.values()) if (n.proc === undefined) await this.start(n.id);
  }

  running(): Node[] {
    return [...this.nodes.values()].filter((n) => n.proc !== undefined && !n.stopped);
  }

  kafkaAddrs(): string[] {
    return this.running().map((n) => n.kafkaAddr!);
  }

  bootstrap(): string {
    return [...this.nodes.values()].map((n) => n.kafkaAddr!).join(",");
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(id: number): Promise<number> {
    const n = this.nodes.get(id)!;
    const p = n.proc!;
    p.kill("SIGKILL");
    const at = now();
    n.proc = undefined;
    const code = await p.exited;
    this.exits.push({ id, code, signal: "SIGKILL" });
    return at;
  }

  /** SIGTERM (controlled shutdown); resolves with the exit code, or -1 if it had to be killed. */
  async terminate(id: number, timeoutMs = 20_000): Promise<number> {
    const n = this.nodes.get(id)!;
    const p = n.proc!;
    n.proc = undefined;
    p.kill("SIGTERM");
    const code = await within(p.exited, timeoutMs);
    if (code === undefined) {
      p.kill("SIGKILL");
      await p.exited;
      this.exits.push({ id, code: -1, signal: "SIGTERM (killed after timeout)" });
      return -1;
    }
    this.exits.push({ id, code, signal: "SIGTERM" });
    return code;
  }

  signal(id: number, sig: "SIGSTOP" | "SIGCONT"): void {
    const n = this.nodes.get(id)!;
    n.proc!.kill(sig);
    n.stopped = sig === "SIGSTOP";
  }

  /** Every running broker's view of a topic, merged: per partition, the highest leader epoch. */
  async topic(name: string): Promise<PartitionView[] | undefined> {
    const views = await Promise.all(
      this.running().map((n) => getJson(`http://${n.httpAddr}/topics/${name}`)),
    );
    const best = new Map<number, PartitionView>();
    for (const v of views) {
      const ps = (v as { partitions?: PartitionView[] } | undefined)?.partitions;
      for (const p of ps ?? []) {
        const b = best.get(p.partition);
        if (b === undefined || p.leader_epoch > b.leader_epoch) best.set(p.partition, p);
      }
    }
    if (best.size === 0) return undefined;
    return [...best.values()].sort((a, b) => a.partition - b.partition);
  }

  async leaderOf(partition: number): Promise<number> {
    const v = await waitFor(`a leader of ${TOPIC}-${partition}`, 15_000, async () => {
      const t = await this.topic(TOPIC);
      const p = t?.find((x) => x.partition === partition);
      const running = new Set(this.running().map((n) => n.id));
      return p && p.leader >= 0 && running.has(p.leader) ? p : undefined;
    });
    return v.leader;
  }

  /** Every partition of the topic led by a running broker, with all three replicas in the ISR. */
  async fullIsr(timeoutMs: number, topic = TOPIC): Promise<PartitionView[]> {
    return await waitFor(`every ${topic} partition with a full ISR`, timeoutMs, async () => {
      const t = await this.topic(topic);
      const running = new Set(this.running().map((n) => n.id));
      if (t === undefined || t.length === 0) return undefined;
      const ok = t.every((p) =>
        running.has(p.leader) && p.isr.length === p.replicas.length &&
        p.replicas.every((r) => running.has(r))
      );
      return ok ? t : undefined;
    }, 200);
  }

  /** The group's coordinator, as FindCoordinator on a running broker names it. */
  async coordinator(group: string): Promise<number | undefined> {
    for (const n of this.running()) {
      let c: RawClient | undefined;
      try {
        c = await within(RawClient.connect(Number(n.kafkaAddr!.split(":")[1])), 1000);
        if (c === undefined) continue;
        const r = await c.call(10, 1, { key: group, keyType: 0 }, 1500);
        if (r.errorCode === 0) return Number(r.nodeId);
      } catch {
        /* next */
      } finally {
        c?.close();
      }
    }
    return undefined;
  }

  /** Writes every process's log lines to `dir` (one file per start). */
  dumpLogs(dir: string): void {
    mkdirSync(dir, { recursive: true });
    this.history.forEach((h, i) => {
      writeFileSync(join(dir, `${i}-broker-${h.id}.log`), h.proc.logs.join("\n") + "\n");
    });
  }

  killAll(): void {
    for (const n of this.nodes.values()) {
      const p = n.proc;
      if (p) {
        // Let go first: an exit we caused is not a crash (nor a "CRASH:" line).
        n.proc = undefined;
        p.kill("SIGCONT");
        p.kill("SIGKILL");
      }
    }
  }
}

// ---- the ledger: what was sent, acknowledged, read, committed --------------------------------

export interface Ack {
  p: number;
  o: number;
  sentAt: number;
  ackAt: number;
  src: string;
}

export interface Commit {
  p: number;
  offset: number;
  by: string;
  sentAt: number;
  /** When the commit was acknowledged (undefined: failed, or not answered yet). */
  ackAt?: number;
}

export class Ledger {
  sent = 0;
  failedSends = 0;
  readonly acked = new Map<string, Ack>();
  readonly ackedBySrc = new Map<string, number>();
  /** Every (partition, offset) ever read, by anyone: the key it held. */
  readonly seen = new Map<string, string>();
  readonly violations: string[] = [];
  /** Per partition, acknowledgements in arrival order (for failover times). */
  readonly acksByPartition: Ack[][] = Array.from({ length: PARTITIONS }, () => []);
  /** Per partition, the highest offset a successful commit named. */
  readonly committed = new Map<number, number>();
  /** Per partition, every commit sent, in order. */
  readonly commits: Commit[][] = Array.from({ length: PARTITIONS }, () => []);
  readonly commitRegressions: string[] = [];
  offsetFetches = 0;
  commitsOk = 0;
  commitsFailed = 0;
  groupReads = 0;
  /** Every (partition, offset) the group read, and how often. */
  readonly groupRead = new Map<string, number>();
  /** Per partition, the next offset the group has read up to. */
  readonly groupFrontier = new Map<number, number>();

  /** Records about to be sent by `src` (a hook for histories; the caller counts `sent`). */
  sending(_keys: readonly string[], _src: string, _at: number): void {}

  /** Records `src` sent that were not acknowledged (they may or may not be in the log). */
  failing(_keys: readonly string[], _src: string, _error: string, _at: number): void {}

  violate(msg: string): void {
    if (this.violations.length < 200) this.violations.push(msg);
    console.log(`VIOLATION: ${msg}`);
  }

  ack(key: string, p: number, o: number, sentAt: number, src: string, ackAt = now()): void {
    const a: Ack = { p, o, sentAt, ackAt, src };
    const prev = this.acked.get(key);
    if (prev !== undefined) {
      this.violate(`${key} acknowledged twice: ${prev.p}@${prev.o} and ${p}@${o}`);
      return;
    }
    this.acked.set(key, a);
    this.ackedBySrc.set(src, (this.ackedBySrc.get(src) ?? 0) + 1);
    this.acksByPartition[p].push(a);
    this.noteOffset(p, o, key, `ack (${src})`);
  }

  noteOffset(p: number, o: number, key: string, by: string): void {
    const k = `${p}:${o}`;
    const had = this.seen.get(k);
    if (had === undefined) this.seen.set(k, key);
    else if (had !== key) {
      this.violate(`${TOPIC}-${p} offset ${o} held ${had}, then ${key} (${by})`);
      this.seen.set(k, key);
    }
  }

  beginCommit(p: number, offset: number, by: string): Commit {
    const c: Commit = { p, offset, by, sentAt: now() };
    if (this.commits[p].length < 100_000) this.commits[p].push(c);
    return c;
  }

  /**
   * A commit was answered. One below an earlier acknowledged commit is counted: kafkajs can hand
   * eachBatch a batch fetched before a rebalance and commit it in the new generation, which the
   * protocol allows (the broker-side rule is `served`).
   */
  endCommit(c: Commit, ok: boolean): void {
    if (!ok) {
      this.commitsFailed++;
      return;
    }
    c.ackAt = now();
    this.commitsOk++;
    const prev = this.committed.get(c.p) ?? -1;
    if (c.offset < prev) {
      this.commitRegressions.push(
        `${c.by} committed ${TOPIC}-${c.p} at ${c.offset} after ${prev} had been acknowledged`,
      );
    }
    this.committed.set(c.p, Math.max(prev, c.offset));
  }

  /**
   * OffsetFetch, sent at `sentAt` and answered at `answeredAt`, served `offset` for `p`: it must be
   * the last commit acknowledged before `sentAt`, or a commit not yet acknowledged by then (it may
   * have been applied after). Anything else means the coordinator lost an acknowledged commit.
   */
  served(p: number, offset: number, sentAt: number, answeredAt: number, by: string): void {
    let last: Commit | undefined;
    for (const c of this.commits[p]) {
      if (
        c.ackAt !== undefined && c.ackAt < sentAt && (last === undefined || c.ackAt > last.ackAt!)
      ) {
        last = c;
      }
    }
    this.offsetFetches++;
    if (last === undefined || offset === last.offset) return;
    const later = this.commits[p].some((c) =>
      c !== last && c.offset === offset && c.sentAt < answeredAt &&
      (c.ackAt === undefined || c.ackAt > last!.ackAt!)
    );
    if (!later) {
      this.violate(
        `${by} served ${offset} as the committed offset of ${TOPIC}-${p}, but ${last.offset} ` +
          `(by ${last.by}) was acknowledged ${sentAt - last.ackAt!} ms before it was asked`,
      );
    }
  }

  /** Failover: SIGKILL (or SIGSTOP) at `at` → the first acks=all acknowledgement on `p` after it. */
  firstAckAfter(p: number, at: number): number | undefined {
    // An answer the dying leader had already sent could arrive just after the signal: count
    // only sends begun after it, or answers well after it (no failover is that fast).
    let first: number | undefined;
    for (const x of this.acksByPartition[p]) {
      if (x.ackAt > at && (x.sentAt >= at || x.ackAt >= at + 100)) {
        first = Math.min(first ?? Infinity, x.ackAt);
      }
    }
    return first === undefined ? undefined : first - at;
  }
}

// ---- load: producers and the consumer group ----------------------------------------------------

export const kafkaLogs: string[] = [];
export function kafka(cluster: Cluster, clientId: string, requestTimeout = 6000): Kafka {
  return new Kafka({
    clientId,
    // Read on every (re)connect: a restarted broker keeps its address, but the list follows.
    brokers: () => cluster.kafkaAddrs(),
    requestTimeout,
    connectionTimeout: 1000,
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.ERROR,
    logCreator: () => ({ namespace, log }) => {
      if (kafkaLogs.length < 20_000) {
        kafkaLogs.push(`${now()} ${clientId} ${namespace}: ${log.message} ${log.error ?? ""}`);
      }
    },
  });
}

/** A producer load's knobs (the defaults are the replication test's). */
export interface LoadOptions {
  /** An idempotent producer (default true); a plain one may write a retried batch twice. */
  idempotent?: boolean;
  /** Key prefix, unique per load: keys are `${prefix}${partition}-${n}` (kafkajs) or `${prefix}-${n}`. */
  prefix?: string;
  /** The name acknowledgements are recorded under. */
  src?: string;
  /** kafkajs: records per batch and the pause between batches; librdkafka: records per second. */
  batch?: number;
  paceMs?: number;
  rate?: number;
  /** librdkafka: the driver's hard cap on its run, in seconds. */
  seconds?: number;
}

export class KafkajsLoad {
  #stop = false;
  #loops: Promise<void>[] = [];
  recreated = 0;
  readonly idempotent: boolean;
  readonly prefix: string;
  readonly src: string;

  constructor(readonly cluster: Cluster, readonly ledger: Ledger, readonly opts: LoadOptions = {}) {
    this.idempotent = opts.idempotent ?? true;
    this.prefix = opts.prefix ?? "kj";
    this.src = opts.src ?? "kafkajs";
  }

  start(): void {
    for (let p = 0; p < PARTITIONS; p++) this.#loops.push(this.#loop(p));
  }

  async #producer(p: number): Promise<Producer | undefined> {
    const prod = kafka(this.cluster, `${this.src}-p${p}`).producer({
      idempotent: this.idempotent,
      maxInFlightRequests: 1,
      // The default (5 minutes) would keep sending to a stopped leader until it answers.
      metadataMaxAge: 2000,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    return (await within(prod.connect().then(() => prod, () => undefined), 10_000)) ?? undefined;
  }

  async #loop(p: number): Promise<void> {
    let prod: Producer | undefined;
    let n = 0;
    for (let round = 0; round < 100_000 && !this.#stop; round++) {
      prod ??= await this.#producer(p);
      if (prod === undefined) {
        await sleep(200);
        continue;
      }
      const keys = Array.from(
        { length: this.opts.batch ?? BATCH },
        () => `${this.prefix}${p}-${n++}`,
      );
      const sentAt = now();
      this.ledger.sent += keys.length;
      this.ledger.sending(keys, this.src, sentAt);
      try {
        const r = await prod.send({
          topic: TOPIC,
          acks: -1,
          timeout: 5000,
          messages: keys.map((k) => ({ key: k, value: k, partition: p })),
        });
        const md = r.find((x) => x.partition === p);
        if (md === undefined || md.errorCode !== 0) {
          throw new Error(`bad answer ${JSON.stringify(r)}`);
        }
        const base = Number(md.baseOffset);
        keys.forEach((k, i) => this.ledger.ack(k, p, base + i, sentAt, this.src));
      } catch (e) {
        // Not acknowledged: the records may or may not be in the log. A new producer (new id)
        // follows, so no later batch can reuse these sequence numbers.
        this.ledger.failedSends += keys.length;
        const msg = e instanceof Error ? e.message : String(e);
        this.ledger.failing(keys, this.src, msg, now());
        if (kafkaLogs.length < 20_000) kafkaLogs.push(`${this.src}-p${p} send failed: ${msg}`);
        const old = prod;
        prod = undefined;
        this.recreated++;
        void within(old.disconnect().catch(() => {}), 5000);
      }
      await sleep(this.opts.paceMs ?? PACE_MS);
    }
    if (prod) await within(prod.disconnect().catch(() => {}), 5000);
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await within(Promise.all(this.#loops), 60_000);
  }
}

/** librdkafka's idempotent producer, in a python3 process, reporting every delivery. */
export class RdkafkaLoad {
  proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  readonly sentAt = new Map<string, number>();
  errors: string[] = [];
  fatal: string[] = [];
  notAcked = 0;
  #reading: Promise<void> | undefined;
  readonly src: string;
  /** What the driver wrote to stderr (librdkafka's own log lines). */
  readonly stderr: string[] = [];

  constructor(readonly cluster: Cluster, readonly ledger: Ledger, readonly opts: LoadOptions = {}) {
    this.src = opts.src ?? "librdkafka";
  }

  static available(): boolean {
    if (!existsSync(PYTHON)) return false;
    const r = Bun.spawnSync([PYTHON, "-c", "import confluent_kafka"], {
      stdout: "ignore",
      stderr: "ignore",
    });
    return r.exitCode === 0;
  }

  start(): void {
    this.proc = Bun.spawn([
      PYTHON,
      RDKAFKA_DRIVER,
      "--bootstrap",
      this.cluster.bootstrap(),
      "--topic",
      TOPIC,
      "--prefix",
      this.opts.prefix ?? "rd",
      "--rate",
      String(this.opts.rate ?? 100),
      "--seconds",
      String(this.opts.seconds ?? 240),
      ...(this.opts.idempotent === false ? ["--no-idempotence"] : []),
    ], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const proc = this.proc;
    // librdkafka logs to stderr: drained, so a full pipe never blocks the producer.
    void (async () => {
      const dec = new TextDecoder();
      for await (const chunk of proc.stderr) {
        if (this.stderr.length < 10_000) this.stderr.push(dec.decode(chunk, { stream: true }));
      }
    })().catch(() => {});
    this.#reading = (async () => {
      const dec = new TextDecoder();
      let buf = "";
      for await (const chunk of proc.stdout) {
        buf += dec.decode(chunk, { stream: true });
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          this.#line(line);
        }
      }
    })();
  }

  #line(line: string): void {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof m.s === "string") {
      this.sentAt.set(m.s, Number(m.t));
      this.ledger.sent++;
      this.ledger.sending([m.s], this.src, Number(m.t));
    } else if (typeof m.k === "string" && typeof m.o === "number") {
      // The driver's own clock (epoch ms, as Date.now()): the pipe may deliver the line late.
      this.ledger.ack(m.k, Number(m.p), m.o, this.sentAt.get(m.k) ?? 0, this.src, Number(m.t));
      this.sentAt.delete(m.k);
    } else if (typeof m.k === "string") {
      this.notAcked++;
      this.ledger.failedSends++;
      this.ledger.failing([m.k], this.src, String(m.e), now());
      if (this.errors.length < 20) this.errors.push(`${m.k}: ${m.e}`);
    } else if (m.fatal !== undefined) {
      this.fatal.push(String(m.fatal));
    }
  }

  async stop(): Promise<void> {
    if (!this.proc) return;
    this.proc.kill("SIGTERM");
    const code = await within(this.proc.exited, 40_000);
    if (code === undefined) this.proc.kill("SIGKILL");
    await within(this.#reading!, 5000);
  }
}

/** kafkajs group members that read, record and commit every batch. */
export class Group {
  readonly members: Consumer[] = [];
  readonly events: string[] = [];

  constructor(readonly cluster: Cluster, readonly ledger: Ledger) {}

  note(e: string): void {
    if (this.events.length < 50_000) this.events.push(`${now()} ${e}`);
  }

  /**
   * A new member. Its start (connect, subscribe, the first join) is retried with a fresh consumer,
   * as an application would: kafkajs restarts a running consumer on its own, but a start that
   * fails (its coordinator killed during the join: ECONNRESET) rejects once and for all.
   */
  async add(): Promise<Consumer> {
    const name = `member-${this.members.length}`;
    for (let attempt = 1;; attempt++) {
      try {
        const c = await this.#start(name);
        this.members.push(c);
        return c;
      } catch (e) {
        this.note(`${name} start failed (attempt ${attempt}): ${(e as Error).message}`);
        if (attempt >= 10) throw e;
        await Bun.sleep(500);
      }
    }
  }

  async #start(name: string): Promise<Consumer> {
    const c = kafka(this.cluster, name).consumer({
      groupId: GROUP,
      metadataMaxAge: 2000,
      sessionTimeout: 10_000,
      rebalanceTimeout: 15_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 250,
      // kafkajs's default retries (5). kafkajs retries consumer.commitOffsets against the
      // coordinator it found at its last join, never looking it up again, and sends no heartbeat
      // meanwhile: once the coordinator moves, each commit fails only after its retries ran out,
      // and only then does a heartbeat's NOT_COORDINATOR (or a restart) send the member to the
      // new one. 30 retries held a member ~26 s per commit, past its session timeout.
    });
    c.on(c.events.GROUP_JOIN, (e) => {
      const a = e.payload.memberAssignment[TOPIC] ?? [];
      this.note(`${name} joined: [${a.join(",")}] (${e.payload.memberId})`);
    });
    c.on(c.events.COMMIT_OFFSETS, (e) => {
      const ps = e.payload.topics.flatMap((t) =>
        t.partitions.map((p) => `${p.partition}@${p.offset}`)
      );
      this.note(`${name} committed generation ${e.payload.groupGenerationId}: ${ps.join(" ")}`);
    });
    c.on(c.events.CRASH, (e) => {
      this.note(`${name} crashed: ${e.payload.error?.message}`);
    });
    try {
      await c.connect();
      await c.subscribe({ topic: TOPIC, fromBeginning: true });
    } catch (e) {
      await c.disconnect().catch(() => {});
      throw e;
    }
    const running = c.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        const p = batch.partition;
        if (batch.messages.length > 0) {
          this.note(`${name} batch ${p}: ${batch.firstOffset()}-${batch.lastOffset()}`);
        }
        for (const m of batch.messages) {
          this.ledger.noteOffset(p, Number(m.offset), String(m.key), `group read by ${name}`);
          this.ledger.groupReads++;
          const k = `${p}:${m.offset}`;
          this.ledger.groupRead.set(k, (this.ledger.groupRead.get(k) ?? 0) + 1);
        }
        if (batch.messages.length === 0) return;
        const next = Number(batch.lastOffset()) + 1;
        this.ledger.groupFrontier.set(p, Math.max(this.ledger.groupFrontier.get(p) ?? 0, next));
        const commit = this.ledger.beginCommit(p, next, name);
        try {
          await c.commitOffsets([{ topic: TOPIC, partition: p, offset: String(next) }]);
          this.ledger.endCommit(commit, true);
        } catch {
          this.ledger.endCommit(commit, false);
        }
        await heartbeat().catch(() => {});
      },
    });
    try {
      await running;
    } catch (e) {
      await c.disconnect().catch(() => {});
      throw e;
    }
    return c;
  }

  async stop(): Promise<void> {
    await within(Promise.all(this.members.map((c) => c.disconnect().catch(() => {}))), 20_000);
  }
}

// ---- the checker ---------------------------------------------------------------------------------

export interface ReadResult {
  records: { offset: number; key: string | null }[];
  next_offset: number;
  high_watermark: number;
}

/** One replica's copy of a partition, from its log start up to its high watermark. */
export async function readReplica(n: Node, p: number): Promise<Map<number, string> | undefined> {
  const out = new Map<number, string>();
  let offset = 0;
  let hw = -1;
  for (let i = 0; i < 200; i++) {
    const r = await getJson(
      `http://${n.httpAddr}/topics/${TOPIC}/partitions/${p}/records?offset=${offset}&limit=10000&max_bytes=8388608&format=text&replica=local`,
      5000,
    ) as ReadResult | undefined;
    if (r === undefined) return undefined;
    if (hw < 0) hw = r.high_watermark;
    for (const rec of r.records) out.set(rec.offset, rec.key ?? "");
    if (r.next_offset >= hw || r.records.length === 0) return out;
    offset = r.next_offset;
  }
  return out;
}

export interface Figures {
  scenario: string;
  sent: number;
  acknowledged: number;
  notAcknowledged: number;
  lost: number;
  duplicated: number;
  records: number;
  replicasCompared: number;
}

export class Checker {
  #last = { sent: 0, acked: 0, failed: 0 };
  /** Keys in the log twice across producer epochs (librdkafka's re-sends after a bump). */
  clientDuplicates = 0;
  readonly figures: Figures[] = [];

  constructor(readonly cluster: Cluster, readonly ledger: Ledger) {}

  /** Reads every running replica of every partition; returns the figures since the last check. */
  async check(scenario: string): Promise<Figures> {
    const L = this.ledger;
    const snapshot = [...L.acked.entries()];
    const view = await this.cluster.fullIsr(30_000);
    const running = new Map(this.cluster.running().map((n) => [n.id, n]));
    const logs: Map<number, string>[] = [];
    let compared = 0;
    for (const pv of view) {
      const p = pv.partition;
      const leaderLog = await readReplica(running.get(pv.leader)!, p);
      if (leaderLog === undefined) throw new Error(`could not read ${TOPIC}-${p} on its leader`);
      logs[p] = leaderLog;
      for (const [o, k] of leaderLog) L.noteOffset(p, o, k, `checker read of leader ${pv.leader}`);
      for (const r of pv.replicas) {
        if (r === pv.leader) continue;
        const copy = await readReplica(running.get(r)!, p);
        if (copy === undefined) continue;
        compared++;
        for (const [o, k] of copy) L.noteOffset(p, o, k, `checker read of follower ${r}`);
      }
    }
    let lost = 0;
    for (const [key, a] of snapshot) {
      const at = logs[a.p]?.get(a.o);
      if (at !== key) {
        lost++;
        if (lost <= 10) {
          L.violate(
            `acknowledged ${key} (${a.src}, ${TOPIC}-${a.p} offset ${a.o}) is ${
              at === undefined ? "missing" : `replaced by ${at}`
            }`,
          );
        }
      }
    }
    // A second copy of a key is the broker's fault when both copies carry the same producer
    // session (producer id and epoch): the broker should have matched the retry. Copies in
    // different epochs are librdkafka's: after it bumps its epoch (message timeouts under load) it
    // re-sends the records in flight with new sequences, which no broker can match (counted apart).
    const sessions = new Map<number, (o: number) => string | undefined>();
    for (const pv of view) {
      const leader = running.get(pv.leader)!;
      const batches = readBatches(leader.dataDir, TOPIC, pv.partition);
      sessions.set(pv.partition, (o) => {
        const b = batches.find((x) => x.base <= o && o <= x.last);
        return b === undefined || b.pid < 0 ? undefined : `${b.pid}/${b.epoch}`;
      });
    }
    const where = new Map<string, [number, number][]>();
    let duplicated = 0;
    let records = 0;
    logs.forEach((log, p) => {
      for (const [o, k] of log ?? []) {
        records++;
        const at = where.get(k) ?? [];
        at.push([p, o]);
        where.set(k, at);
      }
    });
    for (const [k, at] of where) {
      if (at.length < 2) continue;
      const ss = at.map(([p, o]) => sessions.get(p)?.(o));
      const sameSession = ss.some((x, i) => x === undefined || ss.indexOf(x) !== i);
      if (!sameSession) {
        this.clientDuplicates++;
        continue;
      }
      duplicated++;
      if (duplicated <= 10) {
        L.violate(
          `${k} is in the log more than once: ${
            at.map(([p, o], i) => `${TOPIC}-${p}@${o} (${ss[i] ?? "no producer id"})`).join(", ")
          }`,
        );
      }
    }
    const f: Figures = {
      scenario,
      sent: L.sent - this.#last.sent,
      acknowledged: L.acked.size - this.#last.acked,
      notAcknowledged: L.failedSends - this.#last.failed,
      lost,
      duplicated,
      records,
      replicasCompared: compared,
    };
    this.#last = { sent: L.sent, acked: L.acked.size, failed: L.failedSends };
    this.figures.push(f);
    console.log(
      `[${scenario}] sent ${f.sent}, acknowledged ${f.acknowledged}, not acknowledged ${f.notAcknowledged}; ` +
        `log: ${records} records, lost ${lost}, duplicated ${duplicated} (and ${this.clientDuplicates} re-sent by librdkafka after an epoch bump, in all); ${compared} follower copies compared; ` +
        `group: ${L.groupReads} reads, ${L.commitsOk} commits (${L.commitsFailed} failed, ` +
        `${L.commitRegressions.length} below an earlier one), ${L.offsetFetches} OffsetFetch answers checked`,
    );
    return f;
  }

  /** The group gets to within `slack` of every partition's end (it resumed after a fault). */
  async groupCaughtUp(timeoutMs: number): Promise<number> {
    const t0 = now();
    const target = new Map<number, number>();
    for (const a of this.ledger.acked.values()) {
      target.set(a.p, Math.max(target.get(a.p) ?? 0, a.o + 1));
    }
    await waitFor("the group to read every acknowledged record", timeoutMs, () => {
      for (const [p, end] of target) {
        if ((this.ledger.groupFrontier.get(p) ?? 0) < end) return undefined;
      }
      return true;
    }, 200);
    return now() - t0;
  }

  /** Committed offsets as the coordinator serves them (OffsetFetch), checked by `served`. */
  async committedOffsets(admin: Admin, by = "OffsetFetch"): Promise<boolean> {
    const sentAt = now();
    const r = await within(
      admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] }).catch(() => undefined),
      5000,
    );
    if (r === undefined) return false;
    const answeredAt = now();
    for (const t of r) {
      for (const p of t.partitions) {
        // -1 is "no committed offset": after an acknowledged commit, as wrong as an older one
        // (a consumer would start over from auto.offset.reset).
        const o = Number(p.offset);
        this.ledger.served(p.partition, o < 0 ? -1 : o, sentAt, answeredAt, by);
      }
    }
    return true;
  }

  #polling = false;
  #poller: Promise<void> | undefined;

  /** OffsetFetch every 250 ms while the scenarios run. */
  startPolling(k: Kafka): void {
    this.#polling = true;
    this.#poller = (async () => {
      const admin = k.admin();
      await within(admin.connect().catch(() => {}), 5000);
      for (let i = 0; i < 5000 && this.#polling; i++) {
        await this.committedOffsets(admin, "OffsetFetch (poller)");
        await sleep(250);
      }
      await within(admin.disconnect().catch(() => {}), 3000);
    })();
  }

  async stopPolling(): Promise<void> {
    this.#polling = false;
    await within(this.#poller ?? Promise.resolve(), 10_000);
  }
}

export function pct(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
}
