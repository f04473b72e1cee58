// Partition reassignment on real processes (issue 15's introduction example, shortened): three
// brokers serve a topic of 3 partitions, 3 replicas, min.insync.replicas 2, under idempotent
// acks=all load from kafkajs; a fourth broker joins; a generated plan moves the topic so the new
// broker takes its share; then a throttled move is cancelled half-way and a cancel of a finished
// move is refused; last, the controller is SIGKILLed in the middle of a move. After each step:
// Metadata names the target replicas all in sync, the replicas moved away have no log left, and
// every acknowledged record is read back exactly once, at the offset it was acknowledged with,
// from every replica.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  Checker,
  Cluster,
  kafka,
  KafkajsLoad,
  Ledger,
  PARTITIONS,
  sleep,
  TOPIC,
  waitFor,
} from "../helpers/replication-harness.ts";
import { stopAll } from "../helpers/processes.ts";

const cluster = new Cluster();
const ledger = new Ledger();
const checker = new Checker(cluster, ledger);
const kload = new KafkajsLoad(cluster, ledger);

interface Moving {
  topic: string;
  partition: number;
  state: string;
  target: number[];
  original: number[];
  adding: number[];
  progress: { broker: number; copied_bytes: number; total_bytes: number }[];
}

async function http(method: string, path: string, body?: unknown): Promise<unknown> {
  const n = cluster.running()[0];
  const r = await fetch(`http://${n.httpAddr}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

const moving = async () =>
  ((await http("GET", "/reassignments")) as { partitions: Moving[] }).partitions;

/** No replica of `p` on broker `id` holds a log directory any more. */
function noLog(id: number, p: number): boolean {
  return !existsSync(join(cluster.nodes.get(id)!.dataDir, "logs", `${TOPIC}-${p}`));
}

beforeAll(async () => {
  await cluster.start(0);
  await Promise.all([cluster.start(1), cluster.start(2)]);
  await waitFor("a topic with 3 replicas", 20_000, async () => {
    try {
      await http("POST", "/topics", {
        name: TOPIC,
        partitions: PARTITIONS,
        replication_factor: 3,
        configs: { "min.insync.replicas": "2" },
      });
      return true;
    } catch (e) {
      return String(e).includes(" 409 ") ? true : undefined;
    }
  });
  await cluster.fullIsr(20_000);
  kload.start();
}, 60_000);

afterAll(async () => {
  await stopAll([() => kload.stop()]);
  cluster.killAll();
});

test(
  "a fourth broker joins and a generated plan moves the topic onto it under acks=all load",
  async () => {
    await cluster.start(3);
    await sleep(1500); // some data to copy
    const g = await http("POST", "/reassignments/generate", {
      topics: [TOPIC],
      brokers: [0, 1, 2, 3],
    }) as {
      current: { partitions: { replicas: number[] }[] };
      proposed: { partitions: { partition: number; replicas: number[] }[] };
    };
    const proposed = g.proposed.partitions;
    // Broker 3 takes its share: 9 replicas over 4 brokers, 2 or 3 each; each set distinct.
    const on3 = proposed.filter((p) => p.replicas.includes(3)).length;
    expect(on3).toBeGreaterThanOrEqual(2);
    for (const p of proposed) expect(new Set(p.replicas).size).toBe(3);
    // Submitted the way Kafka's tools do: AlterPartitionReassignments, from kafkajs.
    const admin = kafka(cluster, "reassign-admin").admin();
    await admin.connect();
    try {
      await admin.alterPartitionReassignments({
        topics: [{
          topic: TOPIC,
          partitionAssignment: proposed.map((p) => ({
            partition: p.partition,
            replicas: p.replicas,
          })),
        }],
      });
    } finally {
      await admin.disconnect();
    }
    let sawProgress = false;
    await waitFor("the moves to finish", 60_000, async () => {
      const m = await moving();
      if (m.some((x) => x.progress.some((p) => p.total_bytes > 0))) sawProgress = true;
      return m.length === 0 ? true : undefined;
    }, 200);
    const view = await cluster.fullIsr(30_000);
    for (const p of proposed) {
      const v = view.find((x) => x.partition === p.partition)!;
      expect(v.replicas).toEqual(p.replicas);
      expect([...v.isr].sort()).toEqual([...p.replicas].sort());
    }
    // A replica moved away leaves no log behind.
    for (const [i, cur] of g.current.partitions.entries()) {
      for (const id of cur.replicas) {
        if (proposed[i].replicas.includes(id)) continue;
        await waitFor(
          `${TOPIC}-${i}'s log gone from broker ${id}`,
          10_000,
          async () => noLog(id, i) || undefined,
        );
      }
    }
    const f = await checker.check("move onto broker 3");
    expect(f.lost).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(f.acknowledged).toBeGreaterThan(0);
    expect(ledger.violations).toEqual([]);
    console.log(`progress seen while copying: ${sawProgress}`);
  },
  120_000,
);

test(
  "a throttled move cancelled half-way returns to its original replicas and leader",
  async () => {
    const before = (await cluster.topic(TOPIC))!.find((p) => p.partition === 0)!;
    const spare = [0, 1, 2, 3].find((id) => !before.replicas.includes(id))!;
    const target = [spare, ...before.replicas.slice(1)];
    // 2 KB/s: the copy of what the load wrote takes far longer than the test waits.
    const r = await http("POST", "/reassignments", {
      partitions: [{ topic: TOPIC, partition: 0, replicas: target }],
      throttle: 2048,
    }) as { accepted: number };
    expect(r.accepted).toBe(1);
    // ListPartitionReassignments, from kafkajs, names the move with its adding and removing
    // replica.
    const admin = kafka(cluster, "reassign-list").admin();
    await admin.connect();
    try {
      const listed = await admin.listPartitionReassignments({});
      // kafkajs hands the decoded topics on as they are: by `name`.
      const t = (listed.topics as unknown as { name: string; partitions: unknown }[])
        .find((x) => x.name === TOPIC);
      expect(t?.partitions as unknown).toEqual([{
        partition: 0,
        replicas: [...before.replicas, spare],
        addingReplicas: [spare],
        removingReplicas: [before.replicas[0]],
      }]);
    } finally {
      await admin.disconnect();
    }
    const copying = await waitFor("the throttled copy under way", 20_000, async () => {
      const m = (await moving()).find((x) => x.partition === 0);
      const pr = m?.progress.find((p) => p.broker === spare);
      return m?.state === "copying" && pr !== undefined && pr.copied_bytes > 0 &&
          pr.copied_bytes < pr.total_bytes
        ? pr
        : undefined;
    }, 200);
    expect(copying.copied_bytes).toBeLessThan(copying.total_bytes);
    const c = await http("DELETE", `/reassignments?topic=${TOPIC}&partition=0`) as {
      results: { error_code: number }[];
    };
    expect(c.results[0].error_code).toBe(0);
    const after = await waitFor("partition 0 back on its replicas", 15_000, async () => {
      const v = (await cluster.topic(TOPIC))?.find((p) => p.partition === 0);
      return v !== undefined && JSON.stringify(v.replicas) === JSON.stringify(before.replicas) &&
          v.isr.length === 3
        ? v
        : undefined;
    });
    expect(after.leader).toBe(before.leader);
    expect(await moving()).toEqual([]);
    await waitFor(
      "the cancelled replica's log gone",
      10_000,
      async () => noLog(spare, 0) || undefined,
    );
    // Nothing is moving: a second cancel is refused with Kafka's NO_REASSIGNMENT_IN_PROGRESS.
    const again = await http("POST", "/reassignments", {
      partitions: [{ topic: TOPIC, partition: 0, replicas: null }],
    }) as { results: { error_code: number; error: string; message: string }[] };
    expect(again.results[0]).toMatchObject({
      error_code: 85,
      error: "NO_REASSIGNMENT_IN_PROGRESS",
    });
    expect(again.results[0].message).toMatch(/no reassignment in progress/);
    const f = await checker.check("cancelled move");
    expect(f.lost).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(ledger.violations).toEqual([]);
    expect(cluster.crashes).toEqual([]);
  },
  90_000,
);

test(
  "a replica moved away while its broker is down loses its log when the broker returns",
  async () => {
    const c = await http("GET", "/cluster") as { controller: number };
    const before = (await cluster.topic(TOPIC))!.find((p) => p.partition === 1)!;
    const victim = before.replicas.find((id) => id !== c.controller && id !== before.leader)!;
    const spare = [0, 1, 2, 3].find((id) => !before.replicas.includes(id))!;
    const target = before.replicas.map((id) => (id === victim ? spare : id));
    expect(noLog(victim, 1)).toBe(false);
    await cluster.kill(victim);
    const r = await http("POST", "/reassignments", {
      partitions: [{ topic: TOPIC, partition: 1, replicas: target }],
    }) as { accepted: number };
    expect(r.accepted).toBe(1);
    await waitFor("the move without the stopped broker", 30_000, async () => {
      const v = (await cluster.topic(TOPIC))?.find((p) => p.partition === 1);
      return v !== undefined && JSON.stringify(v.replicas) === JSON.stringify(target) || undefined;
    }, 200);
    expect(noLog(victim, 1)).toBe(false); // it was down: nothing deleted its files
    // Restarted, it opens the log from its metadata as it was, applies the move, then deletes it.
    await cluster.start(victim);
    await waitFor(
      "the stray log gone once the broker caught up",
      30_000,
      async () => noLog(victim, 1) || undefined,
    );
    const f = await checker.check("moved while down");
    expect(f.lost).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(ledger.violations).toEqual([]);
  },
  120_000,
);

test(
  "the controller SIGKILLed in the middle of a move: the next controller carries it to the end",
  async () => {
    const c = await http("GET", "/cluster") as { controller: number };
    const controller = c.controller;
    expect(controller).toBeGreaterThanOrEqual(0);
    // A partition the controller holds a replica of: the broker a move adds must stay up (the
    // first move left every broker 2 or 3 of the 9 replicas).
    const before = (await cluster.topic(TOPIC))!.find((p) => p.replicas.includes(controller))!;
    const P = before.partition;
    const spare = [0, 1, 2, 3].find((id) => !before.replicas.includes(id))!;
    // The replica that leaves is not the controller: its log must be seen deleted below.
    const leaving = before.replicas.find((id) => id !== controller)!;
    const target = before.replicas.map((id) => (id === leaving ? spare : id));
    const r = await http("POST", "/reassignments", {
      partitions: [{ topic: TOPIC, partition: P, replicas: target }],
      throttle: 2048,
    }) as { accepted: number };
    expect(r.accepted).toBe(1);
    await waitFor("the throttled copy under way", 20_000, async () => {
      const m = (await moving()).find((x) => x.partition === P);
      const pr = m?.progress.find((p) => p.broker === spare);
      return m?.state === "copying" && pr !== undefined && pr.copied_bytes > 0 &&
          pr.copied_bytes < pr.total_bytes
        ? true
        : undefined;
    }, 200);
    await cluster.kill(controller);
    const next = await waitFor("another controller", 20_000, async () => {
      const v = await http("GET", "/cluster").catch(() => undefined) as
        | { controller: number | null }
        | undefined;
      // null: no controller known yet.
      return typeof v?.controller === "number" && v.controller >= 0 &&
          v.controller !== controller
        ? v.controller
        : undefined;
    }, 200);
    // The move is committed state: the new controller lists it, and takes a throttle change.
    const still = (await moving()).find((x) => x.partition === P);
    expect(still?.target).toEqual(target);
    const t = await waitFor("the throttle lifted through the new controller", 20_000, async () => {
      const a = await http("PUT", "/reassignments/throttle", { throttle: 0 }).catch(() =>
        undefined
      ) as { results: { partition: number; error_code: number }[] } | undefined;
      return a?.results.find((x) => x.partition === P && x.error_code === 0);
    }, 500);
    expect(t.error_code).toBe(0);
    await waitFor("the move finished by the new controller", 30_000, async () => {
      const v = (await cluster.topic(TOPIC))?.find((p) => p.partition === P);
      return v !== undefined && JSON.stringify(v.replicas) === JSON.stringify(target) &&
          (await moving()).length === 0 || undefined;
    }, 200).catch(async (e) => {
      console.log(
        JSON.stringify({ controller, next, spare, leaving, target, before }),
        JSON.stringify(await moving()),
        JSON.stringify(await cluster.topic(TOPIC)),
      );
      for (const n of cluster.running()) console.log(n.id, cluster.lastLogs(n.id, 15).join("\n"));
      throw e;
    });
    console.log(`controller ${controller} killed mid-move; controller ${next} finished it`);
    await cluster.start(controller);
    await waitFor(
      `${TOPIC}-${P}'s log gone from broker ${leaving}`,
      15_000,
      async () => noLog(leaving, P) || undefined,
    );
    const f = await checker.check("controller killed mid-move");
    expect(f.lost).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(f.acknowledged).toBeGreaterThan(0);
    expect(ledger.violations).toEqual([]);
  },
  120_000,
);
