// What an operator's tooling sees of a running broker: probes open to Kubernetes even with
// --http-token (and revealing nothing without it), /metrics on its own listener, kafka_exporter's
// consumer-lag series, process_* and build info, and a scrape that `promtool check metrics`
// passes (Debian's prometheus package; that test is skipped only where promtool is absent).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import { RawClient } from "../kafka/raw-client.ts";

const TOKEN = "observability-test-token";
const auth = { authorization: `Bearer ${TOKEN}` };
const PROMTOOL = "/usr/bin/promtool";

let b: RunningBroker;
let metricsUrl: string;
beforeAll(async () => {
  b = await startBrokerProcess({
    args: ["--http-token", TOKEN, "--metrics-addr", "127.0.0.1:0"],
  });
  const started = b.logs.map((l) => JSON.parse(l)).find((r) => r.msg === "broker started");
  metricsUrl = `http://${started.metrics}`;
});
afterAll(async () => {
  b.kill();
  await b.exited;
});

async function scrape(): Promise<string> {
  const r = await fetch(`${metricsUrl}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  return await r.text();
}

/** The value of the sample `name{labels}` (labels in the order rendered), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("probes and the token", () => {
  test("/healthz and /readyz answer without the token, with nothing but their status", async () => {
    const h = await api(b.httpUrl, "GET", "/healthz");
    expect(h.status).toBe(200);
    expect(h.json).toEqual({ status: "ok" });
    const r = await api(b.httpUrl, "GET", "/readyz");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ready: true });
    // A wrong token is no token: the same reduced answer, not a 401 (a probe must not fail).
    const wrong = await api(b.httpUrl, "GET", "/healthz", undefined, { authorization: "Bearer x" });
    expect(wrong.json).toEqual({ status: "ok" });
  });

  test("with the token the probes say more; every other route still needs it", async () => {
    const h = await api(b.httpUrl, "GET", "/healthz", undefined, auth);
    expect(h.json).toMatchObject({ status: "ok", node_id: 0 });
    expect(typeof h.json.version).toBe("string");
    expect((await api(b.httpUrl, "GET", "/metrics")).status).toBe(401);
    expect((await api(b.httpUrl, "GET", "/topics")).status).toBe(401);
    expect((await api(b.httpUrl, "GET", "/topics", undefined, auth)).status).toBe(200);
  });

  test("--metrics-addr serves /metrics and the probes without the token, nothing else", async () => {
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${metricsUrl}/readyz`)).status).toBe(200);
    const other = await fetch(`${metricsUrl}/topics`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error_code: number }).error_code).toBe(40400);
    expect((await fetch(`${metricsUrl}/metrics`, { method: "POST" })).status).toBe(404);
    expect(await scrape()).toContain("# TYPE broker_connections gauge");
  });
});

describe("metrics", () => {
  test("kafka_exporter's consumer-group series: committed offset, lag, members", async () => {
    const created = await api(
      b.httpUrl,
      "POST",
      "/topics",
      { name: "lagged", partitions: 2 },
      auth,
    );
    expect(created.status).toBe(201);
    const values = Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: 0 }));
    expect((await api(b.httpUrl, "POST", "/topics/lagged/records", values, auth)).status)
      .toBe(200);
    const c = await RawClient.connect(b.kafkaPort);
    const committed = await c.call(8, 0, {
      groupId: "billing",
      topics: [{
        name: "lagged",
        partitions: [{ partitionIndex: 0, committedOffset: 4, committedMetadata: "" }],
      }],
    });
    c.close();
    // deno-lint-ignore no-explicit-any
    expect((committed.topics as any)[0].partitions[0].errorCode).toBe(0);

    const m = await scrape();
    const gp = 'consumergroup="billing",topic="lagged",partition="0"';
    expect(sample(m, `kafka_consumergroup_current_offset{${gp}}`)).toBe(4);
    expect(sample(m, `kafka_consumergroup_lag{${gp}}`)).toBe(6);
    // Partition 1 has no committed offset: no series (as kafka_exporter).
    expect(m).not.toContain('consumergroup="billing",topic="lagged",partition="1"');
    expect(sample(m, 'kafka_consumergroup_members{consumergroup="billing"}')).toBe(0);
    expect(sample(m, 'broker_group_total_lag{group="billing"}')).toBe(6);
    const tp = 'topic="lagged",partition="0"';
    expect(sample(m, `kafka_topic_partition_current_offset{${tp}}`)).toBe(10);
    expect(sample(m, `kafka_topic_partition_oldest_offset{${tp}}`)).toBe(0);
    expect(sample(m, `kafka_topic_partition_leader{${tp}}`)).toBe(0);
    expect(sample(m, `kafka_topic_partition_in_sync_replica{${tp}}`)).toBe(1);
    expect(sample(m, `kafka_topic_partition_under_replicated_partition{${tp}}`)).toBe(0);
    expect(sample(m, 'kafka_topic_partitions{topic="lagged"}')).toBe(2);
    expect(sample(m, "kafka_brokers")).toBe(1);
  });

  test("Kafka errors by API and code; requests answered by closing the connection", async () => {
    const c = await RawClient.connect(b.kafkaPort);
    const create = () =>
      c.call(19, 4, {
        topics: [{
          name: "twice",
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: [],
        }],
        timeoutMs: 5000,
        validateOnly: false,
      });
    await create();
    // deno-lint-ignore no-explicit-any
    expect((await create() as any).topics[0].errorCode).toBe(36);
    c.close();
    const m = await scrape();
    expect(sample(
      m,
      'broker_kafka_request_errors_total{api="CreateTopics",code="36",error="TOPIC_ALREADY_EXISTS"}',
    )).toBe(1);
    // A key no Kafka has (made-up keys share one series) closes the connection.
    const bad = await RawClient.connect(b.kafkaPort);
    await bad.write(new Uint8Array([0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0]));
    expect(await bad.waitClosed()).toBe(true);
    expect(sample(await scrape(), 'broker_kafka_requests_failed_total{api="unknown"}')).toBe(1);
  });

  test("process_* and build info", async () => {
    const m = await scrape();
    expect(m).toContain("# TYPE process_cpu_seconds_total counter");
    for (
      const name of [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_max_fds",
        "process_start_time_seconds",
      ]
    ) {
      expect(sample(m, name)).toBeGreaterThan(0);
    }
    const startedAgo = Date.now() / 1000 - sample(m, "process_start_time_seconds")!;
    expect(startedAgo).toBeGreaterThan(0);
    expect(startedAgo).toBeLessThan(120);
    expect(m).toMatch(/^broker_build_info\{version="[^"]+",bun_version="[^"]+"\} 1$/m);
  });

  test("every series the Grafana dashboard in docs/ queries is one the broker exports", async () => {
    const dash = JSON.parse(
      readFileSync(join(import.meta.dir, "../../docs/grafana-dashboard.json"), "utf8"),
    );
    const exprs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if ((k === "expr" || k === "definition") && typeof x === "string") exprs.push(x);
          else walk(x);
        }
      }
    };
    walk(dash);
    expect(exprs.length).toBeGreaterThan(20);
    const declared = new Set(
      [...(await scrape()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]),
    );
    const used = new Set(
      exprs.flatMap((e) =>
        [...e.matchAll(/\b((?:kafka|broker|process)_[a-z_]+)/g)].map((m) => m[1])
      ),
    );
    const missing = [...used].filter((n) =>
      !declared.has(n) && !declared.has(n.replace(/_(bucket|sum|count)$/, ""))
    );
    expect(missing).toEqual([]);
  });

  test.skipIf(!existsSync(PROMTOOL))("promtool check metrics passes on a live scrape", async () => {
    const check = (text: string) => {
      const r = Bun.spawnSync([PROMTOOL, "check", "metrics"], { stdin: Buffer.from(text) });
      return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
    };
    // promtool does lint: the old name is refused.
    expect(
      check(
        "# HELP broker_group_lag_sum x\n# TYPE broker_group_lag_sum gauge\n" +
          'broker_group_lag_sum{group="g"} 1\n',
      ).code,
    ).not.toBe(0);
    // A scrape with traffic behind it: Kafka and HTTP requests, groups, topics.
    const c = await RawClient.connect(b.kafkaPort);
    await c.call(3, 1, { topics: null });
    c.close();
    const got = check(await scrape());
    expect(got.out).toBe("");
    expect(got.code).toBe(0);
  });
});
