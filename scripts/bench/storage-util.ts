// Shared helpers of the storage benchmark: statistics, fresh directories, opening a bench log,
// running dd as a child with its CPU, the machine description, and the loopback read sink.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { SegmentLogStore } from "../../src/storage/log-store.ts";
import type { PartitionLog } from "../../src/storage/types.ts";

export const MB = 1024 * 1024;
export const ROOT = path.resolve(import.meta.dir, "../../.bench-storage");
export const BUN = process.execPath;

/** One batch of `records` records of 1 KiB each (1004-byte value plus record framing). */
export function makeBatch(records: number): Uint8Array {
  const value = new Uint8Array(1004).fill(7);
  const now = Date.now();
  return encodeRecordBatch({
    records: Array.from({ length: records }, (_, i) => ({ key: null, value, timestamp: now + i })),
  });
}

export function median(xs: number[]): number {
  return pct(xs, 0.5);
}

/** Nearest-rank percentile (p in [0, 1]). */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))];
}

export function freshDir(name: string): string {
  const d = path.join(ROOT, `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

export function cpuMs(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

export async function openLog(
  dir: string,
  stats?: { walkNs: number },
  zeroAhead = true,
): Promise<{ store: SegmentLogStore; log: PartitionLog }> {
  const store = await SegmentLogStore.open({
    dataDir: dir,
    checkpointIntervalMs: 0,
    flush: { kind: "interval", ms: 0 }, // no background flusher: the bench decides when to sync
    stats,
    zeroAhead,
  });
  const log = await store.openLog({
    topic: "bench",
    partition: 0,
    topicId: "b",
    config: { segmentBytes: 1024 * MB, maxMessageBytes: 4 * MB },
  });
  return { store, log };
}

export function segmentPath(dir: string): string {
  return path.join(dir, "logs", "bench-0", "00000000000000000000.log");
}

export interface Run {
  seconds: number;
  cpuMs: number;
}

/** Run dd to completion; wall time and the child's CPU (user + system). */
export function dd(args: string[]): Run {
  const t0 = performance.now();
  const r = Bun.spawnSync(["dd", ...args], { stderr: "pipe" });
  const seconds = (performance.now() - t0) / 1000;
  if (r.exitCode !== 0) throw new Error(`dd failed: ${r.stderr.toString()}`);
  return { seconds, cpuMs: childCpuMs(r.resourceUsage?.cpuTime) };
}

export function childCpuMs(t: { user: bigint; system: bigint } | undefined): number {
  return t ? Number(t.user + t.system) / 1000 : NaN;
}

function sh(cmd: string): string {
  const r = Bun.spawnSync(["sh", "-c", cmd], { stderr: "pipe" });
  return r.stdout.toString().trim();
}

/** Machine, disk and load, printed with every run (the disk is shared with other work). */
export function machine(dir: string): string[] {
  const dev = sh(`df -P ${dir} | awk 'NR==2{print $1}'`);
  const name = path.basename(dev);
  const rot = sh(`cat /sys/block/${name}/queue/rotational 2>/dev/null`);
  const sched = sh(`cat /sys/block/${name}/queue/scheduler 2>/dev/null`);
  const wc = sh(`cat /sys/block/${name}/queue/write_cache 2>/dev/null`);
  return [
    `cpus ${os.cpus().length} (${os.cpus()[0]?.model ?? "?"}), memory ${
      (os.totalmem() / 2 ** 30).toFixed(1)
    } GiB, kernel ${os.release()}, bun ${Bun.version}`,
    `disk ${dev} (${sh(`df -PT ${dir} | awk 'NR==2{print $2}'`)}, ${
      sh(`findmnt -no OPTIONS -T ${dir}`)
    }), rotational=${rot}, scheduler ${sched}, write cache ${wc}, free ${
      sh(`df -h ${dir} | awk 'NR==2{print $4}'`)
    }`,
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`,
  ];
}

/** The sink child (storage-sink.ts) and a line reader over its stdout. */
export class Sink {
  private buf = "";
  private readonly dec = new TextDecoder();
  private constructor(
    private readonly proc: Bun.Subprocess<"pipe", "pipe", "inherit">,
    private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> },
    public port = 0,
  ) {}

  static async start(): Promise<Sink> {
    const proc = Bun.spawn([BUN, path.join(import.meta.dir, "storage-sink.ts")], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    const s = new Sink(proc, proc.stdout.getReader());
    const first = (await s.line()) as { port?: number };
    if (typeof first.port !== "number") throw new Error("sink did not report a port");
    s.port = first.port;
    return s;
  }

  /** Next JSON line: the port, then one report per closed connection. */
  async line(): Promise<Record<string, unknown>> {
    for (let i = 0; i < 1_000_000; i++) {
      const nl = this.buf.indexOf("\n");
      if (nl >= 0) {
        const l = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        return JSON.parse(l) as Record<string, unknown>;
      }
      const r = await this.reader.read();
      if (r.done) throw new Error("sink exited");
      if (r.value) this.buf += this.dec.decode(r.value, { stream: true });
    }
    throw new Error("sink line too long");
  }

  /** Wait for the report of the connection that just closed. */
  async received(): Promise<{ bytes: number; cpuMs: number }> {
    const r = await this.line();
    if (typeof r.error === "string") throw new Error(`sink: ${r.error}`);
    return { bytes: Number(r.bytes), cpuMs: Number(r.cpuMs) };
  }

  async stop(): Promise<void> {
    this.proc.stdin.end();
    await this.proc.exited;
  }
}
