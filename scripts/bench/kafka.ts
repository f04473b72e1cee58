// Kafka front-door benchmark (not a timed test): kcat and confluent-kafka on 127.0.0.1 produce
// and consume 100 B and 1 KiB records at acks=1 and acks=all; records/s, MB/s and the CPU of
// both processes (client and broker); then p50/p99 end-to-end latency with linger.ms=0.
// Run: bun scripts/bench/kafka.ts   (BROKER_BIN=dist/broker to bench the compiled binary;
// KAFKA_BENCH_RECORDS=N to change the record count). Starts one broker and stops it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBrokerProcess, tempDir } from "../../test/helpers/broker-process.ts";

const PY = "/usr/bin/python3";
const HERE = import.meta.dir;
const SIZES = [100, 1024];
const ACKS = ["1", "all"] as const;
const LAT_SAMPLES = 2000;

/** utime+stime of a process in seconds (Linux /proc; 100 ticks per second). */
function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Run {
  seconds: number;
  clientCpu: number;
}

async function timed(cmd: string[], stdinFile?: string): Promise<Run & { out: string }> {
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, {
    stdin: stdinFile ? Bun.file(stdinFile) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const kill = setTimeout(() => proc.kill(9), 300_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(kill);
  if (code !== 0) throw new Error(`${cmd[0]} exited ${code}: ${err.slice(-500)}`);
  const ru = proc.resourceUsage();
  const clientCpu = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) / 1e6 : NaN;
  return { seconds: (performance.now() - t0) / 1000, clientCpu, out };
}

async function kcatLatency(bootstrap: string, topic: string, acks: string, size: number) {
  const consumer = Bun.spawn(
    [
      "kcat",
      "-b",
      bootstrap,
      "-C",
      "-t",
      topic,
      "-o",
      "end",
      "-u",
      "-q",
      "-f",
      "%s\\n",
      "-X",
      "fetch.wait.max.ms=100",
    ],
    { stdout: "pipe", stderr: "ignore" },
  );
  const producer = Bun.spawn(
    ["kcat", "-b", bootstrap, "-P", "-t", topic, "-X", `acks=${acks}`, "-X", "linger.ms=0"],
    { stdin: "pipe", stdout: "ignore", stderr: "ignore" },
  );
  await Bun.sleep(1500); // both connected, the consumer at the end
  const lat: number[] = [];
  const reader = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of consumer.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const sentUs = Number(buf.slice(0, buf.indexOf("|")));
        buf = buf.slice(nl + 1);
        if (sentUs > 0) {
          lat.push(((performance.timeOrigin + performance.now()) * 1000 - sentUs) / 1000);
        }
      }
      if (lat.length >= LAT_SAMPLES) break;
    }
  })();
  const pad = "x".repeat(Math.max(0, size - 20));
  const end = Date.now() + 60_000;
  for (let i = 0; i < LAT_SAMPLES && Date.now() < end; i++) {
    const us = Math.round((performance.timeOrigin + performance.now()) * 1000);
    producer.stdin.write(`${us}|${pad}\n`);
    producer.stdin.flush();
    await Bun.sleep(2); // paced: latency, not queueing
  }
  await Promise.race([reader, Bun.sleep(10_000)]);
  // kcat -P exits once its stdin ends (after flushing); SIGKILL only as the last resort.
  await producer.stdin.end();
  consumer.kill();
  for (const p of [producer, consumer]) {
    if (await Promise.race([p.exited.then(() => true), Bun.sleep(5000).then(() => false)])) {
      continue;
    }
    p.kill(9);
    await p.exited;
  }
  lat.sort((a, b) => a - b);
  return {
    p50_ms: lat[Math.floor(lat.length / 2)],
    p99_ms: lat[Math.floor(lat.length * 0.99)],
    samples: lat.length,
  };
}

const fmt = (n: number, d = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

async function main() {
  const broker = await startBrokerProcess({ dataDir: tempDir("kafka-bench-") });
  const bootstrap = `127.0.0.1:${broker.kafkaPort}`;
  const rows: string[] = [];
  const latRows: string[] = [];
  try {
    for (const size of SIZES) {
      const n = Number(process.env.KAFKA_BENCH_RECORDS ?? (size <= 100 ? 500_000 : 200_000));
      const input = join(tempDir("kafka-bench-in-"), "records.txt");
      writeFileSync(input, ("y".repeat(size) + "\n").repeat(n));
      for (const acks of ACKS) {
        for (const client of ["kcat", "confluent-kafka"]) {
          const topic = `bench-${client}-${size}-${acks}`.replace(/[^A-Za-z0-9._-]/g, "_");
          const created = await fetch(`${broker.httpUrl}/topics`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: topic, partitions: 1 }),
          });
          if (!created.ok) throw new Error(`create ${topic}: ${await created.text()}`);
          for (const op of ["produce", "consume"] as const) {
            const b0 = cpuOf(broker.proc.pid);
            const cmd = client === "kcat"
              ? op === "produce"
                ? [
                  "kcat",
                  "-b",
                  bootstrap,
                  "-P",
                  "-t",
                  topic,
                  "-X",
                  `acks=${acks}`,
                  "-X",
                  "linger.ms=5",
                  "-X",
                  "batch.size=1048576",
                  "-l",
                  input,
                ]
                : [
                  "kcat",
                  "-b",
                  bootstrap,
                  "-C",
                  "-t",
                  topic,
                  "-o",
                  "beginning",
                  "-e",
                  "-q",
                  "-c",
                  String(n),
                  "-f",
                  "%o\\n",
                ]
              : [
                PY,
                join(HERE, "kafka_confluent.py"),
                op,
                bootstrap,
                topic,
                String(n),
                String(size),
                acks,
              ];
            const r = await timed(cmd);
            const brokerCpu = cpuOf(broker.proc.pid) - b0;
            const mbps = (n * size) / r.seconds / 1e6;
            rows.push(
              `| ${client} | ${op} | ${size} B | ${acks} | ${fmt(n / r.seconds)} | ${
                fmt(mbps, 1)
              } | ${fmt((r.clientCpu / r.seconds) * 100)}% | ${
                fmt((brokerCpu / r.seconds) * 100)
              }% |`,
            );
            console.error(rows.at(-1));
          }
        }
        for (const client of ["kcat", "confluent-kafka"]) {
          const topic = `lat-${client}-${size}-${acks}`.replace(/[^A-Za-z0-9._-]/g, "_");
          await fetch(`${broker.httpUrl}/topics`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: topic, partitions: 1 }),
          });
          const l = client === "kcat"
            ? await kcatLatency(bootstrap, topic, acks, size)
            : JSON.parse(
              (await timed([
                PY,
                join(HERE, "kafka_confluent.py"),
                "latency",
                bootstrap,
                topic,
                String(LAT_SAMPLES),
                String(size),
                acks,
              ]))
                .out,
            );
          latRows.push(
            `| ${client} | ${size} B | ${acks} | ${fmt(l.p50_ms, 2)} | ${
              fmt(l.p99_ms, 2)
            } | ${l.samples} |`,
          );
          console.error(latRows.at(-1));
        }
      }
    }
  } finally {
    broker.kill();
    await broker.exited;
  }
  console.log(
    [
      "| client | op | record | acks | records/s | MB/s | client CPU | broker CPU |",
      "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |",
      ...rows,
      "",
      "| client | record | acks | p50 ms | p99 ms | samples |",
      "| --- | --- | --- | ---: | ---: | ---: |",
      ...latRows,
    ].join("\n"),
  );
}

await main();
