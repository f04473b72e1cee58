// The cost of TLS on the cluster port (docs/security.md, "Cluster port TLS"): the same replicated
// produce load on a 3-broker cluster without and with --cluster-tls-* (mutual TLS), alternated
// (plain, TLS, plain, TLS, ...) so a machine whose load drifts weighs on both alike. Each round
// starts a fresh cluster, creates a topic of 3 partitions with 3 replicas (min.insync.replicas 2),
// then measures kafkajs acks=all throughput (batches of 100 records of 1 KiB, 8 in flight) and
// the latency of one-at-a-time acks=all sends.
//   bun scripts/bench/cluster-tls.ts [--rounds N] [--seconds S]
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { Kafka, logLevel } from "kafkajs";
import {
  type RunningBroker,
  startBrokerProcess,
  tempDir,
} from "../../test/helpers/broker-process.ts";
import { clusterTlsArgs, makeTestCerts } from "../../test/helpers/certs.ts";
import { voterArgs } from "../../test/helpers/processes.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const ROUNDS = opt("--rounds", 2);
const SECONDS = opt("--seconds", 8);
const ONE_AT_A_TIME = 300;

const certs = await makeTestCerts();
const tlsArgs = clusterTlsArgs(certs);

async function cluster(tls: boolean): Promise<RunningBroker[]> {
  const start = (id: number, join?: string) =>
    startBrokerProcess({
      dataDir: tempDir("bench-cluster-tls-"),
      args: [...voterArgs(id, join, 6000), ...(tls ? tlsArgs : [])],
      timeoutMs: 60_000,
    });
  const b0 = await start(0);
  const rest = await Promise.all([start(1, b0.clusterAddr), start(2, b0.clusterAddr)]);
  return [b0, ...rest];
}

async function waitInSync(b: RunningBroker, topic: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${b.httpUrl}/topics/${topic}`).then((x) => x.json()).catch(() => null) as
      | { partitions?: { leader: number; isr: number[] }[] }
      | null;
    const ps = r?.partitions ?? [];
    if (ps.length === 3 && ps.every((p) => p.leader >= 0 && p.isr.length === 3)) return;
    await Bun.sleep(100);
  }
  throw new Error(`${topic} did not get in sync`);
}

async function round(tls: boolean): Promise<{ rps: number; p50: number; p99: number }> {
  const bs = await cluster(tls);
  try {
    const created = await fetch(`${bs[0].httpUrl}/topics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: "bench",
        partitions: 3,
        replication_factor: 3,
        configs: { "min.insync.replicas": "2" },
      }),
    });
    if (created.status !== 201) throw new Error(`create: ${created.status}`);
    await waitInSync(bs[0], "bench");
    const kafka = new Kafka({
      brokers: bs.map((b) => `127.0.0.1:${b.kafkaPort}`),
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const value = Buffer.alloc(1024, 120);
    const batch = Array.from({ length: 100 }, (_, i) => ({ key: String(i), value }));
    await producer.send({ topic: "bench", acks: -1, messages: batch }); // warm up
    let records = 0;
    const until = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        await producer.send({ topic: "bench", acks: -1, messages: batch });
        records += batch.length;
      }
    }));
    const rps = records / ((performance.now() - t0) / 1000);
    const lat: number[] = [];
    for (let i = 0; i < ONE_AT_A_TIME; i++) {
      const s = performance.now();
      await producer.send({ topic: "bench", acks: -1, messages: [{ key: "k", value }] });
      lat.push(performance.now() - s);
    }
    await producer.disconnect();
    lat.sort((a, b) => a - b);
    return {
      rps,
      p50: lat[Math.floor(lat.length * 0.5)],
      p99: lat[Math.floor(lat.length * 0.99)],
    };
  } finally {
    for (const b of bs) b.kill("SIGKILL");
    await Promise.all(bs.map((b) => b.exited));
    for (const b of bs) rmSync(b.dataDir, { recursive: true, force: true });
  }
}

const load = () => loadavg()[0].toFixed(1);
const results: Record<"plain" | "tls", { rps: number; p50: number; p99: number }[]> = {
  plain: [],
  tls: [],
};
for (let r = 0; r < ROUNDS; r++) {
  for (const tls of [false, true]) {
    const x = await round(tls);
    results[tls ? "tls" : "plain"].push(x);
    console.log(
      `${tls ? "tls  " : "plain"} round ${r + 1}: ${Math.round(x.rps)} records/s acks=all, ` +
        `one at a time p50 ${x.p50.toFixed(2)} ms p99 ${x.p99.toFixed(2)} ms (load ${load()})`,
    );
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const k of ["plain", "tls"] as const) {
  const xs = results[k];
  console.log(
    `${k}: median ${Math.round(med(xs.map((x) => x.rps)))} records/s, p50 ${
      med(xs.map((x) => x.p50)).toFixed(2)
    } ms, p99 ${med(xs.map((x) => x.p99)).toFixed(2)} ms`,
  );
}
rmSync(certs.dir, { recursive: true, force: true });
