// One seeded run of the replication model (cluster.ts): 3 brokers, a controller, two idempotent
// acks=all producers and a consumer. CHAOS_MS of faults (crashes that lose unsynced bytes,
// process pauses, symmetric partitions and one-way loss between brokers and between a broker
// and the controller, loss, duplication, delay), then everything heals: within
// LIVENESS_BOUND_MS a leader must serve with the whole ISR, every replica holding its log. The
// invariants (cluster.ts, Checker) are checked at every step and at the end.
import type { SeedOutcome } from "../../../src/cluster/sim/index.ts";
import { BROKERS, CONTROLLER, InvariantError, ReplicationCluster } from "./cluster.ts";

export const CHAOS_MS = 8000;
/** After the heal (and the producers' last batch), the cluster settles within this. */
export const LIVENESS_BOUND_MS = 6000;
const PRODUCE_UNTIL_MS = CHAOS_MS + 1000;
const END_MS = PRODUCE_UNTIL_MS + LIVENESS_BOUND_MS;

export interface ReplicationRunOptions {
  log?: (line: string) => void;
}

export function runReplicationSeed(seed: number, o: ReplicationRunOptions = {}): SeedOutcome {
  const c = new ReplicationCluster(seed);
  c.trace = o.log;
  const rng = c.rng.fork();
  c.fsyncMaxMs = rng.int(5, 60);
  const blocks: { pairs: [number, number][]; until: number }[] = [];
  const applyBlocks = () => {
    c.net.heal();
    for (const b of blocks) for (const [x, y] of b.pairs) c.net.blockOneWay(x, y);
  };
  const expireBlocks = () => {
    const before = blocks.length;
    for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].until <= c.now) blocks.splice(i, 1);
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
    const up = BROKERS.filter((id) => c.brokers.get(id)!.up);
    if (up.length === 0) return;
    const x = rng.pick(up);
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
      const pairs: [number, number][] = [];
      const both = (a: number, b: number) => pairs.push([a, b], [b, a]);
      const kind = rng.int(0, 6);
      if (kind === 0) {
        for (const z of [CONTROLLER, ...others]) both(x, z); // isolated from the cluster
      } else if (kind === 1) both(x, CONTROLLER);
      else if (kind === 2) both(x, y);
      else if (kind === 3) pairs.push([x, CONTROLLER]);
      else if (kind === 4) pairs.push([CONTROLLER, x]);
      else pairs.push([x, y]);
      blocks.push({ pairs, until: c.now + rng.int(200, 2500) });
      c.log(`block ${pairs.map(([a, b]) => `${a}>${b}`).join(" ")}`);
      applyBlocks();
    } else if (r < 0.93) {
      lossy();
    } else {
      // A slow link: messages wait up to a second and a half, and overtake each other.
      const ends = [CONTROLLER, ...BROKERS];
      const a = rng.pick(ends);
      const b = rng.pick(ends.filter((z) => z !== a));
      const key = `${a}>${b}`;
      c.slow.set(key, rng.int(200, 1500));
      c.log(`slow link ${key}`);
      c.at(c.now + rng.int(500, 3000), () => c.slow.delete(key));
    }
  };

  let failure: string | undefined;
  let settledAt = -1;
  try {
    let t = 0;
    let nextFault = rng.int(300, 1000);
    while (t < CHAOS_MS) {
      t = Math.min(CHAOS_MS, t + 50);
      c.runUntil(t);
      expireBlocks();
      if (t >= nextFault) {
        fault();
        nextFault = t + rng.int(150, 900);
      }
    }
    // Heal: the network, every paused and crashed broker.
    blocks.length = 0;
    c.slow.clear();
    c.net.heal();
    c.net.setOptions({ lossRate: 0, dupRate: 0, stragglerRate: 0, maxDelayMs: 8 });
    for (const id of BROKERS) {
      const b = c.brokers.get(id)!;
      if (!b.up) c.restart(id);
      else if (b.paused) c.resume(id);
    }
    c.log("healed");
    c.runUntil(PRODUCE_UNTIL_MS);
    c.producing = false;
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
    measures: { settleMs: settledAt < 0 ? -1 : settledAt - PRODUCE_UNTIL_MS },
  };
}
