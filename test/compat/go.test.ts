// Compatibility suite: Go clients, as Debian ships them (Shopify/sarama 1.22.1 and
// segmentio/kafka-go 0.2.1), through the driver in test/compat/go/driver. The driver is built
// once, offline, in GOPATH mode against /usr/share/gocode; each subcommand runs as its own process
// with its own topics and prints one JSON line (or "FAIL <subcommand>: <reason>" on stderr).
//
// The broker runs with --log-level debug so that a request version it does not serve leaves a
// line ("unsupported api K vV") the limitation tests below check as evidence.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess, tempDir } from "../helpers/broker-process.ts";
import { createTopic, SEGMENT_BYTES } from "./harness.ts";

const APT_PACKAGES =
  "golang-go golang-github-shopify-sarama-dev golang-github-segmentio-kafka-go-dev";
const GOCODE = "/usr/share/gocode";
const DRIVER_SRC = join(import.meta.dir, "go", "driver");

let broker: RunningBroker;
let bootstrap: string;
let workDir: string;
/** The built driver, or why there is none (every test then fails with it). */
let driver: { bin: string } | { error: string };

/** Why the Go driver cannot be built here, or null. */
function missingToolchain(): string | null {
  if (!Bun.which("go")) return "no `go` on PATH";
  for (const pkg of ["github.com/Shopify/sarama", "github.com/segmentio/kafka-go"]) {
    if (!existsSync(join(GOCODE, "src", pkg))) return `${pkg} is not in ${GOCODE}/src`;
  }
  // sarama's zstd codec (github.com/DataDog/zstd) is cgo; golang-go recommends gcc.
  if (!Bun.which("gcc")) return "no C compiler (gcc) for sarama's cgo zstd codec";
  return null;
}

async function buildDriver(dir: string): Promise<{ bin: string } | { error: string }> {
  const hint = `install the Debian packages: apt-get install ${APT_PACKAGES} ` +
    "(scripts/ci/apt-packages.txt lists them; gcc comes with golang-go's recommends)";
  const missing = missingToolchain();
  if (missing) return { error: `Go compatibility suite cannot run: ${missing}; ${hint}` };
  const bin = join(dir, "driver");
  const proc = Bun.spawn(["go", "build", "-o", bin, "."], {
    cwd: DRIVER_SRC,
    env: {
      ...process.env,
      GO111MODULE: "off",
      GOPATH: `${join(dir, "gopath")}:${GOCODE}`,
      GOCACHE: join(dir, "cache"),
      GOFLAGS: "",
      GOENV: "off",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(9), 170_000);
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code !== 0) {
    return { error: `building the Go driver failed (exit ${code}): ${err.slice(-3000)}; ${hint}` };
  }
  return { bin };
}

beforeAll(async () => {
  workDir = tempDir("go-compat-");
  const [b, d] = await Promise.all([
    startBrokerProcess({
      args: [
        "--group-initial-rebalance-delay-ms",
        "0",
        "--topic-default",
        `segment.bytes=${SEGMENT_BYTES}`,
        "--log-level",
        "debug",
      ],
    }),
    buildDriver(workDir),
  ]);
  broker = b;
  bootstrap = `127.0.0.1:${b.kafkaPort}`;
  driver = d;
}, 180_000);

afterAll(async () => {
  broker?.kill();
  await broker?.exited;
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface DriverRun {
  code: number;
  // deno-lint-ignore no-explicit-any
  out: any;
  /** The "FAIL <subcommand>: <reason>" line, if it failed. */
  reason: string;
  stderr: string;
}

/** Run one driver subcommand (with client debug logs) against the broker. */
async function run(sub: string, args: string[], timeoutMs = 60_000): Promise<DriverRun> {
  if ("error" in driver) throw new Error(driver.error);
  const cmd = [
    driver.bin,
    sub,
    "--bootstrap",
    bootstrap,
    "--timeout",
    `${Math.floor((timeoutMs - 5_000) / 1000)}s`,
    "--debug",
    ...args,
  ];
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => proc.kill(9), timeoutMs);
  const [out, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  const reason = stderr.split("\n").filter((l) => l.startsWith("FAIL ")).at(-1) ?? "";
  const last = out.trim().split("\n").at(-1) ?? "";
  let parsed = null;
  try {
    parsed = last ? JSON.parse(last) : null;
  } catch { /* not JSON */ }
  return { code, out: parsed, reason, stderr };
}

/** Run a subcommand that must succeed; a failure shows its reason and the end of its log. */
// deno-lint-ignore no-explicit-any
async function ok(sub: string, args: string[], timeoutMs = 60_000): Promise<any> {
  const r = await run(sub, args, timeoutMs);
  if (r.code !== 0 || r.out === null) {
    throw new Error(
      `${sub} exited ${r.code}: ${r.reason || "(no reason)"}\n--- driver log (end) ---\n${
        r.stderr.slice(-4000)
      }`,
    );
  }
  return r.out;
}

/** Broker log lines written while `f` ran. */
async function brokerLogsDuring<T>(f: () => Promise<T>): Promise<{ result: T; logs: string }> {
  const from = broker.logs.length;
  const result = await f();
  await Bun.sleep(200);
  return { result, logs: broker.logs.slice(from).join("\n") };
}

const RECORDS = 2000;

/** Records in a topic (the sum of its partitions' high watermarks), from the HTTP API. */
async function storedRecords(topic: string): Promise<number> {
  const t = await (await fetch(`${broker.httpUrl}/topics/${topic}`)).json() as {
    partitions: { high_watermark: number }[];
  };
  return t.partitions.reduce((n, p) => n + p.high_watermark, 0);
}

test(
  "sarama: idempotent SyncProducer (acks=all) and partition consumers, Version 2.2.0",
  async () => {
    await createTopic(broker, "go-pc", 4);
    const r = await ok("sarama-produce-consume", [
      "--topic",
      "go-pc",
      "--partitions",
      "4",
      "--count",
      String(RECORDS),
    ]);
    expect(r.produced).toBe(RECORDS);
    expect(r.consumed).toBe(RECORDS);
    expect(Object.keys(r.partitions).length).toBe(4);
    expect(r.versions).toEqual({
      Produce: [3],
      Fetch: [4],
      ListOffsets: [1],
      Metadata: [5],
      InitProducerId: [0],
    });
  },
  60_000,
);

for (const codec of ["gzip", "snappy", "lz4"]) {
  test(`sarama: ${codec} produced and consumed, every record checked`, async () => {
    const topic = `go-pc-${codec}`;
    await createTopic(broker, topic, 3);
    const r = await ok("sarama-produce-consume", [
      "--topic",
      topic,
      "--partitions",
      "3",
      "--count",
      String(RECORDS),
      "--codec",
      codec,
    ]);
    expect({ produced: r.produced, consumed: r.consumed, codec: r.codec }).toEqual({
      produced: RECORDS,
      consumed: RECORDS,
      codec,
    });
  }, 60_000);
}

test("sarama: Version 0.11.0.0, the oldest that writes record batches, works too", async () => {
  await createTopic(broker, "go-pc-0110", 3);
  const r = await ok("sarama-produce-consume", [
    "--topic",
    "go-pc-0110",
    "--partitions",
    "3",
    "--count",
    "500",
    "--version",
    "0.11.0.0",
  ]);
  expect(r.consumed).toBe(500);
  expect(r.versions.Metadata).toEqual([1]);
  expect(r.versions.Produce).toEqual([3]);
}, 60_000);

// Client limitation, not a broker defect: sarama 1.22 sends zstd batches in Produce v3, and zstd
// needs Produce v7 (Kafka answers UNSUPPORTED_COMPRESSION_TYPE as well). Newer sarama uses v7.
test(
  "sarama: zstd in Produce v3 is refused with UNSUPPORTED_COMPRESSION_TYPE (76), as Kafka does",
  async () => {
    await createTopic(broker, "go-pc-zstd", 1);
    const r = await run("sarama-produce-consume", [
      "--topic",
      "go-pc-zstd",
      "--partitions",
      "1",
      "--count",
      "10",
      "--codec",
      "zstd",
    ]);
    expect(r.code).toBe(1);
    expect(r.reason).toContain("(Kafka error 76)");
  },
  60_000,
);

test(
  "sarama: ConsumerGroup, a member joins mid-stream, exactly-once across the rebalance, resume from commits",
  async () => {
    await createTopic(broker, "go-grp", 6);
    const r = await ok("sarama-group", [
      "--topic",
      "go-grp",
      "--group",
      "go-grp",
      "--partitions",
      "6",
      "--count",
      "4000",
    ], 90_000);
    const claims = [...r.claims.a, ...r.claims.b].sort();
    expect(r.claims.a.length).toBeGreaterThan(0);
    expect(r.claims.b.length).toBeGreaterThan(0);
    expect(claims).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.processedA + r.processedB).toBe(4000);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(r.committed)).toBe(4000);
    expect(r.resumed).toBe(2000);
    expect(sum(r.committed2)).toBe(6000);
    expect(r.errors).toEqual([]);
    expect(r.versions).toMatchObject({
      JoinGroup: [1],
      SyncGroup: [0],
      Heartbeat: [0],
      LeaveGroup: [0],
      OffsetCommit: [2],
      OffsetFetch: [1],
      FindCoordinator: [0],
      DescribeGroups: [0],
      ListGroups: [0],
    });
  },
  90_000,
);

// sarama 1.22 commits with OffsetCommit v1 when Consumer.Offsets.Retention is 0, its default (v2
// with any retention, as in the test above). The broker serves OffsetCommit v0-v9 (Kafka 3.x served
// v0-v1; 4.0 dropped them, KIP-896), so the same group flow works at the default: every commit is
// v1, the commits are the partition ends once the members stop, and a member started afterwards
// (a restarted consumer) resumes from them and sees exactly the records produced since.
test(
  "sarama: ConsumerGroup at the default Consumer.Offsets.Retention (0) commits with OffsetCommit v1 and resumes from the commits",
  async () => {
    await createTopic(broker, "go-grp-r0", 4);
    const { result: r, logs } = await brokerLogsDuring(() =>
      ok("sarama-group", [
        "--topic",
        "go-grp-r0",
        "--group",
        "go-grp-r0",
        "--partitions",
        "4",
        "--count",
        "2000",
        "--retention0",
      ], 90_000)
    );
    expect(r.versions.OffsetCommit).toEqual([1]);
    expect([...r.claims.a, ...r.claims.b].sort()).toEqual([0, 1, 2, 3]);
    expect(r.processedA + r.processedB).toBe(2000);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(r.committed)).toBe(2000);
    expect(r.resumed).toBe(1000);
    expect(sum(r.committed2)).toBe(3000);
    expect(r.errors).toEqual([]);
    expect(logs).not.toContain("unsupported api 8");
  },
  90_000,
);

test(
  "sarama: ClusterAdmin create/list/describe/alter/grow/delete, GetOffset oldest/newest/by time, DeleteRecords",
  async () => {
    const r = await ok("sarama-admin", ["--topic", "go-adm"]);
    expect(r).toMatchObject({
      created: true,
      listed: true,
      partitions: 3,
      "retention.ms": "3600000",
      altered: "7200000",
      grown: 4,
      offsets: { oldest: 0, newest: 10, t0: 0, "t0+5s": 5, "t0+5.5s": 6, "after the last": -1 },
      deleteRecords: 3,
      deleted: true,
    });
    expect(r.versions).toMatchObject({
      CreateTopics: [2],
      DeleteTopics: [1],
      DescribeConfigs: [0],
      AlterConfigs: [0],
      CreatePartitions: [0],
      DeleteRecords: [0],
      ListOffsets: [1],
    });
    const topics = await fetch(`${broker.httpUrl}/topics/go-adm`);
    expect(topics.status).toBe(404);
  },
  60_000,
);

// sarama.NewConfig() left alone is Version 0.8.2.0: Metadata v0 works, and so does Produce v0
// (message format v0, up-converted as Kafka 3.x does), but it asks offsets with ListOffsets v0,
// which the broker does not serve (nor does Kafka 4.0). Users must set Config.Version (>= V0_11_0_0).
test(
  "sarama: the default Config.Version (0.8.2.0) reads metadata, produces and lists offsets (ListOffsets v0, as Burrow sends it)",
  async () => {
    await createTopic(broker, "go-default", 2);
    const { result: r, logs } = await brokerLogsDuring(() =>
      ok("sarama-default", ["--topic", "go-default"])
    );
    expect(r.configVersion).toBe("0.8.2.0");
    expect(r.partitions).toBe(2);
    expect(r.produceError).toBeNull();
    expect(r.offsetError).toBeNull();
    expect(r.versions).toMatchObject({ Metadata: [0], Produce: [0], ListOffsets: [0] });
    expect(logs).not.toContain("unsupported api");
    const stored = await storedRecords("go-default");
    expect(stored).toBe(1);
    // The one record went to partition 0 or 1: GetOffset's newest of partition 0 is its HW.
    const t = await (await fetch(`${broker.httpUrl}/topics/go-default`)).json() as {
      partitions: { high_watermark: number }[];
    };
    expect(r.newest).toBe(t.partitions[0].high_watermark);
  },
  60_000,
);

test("kafka-go: Conn CreateTopics, ReadPartitions, ReadOffsets, DeleteTopics", async () => {
  const r = await ok("kafkago-admin", ["--topic", "go-kg-adm"]);
  expect(r).toMatchObject({
    created: true,
    partitions: 3,
    leader: bootstrap,
    offsets: [0, 0],
    "retention.ms": "3600000",
    deleted: true,
  });
  expect(r.versions).toMatchObject({ CreateTopics: [0], DeleteTopics: [1], ListOffsets: [1] });
  expect(r.versions.Metadata).toContain(1);
}, 60_000);

// kafka-go 0.2.1's Reader.Close does not send LeaveGroup (it dials the coordinator with the
// context it has just cancelled; see kafkagoGroup in the driver): the members go by session
// timeout, which the broker's log shows. A client bug, not a broker one.
test(
  "kafka-go: two group Readers join, split the partitions, commit; closed, they time out",
  async () => {
    await createTopic(broker, "go-kg-grp", 4);
    const { result: r, logs } = await brokerLogsDuring(() =>
      ok("kafkago-group", [
        "--topic",
        "go-kg-grp",
        "--group",
        "go-kg-grp",
        "--partitions",
        "4",
      ])
    );
    expect([...r.owned["kg-1"], ...r.owned["kg-2"]].sort()).toEqual([0, 1, 2, 3]);
    expect(r.committed).toEqual({ "0": 10, "1": 11, "2": 12, "3": 13 });
    expect(r.empty).toBe(true);
    const removed = logs.split("\n").filter((l) =>
      l.includes('"groupId":"go-kg-grp"') && l.includes('"kind":"memberRemoved"')
    );
    expect(removed.length).toBe(2);
    for (const l of removed) expect(l).toContain('"reason":"sessionTimeout"');
  },
  60_000,
);

// kafka-go 0.2.1's Writer produces with Produce v2 (message format v1, here gzip-wrapped), which
// is up-converted as Kafka 3.x does; its Reader fetches with Fetch v2, which is not served (the
// broker would have to down-convert to message format v1; Kafka 4.0 dropped it too).
// When the broker (or a newer kafka-go) changes this, this test fails: turn it into a round trip.
test(
  "kafka-go: Writer (Produce v2, gzip) works; the group Reader needs Fetch v2, which is not served",
  async () => {
    const ranges = await ok("api-versions", ["--topic", "-"]);
    expect(ranges.Produce[0]).toBe(0);
    expect(ranges.Fetch[0]).toBeGreaterThan(2);
    await createTopic(broker, "go-kg-rw", 3);
    const { result: r, logs } = await brokerLogsDuring(() =>
      run("kafkago-rw", ["--topic", "go-kg-rw", "--group", "go-kg-rw", "--count", "100"])
    );
    expect(r.code).toBe(1);
    expect(r.reason).not.toContain("Writer.WriteMessages");
    expect(r.reason).toContain("Reader.ReadMessage after 0 records");
    expect(logs).not.toContain("unsupported api 0 v2");
    expect(logs).toContain("unsupported api 1 v2");
    expect(await storedRecords("go-kg-rw")).toBe(100);
  },
  60_000,
);
