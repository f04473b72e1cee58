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
  waitFor,
} from "../../test/helpers/replication-harness.ts";
import type { FaultEvent } from "./history.ts";
import type { ChaosDisks } from "./disk.ts";
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
  /** The brokers' own disks (runs with disk-full faults). */
  disks?: ChaosDisks;
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
      let dropped = 0;
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
        dropped = net.heal();
      }
      note = `${note}; ${dropped} packets dropped`;
      break;
    }
    case "loss": {
      note = await badLink(net, target, ids.filter((b) => b !== target), step);
      endAt = now();
      break;
    }
    case "disk-full": {
      const disks = ctx.disks;
      if (disks === undefined) throw new Error("disk-full needs the brokers on disks of their own");
      const logs = cluster.nodes.get(target)?.proc?.logs;
      const mark = logs?.length ?? 0;
      const { ballast, free } = disks.fill(target);
      try {
        await sleep(step.holdMs);
      } finally {
        endAt = now();
        disks.drain(target);
      }
      // What the broker itself refused or failed to write meanwhile: the fault's proof of effect.
      // (ENOSPC from files, "database or disk is full" / SQLITE_FULL from the metadata store.)
      const refused =
        (logs ?? []).slice(mark).filter((l) => /ENOSPC|disk is full|SQLITE_FULL/.test(l))
          .length;
      note = `data dir filled: ${(ballast / 2 ** 20).toFixed(1)} MiB ballast, ${free} bytes ` +
        `left; ${refused} writes failed for want of space in the broker's log`;
      break;
    }
    case "reassign": {
      note = await outAndBack(cluster, target, step, log);
      endAt = now();
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

/** loss: the link between `target` and each of `others` made bad both ways for the hold. */
async function badLink(net: ChaosNet, target: number, others: number[], step: Step) {
  const level = step.level ?? 0;
  let dropped = 0;
  let what = "";
  try {
    if (step.variant === "flap") {
      // Cut for `level` ms, whole for `level` ms, over and over: connections stall and resume.
      // (Each switch is an nft call per namespace, tens to hundreds of ms on a loaded machine.)
      const until = now() + step.holdMs;
      let cuts = 0;
      const toggle = (on: boolean) =>
        Promise.all([
          net.flap(target, others, on),
          ...others.map((b) => net.flap(b, [target], on)),
        ]);
      while (now() < until && cuts < 10_000) {
        await toggle(true);
        cuts++;
        await sleep(Math.min(level, Math.max(0, until - now())));
        await toggle(false);
        await sleep(Math.min(level, Math.max(0, until - now())));
      }
      what = `${cuts} cuts of ${level} ms`;
    } else {
      for (const b of others) {
        for (const [from, to] of [[target, b], [b, target]]) {
          if (step.variant === "throttle") net.throttle(from, to, level);
          else net.lose(from, to, level);
        }
      }
      what = `${step.variant === "throttle" ? `${level} KiB/s` : `${level} % lost`} each way`;
      await sleep(step.holdMs);
    }
  } finally {
    dropped = net.heal();
  }
  return `${what}; ${dropped} packets dropped`;
}

interface MoveView {
  partitions: { topic: string; partition: number }[];
}

/** POSTs (or, `target` null, DELETEs) a move of partition `p` of the topic to any broker. */
async function submitMove(
  cluster: Cluster,
  p: number,
  target: number[] | null,
  throttle: number,
): Promise<string> {
  for (const n of cluster.running()) {
    try {
      const r = target === null
        ? await fetch(`http://${n.httpAddr}/reassignments?topic=${TOPIC}&partition=${p}`, {
          method: "DELETE",
          signal: AbortSignal.timeout(5000),
        })
        : await fetch(`http://${n.httpAddr}/reassignments`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            version: 1,
            partitions: [{ topic: TOPIC, partition: p, replicas: target }],
            ...(throttle > 0 ? { throttle } : {}),
          }),
          signal: AbortSignal.timeout(5000),
        });
      const body = await r.json() as { results?: { error: string | null }[] };
      if (r.status === 200) return body.results?.[0]?.error ?? "accepted";
    } catch {
      // the next broker
    }
  }
  return "no broker took it";
}

const sameSet = (a: number[], b: number[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

/** Waits until no move of partition `p` is listed and its replicas are `want`; ms taken or -1. */
async function moved(cluster: Cluster, p: number, want: number[], timeoutMs: number) {
  const t0 = now();
  try {
    await waitFor(`partition ${p} on [${want}]`, timeoutMs, async () => {
      const n = cluster.running()[0];
      if (n === undefined) return undefined;
      const v = await getJson(`http://${n.httpAddr}/reassignments?topic=${TOPIC}`) as
        | MoveView
        | undefined;
      if (v === undefined || v.partitions.some((m) => m.partition === p)) return undefined;
      const pv = (await cluster.topic(TOPIC))?.find((x) => x.partition === p);
      return pv !== undefined && sameSet(pv.replicas, want) ? true : undefined;
    }, 250);
    return now() - t0;
  } catch {
    return -1;
  }
}

/**
 * reassign: a partition the target holds (for a leader role, that partition) moves off it, onto
 * a broker that holds no replica when there is one (5 brokers) or to one replica fewer (3
 * brokers), stays there for the hold, and moves back to its original replicas (the target copies
 * the log again from the start). A move that does not finish in a minute is cancelled.
 */
async function outAndBack(cluster: Cluster, target: number, step: Step, log: (l: string) => void) {
  const view = await cluster.topic(TOPIC) ?? [];
  const held = view.filter((p) => p.replicas.includes(target));
  const pv =
    (step.target.role === "leader"
      ? held.find((p) => p.partition === (step.target as { partition: number }).partition)
      : undefined) ?? held[Math.floor(step.draw * held.length)];
  if (pv === undefined) return `broker ${target} holds no replica of ${TOPIC}: nothing moved`;
  const original = [...pv.replicas];
  const spare = [...cluster.nodes.keys()].filter((b) => !original.includes(b));
  const out = spare.length > 0
    ? original.map((b) => b === target ? spare[Math.floor(step.draw * spare.length)] : b)
    : original.filter((b) => b !== target);
  const throttle = (step.level ?? 0) * 1024;
  const label = `partition ${pv.partition} [${original}] -> [${out}]`;
  log(`reassign ${label}${throttle > 0 ? ` (throttle ${throttle} B/s)` : ""}`);
  const first = await submitMove(cluster, pv.partition, out, throttle);
  if (first !== "accepted") return `${label} refused: ${first}`;
  const outMs = await moved(cluster, pv.partition, out, 60_000);
  if (outMs < 0) {
    const c = await submitMove(cluster, pv.partition, null, 0);
    log(`LIVENESS: ${label} not done in 60 s; cancelled (${c})`);
    const backMs = await moved(cluster, pv.partition, original, 60_000);
    return `${label} not done in 60 s, cancelled: ${c}; back ${
      backMs < 0 ? "NOT done in 60 s" : `in ${backMs} ms`
    }`;
  }
  log(`reassign ${label} done in ${outMs} ms; moving back`);
  await sleep(step.holdMs);
  const second = await submitMove(cluster, pv.partition, original, throttle);
  if (second !== "accepted") return `${label} in ${outMs} ms; back refused: ${second}`;
  const backMs = await moved(cluster, pv.partition, original, 60_000);
  if (backMs < 0) log(`LIVENESS: partition ${pv.partition} back to [${original}] not done in 60 s`);
  return `${label} in ${outMs} ms, back to [${original}] ${
    backMs < 0 ? "NOT done in 60 s" : `in ${backMs} ms`
  }`;
}
