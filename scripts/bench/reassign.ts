// Partition reassignment (issue 15's benchmark): two brokers on this machine. A partition of
// --mib MiB (default 1024, one replica on broker 1) moves to broker 2, which has nothing of it:
//   1. copy: the move's time against `cp` + `fsync` of the partition's files on the same disk
//      (target: at most 2x), while an acks=all producer writes to that partition; its throughput
//      during the move against before it (target: at least half);
//   2. throttle: the partition moves back with --throttle (default 10 MB/s); the copy rate is the
//      growth of the new replica's files on disk over a window (target: within ±10 %);
//   3. cancel: that throttled move is cancelled; the time until the metadata names the original
//      replicas again with no move, and until the new replica's files are gone (target: 1 s).
// `bun scripts/bench/reassign.ts [--mib N] [--throttle BYTES_PER_S] [--window-s S] [--bin B]`
// (`npm run bench:reassign`) prints the figures and their ratios to the targets;
// `npm run bench -- --section reassign [--quick]` runs the same (1024 MiB, 256 with --quick) and
// writes its block of docs/benchmarks.md.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { killAll, type Server, sleep, startServer, stopServer } from "./suite/proc.ts";
import { loadAverage } from "./suite/setup.ts";
import { oursArgs } from "./suite/systems.ts";
import { formatMarkdown, replaceDocBlock } from "./suite/report.ts";

const TOPIC = "bench-move";
const RECORD = 16 * 1024; // bytes per record of the fill
const PER_REQUEST = 512; // records per fill request (8 MiB)
const TOKEN = crypto.randomUUID() + crypto.randomUUID();

export interface ReassignOpts {
  mib: number;
  throttle: number;
  windowS: number;
  /** How to start a broker: the binary, or bun and src/main.ts. */
  cmd: string[];
}

/** The defaults: 1 GiB, 10 MB/s for 10 s, brokers from source. */
export function reassignOpts(over: Partial<ReassignOpts> = {}): ReassignOpts {
  return {
    mib: 1024,
    throttle: 10_000_000,
    windowS: 10,
    cmd: [process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts")],
    ...over,
  };
}

function parse(argv: string[]): ReassignOpts {
  const o = reassignOpts();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    if (a === "--mib") o.mib = Number(v);
    else if (a === "--throttle") o.throttle = Number(v);
    else if (a === "--window-s") o.windowS = Number(v);
    else if (a === "--bin") o.cmd = [v];
    else throw new Error(`unknown argument ${a} (--mib N, --throttle B, --window-s S, --bin B)`);
  }
  check(o);
  return o;
}

function check(o: ReassignOpts): void {
  for (const [k, n] of [["--mib", o.mib], ["--throttle", o.throttle], ["--window-s", o.windowS]]) {
    if (!(Number(n) > 0)) throw new Error(`${k} must be a positive number`);
  }
  // The throttled copy must still run when it is cancelled (2 s of burst + the window + margin).
  if (o.mib * 2 ** 20 < o.throttle * (o.windowS + 5)) {
    throw new Error(`--mib ${o.mib} is copied in less than --window-s + 5 s at --throttle`);
  }
}

interface Broker {
  server: Server;
  http: string;
  cluster: string;
  dataDir: string;
}

async function start(o: ReassignOpts, id: number, dir: string, seed?: string): Promise<Broker> {
  const dataDir = join(dir, `b${id}`);
  const server = startServer(`broker-${id}`, [
    ...o.cmd,
    "--node-id",
    String(id),
    ...oursArgs(dataDir),
    // The first broker takes it as the cluster's join token, the second proves it.
    "--join-token",
    TOKEN,
    ...(seed !== undefined ? ["--join", seed] : []),
  ]);
  const { line } = await server.waitFor(/"msg":"broker started"/, 120_000);
  const j = JSON.parse(line) as { http: string; cluster: string };
  return { server, http: `http://${j.http}`, cluster: j.cluster, dataDir };
}

async function call(method: string, url: string, body?: unknown): Promise<unknown> {
  const r = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${url}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return text === "" ? null : JSON.parse(text);
}

interface PartitionJson {
  replicas: number[];
  isr: number[];
  leader: number;
  size_bytes: number | null;
  log_start_offset: number | null;
  log_end_offset: number | null;
}

async function partition(b: Broker): Promise<PartitionJson> {
  const t = await call("GET", `${b.http}/topics/${TOPIC}`) as { partitions: PartitionJson[] };
  return t.partitions[0];
}

async function moving(b: Broker): Promise<number> {
  const v = await call("GET", `${b.http}/reassignments`) as { partitions: unknown[] };
  return v.partitions.length;
}

/** Bytes of the partition's files in a broker's data dir (0 when it holds none). */
function onDisk(b: Broker): number {
  const d = join(b.dataDir, "logs", `${TOPIC}-0`);
  if (!existsSync(d)) return 0;
  let n = 0;
  for (const f of readdirSync(d)) {
    try {
      n += statSync(join(d, f)).size;
    } catch { /* removed meanwhile */ }
  }
  return n;
}

/** The partition's segment files only (the records a copy moves; indexes are built locally). */
function segmentBytes(b: Broker): number {
  const d = join(b.dataDir, "logs", `${TOPIC}-0`);
  if (!existsSync(d)) return 0;
  let n = 0;
  for (const f of readdirSync(d)) if (f.endsWith(".log")) n += statSync(join(d, f)).size;
  return n;
}

async function fill(b: Broker, bytes: number): Promise<void> {
  const line = "x".repeat(RECORD - 1);
  const body = Array.from({ length: PER_REQUEST }, () => line).join("\n");
  const perRequest = PER_REQUEST * RECORD;
  for (let done = 0, retries = 0; done < bytes; done += perRequest) {
    const r = await fetch(`${b.http}/topics/${TOPIC}/records?partition=0&acks=1`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body,
      signal: AbortSignal.timeout(120_000),
    });
    if (r.status === 503 && retries++ < 100) {
      // A leader between sessions on a loaded machine: retriable, as for any client.
      await r.arrayBuffer();
      await sleep(200);
      done -= perRequest;
      continue;
    }
    if (!r.ok) throw new Error(`fill: HTTP ${r.status} ${(await r.text()).slice(0, 200)}`);
    await r.arrayBuffer();
  }
}

/** CPU seconds (user + system) a process has used, from /proc (0 where there is none). */
function cpuSeconds(pid: number): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** `cp` of the partition's segment files to the same disk, then fsync of each and the dir. */
async function cpFsync(b: Broker, dir: string): Promise<number> {
  const from = join(b.dataDir, "logs", `${TOPIC}-0`);
  const files = readdirSync(from).filter((f) => f.endsWith(".log")).map((f) => join(from, f));
  const to = join(dir, "cp-copy");
  mkdirSync(to);
  const t0 = performance.now();
  const p = Bun.spawn(["cp", ...files, to], { stdout: "ignore", stderr: "pipe" });
  if ((await p.exited) !== 0) throw new Error(`cp failed: ${await new Response(p.stderr).text()}`);
  for (const f of readdirSync(to)) {
    const fd = openSync(join(to, f), "r");
    fsyncSync(fd);
    closeSync(fd);
  }
  const dfd = openSync(to, "r");
  fsyncSync(dfd);
  closeSync(dfd);
  const s = (performance.now() - t0) / 1000;
  rmSync(to, { recursive: true, force: true });
  return s;
}

/** An acks=all producer of 100-byte records to the partition, 200 a request, in a loop. */
class Load {
  records = 0;
  errors = 0;
  #stop = false;
  #done: Promise<void>;
  constructor(b: Broker) {
    const body = Array.from({ length: 200 }, (_, i) => `load-${i}-${"y".repeat(90)}`).join("\n");
    this.#done = (async () => {
      while (!this.#stop) {
        try {
          const r = await fetch(`${b.http}/topics/${TOPIC}/records?partition=0&acks=all`, {
            method: "POST",
            headers: { "content-type": "text/plain" },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          await r.arrayBuffer();
          if (r.ok) this.records += 200;
          else this.errors++;
        } catch {
          this.errors++;
        }
      }
    })();
  }
  /** Records per second over the next `ms`. */
  async rate(ms: number): Promise<number> {
    const n0 = this.records;
    const t0 = performance.now();
    await sleep(ms);
    return (this.records - n0) / ((performance.now() - t0) / 1000);
  }
  async stop(): Promise<void> {
    this.#stop = true;
    await this.#done;
  }
}

async function waitUntil(
  what: string,
  timeoutMs: number,
  f: () => Promise<boolean> | boolean,
  everyMs = 20,
) {
  const until = performance.now() + timeoutMs;
  while (!(await f())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** What one run measured. */
export interface ReassignResult {
  opts: ReassignOpts;
  started: string;
  segmentBytes: number;
  cpS: number;
  moveS: number;
  /** The acks=all producer's records/s in the 5 s before the move, and during it. */
  before: number;
  during: number;
  producerErrors: number;
  /** CPU seconds the leader (which also serves the producer) and the new replica used moving. */
  moveCpuS: number[];
  throttledRate: number;
  cancelAnsweredMs: number;
  cancelMetaMs: number;
  cancelGoneMs: number;
  loadBefore: string;
  loadAfter: string;
}

/** One run: two brokers in a scratch dir under `parent`, stopped and removed at the end. */
export async function reassignBench(
  o: ReassignOpts,
  parent: string,
  log: (s: string) => void,
): Promise<ReassignResult> {
  check(o);
  const dir = mkdtempSync(join(parent, "bench-reassign-"));
  const load0 = loadAverage();
  const started = new Date().toISOString().slice(0, 16).replace("T", " ");
  log(`reassign: ${o.mib} MiB, throttle ${o.throttle} B/s, scratch ${dir}, load ${load0}`);
  const servers: Server[] = [];
  try {
    const b1 = await start(o, 1, dir);
    servers.push(b1.server);
    const b2 = await start(o, 2, dir, b1.cluster);
    servers.push(b2.server);
    await call("POST", `${b1.http}/topics`, {
      name: TOPIC,
      partitions: 1,
      replication_factor: 1,
      configs: { "min.insync.replicas": "1" },
    });
    await waitUntil("broker 1 to lead", 30_000, async () => (await partition(b1)).leader === 1)
      .catch(async () => {
        // Placement may have chosen broker 2: move it to 1 first (not timed).
        await call("POST", `${b1.http}/reassignments`, {
          partitions: [{ topic: TOPIC, partition: 0, replicas: [1] }],
        });
        await waitUntil(
          "the partition on broker 1",
          600_000,
          async () => (await partition(b1)).replicas.join() === "1" && (await moving(b1)) === 0,
        );
      });
    const bytes = o.mib * 1024 * 1024;
    let t0 = performance.now();
    await fill(b1, bytes);
    log(`filled ${o.mib} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const seg = segmentBytes(b1);
    const p0 = await partition(b1);
    log(`leader before: offsets ${p0.log_start_offset}-${p0.log_end_offset}, ${seg} B of segments`);

    // 1. cp + fsync, then the unthrottled move under an acks=all load.
    const cpS = await cpFsync(b1, dir);
    const load = new Load(b1);
    const before = await load.rate(5000);
    const cpu0 = [cpuSeconds(b1.server.pid), cpuSeconds(b2.server.pid)];
    t0 = performance.now();
    const r = await call("POST", `${b1.http}/reassignments`, {
      partitions: [{ topic: TOPIC, partition: 0, replicas: [2] }],
    }) as { accepted: number };
    if (r.accepted !== 1) throw new Error(`move refused: ${JSON.stringify(r)}`);
    const n0 = load.records;
    await waitUntil(
      "the move to broker 2",
      3_600_000,
      async () => (await partition(b1)).replicas.join() === "2" && (await moving(b1)) === 0,
      // Two metadata GETs each time, on the leader that serves the producer: every 20 ms they
      // took a share of its CPU the producer did not have to share before the move.
      100,
    );
    const moveS = (performance.now() - t0) / 1000;
    const moveCpu = [cpuSeconds(b1.server.pid) - cpu0[0], cpuSeconds(b2.server.pid) - cpu0[1]];
    const during = (load.records - n0) / moveS;
    await load.stop();
    const p1 = await partition(b2);
    log(
      `moved in ${moveS.toFixed(2)} s; the new replica: offsets ${p1.log_start_offset}-` +
        `${p1.log_end_offset}, ${segmentBytes(b2)} B of segments`,
    );
    if ((p1.log_start_offset ?? 0) > (p0.log_start_offset ?? 0) || segmentBytes(b2) < seg) {
      throw new Error("the new replica holds less than the leader held before the move");
    }

    // 2. A throttled move back to broker 1 (its files were deleted): its rate on disk.
    await waitUntil("broker 1's copy deleted", 60_000, () => onDisk(b1) === 0);
    await call("POST", `${b2.http}/reassignments`, {
      partitions: [{ topic: TOPIC, partition: 0, replicas: [1] }],
      throttle: o.throttle,
    });
    await waitUntil("the throttled copy to start", 60_000, () => segmentBytes(b1) > 0);
    await sleep(2000); // past the first bucket's burst
    const a0 = segmentBytes(b1);
    const w0 = performance.now();
    await sleep(o.windowS * 1000);
    const a1 = segmentBytes(b1);
    const rate = (a1 - a0) / ((performance.now() - w0) / 1000);

    // 3. Cancel it.
    const c0 = performance.now();
    const cr = await call("DELETE", `${b2.http}/reassignments?topic=${TOPIC}&partition=0`) as {
      accepted: number;
    };
    const answerMs = performance.now() - c0;
    if (cr.accepted !== 1) throw new Error(`cancel refused: ${JSON.stringify(cr)}`);
    await waitUntil(
      "the cancel in the metadata",
      60_000,
      async () => (await partition(b2)).replicas.join() === "2" && (await moving(b2)) === 0,
    );
    const metaMs = performance.now() - c0;
    await waitUntil("the cancelled replica's files gone", 60_000, () => onDisk(b1) === 0);
    const goneMs = performance.now() - c0;

    const res: ReassignResult = {
      opts: o,
      started,
      segmentBytes: seg,
      cpS,
      moveS,
      before,
      during,
      producerErrors: load.errors,
      moveCpuS: moveCpu,
      throttledRate: rate,
      cancelAnsweredMs: answerMs,
      cancelMetaMs: metaMs,
      cancelGoneMs: goneMs,
      loadBefore: load0,
      loadAfter: loadAverage(),
    };
    await stopServer(b2.server);
    await stopServer(b1.server);
    return res;
  } catch (e) {
    for (const sv of servers) log(`--- ${sv.name}, last lines:\n${sv.tail.join("\n")}`);
    throw e;
  } finally {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures against the targets, as markdown table rows. */
export function reassignTable(r: ReassignResult): string {
  const mib = (r.segmentBytes / 2 ** 20).toFixed(0);
  const rows: string[][] = [
    ["figure", "measured", "ratio", "target"],
    ["---", "---", "---", "---"],
    [
      `move of ${mib} MiB (s) vs cp + fsync of its segments (s)`,
      `${r.moveS.toFixed(2)} vs ${r.cpS.toFixed(2)}`,
      `${(r.moveS / r.cpS).toFixed(2)}x`,
      "<= 2x",
    ],
    [
      "copy rate of the move (segment MB/s)",
      (r.segmentBytes / 1e6 / r.moveS).toFixed(1),
      "",
      "",
    ],
    [
      "CPU during the move (s): leader (with the producer) + new replica, share of the wall time",
      `${r.moveCpuS[0].toFixed(1)} + ${r.moveCpuS[1].toFixed(1)}`,
      `${((r.moveCpuS[0] + r.moveCpuS[1]) / r.moveS).toFixed(2)} cores`,
      "",
    ],
    [
      "acks=all producer during / before the move (records/s)",
      `${r.during.toFixed(0)} / ${r.before.toFixed(0)}`,
      (r.during / r.before).toFixed(2),
      ">= 0.5",
    ],
    [
      `throttled copy rate (B/s), set ${r.opts.throttle}`,
      r.throttledRate.toFixed(0),
      (r.throttledRate / r.opts.throttle).toFixed(3),
      "0.9 - 1.1",
    ],
    ["cancel: answered (ms)", r.cancelAnsweredMs.toFixed(0), "", ""],
    ["cancel: metadata back to the original (ms)", r.cancelMetaMs.toFixed(0), "", "<= 1000"],
    ["cancel: the new replica's files gone (ms)", r.cancelGoneMs.toFixed(0), "", ""],
  ];
  return rows.map((row) => `| ${row.join(" | ")} |`).join("\n");
}

const BEGIN = "<!-- bench-reassign:begin";
const END = "<!-- bench-reassign:end -->";

/** The generated block of docs/benchmarks.md (the Partition reassignment section). */
export function reassignDocBlock(r: ReassignResult, commit: string, cmd: string): string {
  return [
    `${BEGIN} (generated by \`npm run bench -- --section reassign\`; edits in here are overwritten) -->`,
    "",
    `${r.started} UTC, commit ${commit}, \`${cmd}\`, ${r.opts.mib} MiB, load average ` +
    `${r.loadBefore} → ${r.loadAfter}; producer errors ${r.producerErrors}.`,
    "",
    reassignTable(r),
    "",
    END,
  ].join("\n");
}

export function writeReassignDoc(repo: string, path: string, block: string): void {
  replaceDocBlock(path, BEGIN, END, formatMarkdown(repo, block), "## Partition reassignment");
}

if (import.meta.main) {
  const o = parse(process.argv.slice(2));
  const r = await reassignBench(o, process.env.BENCH_DIR ?? tmpdir(), (s) => console.log(s));
  console.log("");
  console.log(reassignTable(r));
  console.log("");
  console.log(
    `${o.mib} MiB, producer errors ${r.producerErrors}, load average ${r.loadBefore} -> ` +
      r.loadAfter,
  );
  process.exit(0);
}
