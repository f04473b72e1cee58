// Three broker processes: what operators see of replication (GET /topics/{t} replica positions
// and flags, GET /cluster session states, /metrics) through a controlled shutdown and a restart,
// and ElectLeaders sent to a broker that is not the controller (passed on to it), over Kafka and
// over HTTP (the CLI).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { type RunningBroker, tempDir } from "../helpers/broker-process.ts";
import { BrokerSet, waitFor } from "../helpers/processes.ts";
import { RawClient } from "../kafka/raw-client.ts";

const ROOT = join(import.meta.dir, "..", "..");
const brokers = new BrokerSet("SIGKILL");

function start(id: number, dataDir: string, join?: string): Promise<RunningBroker> {
  return brokers.start({
    dataDir,
    args: [
      "--node-id",
      String(id),
      "--voters",
      "3",
      "--auto-leader-rebalance",
      "false",
      "--replica-lag-time-max-ms",
      "2000",
      ...(join ? ["--join", join] : []),
    ],
    timeoutMs: 30_000,
  });
}

// deno-lint-ignore no-explicit-any
async function get(b: RunningBroker, path: string): Promise<any> {
  const r = await fetch(b.httpUrl + path, { signal: AbortSignal.timeout(5000) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text}`);
  return path === "/metrics" ? text : JSON.parse(text);
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

interface Partition {
  partition: number;
  leader: number;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
  high_watermark: number | null;
  log_end_offset: number | null;
  under_replicated: boolean;
  offline: boolean;
  replica_positions: { broker_id: number; log_end_offset: number | null; lag: number | null }[];
}

const RECORDS = 5;

test("replica views, session states, metrics and ElectLeaders across three processes", async () => {
  const dirs = [tempDir("views-1-"), tempDir("views-2-"), tempDir("views-3-")];
  const b1 = await start(1, dirs[0]);
  const b2 = await start(2, dirs[1], b1.clusterAddr);
  const b3 = await start(3, dirs[2], b1.clusterAddr);
  const byId = new Map([[1, b1], [2, b2], [3, b3]]);

  // Every broker alive, as the controller sees it, asked from each broker.
  for (const b of [b1, b2, b3]) {
    await waitFor("three alive brokers", 20_000, async () => {
      const c = await get(b, "/cluster");
      const ok = c.broker_states_from === "controller" && c.brokers.length === 3 &&
        // deno-lint-ignore no-explicit-any
        c.brokers.every((x: any) => x.state === "alive" && x.heartbeat_age_ms !== null);
      return ok ? c : undefined;
    });
  }

  const created = await fetch(`${b1.httpUrl}/topics`, {
    method: "POST",
    body: JSON.stringify({ name: "v", partitions: 3, replication_factor: 3 }),
  });
  expect(created.status).toBe(201);
  const desc = async (b: RunningBroker) => (await get(b, "/topics/v")).partitions as Partition[];
  // Each partition written on its leader.
  for (const p of await desc(b1)) {
    const leader = byId.get(p.leader)!;
    for (let i = 0; i < RECORDS; i++) {
      // Retried while the new partition's leader is still taking up its role (503).
      await waitFor("a produce", 10_000, async () => {
        const r = await fetch(`${leader.httpUrl}/topics/v/records`, {
          method: "POST",
          body: JSON.stringify({ value: `r${i}`, partition: p.partition }),
        });
        const text = await r.text();
        if (r.status !== 200) throw new Error(`${r.status} ${text}`);
        return text;
      });
    }
  }
  // Every broker shows every replica caught up, read from each partition's leader.
  for (const b of [b1, b2, b3]) {
    await waitFor("replicas caught up", 20_000, async () => {
      const ps = await desc(b);
      const ok = ps.every((p) =>
        p.log_end_offset === RECORDS && p.high_watermark === RECORDS && !p.under_replicated &&
        !p.offline && p.replica_positions.length === 3 &&
        p.replica_positions.every((r) => r.lag === 0 && r.log_end_offset === RECORDS)
      );
      return ok ? ps : undefined;
    });
  }

  // Controlled shutdown of a broker that is not the controller: it is fenced, leadership and
  // ISR places move, the partitions are under-replicated and their leaders count ISR shrinks.
  const controller = (await get(b1, "/cluster")).controller as number;
  const goneId = [1, 2, 3].find((id) => id !== controller)!;
  const gone = byId.get(goneId)!;
  const stay = [1, 2, 3].filter((id) => id !== goneId).map((id) => byId.get(id)!);
  const preferredByGone = (await desc(b1)).filter((p) => p.replicas[0] === goneId)
    .map((p) => p.partition);
  expect(preferredByGone.length).toBeGreaterThan(0);
  gone.kill("SIGTERM");
  expect(await gone.exited).toBe(0);
  // Its Kafka clients were cut as soon as its leaderships had moved (so they asked for metadata
  // at once), before the rest of the shutdown.
  const order = ["controlled shutdown", "kafka listener stopped", "stopped"].map((msg) =>
    gone.logs.findIndex((l) => l.includes(`"msg":"${msg}"`))
  );
  expect(order.every((i) => i >= 0)).toBe(true);
  expect(order[0]).toBeLessThan(order[1]);
  expect(order[1]).toBeLessThan(order[2]);
  expect(gone.logs[order[1]]).toContain('"reason":"leadership moved"');
  await waitFor("the stopped broker fenced", 10_000, async () => {
    const c = await get(stay[0], "/cluster");
    // deno-lint-ignore no-explicit-any
    return c.brokers.find((x: any) => x.node_id === goneId)?.state === "fenced" ? c : undefined;
  });
  const degraded = await waitFor("partitions under-replicated", 10_000, async () => {
    const ps = await desc(stay[0]);
    return ps.every((p) => p.under_replicated && p.leader !== goneId && !p.isr.includes(goneId))
      ? ps
      : undefined;
  });
  const missing = degraded[0].replica_positions.find((r) => r.broker_id === goneId)!;
  expect(missing.lag === null || missing.lag >= 0).toBe(true);
  let shrinks = 0;
  for (const b of stay) {
    const m = await get(b, "/metrics");
    expect(metric(m, "broker_offline_partitions")).toBe(0);
    shrinks += metric(m, "broker_isr_shrinks_total");
  }
  expect(shrinks).toBeGreaterThan(0);
  const under = await Promise.all(
    stay.map(async (b) => metric(await get(b, "/metrics"), "broker_under_replicated_partitions")),
  );
  // The topic's 3 partitions, and __consumer_offsets' ones it held a replica of.
  expect(under.reduce((a, x) => a + x, 0)).toBeGreaterThanOrEqual(3);
  const ctl = byId.get(controller)!;
  const cm = await get(ctl, "/metrics");
  expect(metric(cm, "broker_controller_active")).toBe(1);
  expect(metric(cm, "broker_controller_fences_total")).toBeGreaterThanOrEqual(1);

  // Back on its data dir: it catches up and rejoins the ISRs, but leads nothing (no rebalance).
  const back = await start(goneId, dirs[goneId - 1], ctl.clusterAddr);
  byId.set(goneId, back);
  await waitFor("the ISRs whole again", 30_000, async () => {
    const ps = await desc(ctl);
    return ps.every((p) => !p.under_replicated) ? ps : undefined;
  });
  let expands = 0;
  for (const b of stay) expands += metric(await get(b, "/metrics"), "broker_isr_expands_total");
  expect(expands).toBeGreaterThan(0);
  const before = await desc(ctl);
  for (const p of preferredByGone) expect(before[p].leader).not.toBe(goneId);

  // ElectLeaders over Kafka to a broker that is not the controller: passed on to it.
  const other = [...byId.entries()].find(([id]) => id !== controller)![1];
  const kafka = await RawClient.connect(other.kafkaPort);
  try {
    const r = await kafka.call(43, 2, {
      electionType: 0,
      topicPartitions: [{ topic: "v", partitionId: [0, 1, 2] }],
      timeoutMs: 10_000,
    });
    expect(r.errorCode).toBe(0);
    // deno-lint-ignore no-explicit-any
    const results = (r.replicaElectionResults as any[])[0].partitionResult as any[];
    for (const x of results) {
      expect(x.errorCode).toBe(preferredByGone.includes(x.partitionId) ? 0 : 84);
    }
  } finally {
    kafka.close();
  }
  await waitFor("preferred leaders everywhere", 10_000, async () => {
    const ps = await desc(other);
    return ps.every((p) => p.leader === p.replicas[0]) ? ps : undefined;
  });
  const after = await desc(other);
  for (const p of preferredByGone) expect(after[p].leader_epoch).toBe(before[p].leader_epoch + 1);

  // Over HTTP (and the CLI), through a non-controller: nothing left to elect in the topic; unclean
  // on a led partition is not needed either.
  const res = await fetch(`${other.httpUrl}/cluster/elect-leaders`, {
    method: "POST",
    body: JSON.stringify({ type: "unclean", topic: "v", partitions: [0] }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { results: unknown[] }).results).toMatchObject([
    { topic: "v", partition: 0, error_code: 84, error: "ELECTION_NOT_NEEDED" },
  ]);
  const cli = Bun.spawnSync([
    process.execPath,
    join(ROOT, "src", "main.ts"),
    "topic",
    "elect-leaders",
    "--topic",
    "v",
    "--server",
    other.httpUrl,
  ]);
  expect(cli.stdout.toString()).toContain("ELECTION_NOT_NEEDED");
  expect(cli.stdout.toString()).toContain("0 leader(s) elected\n");
  expect(cli.exitCode).toBe(0);
  expect(metric(await get(ctl, "/metrics"), "broker_controller_elections_total"))
    .toBeGreaterThanOrEqual(preferredByGone.length);
}, 120_000);
