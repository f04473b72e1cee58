// Kafka's system test `replication_test`, on real processes: three brokers, a topic of 3
// partitions with 3 replicas (min.insync.replicas 2), idempotent acks=all producers (kafkajs in
// this process, librdkafka through python3) writing records with unique keys, and a kafkajs
// consumer group committing offsets, while brokers are SIGKILLed, SIGSTOPped, restarted one by
// one, and the group coordinator is killed during a rebalance. After each scenario a checker reads
// every replica back and holds the cluster to: every acknowledged record exactly once, at the
// offset it was acknowledged with (so in order per partition); no offset ever seen with two
// values (group reads and checker reads alike); committed offsets never going back.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { offsetsPartitionFor } from "../../src/groups/records.ts";
import { tempDir } from "../helpers/broker-process.ts";
import {
  Checker,
  Cluster,
  type Figures,
  getJson,
  GROUP,
  Group,
  IDS,
  kafka,
  KafkajsLoad,
  kafkaLogs,
  Ledger,
  now,
  PARTITIONS,
  pct,
  RdkafkaLoad,
  SESSION_TIMEOUT_MS,
  sleep,
  TOPIC,
  waitFor,
  within,
} from "../helpers/replication-harness.ts";
import { stopAll } from "../helpers/processes.ts";

// ---- the scenarios ---------------------------------------------------------------------------------

const cluster = new Cluster();
const ledger = new Ledger();
const checker = new Checker(cluster, ledger);
const kload = new KafkajsLoad(cluster, ledger);
const rdload = new RdkafkaLoad(cluster, ledger);
const group = new Group(cluster, ledger);

interface Failover {
  scenario: string;
  broker: number;
  partition: number;
  /** The signal → the first acknowledged acks=all write on the partition. */
  ms: number | undefined;
  /** The signal → a new leader named in the metadata. */
  electedMs: number | undefined;
  controller: boolean;
}
const failovers: Failover[] = [];
let useRdkafka = false;

/** The controller most running brokers name (a stale one may lag). */
async function controllerId(): Promise<number> {
  const views = await Promise.all(
    cluster.running().map((n) =>
      getJson(`http://${n.httpAddr}/cluster`) as Promise<{ controller?: number } | undefined>
    ),
  );
  const votes = new Map<number, number>();
  for (const v of views) {
    if (v?.controller !== undefined && v.controller >= 0) {
      votes.set(v.controller, (votes.get(v.controller) ?? 0) + 1);
    }
  }
  return [...votes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? -1;
}

/** The partitions of TOPIC that `id` leads now. */
async function ledBy(id: number): Promise<number[]> {
  const t = await cluster.topic(TOPIC);
  return (t ?? []).filter((x) => x.leader === id).map((x) => x.partition);
}

/** Failover of the partitions `id` led when it was signalled at `at`. */
async function measureFailover(
  scenario: string,
  id: number,
  led: number[],
  at: number,
  controller: boolean,
  timeoutMs = 20_000,
): Promise<Failover[]> {
  const elected = new Map<number, number>();
  await waitFor(`new leaders and acknowledged writes on ${led.join(",")}`, timeoutMs, async () => {
    const t = await cluster.topic(TOPIC);
    for (const p of led) {
      const v = t?.find((x) => x.partition === p);
      if (!elected.has(p) && v !== undefined && v.leader >= 0 && v.leader !== id) {
        elected.set(p, now() - at);
      }
    }
    const acked = led.every((p) => ledger.firstAckAfter(p, at) !== undefined);
    return acked && elected.size === led.length ? true : undefined;
  }, 50).catch(() => {});
  const out = led.map((p): Failover => ({
    scenario,
    broker: id,
    partition: p,
    ms: ledger.firstAckAfter(p, at),
    electedMs: elected.get(p),
    controller,
  }));
  for (const f of out) {
    failovers.push(f);
    console.log(
      `[${scenario}] broker ${id}${
        controller ? " (the controller)" : ""
      } led ${TOPIC}-${f.partition}: ` +
        `new leader in the metadata after ${f.electedMs ?? "NEVER"} ms, first acknowledged ` +
        `acks=all write after ${f.ms ?? "NEVER"} ms`,
    );
  }
  return out;
}

beforeAll(async () => {
  await cluster.start(0);
  await Promise.all([cluster.start(1), cluster.start(2)]);
  // Three live brokers registered and unfenced: the topic can have 3 replicas.
  await waitFor("a topic with 3 replicas", 20_000, async () => {
    const n = cluster.running()[0];
    try {
      const r = await fetch(`http://${n.httpAddr}/topics`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          name: TOPIC,
          partitions: PARTITIONS,
          replication_factor: 3,
          configs: { "min.insync.replicas": "2" },
        }),
        signal: AbortSignal.timeout(3000),
      });
      await r.text();
      return r.status === 201 || r.status === 409 ? true : undefined;
    } catch {
      return undefined;
    }
  }, 300);
  await cluster.fullIsr(20_000);
  kload.start();
  useRdkafka = RdkafkaLoad.available();
  if (useRdkafka) rdload.start();
  else console.log("python3 confluent_kafka not found: the librdkafka producer is left out");
  await group.add();
  await group.add();
  await waitFor(
    "acknowledged writes on every partition",
    20_000,
    () => ledger.acksByPartition.every((a) => a.length > 0) ? true : undefined,
  );
  await checker.groupCaughtUp(20_000);
  checker.startPolling(kafka(cluster, "offsets-poller"));
}, 90_000);

afterAll(async () => {
  await stopAll([
    () => checker.stopPolling(),
    () => kload.stop(),
    () => rdload.stop(),
    () => group.stop(),
  ]);
  cluster.killAll();
  const kills = failovers.filter((f) => f.scenario === "a").map((f) => f.ms).filter((x) =>
    x !== undefined
  ) as number[];
  const elected = failovers.filter((f) => f.scenario === "a").map((f) => f.electedMs).filter((
    x,
  ) => x !== undefined) as number[];
  console.log(
    `failover after SIGKILL (${kills.length} partitions): first acknowledged acks=all write p50 ${
      pct(kills, 0.5)
    } ms, max ${Math.max(...kills)} ms; new leader in the metadata p50 ${
      pct(elected, 0.5)
    } ms, max ${Math.max(...elected)} ms`,
  );
  const lat = [...ledger.acked.values()].filter((a) => a.src === "kafkajs").map((a) =>
    a.ackAt - a.sentAt
  );
  console.log(
    `kafkajs acks=all latency (send -> acknowledgement, failovers included): p50 ${
      pct(lat, 0.5)
    } ms, p99 ${pct(lat, 0.99)} ms`,
  );
  console.log(
    `acknowledged by client: ${
      [...ledger.ackedBySrc].map(([s, n]) => `${s} ${n}`).join(", ")
    }; kafkajs producers recreated after a failed send: ${kload.recreated}`,
  );
  if (useRdkafka) {
    console.log(
      `librdkafka: ${rdload.notAcked} not acknowledged (${
        rdload.errors.slice(0, 3).join("; ")
      }), fatal: ${rdload.fatal.join("; ") || "none"}`,
    );
  }
  if (ledger.commitRegressions.length > 0) {
    console.log(
      `kafkajs commits below an earlier acknowledged commit (a batch fetched before a rebalance, ` +
        `committed in the new generation):\n  ${
          ledger.commitRegressions.slice(0, 10).join("\n  ")
        }`,
    );
  }
  const dir = process.env.REPLICATION_LOG_DIR ??
    (ledger.violations.length > 0 ? tempDir("replication-logs-") : undefined);
  if (dir !== undefined) {
    cluster.dumpLogs(dir);
    writeFileSync(join(dir, "group-events.log"), group.events.join("\n") + "\n");
    writeFileSync(join(dir, "kafka-clients.log"), kafkaLogs.join("\n") + "\n");
    writeFileSync(join(dir, "violations.log"), ledger.violations.join("\n") + "\n");
    console.log(`broker, client and group logs written to ${dir}`);
  }
}, 90_000);

/** The coordinator serves the last acknowledged commit of every partition (Ledger.served). */
async function checkCommitted(): Promise<void> {
  const admin = kafka(cluster, "checker").admin();
  try {
    await within(admin.connect(), 5000);
    expect(await checker.committedOffsets(admin)).toBe(true);
  } finally {
    await within(admin.disconnect().catch(() => {}), 3000);
  }
}

/** Crashes before the current scenario (each scenario answers for its own). */
let crashesBefore = 0;

function expectClean(f: Figures): void {
  expect(cluster.crashes.slice(crashesBefore)).toEqual([]);
  expect(ledger.violations).toEqual([]);
  expect(f.lost).toBe(0);
  expect(f.duplicated).toBe(0);
  expect(f.acknowledged).toBeGreaterThan(0);
}

describe("replication on real processes (3 brokers, RF 3, min.insync.replicas 2)", () => {
  // A broker that crashed in an earlier scenario is started again, so the next one can run.
  beforeEach(async () => {
    await cluster.startMissing();
    crashesBefore = cluster.crashes.length;
  }, 60_000);

  test("(a) the leader of a partition SIGKILLed and restarted, 5 times", async () => {
    for (let round = 0; round < 5; round++) {
      const id = await cluster.leaderOf(round % PARTITIONS);
      const led = await ledBy(id);
      const ctl = (await controllerId()) === id;
      const at = await cluster.kill(id);
      await measureFailover("a", id, led, at, ctl);
      await cluster.start(id);
      await cluster.fullIsr(30_000);
    }
    await checkCommitted();
    const f = await checker.check("a: 5 x SIGKILL of a leader");
    expectClean(f);
    expect(failovers.filter((x) => x.scenario === "a" && x.ms === undefined)).toEqual([]);
  }, 120_000);

  test(
    "(b) a leader SIGSTOPped past the session timeout acknowledges nothing as a zombie",
    async () => {
      const id = await cluster.leaderOf(0);
      const led = await ledBy(id);
      const ctl = (await controllerId()) === id;
      // Probes: a plain producer without retries, its metadata loaded, so its writes go to the
      // stopped leader and wait in its socket.
      const probe = kafka(cluster, "zombie-probe", 15_000).producer({
        retry: { retries: 0 },
        allowAutoTopicCreation: false,
      });
      await probe.connect();
      for (const p of led) {
        const key = `probe-warm-${p}`;
        const sentAt = now();
        const [md] = await probe.send({
          topic: TOPIC,
          acks: -1,
          messages: [{ key, value: key, partition: p }],
        });
        ledger.ack(key, p, Number(md.baseOffset), sentAt, "probe");
      }
      const at = now();
      cluster.signal(id, "SIGSTOP");
      const probes: Promise<{ key: string; p: number; offset?: number; error?: string }>[] = [];
      let fo: Promise<unknown> = Promise.resolve();
      let stoppedMs = 0;
      try {
        for (let i = 0; i < 8; i++) {
          for (const p of led) {
            const key = `probe-${i}-${p}`;
            probes.push(
              probe.send({
                topic: TOPIC,
                acks: -1,
                timeout: 5000,
                messages: [{ key, value: key, partition: p }],
              }).then(
                (r) => ({ key, p, offset: Number(r[0].baseOffset) }),
                (e) => ({ key, p, error: e instanceof Error ? e.message : String(e) }),
              ),
            );
          }
          await sleep(SESSION_TIMEOUT_MS / 6);
        }
        // Stopped past the session timeout, and until the others named new leaders.
        fo = measureFailover("b", id, led, at, ctl, 25_000);
        await waitFor("new leaders while it is stopped", 15_000, async () => {
          const t = await cluster.topic(TOPIC);
          return led.every((p) => t?.find((x) => x.partition === p)?.leader !== id)
            ? true
            : undefined;
        });
        await sleep(Math.max(0, at + SESSION_TIMEOUT_MS + 1500 - now()));
      } finally {
        stoppedMs = now() - at;
        cluster.signal(id, "SIGCONT");
      }
      const results = (await within(Promise.all(probes), 30_000)) ?? [];
      expect(results.length).toBe(probes.length);
      await within(probe.disconnect().catch(() => {}), 5000);
      const acked = results.filter((r) => r.offset !== undefined);
      for (const r of acked) ledger.ack(r.key, r.p, r.offset!, at, "probe");
      const errors = new Map<string, number>();
      for (const r of results) {
        if (r.error !== undefined) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
      }
      console.log(
        `[b] broker ${id}${
          ctl ? " (the controller)" : ""
        } stopped ${stoppedMs} ms; ${probes.length} probes sent to it: ` +
          `${acked.length} acknowledged, failed: ${
            [...errors].map(([e, n]) => `${n} x "${e}"`).join(", ")
          }`,
      );
      await fo;
      await cluster.fullIsr(30_000);
      await checkCommitted();
      const f = await checker.check("b: SIGSTOP of a leader");
      expectClean(f);
      // A zombie acknowledges nothing: every probe sent while it was stopped failed or timed out.
      if (acked.length > 0) console.log(cluster.lastLogs(id).join("\n"));
      expect(acked).toEqual([]);
    },
    90_000,
  );

  test("(c) a clean rolling restart of all three brokers", async () => {
    const codes: number[] = [];
    for (const id of IDS) {
      const led = await ledBy(id);
      const ctl = (await controllerId()) === id;
      const at = now();
      codes.push(await cluster.terminate(id));
      const downMs = now() - at;
      const fo = await measureFailover("c", id, led, at, ctl, 10_000);
      console.log(
        `[c] broker ${id} exited ${codes.at(-1)} after ${downMs} ms (controlled shutdown); ` +
          `writes on the partitions it led resumed after ${
            fo.map((f) => f.ms ?? "NEVER").join(", ")
          } ms`,
      );
      if (codes.at(-1) !== 0) console.log(cluster.lastLogs(id).join("\n"));
      await cluster.start(id);
      await cluster.fullIsr(30_000);
    }
    await checkCommitted();
    const f = await checker.check("c: rolling restart");
    expectClean(f);
    expect(codes).toEqual([0, 0, 0]);
  }, 120_000);

  // The coordinator (the leader of the group's __consumer_offsets partition) is SIGKILLed while a
  // third member joins: another replica of that partition takes the group over, the group is
  // whole again (3 members, Stable) within 30 s of the old coordinator's return, nothing
  // acknowledged is lost or duplicated, and no commit goes back.
  test(
    "(d) the group coordinator killed during a rebalance",
    async () => {
      // The scenario is a coordinator with in-sync followers (after (c) the offsets partitions
      // may still be taking their restarted followers back: killing the only ISR member leaves
      // the partition offline until it returns, by design, and that is not what (d) tests).
      await cluster.fullIsr(30_000, "__consumer_offsets");
      const offsets = await cluster.topic("__consumer_offsets");
      expect(offsets).toBeDefined();
      const op = offsets![offsetsPartitionFor(GROUP, offsets!.length)];
      const coord = await waitFor(
        "the group's coordinator",
        10_000,
        () => cluster.coordinator(GROUP),
      );
      const replicated = op.replicas.length >= 2;
      console.log(
        `[d] coordinator: broker ${coord}; __consumer_offsets-${op.partition}: leader ${op.leader}, ` +
          `replicas [${op.replicas}], ISR [${op.isr}]`,
      );
      // A third member joins: the group rebalances; the coordinator dies in the middle of it.
      const adding = group.add();
      const coordHttp = cluster.nodes.get(coord)!.httpAddr;
      const state = await waitFor("the group rebalancing", 10_000, async () => {
        const g = await getJson(`http://${coordHttp}/groups/${GROUP}`, 500) as
          | { state?: string }
          | undefined;
        return g?.state === "PreparingRebalance" || g?.state === "CompletingRebalance"
          ? g.state
          : undefined;
      }, 20);
      const at = await cluster.kill(coord);
      console.log(`[d] killed broker ${coord} while the group was ${state}`);
      await within(adding, 30_000);
      const stable = async (): Promise<number | undefined> => {
        const c = await cluster.coordinator(GROUP);
        if (c === undefined || !cluster.nodes.get(c)?.proc) return undefined;
        const g = await getJson(`http://${cluster.nodes.get(c)!.httpAddr}/groups/${GROUP}`, 1000) as
          | { state?: string; members?: unknown[] }
          | undefined;
        return g?.state === "Stable" && g.members?.length === 3 ? c : undefined;
      };
      if (replicated) {
        // Another replica of the group's offsets partition takes over while the old one is down.
        // How long the group takes to settle under the new coordinator is reported, not asserted:
        // a kafkajs member keeps its dead coordinator until its retries run out and the consumer
        // restarts (Group.add). A stable group once the old coordinator is back is asserted below.
        const c = await waitFor("a stable group under a new coordinator", 45_000, stable, 100)
          .catch(() => undefined);
        console.log(
          c === undefined
            ? `[d] NOT stable with 3 members under a new coordinator within 45 s of the kill`
            : `[d] broker ${c} coordinates the group, stable with 3 members, ${
              now() - at
            } ms after the kill`,
        );
      } else {
        console.log(
          `[d] SKIPPED coordinator failover: __consumer_offsets-${op.partition} has 1 replica, so the ` +
            `group waits for broker ${coord} to come back (RF 3 for __consumer_offsets is being built)`,
        );
      }
      await cluster.start(coord);
      await cluster.fullIsr(30_000);
      const c = await waitFor("a stable group of 3", 30_000, stable, 100);
      console.log(
        `[d] group stable with 3 members on broker ${c}, ${now() - at} ms after the kill`,
      );
      const caughtUp = await checker.groupCaughtUp(30_000);
      console.log(`[d] the group read every acknowledged record ${caughtUp} ms later`);
      await checkCommitted();
      const f = await checker.check("d: coordinator killed during a rebalance");
      expectClean(f);
    },
    120_000,
  );

  test("the end: producers stopped, every acknowledged record read back", async () => {
    await kload.stop();
    await rdload.stop();
    const caughtUp = await checker.groupCaughtUp(30_000);
    await checkCommitted();
    const f = await checker.check("end: after the producers stopped");
    // The group processed every acknowledged record (at least once: a rebalance redelivers).
    const unread = [...ledger.acked].filter(([, a]) => !ledger.groupRead.has(`${a.p}:${a.o}`));
    const again = [...ledger.groupRead.values()].reduce((n, c) => n + c - 1, 0);
    console.log(
      `[end] the group caught up within ${caughtUp} ms; acknowledged records it never read: ` +
        `${unread.length}; records it read more than once (redelivery after a rebalance): ${again}`,
    );
    expectClean(f);
    expect(unread.slice(0, 10).map(([k, a]) => `${k} ${TOPIC}-${a.p}@${a.o}`)).toEqual([]);
  }, 90_000);
});
