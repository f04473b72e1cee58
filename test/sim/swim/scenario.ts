// Seeded SWIM scenarios and their invariant checkers.
//
// chaos: 5-8 nodes (10-20 every tenth seed), lossy/duplicating/reordering network with delays,
// skewed clocks, a graceful leave and rejoin, one crash with restart (often at a new address),
// one symmetric or one-way partition. Checked:
//   detect: every member up through [crash, crash + DETECT_BOUND_MS] holds the crashed one dead;
//   converge: within CONVERGE_BOUND_MS after the last disruption (heal, restart, rejoin) every
//     live member holds every other live member alive, and at the end none holds one dead;
//   no decode error ever happens between honest nodes;
//   incarnations: no node's record of a member ever goes back to an older incarnation.
// loss: no faults but uniform loss; measures false "dead" declarations of live members.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { Rng } from "../../../src/cluster/sim/index.ts";
import type { SwimConfig } from "../../../src/cluster/swim/index.ts";
import { type NodeFactory, SwimSim } from "./harness.ts";

export const DETECT_BOUND_MS = 45_000;
export const CONVERGE_BOUND_MS = 30_000;
export const MIN_SIM_MS = 60_000;

export interface ChaosOptions {
  factory?: NodeFactory;
  config?: Partial<SwimConfig>;
  /** Fixed cluster size; by default derived from the seed (so a replay is exact). */
  nodes?: number;
  log?: (line: string) => void;
}

function allSeeAll(sim: SwimSim): boolean {
  const live = sim.liveIds();
  for (const a of live) {
    const n = sim.node(a)!;
    if (n.left) return false;
    for (const b of live) {
      if (a !== b && n.member(b)?.state !== "alive") return false;
    }
  }
  return true;
}

/** No live member holds another live member as dead, left or unknown (suspect is a hint). */
function noneLost(sim: SwimSim): boolean {
  const live = sim.liveIds();
  return live.every((a) =>
    live.every((b) => {
      const st = sim.node(a)!.member(b)?.state;
      return a === b || st === "alive" || st === "suspect";
    })
  );
}

function describeView(sim: SwimSim): string {
  return sim.liveIds().map((a) => {
    const n = sim.node(a)!;
    const bad = sim.liveIds().filter((b) => b !== a && n.member(b)?.state !== "alive")
      .map((b) => `${b}:${n.member(b)?.state ?? "unknown"}`);
    return bad.length ? `${a} sees ${bad.join(",")}` : "";
  }).filter(Boolean).join("; ");
}

export function runChaosSeed(seed: number, opts: ChaosOptions = {}): SeedOutcome {
  const log = opts.log ?? (() => {});
  const sim = new SwimSim(seed, opts.config, opts.factory);
  const plan = new Rng(seed ^ 0x5a5a5a5a);
  // Mostly 5-8 nodes (fast seeds); every tenth seed 10-20 nodes.
  const n = opts.nodes ?? (seed % 10 === 0 ? plan.int(10, 21) : plan.int(5, 9));
  sim.net.setOptions({
    minDelayMs: 1,
    maxDelayMs: plan.int(5, 40),
    lossRate: plan.next() * 0.05,
    dupRate: plan.next() * 0.05,
    stragglerRate: 0.01,
  });
  for (let i = 0; i < n; i++) {
    sim.clock.setSkew(i, {
      offsetMs: plan.int(-5000, 5000),
      rate: 1 + (plan.next() - 0.5) * 0.002,
    });
  }
  const epoch = new Map<number, number>();
  const seedsFor = (self: number) => {
    const up = sim.liveIds().filter((x) => x !== self);
    return plan.shuffle(up).slice(0, 2);
  };
  for (let i = 0; i < n; i++) {
    sim.at(i * 200, () => {
      epoch.set(i, 0);
      sim.start(i, 0, i === 0 ? [] : seedsFor(i));
    });
  }
  let failure: string | undefined;
  const fail = (why: string) => {
    failure ??= why;
  };
  // Graceful leave and rejoin of one member.
  const leaver = plan.int(1, n);
  const tLeave = 5000 + plan.int(0, 1500);
  const tRejoin = tLeave + 3000 + plan.int(0, 1500);
  sim.at(tLeave, () => sim.leave(leaver));
  sim.at(tRejoin, () => sim.rejoin(leaver, seedsFor(leaver)));
  // One crash, restarted after the detection window, half the time at a new address.
  const victim = plan.int(0, n);
  const tCrash = 12_000 + plan.int(0, 3000);
  const tRestart = tCrash + DETECT_BOUND_MS + 1000;
  sim.at(tCrash, () => sim.crash(victim));
  let detectMs = 0;
  sim.at(tCrash + DETECT_BOUND_MS, () => {
    for (const o of sim.liveIds()) {
      const st = sim.node(o)!.member(victim)?.state;
      if (st !== "dead") fail(`node ${o} holds crashed node ${victim} as ${st ?? "unknown"}`);
    }
    for (const o of sim.liveIds()) {
      const first = sim.events.find((e) =>
        e.observer === o && e.at >= tCrash && e.ev.type === "dead" && e.ev.member.id === victim
      );
      if (first) detectMs = Math.max(detectMs, first.at - tCrash);
    }
  });
  sim.at(tRestart, () => {
    const e = (epoch.get(victim) ?? 0) + (plan.chance(0.5) ? 1 : 0);
    epoch.set(victim, e);
    sim.start(victim, e, seedsFor(victim));
  });
  // One partition: a symmetric split or a few one-way cuts.
  const tPart = 20_000 + plan.int(0, 5000);
  const tHeal = tPart + 8000 + plan.int(0, 7000);
  const symmetric = plan.chance(0.5);
  sim.at(tPart, () => {
    const ids = plan.shuffle([...Array(n).keys()]);
    if (symmetric) {
      const k = plan.int(1, Math.floor(n / 2) + 1);
      sim.net.partition(ids.slice(0, k), ids.slice(k));
      log(`t=${sim.now} partition [${ids.slice(0, k)}] | [${ids.slice(k)}]`);
    } else {
      for (let i = 0; i < 3; i++) sim.net.blockOneWay(ids[2 * i % n], ids[(2 * i + 1) % n]);
      log(`t=${sim.now} one-way cuts`);
    }
  });
  sim.at(tHeal, () => {
    sim.net.heal();
    log(`t=${sim.now} heal`);
  });
  const lastDisruption = Math.max(tHeal, tRestart, tRejoin);
  const end = Math.max(MIN_SIM_MS, lastDisruption + CONVERGE_BOUND_MS);
  // Incarnations only grow: no member's record, as any node holds it, goes back to an older
  // incarnation (only the member raises its own; stale news at an older one is ignored).
  const held = new WeakMap<object, Map<number, number>>();
  for (let t = 250; t <= end; t += 250) {
    sim.at(t, () => {
      for (const o of sim.liveIds()) {
        const node = sim.node(o)!;
        let seen = held.get(node);
        if (seen === undefined) held.set(node, seen = new Map());
        const now = new Set<number>();
        for (const m of node.members()) {
          now.add(m.id);
          const before = seen.get(m.id) ?? -1;
          if (m.incarnation < before) {
            fail(
              `node ${o} holds node ${m.id} at incarnation ${m.incarnation} after ` +
                `${before} (${m.state})`,
            );
          }
          seen.set(m.id, Math.max(before, m.incarnation));
        }
        // A member forgotten (reaped) may come back at any incarnation.
        for (const id of [...seen.keys()]) if (!now.has(id)) seen.delete(id);
      }
    });
  }
  let convergedAt = -1;
  for (let t = lastDisruption; t <= end; t += 500) {
    sim.at(t, () => {
      if (convergedAt < 0 && allSeeAll(sim)) convergedAt = sim.now;
    });
  }
  sim.run(end);
  if (convergedAt < 0) {
    fail(`not converged ${CONVERGE_BOUND_MS} ms after heal: ${describeView(sim)}`);
  } else if (!noneLost(sim)) fail(`converged, then lost a live member: ${describeView(sim)}`);
  if (sim.totals.decodeErrors > 0) fail(`${sim.totals.decodeErrors} decode errors`);
  const count = (t: string) => sim.events.filter((e) => e.ev.type === t).length;
  log(
    `seed ${seed}: n=${n} victim=${victim} leaver=${leaver} detect=${detectMs}ms ` +
      `converge=${convergedAt < 0 ? "never" : convergedAt - lastDisruption}ms`,
  );
  return {
    failure,
    simulatedMs: end,
    counts: {
      nodes: n,
      crashes: sim.totals.crashes,
      restarts: sim.totals.restarts,
      partitions: 1,
      suspicions: count("suspect"),
      refutations: sim.refutations(),
      deaths: count("dead"),
      joins: sim.totals.joins,
      leaves: sim.totals.leaves,
      "left-events": count("left"),
      "address-changes": count("address-changed"),
      messages: sim.net.stats.sent,
    },
    measures: {
      detectMs,
      convergeMs: convergedAt < 0 ? Infinity : convergedAt - lastDisruption,
    },
  };
}

export interface LossResult {
  /** Observer-side transitions of a live member to dead. */
  falseDeaths: number;
  /** Suspicion timeouts that fired (each is one node declaring a live member dead). */
  falseDeclarations: number;
  suspicions: number;
  refutations: number;
  memberHours: number;
}

/** n nodes, no crashes, uniform loss for `durationMs` after they joined. */
export function runLossSeed(
  seed: number,
  n: number,
  lossRate: number,
  durationMs: number,
  config: Partial<SwimConfig> = {},
): LossResult {
  const sim = new SwimSim(seed, config);
  sim.net.setOptions({ minDelayMs: 1, maxDelayMs: 20, lossRate: 0 });
  for (let i = 0; i < n; i++) sim.at(i * 100, () => sim.start(i, 0, i === 0 ? [] : [0]));
  const t0 = n * 100 + 15_000;
  sim.run(t0);
  if (!allSeeAll(sim)) throw new Error(`seed ${seed}: cluster did not form`);
  const ev0 = sim.events.length;
  const ref0 = sim.refutations();
  let declared0 = 0;
  for (const id of sim.liveIds()) declared0 += sim.node(id)!.stats.deathsDeclared;
  sim.net.setOptions({ lossRate });
  sim.run(t0 + durationMs);
  const evs = sim.events.slice(ev0);
  let declared = -declared0;
  for (const id of sim.liveIds()) declared += sim.node(id)!.stats.deathsDeclared;
  return {
    falseDeaths: evs.filter((e) => e.ev.type === "dead").length,
    falseDeclarations: declared,
    suspicions: evs.filter((e) => e.ev.type === "suspect").length,
    refutations: sim.refutations() - ref0,
    memberHours: (n * durationMs) / 3_600_000,
  };
}
