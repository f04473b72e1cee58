// Everything the suite needs before it measures: Debian packages, the C clients (compiled into the
// run's temp dir), our broker binary, record files for kcat, and a description of the machine.
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { cpus, totalmem } from "node:os";
import { run } from "./proc.ts";

const SYS_PY = "/usr/bin/python3"; // python3-confluent-kafka installs into the system Python

const onPath = (bin: string) =>
  Bun.which(bin) !== null || existsSync(`/usr/sbin/${bin}`) || existsSync(`/usr/bin/${bin}`);

const NEEDS: { pkg: string; present: () => boolean }[] = [
  { pkg: "nats-server", present: () => onPath("nats-server") },
  { pkg: "redis-server", present: () => onPath("redis-server") },
  { pkg: "redis-tools", present: () => onPath("redis-benchmark") },
  { pkg: "kcat", present: () => onPath("kcat") },
  { pkg: "gcc", present: () => onPath("gcc") },
  { pkg: "libnats-dev", present: () => existsSync("/usr/include/nats/nats.h") },
  { pkg: "libhiredis-dev", present: () => existsSync("/usr/include/hiredis/hiredis.h") },
  { pkg: "librdkafka-dev", present: () => existsSync("/usr/include/librdkafka/rdkafka.h") },
  {
    pkg: "python3-confluent-kafka",
    present: () => existsSync("/usr/lib/python3/dist-packages/confluent_kafka/__init__.py"),
  },
];

/** Installs the missing Debian packages (apt-get update first only when an install fails). */
export async function ensurePackages(log: (s: string) => void): Promise<void> {
  const missing = NEEDS.filter((n) => !n.present()).map((n) => n.pkg);
  if (missing.length === 0) return;
  log(`installing from Debian: ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" } as Record<string, string>;
  const install = () =>
    run(["apt-get", "install", "-y", "--no-install-recommends", ...missing], {
      timeoutMs: 600_000,
      env,
    });
  let r = await install();
  if (r.code !== 0) {
    const u = await run(["apt-get", "update"], { timeoutMs: 300_000, env });
    if (u.code !== 0) throw new Error(`apt-get update failed:\n${u.stderr}`);
    r = await install();
  }
  if (r.code !== 0) throw new Error(`apt-get install failed:\n${r.stderr.slice(-2000)}`);
  const still = NEEDS.filter((n) => !n.present()).map((n) => n.pkg);
  if (still.length > 0) throw new Error(`still missing after install: ${still.join(" ")}`);
}

export interface Tools {
  natsBench: string;
  kafkaLat: string;
  redisRead: string;
  limits: string;
  broker: string;
  python: string;
  fillPy: string;
}

/** Compiles the C clients and our broker into `dir`. */
export async function buildTools(dir: string, repo: string): Promise<Tools> {
  const src = join(repo, "scripts", "bench", "suite", "c");
  const cc = async (name: string, libs: string[]) => {
    const out = join(dir, name);
    const r = await run(
      ["gcc", "-O2", "-Wall", "-o", out, join(src, `${name}.c`), ...libs],
      { timeoutMs: 120_000 },
    );
    if (r.code !== 0) throw new Error(`gcc ${name} failed:\n${r.stderr}`);
    return out;
  };
  const [natsBench, kafkaLat, redisRead, limits] = await Promise.all([
    cc("nats_bench", ["-lnats"]),
    cc("kafka_lat", ["-lrdkafka", "-lpthread"]),
    cc("redis_read", ["-lhiredis"]),
    cc("limits", []),
  ]);
  // Our broker as users get it: the one-file binary from scripts/build.ts, into the temp dir so a
  // parallel `npm run build` elsewhere cannot swap it mid-run.
  const broker = join(dir, "broker");
  const b = await run([process.execPath, join(repo, "scripts", "build.ts"), broker], {
    cwd: repo,
    timeoutMs: 300_000,
  });
  if (b.code !== 0) throw new Error(`broker build failed:\n${b.stdout}\n${b.stderr}`);
  return {
    natsBench,
    kafkaLat,
    redisRead,
    limits,
    broker,
    python: SYS_PY,
    fillPy: join(repo, "scripts", "bench", "suite", "fill.py"),
  };
}

/** Writes `count` newline-terminated records of `size` bytes (kcat -l input). */
export function writeRecordFile(path: string, count: number, size: number): void {
  const line = Buffer.alloc(size + 1, "x".charCodeAt(0));
  line[size] = 10;
  const perChunk = Math.max(1, Math.floor((1 << 20) / (size + 1)));
  const chunk = Buffer.alloc(perChunk * (size + 1));
  for (let i = 0; i < perChunk; i++) line.copy(chunk, i * (size + 1));
  const fd = openSync(path, "w");
  try {
    let left = count;
    for (let guard = 0; left > 0 && guard <= count; guard++) {
      const n = Math.min(left, perChunk);
      writeSync(fd, chunk, 0, n * (size + 1));
      left -= n;
    }
  } finally {
    closeSync(fd);
  }
}

export interface Machine {
  cpu: string;
  cores: number;
  memGiB: number;
  kernel: string;
  os: string;
  disk: string;
  versions: Record<string, string>;
}

async function firstLine(cmd: string[]): Promise<string> {
  const r = await run(cmd, { timeoutMs: 20_000 });
  return (r.stdout + r.stderr).split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "?";
}

export async function describeMachine(tools: Tools, dataDir: string): Promise<Machine> {
  const osRelease = readFileSync("/etc/os-release", "utf8");
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(osRelease)?.[1] ?? "Linux";
  const df = await run(["df", "-T", "-h", dataDir], { timeoutMs: 10_000 });
  const dfLine = df.stdout.trim().split("\n")[1]?.split(/\s+/) ?? [];
  const kcatV = (await run(["kcat", "-V"], { timeoutMs: 10_000 })).stdout;
  const rdk = /librdkafka ([\d.]+)/.exec(kcatV)?.[1] ?? "?";
  const py = await run(
    [tools.python, "-c", "import confluent_kafka as c; print(c.version()[0])"],
    { timeoutMs: 20_000 },
  );
  const natsH = readFileSync("/usr/include/nats/version.h", "utf8");
  const natsC = /NATS_VERSION_STRING\s+"([^"]+)"/.exec(natsH)?.[1] ?? "?";
  return {
    cpu: cpus()[0]?.model ?? "?",
    cores: cpus().length,
    memGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10,
    kernel: await firstLine(["uname", "-r"]),
    os: pretty,
    disk: dfLine.length >= 7 ? `${dfLine[0]} ${dfLine[1]} (${dfLine[4]} free)` : "?",
    versions: {
      ours: (await firstLine([tools.broker, "--version"])).replace(/^broker\s*/, ""),
      bun: Bun.version,
      "nats-server": (await firstLine(["nats-server", "--version"])).replace(
        /^nats-server:\s*/,
        "",
      ),
      "redis-server": /v=([\d.]+)/.exec(await firstLine(["redis-server", "--version"]))?.[1] ?? "?",
      kcat: /Version ([\d.]+)/.exec(kcatV)?.[1] ?? "?",
      librdkafka: rdk,
      "nats.c": natsC,
      "confluent-kafka (python)": py.stdout.trim() || "?",
    },
  };
}

export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}
