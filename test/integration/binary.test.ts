// The compiled binary as a user runs it: BROKER_BIN (CI builds dist/broker first) or a fresh build.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess, tempDir } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";
import pkg from "../../package.json" with { type: "json" };

let bin = process.env.BROKER_BIN ?? "";

beforeAll(() => {
  if (bin && existsSync(bin)) return;
  // Build into a directory far from the repo, so embedded assets are what the binary uses.
  bin = join(tempDir("broker-bin-"), "broker");
  const r = Bun.spawnSync([
    process.execPath,
    join(import.meta.dir, "..", "..", "scripts", "build.ts"),
    bin,
  ], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`build failed: ${r.stderr}`);
}, 120_000);

function run(args: string[], cwd?: string) {
  const r = Bun.spawnSync([bin, ...args], { stdout: "pipe", stderr: "pipe", cwd });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const start = (opts: Parameters<typeof startBrokerProcess>[0] = {}) =>
  startBrokerProcess({ ...opts, command: [bin] });

describe("compiled binary", () => {
  const running: RunningBroker[] = [];
  afterAll(() => {
    for (const b of running) b.kill("SIGKILL");
  });

  test("--version and --help work from any directory", () => {
    const cwd = tempDir();
    const v = run(["--version"], cwd);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(`broker ${pkg.version}`);
    const h = run(["--help"], cwd);
    expect(h.code).toBe(0);
    for (
      const f of [
        "--data-dir",
        "--kafka-addr",
        "--http-addr",
        "--cluster-addr",
        "--advertise-host",
        "--node-id",
        "--join",
        "--config",
      ]
    ) {
      expect(h.stdout).toContain(f);
    }
  });

  test("a bad flag exits non-zero with one line and writes nothing", () => {
    const dir = join(tempDir(), "never-created");
    const r = run(["--data-dir", dir, "--kafka-addr", "nonsense"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--kafka-addr");
    expect(existsSync(dir)).toBe(false);
  });

  test(
    "healthz, second broker on the same dir refused, SIGKILL keeps every acknowledged record",
    async () => {
      const b = await start();
      running.push(b);
      const h = await api(b.httpUrl, "GET", "/healthz");
      expect(h.status).toBe(200);
      expect(h.json.status).toBe("ok");
      // The native CRC-32C addon is embedded in the binary and loads (3x the pure-JS speed).
      const started = b.logs.find((l) => l.includes('"broker started"'));
      expect(started && JSON.parse(started).crc32c).toBe("native");

      // A second broker on the same data dir exits with a clear message and touches nothing.
      const second = run([
        "--data-dir",
        b.dataDir,
        "--http-addr",
        "127.0.0.1:0",
        "--kafka-addr",
        "127.0.0.1:0",
      ]);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain("in use by another broker");
      expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);

      expect((await api(b.httpUrl, "POST", "/topics", { name: "acked", partitions: 2 })).status)
        .toBe(201);
      const acked: string[] = [];
      let stop = false;
      const writers = Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 2000 && !stop; i++) {
          const value = `w${w}-${i}`;
          try {
            const r = await api(b.httpUrl, "POST", "/topics/acked/records?acks=all", [{
              key: value,
              value,
            }]);
            if (r.status === 200) acked.push(value);
          } catch {
            return; // connection cut by the kill
          }
        }
      });
      await Bun.sleep(700);
      b.kill("SIGKILL");
      stop = true;
      await Promise.all(writers);
      await b.exited;
      expect(acked.length).toBeGreaterThan(20);

      const again = await start({ dataDir: b.dataDir });
      running.push(again);
      const seen = new Set<string>();
      for (const p of [0, 1]) {
        for (const r of await readAll(again.httpUrl, "acked", p)) {
          seen.add(r.value);
        }
      }
      const missing = acked.filter((v) => !seen.has(v));
      expect(missing).toEqual([]);
      again.kill("SIGTERM");
      expect(await again.exited).toBe(0);
    },
    60_000,
  );
});
