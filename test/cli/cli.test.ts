// The client subcommands against a real broker process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { COMMANDS } from "../../src/cli/index.ts";
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
  expect(cases[5].err).toContain("nothing is listening on 127.0.0.1:1 (connection refused)");
  expect(cases[5].err).not.toContain("Is the computer able");
  expect(cases[3].err).toContain("422");
  // Usage errors exit 2 (as the broker's own flags do); the server's and the network's exit 1.
  expect(cases.map((r) => r.code)).toEqual([2, 2, 2, 1, 1, 1, 2]);
}, 60_000);

test("usage errors: exit 2 with a suggestion for typos of commands and flags", () => {
  const cases: [string[], string][] = [
    [["prodcue", "t"], 'unknown command "prodcue" (did you mean produce?)'],
    [["topic", "craete", "x"], 'unknown command "topic craete" (did you mean topic create?)'],
    [["topic", "list", "--sever", "x"], "unknown option '--sever' (did you mean --server?)"],
    [["consume", "t", "--follw"], "unknown option '--follw' (did you mean --follow?)"],
    [["--data-dri", "x"], "unknown option '--data-dri' (did you mean --data-dir?)"],
    [["topic", "list", "extra"], 'unexpected argument "extra"'],
    [["produce", "t", "--acks", "2"], "--acks must be 0, 1 or all"],
    [["topic", "list", "--server", "host:99999"], "expected HOST:PORT or an http(s) URL"],
    [["completion", "tcsh"], 'unknown shell "tcsh"'],
  ];
  for (const [args, msg] of cases) {
    const r = run(args);
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    expect(r.err).toContain(msg);
    expect(r.err.trim().split("\n")).toHaveLength(1);
  }
  // A word nothing is close to gets no guess.
  expect(run(["zzzzzz"]).err).not.toContain("did you mean");
}, 60_000);

test("--server takes HOST:PORT, and a list whose first entry is down", () => {
  const hostPort = b.httpUrl.replace("http://", "");
  const r = run(["cluster", "status", "--server", hostPort]);
  expect(r.code).toBe(0);
  const list = run(["topic", "list", "--server", `127.0.0.1:1,${hostPort}`]);
  expect(list.code).toBe(0);
  expect(run(["topic", "list"], { BROKER_SERVER: hostPort }).code).toBe(0);
  // Every entry down: each failure named, in the CLI's words.
  const down = run(["topic", "list", "--server", "127.0.0.1:1,127.0.0.1:2"]);
  expect(down.code).toBe(1);
  expect(down.err).toContain("127.0.0.1:1 (connection refused)");
  expect(down.err).toContain("127.0.0.1:2 (connection refused)");
}, 60_000);

test("--help on every command, completion scripts for bash, zsh and fish", () => {
  for (const c of COMMANDS) {
    const r = run([...c.name.split(" "), "--help"]);
    expect([c.name, r.code]).toEqual([c.name, 0]);
    expect(r.out).toContain(`Usage: broker ${c.name}`);
    expect(r.out).toContain("Examples:");
  }
  const bash = run(["completion", "bash"]);
  expect(bash.code).toBe(0);
  // The bash script completes commands, subcommands, flags and flag values when sourced.
  const complete = (line: string) => {
    const words = line.split(" ");
    const script = `${bash.out}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); ` +
      `COMP_CWORD=${words.length - 1}; _broker; echo "\${COMPREPLY[@]}"`;
    return Bun.spawnSync(["bash", "-c", script]).stdout.toString().trim().split(" ");
  };
  expect(complete("broker pro")).toEqual(["produce"]);
  expect(complete("broker topic cr")).toEqual(["create"]);
  expect(complete("broker produce t --ac")).toEqual(["--acks"]);
  expect(complete("broker produce t --acks ")).toEqual(["0", "1", "all"]);
  expect(complete("broker consume t --f")).toEqual(["--from", "--follow", "--format"]);
  expect(complete("broker --data-")).toEqual(["--data-dir"]);
  expect(complete("broker completion ")).toEqual(["bash", "zsh", "fish"]);
  const zsh = run(["completion", "zsh"]);
  expect(zsh.out).toStartWith("#compdef broker");
  expect(zsh.out).toContain("compdef _broker broker");
  expect(zsh.out).toContain("'topic create') flags=(");
  const fish = run(["completion", "fish"]).out;
  expect(fish).toContain("complete -c broker -n __fish_use_subcommand -a 'topic produce consume");
  expect(fish).toContain("-l key-separator -s K -r");
  for (const sh of ["zsh", "fish"]) {
    // Syntax-checked where the shell is installed.
    if (Bun.which(sh)) {
      const f = `${b.dataDir}/completion.${sh}`;
      writeFileSync(f, run(["completion", sh]).out);
      expect(Bun.spawnSync([sh, "-n", f]).exitCode).toBe(0);
    }
  }
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

test(
  "bulk produce and consume: every record once, in order per partition, keys split at the broker",
  () => {
    expect(cli(["topic", "create", "bulk", "--partitions", "3"]).code).toBe(0);
    // 120 000 lines of ~30 bytes: several request bodies (cut at 50 000 lines and at 1 MiB).
    const n = 120_000;
    const lines: string[] = [];
    for (let i = 0; i < n; i++) lines.push(`k${i % 97}:${String(i).padStart(8, "0")}-value`);
    const file = `${b.dataDir}/bulk.txt`;
    writeFileSync(file, lines.join("\n")); // no final newline: the last line is a record too
    const p = Bun.spawnSync(
      [
        "bash",
        "-c",
        `"$@" < ${file}`,
        "bash",
        ...brokerCommand(),
        "produce",
        "bulk",
        "-K",
        ":",
        "--server",
        b.httpUrl,
      ],
      { stdout: "pipe", stderr: "pipe", timeout: 60_000 },
    );
    expect([p.exitCode, p.stderr.toString()]).toEqual([0, `produced ${n} record(s) to bulk\n`]);
    const c = cli(["consume", "bulk", "--format", "{partition} {key} {value}"]);
    expect(c.code).toBe(0);
    // Not a terminal: no progress line, only records.
    expect(c.err).toBe("");
    const got = c.out.trimEnd().split("\n").map((l) => l.split(" "));
    expect(got).toHaveLength(n);
    const byKey = new Map<string, { partition: string; seq: number[] }>();
    for (const [partition, key, value] of got) {
      const e = byKey.get(key) ?? { partition, seq: [] };
      // One key, one partition (murmur2 of the key at the broker).
      expect(e.partition).toBe(partition);
      e.seq.push(Number(value.slice(0, 8)));
      byKey.set(key, e);
    }
    expect(byKey.size).toBe(97);
    for (const { seq } of byKey.values()) {
      expect(seq).toEqual([...seq].sort((a, b) => a - b));
    }
    expect(cli(["consume", "bulk", "--count", "5"]).out.split("\n")).toHaveLength(6);
  },
  60_000,
);

test("progress on a terminal: records, bytes, rate and ETA; none when stderr is not one", () => {
  if (!Bun.which("script")) return;
  const file = `${b.dataDir}/progress.txt`;
  writeFileSync(file, Array.from({ length: 200_000 }, (_, i) => `line ${i}`).join("\n") + "\n");
  expect(cli(["topic", "create", "prog"]).code).toBe(0);
  const cmd = [...brokerCommand(), "produce", "prog", "--server", b.httpUrl].map((a) => `'${a}'`)
    .join(" ");
  // script(1) gives the command a terminal; stdin stays the file (a known size: an ETA).
  const r = Bun.spawnSync(["script", "-qec", `${cmd} < ${file}`, "/dev/null"], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const tty = r.stdout.toString();
  expect(tty).toContain("produced 200000 record(s) to prog");
  expect(tty).toMatch(
    /produced [\d,]+ records \(\d+%\), [\d.]+ (KiB|MiB), [\d,]+ rec\/s, ETA \d+s/,
  );
  const piped = cli(["consume", "prog", "--count", "1"]);
  expect(piped.err).toBe("");
}, 60_000);
