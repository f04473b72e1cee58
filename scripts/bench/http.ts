// HTTP benchmark (not a test): `bun scripts/bench/http.ts [--quick]`. Needs `wrk` and `kcat`
// (Debian: apt-get install -y wrk kcat).
// In one run, against one broker process (`bun src/main.ts`, data under .bench/http/ on the local
// disk, --flush interval:1000):
//  - a bare Bun.serve answering a constant, at 64 connections (the reference for single POSTs);
//  - produce over HTTP (wrk, JSON arrays of 1, 100 and 1000 records of 100 B, keyless, one
//    partition) against the same records produced over the Kafka listener by kcat (librdkafka),
//    with acks=1 and acks=all on both sides;
//  - consume the kcat-written partition over HTTP (wrk walking offsets, format=text and json)
//    against kcat -C of the same partition.
// CPU of both processes (broker from /proc/PID/stat; wrk and kcat from their rusage) per phase.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startBrokerProcess } from "../../test/helpers/broker-process.ts";
import {
  type ClientRun,
  kcatConsume,
  kcatProduce,
  pct,
  type WrkResult,
  wrkRun,
} from "./http-util.ts";

const ROOT = path.join(import.meta.dir, "..", "..");
const DIR = path.join(ROOT, ".bench", "http");
const quick = process.argv.includes("--quick");
const SECONDS = quick ? 3 : 6;
const KCAT_RECORDS = quick ? 300_000 : 1_000_000;
const PAIRS = quick ? 1 : 3;
const FLUSH = "interval:1000";
/** 100 B of printable ASCII: not JSON, so format=json falls back to text as for most payloads. */
const VALUE = "abcdefghij".repeat(10);

function produceBody(n: number): string {
  const rec = JSON.stringify({ value: VALUE });
  return n === 1 ? rec : `[${new Array(n).fill(rec).join(",")}]`;
}

function line(...cells: (string | number)[]): void {
  console.log(cells.map(String).join("  "));
}

function describe(label: string, r: WrkResult, perRequest: number): string {
  return `${label.padEnd(34)} ${
    Math.round(r.rps * perRequest).toLocaleString("en").padStart(10)
  } rec/s ` +
    `${Math.round(r.rps).toLocaleString("en").padStart(8)} req/s  p50 ${r.p50Ms.toFixed(2)} ms ` +
    `p99 ${r.p99Ms.toFixed(2)} ms  broker CPU ${pct(r.serverCpuMs, r.seconds)} ` +
    `wrk CPU ${pct(r.clientCpuMs, r.seconds)}${
      r.non2xx || r.errors ? `  FAILED ${r.non2xx} non-2xx, ${r.errors} socket errors` : ""
    }`;
}

function describeClient(label: string, r: ClientRun): string {
  return `${label.padEnd(34)} ${
    Math.round(r.records / r.seconds).toLocaleString("en").padStart(10)
  } rec/s ` +
    `(${r.records.toLocaleString("en")} in ${r.seconds.toFixed(2)} s)  broker CPU ${
      pct(r.serverCpuMs, r.seconds)
    } kcat CPU ${pct(r.clientCpuMs, r.seconds)}`;
}

/** The bare reference server (http-bare.ts) as a child process. */
async function startBare(): Promise<{ pid: number; url: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, "http-bare.ts")], {
    stdout: "pipe",
    stderr: "inherit",
    timeout: 10 * 60_000,
  });
  const stop = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  };
  const { value } = await proc.stdout.getReader().read();
  const port = Number(new TextDecoder().decode(value).trim());
  if (!Number.isInteger(port) || port <= 0) {
    await stop();
    throw new Error("the bare server did not start");
  }
  return { pid: proc.pid, url: `http://127.0.0.1:${port}`, stop };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  for (const tool of ["wrk", "kcat"]) {
    if (!Bun.which(tool)) {
      console.error(`${tool} is missing: apt-get install -y wrk kcat`);
      process.exit(2);
    }
  }
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  console.log("# HTTP benchmark");
  line(
    `cpus ${os.cpus().length} (${os.cpus()[0]?.model ?? "?"}), bun ${Bun.version},`,
    `kernel ${os.release()}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`,
  );
  line(
    `broker: bun src/main.ts, data ${DIR}, --flush ${FLUSH} (background fdatasync every 1 s;`,
    "acks=all waits for the fdatasync of its batch, shared by concurrent requests; acks=1 for the write)",
  );
  line(`records: ${VALUE.length} B values, no key, one partition; wrk -t1, ${SECONDS} s per run`);

  const bare = await startBare();
  const broker = await startBrokerProcess({
    dataDir: path.join(DIR, "data"),
    args: ["--flush", FLUSH],
    timeoutMs: 30_000,
  }).catch(async (e) => {
    await bare.stop();
    throw e;
  });
  const http = broker.httpUrl;
  const pid = broker.proc.pid;
  const kafka = `127.0.0.1:${broker.kafkaPort}`;
  const createTopic = async (name: string) => {
    const r = await fetch(`${http}/topics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, partitions: 1 }),
    });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${await r.text()}`);
  };
  const hw = async (name: string) => {
    const r = await (await fetch(`${http}/topics/${name}`)).json() as {
      partitions: { high_watermark: number }[];
    };
    return r.partitions[0].high_watermark;
  };
  const summary: Record<string, number> = {};
  const ratios: number[] = [];
  try {
    // Single-record POSTs against the bare server, alternating, so both see the same machine.
    console.log(`\n## one record per POST, acks=1, 64 connections: ${PAIRS} alternating pairs`);
    await createTopic("single");
    const one = produceBody(1);
    for (let i = 0; i < PAIRS; i++) {
      const ref = await wrkRun({
        url: `${bare.url}/topics/single/records?acks=1`,
        connections: 64,
        seconds: SECONDS,
        body: one,
        serverPid: bare.pid,
        dir: DIR,
      });
      console.log(describe(`bare Bun.serve (constant)`, ref, 1));
      const ours = await wrkRun({
        url: `${http}/topics/single/records?acks=1`,
        connections: 64,
        seconds: SECONDS,
        body: one,
        serverPid: pid,
        dir: DIR,
      });
      console.log(describe(`broker POST /topics/single/records`, ours, 1));
      if (ours.non2xx || ours.errors) throw new Error("failed requests");
      ratios.push(ours.rps / ref.rps);
    }
    await bare.stop();

    const recordsFile = path.join(DIR, "records.txt");
    fs.writeFileSync(recordsFile, (VALUE + "\n").repeat(KCAT_RECORDS));
    for (const acks of ["1", "all"]) {
      console.log(`\n## produce, acks=${acks}`);
      const kt = `kcat-${acks}`;
      await createTopic(kt);
      const k = await kcatProduce({ kafka, topic: kt, file: recordsFile, acks, serverPid: pid });
      const written = await hw(kt);
      if (written !== KCAT_RECORDS) throw new Error(`kcat wrote ${written}/${KCAT_RECORDS}`);
      console.log(describeClient("kcat -P (librdkafka)", { ...k, records: KCAT_RECORDS }));
      summary[`kcat_${acks}`] = KCAT_RECORDS / k.seconds;
      for (const [batch, conns] of [[1, 64], [100, 8], [100, 64], [1000, 8]] as const) {
        const topic = `http-${acks}-${batch}-${conns}`;
        await createTopic(topic);
        const r = await wrkRun({
          url: `${http}/topics/${topic}/records?acks=${acks}`,
          connections: conns,
          seconds: SECONDS,
          body: produceBody(batch),
          serverPid: pid,
          dir: DIR,
        });
        const stored = await hw(topic);
        // Every answered request was stored (requests cut by wrk's stop may add a few more).
        if (stored < r.requests * batch) {
          throw new Error(`${topic}: ${stored} stored < ${r.requests * batch} answered`);
        }
        console.log(describe(`HTTP POST ${batch} rec/req, ${conns} conns`, r, batch));
        summary[`http_${acks}_${batch}_${conns}`] = r.rps * batch;
      }
    }

    console.log("\n## consume (the partition kcat wrote with acks=1)");
    const k = await kcatConsume({ kafka, topic: "kcat-1", expected: KCAT_RECORDS, serverPid: pid });
    console.log(describeClient("kcat -C -e", k));
    summary.kcat_consume = k.records / k.seconds;
    const limit = 10_000;
    const check = await (await fetch(
      `${http}/topics/kcat-1/partitions/0/records?offset=0&limit=${limit}&max_bytes=67108864&format=text`,
    )).json() as { records: unknown[] };
    if (check.records.length !== limit) throw new Error(`a read gave ${check.records.length}`);
    for (const format of ["text", "json"]) {
      for (const conns of [1, 4]) {
        const r = await wrkRun({
          url: `${http}/topics/kcat-1/partitions/0/records`,
          connections: conns,
          seconds: SECONDS,
          walk: { limit, end: KCAT_RECORDS, query: `&max_bytes=67108864&format=${format}` },
          serverPid: pid,
          dir: DIR,
        });
        console.log(describe(`HTTP GET ${limit}/req ${format}, ${conns} conn`, r, limit));
        summary[`http_consume_${format}_${conns}`] = r.rps * limit;
      }
    }
  } finally {
    await bare.stop();
    broker.kill("SIGTERM");
    const code = await Promise.race([broker.exited, Bun.sleep(15_000).then(() => -1)]);
    if (code === -1) broker.kill("SIGKILL");
    fs.rmSync(DIR, { recursive: true, force: true });
  }

  console.log("\n## summary");
  const r = (a: number, b: number) => `${(100 * a / b).toFixed(0)}%`;
  for (const acks of ["1", "all"]) {
    const kc = summary[`kcat_${acks}`];
    line(
      `acks=${acks}, HTTP records/s as a share of kcat's:`,
      `batch 100 ${r(summary[`http_${acks}_100_8`], kc)} (8 conns), ${
        r(summary[`http_${acks}_100_64`], kc)
      } (64 conns); batch 1000 ${r(summary[`http_${acks}_1000_8`], kc)} (8 conns);`,
      `batch 1 ${r(summary[`http_${acks}_1_64`], kc)} (64 conns)  [target for batched: ≥ 50%]`,
    );
  }
  line(
    `one-record POSTs (acks=1, 64 conns) vs bare Bun.serve: median ${
      (100 * median(ratios)).toFixed(0)
    }% (pairs: ${ratios.map((x) => `${(100 * x).toFixed(0)}%`).join(", ")})  [target ≥ 50%]`,
  );
  line(
    `consume: HTTP text ${r(summary.http_consume_text_1, summary.kcat_consume)} (1 conn),`,
    `${r(summary.http_consume_text_4, summary.kcat_consume)} (4 conns); json`,
    `${r(summary.http_consume_json_1, summary.kcat_consume)} / ${
      r(summary.http_consume_json_4, summary.kcat_consume)
    } of kcat -C`,
  );
  line(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
}

await main();
