// Cluster expansion and decommission with the operator commands, on real processes (issue 15's
// introduction: brokers 101, 102, 103 serve a topic under idempotent acks=all load; 104 joins).
// `broker cluster rebalance --dry-run` prints a plan and changes nothing; `broker cluster
// rebalance` gives 104 its share of replicas and leaderships; `broker cluster decommission` of
// the metadata leader (the controller: the hardest case) moves every replica and leadership off
// it, hands the Raft leadership on, takes it out of the voters (104 is promoted in its place),
// and says it can be stopped; stopped, the cluster carries on. Then KIP-860's option through the
// CLI and HTTP: a move that changes a partition's replication factor is refused when the
// operator disallows it. Last, a broker SIGKILLed for good is decommissioned with --force: its
// replicas are rebuilt on the others and a learner takes its voter seat. After each step every
// acknowledged record is read back exactly once, at its offset, from every replica.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brokerCommand, tempDir } from "../helpers/broker-process.ts";
import {
  Checker,
  Cluster,
  getJson,
  KafkajsLoad,
  Ledger,
  PARTITIONS,
  TOPIC,
  waitFor,
} from "../helpers/replication-harness.ts";
import { stopAll } from "../helpers/processes.ts";
import { OFFSETS_TOPIC } from "../../src/groups/records.ts";

const cluster = new Cluster();
const ledger = new Ledger();
const checker = new Checker(cluster, ledger);
const kload = new KafkajsLoad(cluster, ledger);

interface ClusterJson {
  controller: number;
  quorum: { voters: number[]; learners: number[]; leader: number };
}

interface TopicJson {
  partitions: { partition: number; leader: number; replicas: number[]; isr: number[] }[];
}

/** The CLI against a running broker (async: the load runs in this process). */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const server = cluster.running().map((n) => n.httpAddr!).join(",");
  const p = Bun.spawn([...brokerCommand(), ...args, "--server", server], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

/** GET from a running broker (not `except`: a broker out of the quorum has a stale view). */
async function get<T>(path: string, except?: number): Promise<T> {
  for (const n of cluster.running()) {
    if (n.id === except) continue;
    const v = await getJson(`http://${n.httpAddr}${path}`, 5000);
    if (v !== undefined) return v as T;
  }
  throw new Error(`GET ${path}: no broker answered`);
}

/** Every partition of every topic (internal ones too): replicas and leader. */
async function assignment(): Promise<Map<string, TopicJson["partitions"][number]>> {
  const m = new Map<string, TopicJson["partitions"][number]>();
  const ts = await get<{ name: string }[]>("/topics?internal=true");
  for (const t of ts) {
    for (const p of (await get<TopicJson>(`/topics/${t.name}`)).partitions) {
      m.set(`${t.name}-${p.partition}`, p);
    }
  }
  return m;
}

function counts(a: Map<string, { replicas: number[]; leader: number }>, ids: number[]) {
  const replicas = new Map(ids.map((id) => [id, 0]));
  const leaders = new Map(ids.map((id) => [id, 0]));
  for (const p of a.values()) {
    for (const r of p.replicas) replicas.set(r, (replicas.get(r) ?? 0) + 1);
    leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
  }
  return { replicas, leaders };
}

async function noLoss(scenario: string): Promise<void> {
  const f = await checker.check(scenario);
  expect(f.lost).toBe(0);
  expect(f.duplicated).toBe(0);
  expect(f.acknowledged).toBeGreaterThan(0);
  expect(ledger.violations).toEqual([]);
}

beforeAll(async () => {
  await cluster.start(101);
  await Promise.all([cluster.start(102), cluster.start(103)]);
  await waitFor("a topic with 3 replicas", 20_000, async () => {
    const n = cluster.running()[0];
    const r = await fetch(`http://${n.httpAddr}/topics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: TOPIC,
        partitions: PARTITIONS,
        replication_factor: 3,
        configs: { "min.insync.replicas": "2" },
      }),
    }).catch(() => undefined);
    return r !== undefined && (r.status === 201 || r.status === 409) ? true : undefined;
  });
  await cluster.fullIsr(20_000);
  // The controller raises __consumer_offsets to three replicas once three brokers are live (a
  // check every 2 s): done before broker 104 joins, or its replicas could be placed there too.
  await waitFor("__consumer_offsets on three replicas", 20_000, async () => {
    const t = await get<TopicJson>(`/topics/${OFFSETS_TOPIC}`).catch(() => undefined);
    return t !== undefined && t.partitions.every((p) => p.replicas.length === 3) ? true : undefined;
  });
  kload.start();
}, 60_000);

afterAll(async () => {
  await stopAll([() => kload.stop()]);
  cluster.killAll();
});

test("cluster rebalance: a dry run changes nothing, then broker 104 takes its share", async () => {
  await cluster.start(104);
  await Bun.sleep(1000); // some data to copy
  const before = await assignment();
  const ids = [101, 102, 103, 104];
  expect(counts(before, ids).replicas.get(104)).toBe(0);

  const dry = await cli("cluster", "rebalance", "--dry-run");
  expect(dry.err).toBe("");
  expect(dry.code).toBe(0);
  expect(dry.out).toMatch(/\d+ partition\(s\) move, copying about/);
  expect(dry.out).toMatch(/BROKER\s+REPLICAS\s+AFTER\s+LEADERS\s+AFTER/);
  expect(dry.out).toContain("Dry run: nothing changed.");
  const plan = JSON.parse((await cli("cluster", "rebalance", "--dry-run", "--json")).out) as {
    moves: { topic: string; partition: number; to: number[] }[];
    brokers: { broker: number; replicas_after: number; leaders_after: number }[];
  };
  expect(plan.moves.length).toBeGreaterThan(0);
  expect(plan.moves.every((m) => new Set(m.to).size === m.to.length)).toBe(true);
  // Nothing moved: the dry run only read.
  expect((await get<{ partitions: unknown[] }>("/reassignments")).partitions).toEqual([]);
  const still = await assignment();
  for (const [k, p] of before) expect(still.get(k)?.replicas).toEqual(p.replicas);

  const run = await cli("cluster", "rebalance");
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  expect(run.out).toMatch(/Done: \d+ partition\(s\) moved, \d+ leader\(s\) moved/);
  const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
  // Replicas within one of each other at once; leaders too, once every preferred replica is in
  // sync (the command's election, or the controller's preferred-leader check after a hiccup).
  const after = await waitFor("leaders even", 20_000, async () => {
    const a = await assignment();
    const ls = ids.map((id) => counts(a, ids).leaders.get(id) ?? 0);
    return spread(ls) <= 1 ? a : undefined;
  }, 500).catch(async (e) => {
    const c = counts(await assignment(), ids);
    console.log(
      "leaders",
      JSON.stringify([...c.leaders]),
      "replicas",
      JSON.stringify([...c.replicas]),
    );
    throw e;
  });
  const rs = ids.map((id) => counts(after, ids).replicas.get(id)!);
  expect({ rs, spread: spread(rs) }).toEqual({ rs, spread: Math.min(1, spread(rs)) });
  // What the dry run proposed is what happened.
  for (const m of plan.moves) {
    expect(after.get(`${m.topic}-${m.partition}`)?.replicas).toEqual(m.to);
  }
  expect((await get<{ partitions: unknown[] }>("/reassignments")).partitions).toEqual([]);
  await cluster.fullIsr(30_000);
  await noLoss("rebalance onto 104");
}, 120_000);

test("cluster decommission of the controller: drained, out of the voters, stopped", async () => {
  const c0 = await get<ClusterJson>("/cluster");
  const victim = c0.quorum.leader;
  expect([101, 102, 103]).toContain(victim);
  expect(c0.quorum.voters).toContain(victim);
  expect(c0.quorum.learners).toEqual([104]);

  const dry = await cli("cluster", "decommission", String(victim), "--dry-run");
  expect(dry.code).toBe(0);
  expect(dry.out).toContain(`Then broker ${victim} leaves the metadata voters`);
  expect(dry.out).toContain("a caught-up learner (of [104]) is promoted");
  expect((await get<ClusterJson>("/cluster")).quorum.voters).toContain(victim);

  const run = await cli("cluster", "decommission", String(victim));
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  expect(run.out).toContain(`Broker ${victim} holds no replica and leads no partition.`);
  expect(run.out).toContain(`Removed broker ${victim} from the metadata quorum`);
  expect(run.out).toContain(`Broker ${victim} can be stopped now.`);
  const a = await assignment();
  for (const [k, p] of a) {
    expect({ k, on: p.replicas.includes(victim) }).toEqual({ k, on: false });
    expect(p.leader).not.toBe(victim);
  }
  const q = (await get<ClusterJson>("/cluster", victim)).quorum;
  expect(q.voters).not.toContain(victim);
  expect([...q.voters].sort()).toEqual([101, 102, 103, 104].filter((id) => id !== victim));
  expect(q.leader).not.toBe(victim);

  // Its logs are gone: it saw it is no replica any more.
  const dir = cluster.nodes.get(victim)!.dataDir;
  for (let p = 0; p < PARTITIONS; p++) {
    await waitFor(
      `${TOPIC}-${p}'s log gone from broker ${victim}`,
      10_000,
      () => !existsSync(join(dir, "logs", `${TOPIC}-${p}`)) || undefined,
    );
  }
  // Stopped, as it said it could be: the cluster carries on, the load with it.
  expect(await cluster.terminate(victim)).toBe(0);
  const acked = ledger.acked.size;
  await waitFor(
    "acknowledged writes after the stop",
    20_000,
    () => ledger.acked.size > acked + 20 || undefined,
  );
  await noLoss("decommissioned controller stopped");
  expect(cluster.crashes).toEqual([]);
}, 150_000);

/** POST a reassignment plan to a running broker; the status and the JSON answer. */
async function postPlan(body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const n = cluster.running()[0];
  const r = await fetch(`http://${n.httpAddr}/reassignments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, json: await r.json() as Record<string, unknown> };
}

test(
  "KIP-860: a move that changes the replication factor is refused when disallowed (CLI, HTTP)",
  async () => {
    const before = (await get<TopicJson>(`/topics/${TOPIC}`)).partitions[0];
    expect(before.replicas.length).toBe(3);
    const fewer = before.replicas.slice(0, 2);
    const file = join(tempDir("kip860-"), "plan.json");
    writeFileSync(
      file,
      JSON.stringify({ version: 1, partitions: [{ topic: TOPIC, partition: 0, replicas: fewer }] }),
    );

    // The CLI: refused with Kafka's error, exit 1, nothing moves.
    const cliRun = await cli(
      "reassign",
      "execute",
      "--reassignment-json-file",
      file,
      "--disallow-replication-factor-change",
    );
    expect(cliRun.code).toBe(1);
    expect(cliRun.out).toContain("Started 0 of 1 partition reassignment(s).");
    expect(cliRun.out).toMatch(/refused .*INVALID_REPLICATION_FACTOR/);
    // HTTP: the same refusal per partition; a flag of the wrong type is a 400.
    const http = await postPlan({
      partitions: [{ topic: TOPIC, partition: 0, replicas: fewer }],
      allow_replication_factor_change: false,
    });
    expect(http.status).toBe(200);
    expect(http.json.accepted).toBe(0);
    expect(http.json.results).toMatchObject([
      { topic: TOPIC, partition: 0, error_code: 38, error: "INVALID_REPLICATION_FACTOR" },
    ]);
    const bad = await postPlan({
      partitions: [{ topic: TOPIC, partition: 0, replicas: fewer }],
      allow_replication_factor_change: "no",
    });
    expect(bad.status).toBe(400);
    expect((await get<{ partitions: unknown[] }>("/reassignments")).partitions).toEqual([]);
    expect((await get<TopicJson>(`/topics/${TOPIC}`)).partitions[0].replicas).toEqual(
      before.replicas,
    );

    // Disallowed, a move that keeps the factor goes ahead (another preferred leader first).
    const turned = [...before.replicas.slice(1), before.replicas[0]];
    const ok = await postPlan({
      partitions: [{ topic: TOPIC, partition: 0, replicas: turned }],
      allow_replication_factor_change: false,
    });
    expect(ok.json.accepted).toBe(1);
    await waitFor("the reordered replica set", 30_000, async () => {
      const p = (await get<TopicJson>(`/topics/${TOPIC}`)).partitions[0];
      const moving = (await get<{ partitions: unknown[] }>("/reassignments")).partitions;
      return moving.length === 0 && p.replicas.join() === turned.join() || undefined;
    }, 200);
    await noLoss("KIP-860 refusals and a reorder");
  },
  90_000,
);

test("cluster decommission --force of a broker SIGKILLed for good: rebuilt elsewhere", async () => {
  // A fifth broker joins (a learner), so the topic's three replicas have somewhere to go.
  await cluster.start(105);
  await waitFor("broker 105 unfenced", 30_000, async () => {
    const c = await get<{ brokers: { node_id: number; fenced: boolean }[] }>("/cluster");
    return c.brokers.some((b) => b.node_id === 105 && !b.fenced) || undefined;
  }, 200);
  const c0 = await get<ClusterJson>("/cluster");
  const live = new Set(cluster.running().map((n) => n.id));
  // A voter that is not the metadata leader and holds replicas of the topic.
  const held = await assignment();
  const victim = c0.quorum.voters.find((v) =>
    v !== c0.quorum.leader && live.has(v) && [...held.values()].some((p) => p.replicas.includes(v))
  )!;
  expect(victim).toBeDefined();
  await cluster.kill(victim);
  await waitFor(`broker ${victim} fenced`, 30_000, async () => {
    const c = await get<{ brokers: { node_id: number; fenced: boolean }[] }>("/cluster");
    return c.brokers.some((b) => b.node_id === victim && b.fenced) || undefined;
  }, 200);

  // Without --force a fenced broker is refused, and nothing changes.
  const refused = await cli("cluster", "decommission", String(victim));
  expect(refused.code).not.toBe(0);
  expect(refused.err).toContain("--force");
  expect((await get<{ partitions: unknown[] }>("/reassignments")).partitions).toEqual([]);

  const run = await cli("cluster", "decommission", String(victim), "--force");
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  expect(run.out).toContain(`Broker ${victim} holds no replica and leads no partition.`);
  expect(run.out).toContain(`Removed broker ${victim} from the metadata quorum`);
  for (const [k, p] of await assignment()) {
    expect({ k, on: p.replicas.includes(victim) }).toEqual({ k, on: false });
  }
  // The quorum kept its size: the learner took the dead voter's seat.
  const q = (await get<ClusterJson>("/cluster")).quorum;
  expect(q.voters).not.toContain(victim);
  expect(q.voters.length).toBe(c0.quorum.voters.length);
  expect(q.voters).toContain(105);
  await noLoss("dead broker decommissioned with --force");
  expect(cluster.crashes).toEqual([]);
}, 150_000);
