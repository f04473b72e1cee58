// The client subcommands against a real broker process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  brokerCommand,
  type RunningBroker,
  startBrokerProcess,
  TEST_JOIN_TOKEN,
} from "../helpers/broker-process.ts";

let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
});
afterAll(() => b?.kill("SIGKILL"));

function cli(args: string[], stdin?: string) {
  const r = Bun.spawnSync([...brokerCommand(), ...args, "--server", b.httpUrl], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

test("--help with examples on every subcommand", () => {
  for (
    const c of [
      "topic create",
      "topic list",
      "topic describe",
      "topic alter",
      "topic delete",
      "produce",
      "consume",
      "group list",
      "group describe",
      "group reset-offsets",
      "group delete",
      "cluster status",
      "cluster join-token",
      "cluster remove-node",
    ]
  ) {
    const r = cli([...c.split(" "), "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("Examples:");
    expect(r.out).toContain(`broker ${c}`);
  }
}, 60_000);

test("topic, produce, consume, group and cluster commands", () => {
  expect(
    cli(["topic", "create", "orders", "--partitions", "2", "--config", "retention.ms=3600000"])
      .code,
  )
    .toBe(0);
  expect(cli(["topic", "list"]).out).toContain("orders");
  expect(cli(["topic", "describe", "orders"]).out).toMatch(/PARTITION\s+LEADER/);
  expect(
    JSON.parse(cli(["topic", "alter", "orders", "--partitions", "3", "--json"]).out).partitions,
  )
    .toHaveLength(3);
  const p = cli(["produce", "orders", "-K", ":", "--header", "src=cli"], "alice:1\nbob:2\nbare\n");
  expect(p.code).toBe(0);
  const c = cli(["consume", "orders", "--format", "{key}={value}"]);
  expect(c.out.trim().split("\n").sort()).toEqual(["=bare", "alice=1", "bob=2"]);
  const j = cli(["consume", "orders", "--json", "--count", "1"]).out.trim().split("\n");
  expect(j).toHaveLength(1);
  expect(JSON.parse(j[0]).headers).toEqual([{ key: "src", value: "cli" }]);
  const f = cli(["consume", "orders", "--follow", "--from", "earliest", "--count", "3"]);
  expect(f.out.trim().split("\n")).toHaveLength(3);
  const g = cli(["consume", "orders", "--group", "cg"]);
  expect(g.out.trim().split("\n").sort()).toEqual(["1", "2", "bare"]);
  expect(cli(["group", "list"]).out).toContain("cg");
  expect(cli(["group", "describe", "cg"]).out).toContain("total lag 0");
  expect(cli(["group", "reset-offsets", "cg", "--to", "earliest"]).code).toBe(0);
  expect(cli(["group", "describe", "cg", "--json"]).out).toContain('"lag": 3');
  expect(cli(["group", "delete", "cg"]).code).toBe(0);
  expect(cli(["cluster", "status"]).out).toMatch(/cluster \S+, controller 0/);
  // The join token is read from the data dir (never over HTTP); the broker runs with the
  // helper's token.
  const jt = cli(["cluster", "join-token", "--data-dir", b.dataDir]);
  expect(jt.code).toBe(0);
  expect(jt.out.trim()).toBe(TEST_JOIN_TOKEN);
  const none = cli(["cluster", "join-token", "--data-dir", b.dataDir + "-nope"]);
  expect(none.code).toBe(1);
  expect(none.err).toContain("no join token in");
  // remove-node: a broker that is not a member is reported; one that holds replicas is refused
  // (they would have nowhere to go); the leader itself is refused by the server.
  expect(cli(["cluster", "remove-node", "7"]).out).toContain("broker 7 is not a member");
  const holds = cli(["cluster", "remove-node", "0"]);
  expect(holds.code).toBe(1);
  expect(holds.err).toMatch(/broker 0 still holds \d+ replica\(s\) \(__consumer_offsets-0/);
  expect(holds.err).toContain("--move-replicas");
  const self = cli(["cluster", "remove-node", "0", "--ignore-replicas"]);
  expect(self.code).toBe(1);
  expect(self.err).toContain("409");
  expect(self.err).toContain("cannot remove itself");
  expect(cli(["cluster", "remove-node", "x"]).err).toContain("must be an integer");
  const bad = cli(["topic", "describe", "nope"]);
  expect(bad.code).toBe(1);
  expect(bad.err.trim().split("\n")).toHaveLength(1);
  expect(bad.err).toContain("404");
  expect(cli(["topic", "delete", "orders"]).code).toBe(0);
}, 60_000);

function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const r = Bun.spawnSync([...brokerCommand(), ...args], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...env },
    timeout: 20_000,
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

test("produce --partition/--header; consume --partition, --from offset and time; --json", () => {
  expect(cli(["topic", "create", "p3", "--partitions", "3"]).code).toBe(0);
  const before = Date.now() - 1000;
  const p = cli(["produce", "p3", "-p", "2", "-H", "h=1", "-K", "|"], "a\nk|b\nc\n");
  expect([p.code, p.err.trim()]).toEqual([0, "produced 3 record(s) to p3"]);
  const fmt = "{partition}:{offset}:{key}:{value}:{headers}";
  expect(cli(["consume", "p3", "--partition", "2", "--from", "1", "--format", fmt]).out).toBe(
    "2:1:k:b:h=1\n2:2::c:h=1\n",
  );
  expect(cli(["consume", "p3", "--partition", "1"]).out).toBe("");
  const later = new Date(Date.now() + 3600_000).toISOString();
  expect(cli(["consume", "p3", "--from", later]).out).toBe("");
  // 13 digits are epoch milliseconds, not an offset.
  expect(cli(["consume", "p3", "--from", String(before), "--count", "1"]).out).toBe("a\n");
  const j = cli(["consume", "p3", "--json"]).out.trim().split("\n").map((l) => JSON.parse(l));
  expect(j.map((r) => [r.partition, r.offset, r.value])).toEqual([
    [2, 0, "a"],
    [2, 1, "b"],
    [2, 2, "c"],
  ]);
  const list = cli(["topic", "list"]).out.split("\n");
  expect(list[0]).toMatch(/^NAME\s+PARTITIONS\s+REPLICATION$/);
  expect(
    JSON.parse(cli(["topic", "list", "--json"]).out).some((t: { name: string }) => t.name === "p3"),
  ).toBe(true);
}, 60_000);

test("errors exit non-zero with one clear line", () => {
  const cases = [
    cli(["consume", "p3", "--from", "yesterday"]),
    cli(["topic", "list", "--bogus"]),
    cli(["produce"]),
    cli(["topic", "create", "bad name!"]),
    cli(["group", "describe", "nobody"]),
    run(["topic", "list", "--server", "http://127.0.0.1:1"]),
    run(["topic", "list", "--server", "ftp://x"]),
  ];
  for (const r of cases) {
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/^broker: \S/);
    expect(r.out).toBe("");
  }
  expect(cases[5].err).toContain("cannot reach http://127.0.0.1:1");
  expect(cases[3].err).toContain("422");
}, 60_000);

test("--token and BROKER_HTTP_TOKEN reach a broker run with --http-token", async () => {
  const t = await startBrokerProcess({ args: ["--http-token", "s3cret"] });
  try {
    const no = run(["cluster", "status", "--server", t.httpUrl]);
    expect(no.code).toBe(1);
    expect(no.err).toContain("401");
    expect(no.err).toContain("--token TOKEN or BROKER_HTTP_TOKEN");
    const wrong = run(["cluster", "status", "--server", t.httpUrl, "--token", "nope"]);
    expect(wrong.err).toContain("is not the broker's");
    expect(run(["cluster", "status", "--server", t.httpUrl, "--token", "s3cret"]).code).toBe(0);
    const env = run(["topic", "list", "--server", t.httpUrl], { BROKER_HTTP_TOKEN: "s3cret" });
    expect(env.code).toBe(0);
  } finally {
    t.kill("SIGKILL");
  }
}, 60_000);
