// One chaos run: a cluster of broker processes in network namespaces (net.ts), producers and a
// consumer group from the replication test's harness recording into a History, the seed's fault
// schedule (schedule.ts, faults.ts), then everything healed, every replica read back, and the
// History judged (checker.ts). Writes the history, the brokers' logs and a summary to `out`.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Admin } from "kafkajs";
import { brokerCommand } from "../../test/helpers/broker-process.ts";
import {
  Cluster,
  getJson,
  GROUP,
  Group,
  kafka,
  KafkajsLoad,
  kafkaLogs,
  Ledger,
  now,
  PARTITIONS,
  RdkafkaLoad,
  SESSION_TIMEOUT_MS,
  sleep,
  TOPIC,
  waitFor,
  within,
} from "../../test/helpers/replication-harness.ts";
import { check, type Verdict } from "./checker.ts";
import { failedStarts, runStep, startMissing } from "./faults.ts";
import { emptyHistory, type History, type ReplicaLog } from "./history.ts";
import { ChaosDisks } from "./disk.ts";
import { ChaosNet } from "./net.ts";
import { summary } from "./report.ts";
import { readBatches } from "./segments.ts";
import { type FaultKind, schedule } from "./schedule.ts";

/**
 * Each broker's disk in a disk-full run: room for a long run's records (a few tens of MiB per
 * replica) and segment preallocation; tmpfs takes memory only for what is written.
 */
const DISK_MIB = 512;

export interface ChaosOptions {
  /** Seconds of faults (setup before and the final check after add about a minute). */
  durationS: number;
  seed: number;
  faults: FaultKind[];
  brokers: number;
  /** The run's folder: history.json, summary.txt, logs/. */
  out: string;
  /** At most this many faults (default: as many as fit in the duration). */
  steps?: number;
  /** Keep the brokers' data directories (default: removed after a clean run). */
  keepData?: boolean;
  /** CI's small run: short holds, one librdkafka producer, one group member, shorter waits. */
  quick?: boolean;
  log?: (line: string) => void;
}

export interface ChaosResult {
  verdict: Verdict;
  history: History;
  text: string;
}

/** Records the harness ledger's events into a History as they happen. */
class RecordingLedger extends Ledger {
  constructor(readonly h: History) {
    super();
  }

  override sending(keys: readonly string[], src: string, at: number): void {
    for (const key of keys) this.h.sends.push({ key, src, at });
  }

  override failing(keys: readonly string[], src: string, error: string, at: number): void {
    for (const key of keys) this.h.fails.push({ key, src, at, error });
  }

  override ack(key: string, p: number, o: number, sentAt: number, src: string, ackAt = now()) {
    super.ack(key, p, o, sentAt, src, ackAt);
    this.h.acks.push({ key, p, o, src, sentAt, ackAt });
  }

  override noteOffset(p: number, o: number, key: string, by: string): void {
    super.noteOffset(p, o, key, by);
    if (by.startsWith("group read")) this.h.reads.push({ p, o, key, at: now(), by });
  }
}

/** One replica's copy, up to its own high watermark (HTTP, replica=local). */
async function readCopy(
  httpAddr: string,
  p: number,
): Promise<{ hw: number; records: [number, string][] } | undefined> {
  const records: [number, string][] = [];
  let offset = 0;
  let hw = -1;
  for (let i = 0; i < 1000; i++) {
    const r = await getJson(
      `http://${httpAddr}/topics/${TOPIC}/partitions/${p}/records?offset=${offset}&limit=10000` +
        `&max_bytes=8388608&format=text&replica=local`,
      10_000,
    ) as
      | {
        records: { offset: number; key: string | null }[];
        next_offset: number;
        high_watermark: number;
      }
      | undefined;
    if (r === undefined) return undefined;
    if (hw < 0) hw = r.high_watermark;
    for (const rec of r.records) if (rec.offset < hw) records.push([rec.offset, rec.key ?? ""]);
    if (r.next_offset >= hw || r.records.length === 0) break;
    offset = r.next_offset;
  }
  return { hw, records };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const t0 = now();
  const stamp = (l: string) => log(`[t+${((now() - t0) / 1000).toFixed(1)}s] ${l}`);
  mkdirSync(join(o.out, "logs"), { recursive: true });
  const h = emptyHistory(TOPIC, PARTITIONS, ["kafkajs", "librdkafka"]);
  h.run = {
    seed: o.seed,
    durationS: o.durationS,
    faults: o.faults,
    brokers: o.brokers,
    steps: o.steps,
    quick: o.quick,
  };
  const loadavg = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  h.load.push(loadavg());
  const sampler = setInterval(() => h.load.push(loadavg()), 5000);
  const timeline: string[] = [];
  const note = (l: string) => {
    timeline.push(`${new Date().toISOString()} ${l}`);
    if (/^(LIVENESS|NOT recovered|the group did NOT)/.test(l) && h.liveness.length < 100) {
      h.liveness.push(l);
    }
    stamp(l);
  };

  const net = ChaosNet.create(o.brokers);
  note(`network: slot ${net.slot}, brokers at ${net.ids.map((i) => net.ip(i)).join(", ")}`);
  // A disk-full fault needs each broker's data on a filesystem of its own, to fill one alone.
  let disks: ChaosDisks | undefined;
  const dataDirs = new Map<number, string>();
  if (o.faults.includes("disk-full")) {
    disks = new ChaosDisks(net, DISK_MIB);
    try {
      for (const id of net.ids) {
        dataDirs.set(id, disks.mount(id, join(o.out, "data", `broker-${id}`)));
      }
    } catch (e) {
      disks.unmountAll(false);
      net.down();
      throw e;
    }
    note(`data directories on their own ${DISK_MIB} MiB tmpfs each`);
  }
  const cluster = new Cluster({
    command: (id) => [...net.exec(id), ...brokerCommand()],
    host: (id) => net.ip(id),
    dataDir: (id) => dataDirs.get(id) ?? join(o.out, "data", `broker-${id}`),
    // A broker waits up to 15 s to be unfenced and 10 s for its partitions before it says it
    // started: on a loaded machine 30 s is not enough.
    startTimeoutMs: 60_000,
    args: (id) => [
      "--kafka-addr",
      `${net.ip(id)}:9092`,
      "--http-addr",
      `${net.ip(id)}:8080`,
      "--cluster-addr",
      `${net.ip(id)}:9093`,
      "--voters",
      o.brokers >= 5 ? "5" : o.brokers >= 3 ? "3" : "1",
    ],
  });
  const ledger = new RecordingLedger(h);
  const loads = [
    // Bounded and light (the machine is shared; faults, not load, are the point): about 60
    // records/s per kafkajs producer per partition when the cluster answers at once.
    new KafkajsLoad(cluster, ledger, { prefix: "kj", src: "kafkajs", batch: 3, paceMs: 50 }),
    new KafkajsLoad(cluster, ledger, {
      prefix: "kp",
      src: "kafkajs-plain",
      idempotent: false,
      batch: 2,
      paceMs: 100,
    }),
  ];
  const rdkafka = RdkafkaLoad.available();
  const quick = o.quick === true;
  const rds = rdkafka
    ? [
      new RdkafkaLoad(cluster, ledger, {
        prefix: "rd",
        src: "librdkafka",
        rate: 40,
        seconds: o.durationS + 300,
      }),
      new RdkafkaLoad(cluster, ledger, {
        prefix: "rp",
        src: "librdkafka-plain",
        idempotent: false,
        rate: 20,
        seconds: o.durationS + 300,
      }),
    ].slice(0, quick ? 1 : 2)
    : [];
  const group = new Group(cluster, ledger);
  let polling = true;
  let poller: Promise<void> = Promise.resolve();

  // Ctrl-C: stop the brokers and remove the network before leaving.
  let interrupted = false;
  const onSignal = (sig: string) => {
    if (interrupted) return;
    interrupted = true;
    log(`${sig}: stopping the brokers and removing the chaos network`);
    cluster.killAll();
    for (const r of rds) r.proc?.kill("SIGKILL");
    net.down();
    process.exit(130);
  };
  const sigint = () => onSignal("SIGINT");
  const sigterm = () => onSignal("SIGTERM");
  process.on("SIGINT", sigint);
  process.on("SIGTERM", sigterm);

  try {
    // ---- the cluster and the topic ----
    await cluster.start(0);
    await Promise.all(net.ids.slice(1).map((id) => cluster.start(id)));
    note(`${o.brokers} brokers started`);
    await waitFor("the topic created", 30_000, async () => {
      try {
        const r = await fetch(`http://${cluster.running()[0].httpAddr}/topics`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            name: TOPIC,
            partitions: PARTITIONS,
            replication_factor: Math.min(3, o.brokers),
            configs: { "min.insync.replicas": String(Math.min(2, o.brokers)) },
          }),
          signal: AbortSignal.timeout(3000),
        });
        await r.text();
        return r.status === 201 || r.status === 409 ? true : undefined;
      } catch {
        return undefined;
      }
    }, 300);
    await cluster.fullIsr(30_000);
    note(`topic ${TOPIC}: ${PARTITIONS} partitions, RF ${Math.min(3, o.brokers)}, every ISR full`);

    // ---- the load ----
    for (const l of loads) l.start();
    for (const r of rds) {
      r.start();
      net.track(r.proc?.pid);
    }
    if (!rdkafka) note("python3 confluent_kafka not found: the librdkafka producers are left out");
    // One after the other: a member's name is its place in the group.
    await within(quick ? group.add() : group.add().then(() => group.add()), 60_000);
    await waitFor(
      "acknowledged writes on every partition",
      60_000,
      () => ledger.acksByPartition.every((a) => a.length > 0) ? true : undefined,
    ).catch(() => note("LIVENESS: no acknowledged write on some partition 60 s after the start"));
    poller = pollOffsets(() => kafka(cluster, "offsets-poller").admin(), ledger, h, () => polling);
    note(
      `load running: ${[...loads.map((l) => l.src), ...rds.map((r) => r.src)].join(", ")}; ` +
        `group ${GROUP} with ${group.members.length} members`,
    );

    // ---- the faults ----
    const steps = schedule({
      seed: o.seed,
      faults: o.faults,
      brokers: o.brokers,
      partitions: PARTITIONS,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      steps: o.steps,
      short: quick,
    });
    const end = now() + o.durationS * 1000;
    for (const step of steps) {
      if (now() + step.gapMs >= end) break;
      await sleep(step.gapMs);
      if (cluster.running().length < o.brokers) {
        note(`starting brokers that are not running: ${cluster.crashes.length} crash(es) so far`);
        await startMissing(cluster, note);
        await cluster.fullIsr(30_000).catch(() => note("ISRs not full after the restart"));
      }
      const ev = await runStep(
        { cluster, net, disks, log: note, recoverMs: quick ? 30_000 : 45_000 },
        step,
      );
      if (ev) h.faults.push(ev);
    }

    // ---- heal, stop, read back ----
    note(`faults over (${h.faults.length}); healing and letting the cluster settle`);
    net.heal();
    for (const n of cluster.nodes.values()) if (n.stopped) cluster.signal(n.id, "SIGCONT");
    await startMissing(cluster, note);
    const settle = quick ? 30_000 : 60_000;
    await cluster.fullIsr(settle).catch(() =>
      note(`NOT recovered: ISRs not full ${settle / 1000} s after`)
    );
    h.loadEndAt = now();
    for (const l of loads) await l.stop();
    for (const r of rds) await r.stop();
    const caughtUp = await waitFor("the group to catch up", quick ? 20_000 : 45_000, () => {
      const target = new Map<number, number>();
      for (const a of h.acks) target.set(a.p, Math.max(target.get(a.p) ?? 0, a.o + 1));
      for (const [p, e] of target) if ((ledger.groupFrontier.get(p) ?? 0) < e) return undefined;
      return now();
    }, 200).catch(() => undefined);
    note(
      caughtUp === undefined
        ? "the group did NOT read every acknowledged record in time"
        : "the group read every acknowledged record",
    );
    await sleep(1000); // one more OffsetFetch round after the last commits
    polling = false;
    await within(poller, 15_000);
    await group.stop();
    // A new leader's high watermark can trail its log until its followers fetch again: give it
    // time to pass every acknowledged offset (one still below it after that is reported lost).
    const acked = new Map<number, number>();
    for (const a of h.acks) acked.set(a.p, Math.max(acked.get(a.p) ?? 0, a.o + 1));
    await waitFor("high watermarks past every acknowledged offset", 60_000, async () => {
      const t = await cluster.topic(TOPIC);
      return t !== undefined &&
          [...acked].every(([p, end]) =>
            (t.find((x) => x.partition === p)?.high_watermark ?? -1) >= end
          )
        ? true
        : undefined;
    }, 500).catch(() => note("LIVENESS: a high watermark below an acknowledged offset after 60 s"));
    h.replicas = await readBack(cluster, note);
  } catch (e) {
    note(`run aborted: ${e instanceof Error ? e.stack ?? e.message : e}`);
    h.live.push(`run aborted: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`);
  } finally {
    polling = false;
    clearInterval(sampler);
    process.off("SIGINT", sigint);
    process.off("SIGTERM", sigterm);
    h.endAt = now();
    for (const v of ledger.violations) h.live.push(`ledger: ${v}`);
    for (const c of cluster.crashes) h.live.push(`crash: ${c}`);
    h.commits = ledger.commits.flat().map((c) => ({ ...c }));
    // After an abort the load may still run: told to stop, not waited for.
    for (const l of loads) void l.stop();
    void group.stop();
    cluster.killAll();
    for (const r of rds) r.proc?.kill("SIGKILL");
    await sleep(300);
    // The leaders' batches, for who wrote a duplicate under which producer session (read before
    // the disks of a disk-full run go).
    for (const r of h.replicas.filter((x) => x.leader)) {
      const dir = cluster.nodes.get(r.broker)?.dataDir;
      if (dir !== undefined) h.batches.push(...readBatches(dir, TOPIC, r.p));
    }
    // Copied out before unmounting: whether a violation keeps them is known only after the check.
    disks?.unmountAll(true);
    net.down();
  }

  const verdict = check(h);
  const text = summary(o, h, verdict, rdkafka);
  writeFileSync(join(o.out, "history.json"), JSON.stringify(h));
  writeFileSync(join(o.out, "summary.txt"), text);
  writeFileSync(join(o.out, "timeline.log"), timeline.join("\n") + "\n");
  writeFileSync(
    join(o.out, "violations.log"),
    verdict.violations.map((v) => `${v.kind}: ${v.msg}`).join("\n") + "\n",
  );
  cluster.dumpLogs(join(o.out, "logs"));
  failedStarts.forEach((f, i) =>
    writeFileSync(join(o.out, "logs", `start-failed-${i}-broker-${f.id}.log`), f.text + "\n")
  );
  writeFileSync(join(o.out, "logs", "group-events.log"), group.events.join("\n") + "\n");
  writeFileSync(join(o.out, "logs", "kafka-clients.log"), kafkaLogs.join("\n") + "\n");
  rds.forEach((r) => writeFileSync(join(o.out, "logs", `${r.src}.stderr.log`), r.stderr.join("")));
  if (verdict.ok && !o.keepData) rmSync(join(o.out, "data"), { recursive: true, force: true });
  return { verdict, history: h, text };
}

/**
 * OffsetFetch every 500 ms: every answer (no commit yet: -1) goes into the history. After three
 * failures in a row the admin client is replaced (a kafkajs admin whose connect failed stays
 * unconnected).
 */
async function pollOffsets(
  newAdmin: () => Admin,
  ledger: Ledger,
  h: History,
  going: () => boolean,
): Promise<void> {
  let admin = newAdmin();
  await within(admin.connect().catch(() => {}), 5000);
  let failures = 0;
  for (let i = 0; i < 100_000 && going(); i++) {
    const sentAt = now();
    const r = await within(
      admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] }).catch(() => undefined),
      5000,
    );
    const answeredAt = now();
    if (r === undefined && ++failures >= 3) {
      void within(admin.disconnect().catch(() => {}), 3000);
      admin = newAdmin();
      await within(admin.connect().catch(() => {}), 5000);
      failures = 0;
    } else if (r !== undefined) failures = 0;
    for (const t of r ?? []) {
      for (const p of t.partitions) {
        const offset = Number(p.offset);
        h.fetches.push({ p: p.partition, offset, sentAt, answeredAt, by: "OffsetFetch" });
        if (offset >= 0) ledger.served(p.partition, offset, sentAt, answeredAt, "OffsetFetch");
      }
    }
    await sleep(500);
  }
  await within(admin.disconnect().catch(() => {}), 3000);
}

/** Every replica of every partition, as each running broker holds it. */
async function readBack(cluster: Cluster, note: (l: string) => void): Promise<ReplicaLog[]> {
  const out: ReplicaLog[] = [];
  const view = await cluster.topic(TOPIC);
  for (const pv of view ?? []) {
    for (const id of pv.replicas) {
      const n = cluster.nodes.get(id);
      if (n?.proc === undefined || n.httpAddr === undefined) continue;
      const copy = await readCopy(n.httpAddr, pv.partition);
      if (copy === undefined) {
        note(`could not read ${TOPIC}-${pv.partition} on broker ${id}`);
        continue;
      }
      out.push({
        p: pv.partition,
        broker: id,
        leader: id === pv.leader,
        highWatermark: copy.hw,
        records: copy.records,
      });
    }
  }
  return out;
}
