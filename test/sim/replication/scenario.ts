// One seeded run of the replication model (cluster.ts): 3 brokers that are also the metadata
// quorum (one of them the controller), two idempotent acks=all producers and a consumer.
// CHAOS_MS of faults (crashes that lose unsynced bytes, process pauses, symmetric partitions and
// one-way loss between brokers and between a broker and the controller, loss, duplication,
// delay), a third of them aimed at the controller's broker, then everything heals: within
// LIVENESS_BOUND_MS a leader must serve with the whole ISR, every replica holding its log and
// every broker the same metadata. The invariants (checker.ts) are checked at every step and at
// the end.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { BROKERS, InvariantError, ReplicationCluster } from "./cluster.ts";

export const CHAOS_MS = 8000;
/** After the heal (and the producers' last batch), the cluster settles within this. */
export const LIVENESS_BOUND_MS = 6000;
const PRODUCE_UNTIL_MS = CHAOS_MS + 1000;
const END_MS = PRODUCE_UNTIL_MS + LIVENESS_BOUND_MS;

export interface ReplicationRunOptions {
  log?: (line: string) => void;
  /**
   * Also strike the controller right after it proposes a BrokerFenced record, between a fence
   * (or unfence) and the elections that follow it: shows the gap described in the doc
   * (REPLICATION_SIM_STRIKE_FENCES=1 turns it on for scripts/sim.ts).
   */
  strikeFences?: boolean;
  /**
   * Controllers redo the elections a failed controller's fence or unfence left undone (default
   * true). ControllerService does not (see the doc): false runs the production behaviour
   * (REPLICATION_SIM_NO_REPAIR=1 for scripts/sim.ts).
   */
  repairElections?: boolean;
  /**
   * Operators reassign the partition during the chaos: moves to random replica sets of 2 or 3
   * brokers (so replicas leave, lose their logs, and come back empty to copy everything) and
   * cancels, sent to whichever broker runs the controller (REPLICATION_SIM_REASSIGN=1).
   */
  reassign?: boolean;
  /**
   * A consumer group's member commits offsets and reads them back (OffsetCommit/OffsetFetch)
   * from whoever it believes coordinates the group; invariant (10) (REPLICATION_SIM_OFFSETS=1).
   */
  offsets?: boolean;
}

export function runReplicationSeed(seed: number, o: ReplicationRunOptions = {}): SeedOutcome {
  const c = new ReplicationCluster(seed, o.repairElections ?? true, o.offsets ?? false);
  c.trace = o.log;
  const rng = c.rng.fork();
  c.fsyncMaxMs = rng.int(5, 60);
  const blocks: { pairs: [number, number][]; until: number }[] = [];
  const applyBlocks = () => {
    c.net.heal();
    for (const b of blocks) for (const [x, y] of b.pairs) c.net.blockOneWay(x, y);
  };
  // The group offsets' extra faults draw from a stream of their own: runs without replay as before.
  const offsets = o.offsets ? c.rng.fork() : undefined;
  const stallRaft = (from: number, to: number) => {
    const key = `${from}>${to}`;
    c.raftStalls.set(key, Math.max(c.raftStalls.get(key) ?? 0, c.now + offsets!.int(200, 1500)));
    c.log(`raft link ${key} stalled until ${c.raftStalls.get(key)}`);
  };
  const expireBlocks = () => {
    const before = blocks.length;
    for (let i = blocks.length - 1; i >= 0; i--) {
      if (blocks[i].until > c.now) continue;
      // With group offsets: half the time a cut link's Raft connection recovers late (its TCP
      // retransmissions backed off) while new calls on it get through at once.
      if (offsets?.chance(0.5)) { for (const [x, y] of blocks[i].pairs) stallRaft(x, y); }
      blocks.splice(i, 1);
    }
    if (blocks.length !== before) applyBlocks();
  };
  const lossy = () =>
    c.net.setOptions({
      maxDelayMs: rng.int(3, 20),
      lossRate: rng.next() * 0.03,
      dupRate: rng.next() * 0.03,
      stragglerRate: 0.02,
    });

  const fault = () => {
    const r = rng.next();
    const up: number[] = BROKERS.filter((id) => c.brokers.get(id)!.up);
    if (up.length === 0) return;
    // A quarter of the faults hit the controller's broker (a crash or pause is a failover), a
    // quarter the partition's leader (a pause makes a zombie), the rest any broker.
    const ctl = c.controller();
    const led = c.latest().part.leader;
    const aim = rng.next();
    const x = aim < 0.25 && up.includes(ctl)
      ? ctl
      : aim < 0.5 && up.includes(led)
      ? led
      : rng.pick(up);
    if (offsets !== undefined && offsets.chance(0.2)) {
      // A stalled Raft connection from the metadata leader to x while x's calls to the
      // controller get through: x's metadata lags its session.
      const from = ctl >= 0 && ctl !== x ? ctl : offsets.pick(BROKERS.filter((id) => id !== x));
      stallRaft(from, x);
    }
    if (r < 0.2) {
      c.crash(x, rng.int(50, 2000));
    } else if (r < 0.3) {
      // Power loss: two or three brokers at once.
      const n = rng.int(2, up.length + 1);
      for (const id of rng.shuffle([...up]).slice(0, n)) c.crash(id, rng.int(50, 2000));
    } else if (r < 0.45) {
      c.pause(x, rng.int(100, 2000));
    } else if (r < 0.85) {
      c.counts.partitions++;
      const others = BROKERS.filter((id) => id !== x);
      const y = rng.pick(others);
      // "The controller" seen from x: the current one, or another broker if x is it.
      const z = ctl >= 0 && ctl !== x ? ctl : rng.pick(others);
      const pairs: [number, number][] = [];
      const both = (a: number, b: number) => pairs.push([a, b], [b, a]);
      const kind = rng.int(0, 6);
      if (kind === 0) {
        for (const o of others) both(x, o); // isolated from the cluster
      } else if (kind === 1) both(x, z);
      else if (kind === 2) both(x, y);
      else if (kind === 3) pairs.push([x, z]);
      else if (kind === 4) pairs.push([z, x]);
      else pairs.push([x, y]);
      blocks.push({ pairs, until: c.now + rng.int(200, 2500) });
      c.log(`block ${pairs.map(([a, b]) => `${a}>${b}`).join(" ")}`);
      applyBlocks();
    } else if (r < 0.93) {
      lossy();
    } else {
      // A slow link: messages wait up to a second and a half, and overtake each other.
      const a = rng.pick(BROKERS);
      const b = rng.pick(BROKERS.filter((z) => z !== a));
      const key = `${a}>${b}`;
      c.slow.set(key, rng.int(200, 1500));
      c.log(`slow link ${key}`);
      c.at(c.now + rng.int(500, 3000), () => c.slow.delete(key));
    }
  };

  // A controller struck right after it proposed a decision: its record may be on a follower
  // but not known committed there, so the next controller decides from a view without it and
  // the record commits under the next term (a deposed controller's decision, committed late).
  let chaos = true;
  c.proposed = (id, r) => {
    if (!chaos || !rng.chance(0.3)) return;
    if (r.type !== "PartitionChanged" && !(o.strikeFences && r.type === "BrokerFenced")) return;
    const crash = rng.chance(0.5);
    c.at(c.now + rng.int(2, 25), () => {
      c.log(`strike controller ${id} after its proposal (${crash ? "crash" : "pause"})`);
      c.counts.controllerStrikes++;
      if (crash) c.crash(id, rng.int(50, 2000));
      else c.pause(id, rng.int(100, 2000));
    });
  };

  // Reassignments draw from a stream of their own: runs without them replay as before.
  const ops = o.reassign ? c.rng.fork() : undefined;
  const reassignOp = () => {
    if (ops === undefined) return;
    const ctl = c.controller();
    if (ctl < 0) return;
    const b = c.brokers.get(ctl)!;
    if (!b.up || b.paused) return;
    let target: number[] | null = null;
    if (ops.chance(0.7)) {
      target = ops.shuffle([...BROKERS]).slice(0, ops.int(2, 4));
    }
    c.log(`operator: ${target === null ? "cancel" : `move to [${target}]`} (controller ${ctl})`);
    b.ctl.reassign(target);
  };

  let failure: string | undefined;
  let settledAt = -1;
  try {
    let t = 0;
    let nextFault = rng.int(300, 1000);
    let nextOp = ops?.int(200, 1200) ?? Infinity;
    while (t < CHAOS_MS) {
      t = Math.min(CHAOS_MS, t + 50);
      c.runUntil(t);
      c.watchFenced(50);
      expireBlocks();
      if (t >= nextFault) {
        fault();
        nextFault = t + rng.int(150, 900);
      }
      if (t >= nextOp) {
        reassignOp();
        nextOp = t + ops!.int(300, 1500);
      }
    }
    // Heal: the network, every paused and crashed broker.
    chaos = false;
    blocks.length = 0;
    c.slow.clear();
    c.raftStalls.clear();
    c.net.heal();
    c.net.setOptions({ lossRate: 0, dupRate: 0, stragglerRate: 0, maxDelayMs: 8 });
    for (const id of BROKERS) {
      const b = c.brokers.get(id)!;
      if (!b.up) c.restart(id);
      else if (b.paused) c.resume(id);
    }
    c.log("healed");
    c.runUntil(PRODUCE_UNTIL_MS);
    c.clients.producing = false;
    for (t = PRODUCE_UNTIL_MS; t < END_MS; t += 50) {
      c.runUntil(t);
      const why = c.settled();
      if (why === undefined && settledAt < 0) settledAt = t;
      else if (why !== undefined) settledAt = -1;
    }
    const why = c.settled();
    if (why !== undefined) {
      failure = `liveness: not settled ${LIVENESS_BOUND_MS} ms after the heal: ${why}`;
    } else c.finalChecks();
  } catch (e) {
    if (!(e instanceof InvariantError)) throw e;
    failure = `${e.message} (at ${c.now} ms)`;
  }
  return {
    failure,
    counts: c.counts,
    simulatedMs: c.now,
    measures: {
      settleMs: settledAt < 0 ? -1 : settledAt - PRODUCE_UNTIL_MS,
      fencedInIsrMs: c.worstFencedInIsrMs,
    },
  };
}
