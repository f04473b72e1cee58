// Executes a schedule step against the live cluster: resolves its role to brokers, injects the
// fault, holds it, heals it, and waits for the cluster to be whole again (every ISR full).
import { offsetsPartitionFor } from "../../src/groups/records.ts";
import {
  type Cluster,
  getJson,
  GROUP,
  now,
  sleep,
  TOPIC,
} from "../../test/helpers/replication-harness.ts";
import type { FaultEvent } from "./history.ts";
import type { ChaosNet } from "./net.ts";
import { describeRole, type Role, sides, type Step } from "./schedule.ts";

/** The controller most running brokers name (a stale one may lag), or undefined. */
export async function controllerId(cluster: Cluster): Promise<number | undefined> {
  const views = await Promise.all(
    cluster.running().map((n) =>
      getJson(`http://${n.httpAddr}/cluster`) as Promise<{ controller?: number | null } | undefined>
    ),
  );
  const votes = new Map<number, number>();
  for (const v of views) {
    const c = v?.controller;
    if (typeof c === "number" && c >= 0) votes.set(c, (votes.get(c) ?? 0) + 1);
  }
  return [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** The broker a role names now (a running one), or undefined if it cannot be told. */
export async function resolve(cluster: Cluster, t: Role): Promise<number | undefined> {
  const running = new Set(cluster.running().map((n) => n.id));
  let id: number | undefined;
  if (t.role === "broker") id = t.id;
  else if (t.role === "controller") id = await controllerId(cluster);
  else if (t.role === "leader") {
    id = (await cluster.topic(TOPIC))?.find((p) => p.partition === t.partition)?.leader;
  } else {
    const offsets = await cluster.topic("__consumer_offsets");
    if (offsets !== undefined && offsets.length > 0) {
      id = offsets.find((p) => p.partition === offsetsPartitionFor(GROUP, offsets.length))?.leader;
    }
  }
  return id !== undefined && running.has(id) ? id : undefined;
}

/**
 * Starts broker `id`, up to 3 tries: a start that does not finish in time (the harness kills it)
 * is a liveness problem to report, not a reason to abandon the run.
 */
export async function startBroker(
  cluster: Cluster,
  id: number,
  log: (line: string) => void,
): Promise<boolean> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      await cluster.start(id);
      return true;
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      failedStarts.push({ id, text });
      log(`LIVENESS: broker ${id} start ${attempt} failed: ${text.split("\n")[0]}`);
    }
  }
  return false;
}

/** The output of every start that failed (the harness kills a broker not started in time). */
export const failedStarts: { id: number; text: string }[] = [];

/** Starts every broker that is not running. */
export async function startMissing(cluster: Cluster, log: (line: string) => void): Promise<void> {
  for (const n of cluster.nodes.values()) {
    if (n.proc === undefined) await startBroker(cluster, n.id, log);
  }
}

export interface StepContext {
  cluster: Cluster;
  net: ChaosNet;
  log: (line: string) => void;
  /** How long to wait for a full ISR after a heal before going on. */
  recoverMs: number;
}

/** Runs one step; returns what happened (undefined: its target could not be resolved). */
export async function runStep(ctx: StepContext, step: Step): Promise<FaultEvent | undefined> {
  const { cluster, net, log } = ctx;
  const target = await resolve(cluster, step.target) ??
    // A role nobody holds now (no controller answered, a partition without a leader): the seed
    // still decides, among the running brokers.
    cluster.running().map((n) => n.id)[Math.floor(step.draw * cluster.running().length)];
  if (target === undefined) return undefined;
  const ids = [...cluster.nodes.keys()];
  let targets = [target];
  let note = "";
  if (step.kind === "partition") {
    const s = sides(step.variant, target, ids, step.draw);
    targets = s.cut;
    note = `cut [${s.cut}] | [${s.rest}]`;
  }
  const before = await cluster.topic(TOPIC);
  const led = (before ?? []).filter((p) => targets.includes(p.leader)).map((p) => p.partition);
  const role = describeRole(step.target);
  log(
    `fault ${step.kind}${step.variant ? `/${step.variant}` : ""} on broker ${
      targets.join("+")
    } (${role}; led ${TOPIC} [${led}]) for ${step.holdMs} ms${note ? `: ${note}` : ""}`,
  );
  const startAt = now();
  let endAt = startAt;
  switch (step.kind) {
    case "kill": {
      await cluster.kill(target);
      await sleep(step.holdMs);
      endAt = now();
      await startBroker(cluster, target, log);
      break;
    }
    case "restart": {
      const code = await cluster.terminate(target);
      note = `exit ${code} after ${now() - startAt} ms (controlled shutdown)`;
      if (code !== 0) log(`broker ${target} ${note}`);
      await sleep(step.holdMs);
      endAt = now();
      await startBroker(cluster, target, log);
      break;
    }
    case "pause": {
      cluster.signal(target, "SIGSTOP");
      try {
        await sleep(step.holdMs);
      } finally {
        endAt = now();
        cluster.signal(target, "SIGCONT");
      }
      break;
    }
    case "partition": {
      const { cut, rest } = sides(step.variant, target, ids, step.draw);
      try {
        for (const a of cut) {
          for (const b of rest) {
            if (step.variant === "one-way-out") net.block(a, b);
            else if (step.variant === "one-way-in") net.block(b, a);
            else net.cut(a, b);
          }
        }
        await sleep(step.holdMs);
      } finally {
        endAt = now();
        net.heal();
      }
      break;
    }
  }
  const ev: FaultEvent = {
    kind: step.kind,
    variant: step.variant,
    targets,
    role,
    startAt,
    endAt,
    led,
    ...(note ? { note } : {}),
  };
  try {
    await cluster.fullIsr(ctx.recoverMs);
    ev.recoveredAt = now();
    log(`healed; every ISR full ${ev.recoveredAt - endAt} ms after the heal`);
  } catch {
    log(`NOT recovered: ISRs not full ${ctx.recoverMs} ms after the heal`);
  }
  return ev;
}
