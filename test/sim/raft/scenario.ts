// One simulated run per seed: 3 or 5 voters, 45 s of chaos (crashes, symmetric and one-way
// partitions, loss, duplication, reordering, clock skew, membership changes, leadership
// transfers, reads), then the network heals and every crashed node restarts; a leader must be
// elected and commit within HEAL_BOUND_MS, and by the end every member must have applied
// everything committed.
import { nextMembershipChange } from "../../../src/cluster/raft/controller.ts";
import type { RaftBugs } from "../../../src/cluster/raft/types.ts";
import { NONE } from "../../../src/cluster/raft/types.ts";
import type { SeedOutcome } from "../../../src/cluster/sim/campaigns.ts";
import { InvariantError } from "./checker.ts";
import { RaftCluster } from "./cluster.ts";

/** After the network heals and crashed nodes restart, a leader commits within this (ms). */
export const HEAL_BOUND_MS = 4000;
export const CHAOS_END_MS = 45_000;
export const END_MS = 60_000;

export interface ScenarioOptions {
  log?: (line: string) => void;
  bugs?: RaftBugs;
  /** Stop at the first invariant failure (default true); the failure is returned. */
  endMs?: number;
}

export function runRaftSeed(seed: number, o: ScenarioOptions = {}): SeedOutcome {
  const c = new RaftCluster(seed);
  const rng = c.rng.fork();
  c.trace = o.log;
  const endMs = o.endMs ?? END_MS;
  const chaosEnd = Math.min(CHAOS_END_MS, endMs - 15_000);
  const n = seed % 2 === 0 ? 3 : 5;
  const voters = Array.from({ length: n }, (_, i) => i + 1);
  let nextSpare = n + 1;
  let pendingSpare = NONE;
  if (o.bugs !== undefined) {
    c.bugs = o.bugs;
    c.buggy = new Set(voters);
  }
  for (const id of voters) {
    c.clock.setSkew(id, { offsetMs: rng.int(-2000, 2000), rate: 0.98 + rng.next() * 0.04 });
  }
  const lossy = () =>
    c.net.setOptions({
      minDelayMs: 1,
      maxDelayMs: rng.int(3, 30),
      lossRate: rng.next() * 0.05,
      dupRate: rng.next() * 0.03,
      stragglerRate: 0.01,
    });
  lossy();
  for (const id of voters) c.addNode(id, voters);

  let cmd = 0;
  let healAt = -1;
  let recoveredAt = -1;
  const forcedCrash = rng.int(2000, 12_000);
  const forcedPartition = rng.int(14_000, 30_000);
  let forcedCrashDone = false;

  const crashOk = (id: number): boolean => {
    const cfgs = c.running().map((x) => x.raft!.config).filter((k) => k.voters.length > 0);
    if (cfgs.length === 0) return false;
    const minV = Math.min(...cfgs.map((k) => k.voters.length));
    const isV = (x: number) => cfgs.some((k) => k.voters.includes(x));
    let down = 0;
    for (const x of c.nodes.values()) if (x.raft === undefined && !x.retired && isV(x.id)) down++;
    return down + (isV(id) ? 1 : 0) <= Math.floor((minV - 1) / 2);
  };
  const crashSome = (): boolean => {
    const cands = rng.shuffle(c.running().map((x) => x.id));
    for (const id of cands) {
      if (!crashOk(id)) continue;
      c.crash(id);
      c.schedule(c.clock.now + rng.int(300, 5000), { k: "restart", node: id });
      return true;
    }
    return false;
  };
  const partition = () => {
    const ids = rng.shuffle(c.running().map((x) => x.id));
    if (ids.length < 2) return;
    c.counts.partitions++;
    if (rng.chance(0.3)) {
      c.net.blockOneWay(ids[0], ids[1]);
      o.log?.(`${c.clock.now} one-way block ${ids[0]} -> ${ids[1]}`);
    } else {
      const k = rng.int(1, ids.length);
      c.net.partition(ids.slice(0, k), ids.slice(k));
      o.log?.(`${c.clock.now} partition [${ids.slice(0, k)}] | [${ids.slice(k)}]`);
    }
    c.schedule(c.clock.now + rng.int(500, 6000), { k: "act", what: "heal" });
  };

  const act = (what: string) => {
    const now = c.clock.now;
    const chaos = now < chaosEnd;
    switch (what) {
      case "client": {
        const l = c.leader();
        if (l !== undefined) {
          const r = c.withNode(l.id, (x) => x.propose(`c${++cmd}`));
          if (r?.ok) {
            c.counts.proposals++;
          }
        }
        if (rng.chance(0.1)) {
          const live = c.running();
          if (live.length > 0) c.read(rng.pick(live).id);
        }
        const gap = rng.int(20, 200);
        if (now + gap < endMs - 3000) c.schedule(now + gap, { k: "act", what: "client" });
        return;
      }
      case "chaos": {
        if (!chaos) return;
        if (!forcedCrashDone && now >= forcedCrash) forcedCrashDone = crashSome();
        const r = rng.next();
        if (r < 0.3) crashSome();
        else if (r < 0.55) partition();
        else if (r < 0.7) lossy();
        else if (r < 0.8) c.net.heal();
        else {
          const down = [...c.nodes.values()].filter((x) => x.raft === undefined && !x.retired);
          if (down.length > 0) c.restart(rng.pick(down).id);
        }
        c.schedule(now + rng.int(300, 2500), { k: "act", what: "chaos" });
        return;
      }
      case "forcedPartition":
        partition();
        return;
      case "heal":
        if (chaos) c.net.heal();
        return;
      case "member": {
        if (!chaos) return;
        c.schedule(now + rng.int(800, 2500), { k: "act", what: "member" });
        const l = c.leader();
        if (l === undefined || l.transferee !== NONE) return;
        const cfg = l.config;
        if (cfg.learners.length > 0) {
          const ch = nextMembershipChange({
            config: cfg,
            caughtUp: l.caughtUpLearners(),
            voters: n === 3 ? 3 : 5,
          });
          if (ch !== undefined) c.withNode(l.id, (x) => x.proposeConfChange(ch));
          return;
        }
        if (cfg.voters.length >= n) {
          if (!rng.chance(0.4)) return;
          const down = cfg.voters.filter((v) => c.nodes.get(v)?.raft === undefined);
          const others = cfg.voters.filter((v) => v !== l.id);
          const victim = down.length > 0 ? down[0] : rng.pick(others);
          c.withNode(l.id, (x) => x.proposeConfChange({ op: "remove", node: victim }));
          return;
        }
        if (pendingSpare === NONE) {
          pendingSpare = nextSpare++;
          c.clock.setSkew(pendingSpare, {
            offsetMs: rng.int(-2000, 2000),
            rate: 0.98 + rng.next() * 0.04,
          });
          c.addNode(pendingSpare, undefined);
        }
        const id = pendingSpare;
        const r = c.withNode(l.id, (x) => x.proposeConfChange({ op: "addLearner", node: id }));
        if (r?.ok) pendingSpare = NONE;
        return;
      }
      case "transfer": {
        if (!chaos) return;
        c.schedule(now + rng.int(4000, 12_000), { k: "act", what: "transfer" });
        const l = c.leader();
        if (l === undefined) return;
        const r = c.withNode(l.id, (x) => x.transferLeadership());
        if (!r?.ok) return;
        c.counts.transfers++;
        o.log?.(`${now} transfer from ${l.id} to ${l.transferee}`);
        if (rng.chance(0.5)) c.schedule(now + 300, { k: "act", what: `bounce:${l.id}` });
        return;
      }
      case "end-heal": {
        healAt = now;
        const floor = c.check.commitMax;
        c.onCommit = (index) => {
          if (index > floor && recoveredAt < 0) recoveredAt = c.clock.now;
        };
        c.net.heal();
        c.net.setOptions({ lossRate: 0, dupRate: 0, stragglerRate: 0, maxDelayMs: 10 });
        for (const x of c.nodes.values()) if (x.raft === undefined && !x.retired) c.restart(x.id);
        o.log?.(`${now} network healed, all nodes restarted`);
        return;
      }
    }
    if (what.startsWith("bounce:")) {
      // Graceful restart of a former leader after its transfer.
      const id = Number(what.slice(7));
      if (chaos && crashOk(id)) {
        c.crash(id);
        c.schedule(now + 1000, { k: "restart", node: id });
      }
    }
  };
  c.onConfCommitted = (op, node) => {
    if (op === "remove") c.schedule(c.clock.now + 2000, { k: "act", what: `retire:${node}` });
  };
  const act2 = (what: string) => {
    if (what.startsWith("retire:")) c.retire(Number(what.slice(7)));
    else act(what);
  };

  c.schedule(0, { k: "act", what: "client" });
  c.schedule(500, { k: "act", what: "chaos" });
  c.schedule(1500, { k: "act", what: "member" });
  c.schedule(rng.int(3000, 9000), { k: "act", what: "transfer" });
  c.schedule(forcedPartition, { k: "act", what: "forcedPartition" });
  c.schedule(chaosEnd, { k: "act", what: "end-heal" });
  const outcome = (failure?: string): SeedOutcome => ({
    failure,
    counts: { ...c.counts },
    simulatedMs: c.clock.now,
    measures: recoveredAt >= 0 ? { recoveryMs: recoveredAt - healAt } : {},
  });
  try {
    c.runUntil(endMs, act2);
    if (!forcedCrashDone && c.counts.crashes === 0) return outcome("no crash happened");
    if (recoveredAt < 0) return outcome(`no commit after the network healed at ${healAt}`);
    if (recoveredAt - healAt > HEAL_BOUND_MS) {
      return outcome(`recovery took ${recoveredAt - healAt} ms > ${HEAL_BOUND_MS} ms`);
    }
    const l = c.leader();
    if (l === undefined) return outcome("no leader at the end");
    for (const id of [...l.config.voters, ...l.config.learners]) {
      const x = c.nodes.get(id)!;
      if (x.smIndex < l.commit) {
        return outcome(`node ${id} applied ${x.smIndex} < commit ${l.commit} at the end`);
      }
    }
    return outcome();
  } catch (e) {
    if (e instanceof InvariantError) return outcome(`${e.message} (at ${c.clock.now} ms)`);
    return outcome(`crash: ${e instanceof Error ? e.stack : String(e)}`);
  }
}
