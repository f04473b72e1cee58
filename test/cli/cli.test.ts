// The client subcommands against a real broker process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  brokerCommand,
  type RunningBroker,
  startBrokerProcess,
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
  const bad = cli(["topic", "describe", "nope"]);
  expect(bad.code).toBe(1);
  expect(bad.err.trim().split("\n")).toHaveLength(1);
  expect(bad.err).toContain("404");
  expect(cli(["topic", "delete", "orders"]).code).toBe(0);
}, 60_000);
