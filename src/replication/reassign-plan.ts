// Proposing a reassignment (Kafka's `kafka-reassign-partitions --generate`, a rebalance after
// a broker joins, a decommission): pure, over the current replica sets. The proposal keeps
// every replica it can (moves as little data as it can), gives each target broker its share of
// replicas (counts within one of each other; the smallest partitions move first, so the bytes
// moved stay low), never puts two replicas of a partition on one broker, spreads a partition
// over racks when brokers declare them, and then orders each replica set so preferred leaders
// (the first replica) are spread too, keeping the current first replica where it can.

export interface PlanPartition {
  topic: string;
  partition: number;
  replicas: readonly number[];
  /** Bytes of the leader's log, when known: small partitions move first. */
  sizeBytes?: number;
}

export interface PlannedPartition {
  topic: string;
  partition: number;
  replicas: number[];
}

export interface PlanOptions {
  /** Rack of each broker (absent: none). */
  racks?: ReadonlyMap<number, string | null>;
  /** A new replication factor for every partition (default: each keeps its own). */
  replicationFactor?: number;
}

/** Throws when the plan cannot be made (fewer brokers than the replication factor). */
export function proposeAssignment(
  parts: readonly PlanPartition[],
  brokers: readonly number[],
  o: PlanOptions = {},
): PlannedPartition[] {
  const bs = [...new Set(brokers)].sort((a, b) => a - b);
  if (bs.length === 0) throw new Error("no target brokers");
  const rack = (id: number) => o.racks?.get(id) ?? null;
  const sets = parts.map((p) => {
    const rf = o.replicationFactor ?? p.replicas.length;
    if (rf < 1) throw new Error(`${p.topic}-${p.partition}: replication factor must be >= 1`);
    if (rf > bs.length) {
      throw new Error(
        `${p.topic}-${p.partition}: replication factor ${rf} is larger than the ${bs.length} target brokers`,
      );
    }
    return { p, rf, replicas: p.replicas.filter((id) => bs.includes(id)).slice(0, rf) };
  });
  const load = new Map(bs.map((id) => [id, 0]));
  for (const s of sets) for (const id of s.replicas) load.set(id, load.get(id)! + 1);
  const total = sets.reduce((n, s) => n + s.rf, 0);
  const floor = Math.floor(total / bs.length);
  const ceil = Math.ceil(total / bs.length);
  const size = (s: (typeof sets)[number]) => s.p.sizeBytes ?? 0;
  // Small partitions first: a move copies the partition's bytes.
  const bySize = [...sets].sort((a, b) => size(a) - size(b));
  const racksOf = (replicas: readonly number[]) => new Set(replicas.map(rack));
  /** The best broker to add to `replicas`: least loaded, a new rack first, lowest id on ties. */
  const pick = (replicas: readonly number[], avoid?: number): number | undefined => {
    const used = racksOf(replicas);
    let best: number | undefined;
    let bestKey: [number, number] | undefined;
    for (const id of bs) {
      if (replicas.includes(id) || id === avoid) continue;
      const r = rack(id);
      const key: [number, number] = [r !== null && used.has(r) ? 1 : 0, load.get(id)!];
      if (
        bestKey === undefined || key[0] < bestKey[0] ||
        (key[0] === bestKey[0] && key[1] < bestKey[1])
      ) {
        best = id;
        bestKey = key;
      }
    }
    return best;
  };
  // Replication factor going down: drop replicas from the most loaded brokers.
  for (const s of sets) {
    while (s.replicas.length > s.rf) {
      const worst = [...s.replicas].sort((a, b) => load.get(b)! - load.get(a)!)[0];
      s.replicas = s.replicas.filter((id) => id !== worst);
      load.set(worst, load.get(worst)! - 1);
    }
  }
  // Shed: brokers above their share give replicas of their smallest partitions away.
  for (const s of bySize) {
    for (const id of [...s.replicas]) {
      if (load.get(id)! <= ceil) continue;
      const to = pick(s.replicas.filter((x) => x !== id), id);
      if (to === undefined || load.get(to)! >= ceil) continue;
      s.replicas = s.replicas.map((x) => (x === id ? to : x));
      load.set(id, load.get(id)! - 1);
      load.set(to, load.get(to)! + 1);
    }
  }
  // Fill: partitions short of their factor (brokers left the set, or the factor went up).
  for (const s of bySize) {
    while (s.replicas.length < s.rf) {
      const to = pick(s.replicas)!;
      s.replicas.push(to);
      load.set(to, load.get(to)! + 1);
    }
  }
  // Level: while a broker is below its share and another above it, move one small partition.
  for (let guard = 0; guard < total * bs.length; guard++) {
    const under = bs.filter((id) => load.get(id)! < floor).sort((a, b) =>
      load.get(a)! - load.get(b)!
    );
    const over = bs.filter((id) => load.get(id)! > floor).sort((a, b) =>
      load.get(b)! - load.get(a)!
    );
    if (under.length === 0 || over.length === 0) break;
    let moved = false;
    for (const u of under) {
      for (const ov of over) {
        if (load.get(ov)! - load.get(u)! < 2) continue;
        const s = bySize.find((x) =>
          x.replicas.includes(ov) && !x.replicas.includes(u) &&
          (rack(u) === null || rack(u) === rack(ov) ||
            !racksOf(x.replicas.filter((y) => y !== ov)).has(rack(u)))
        );
        if (s === undefined) continue;
        s.replicas = s.replicas.map((x) => (x === ov ? u : x));
        load.set(ov, load.get(ov)! - 1);
        load.set(u, load.get(u)! + 1);
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  // Preferred leaders: each partition's first replica from the brokers leading fewest so far,
  // the current first replica kept when it is among them.
  const leads = new Map(bs.map((id) => [id, 0]));
  const leaderShare = Math.ceil(sets.length / bs.length);
  for (const s of sets) {
    const cur = s.p.replicas[0];
    let first = s.replicas.includes(cur) && leads.get(cur)! < leaderShare ? cur : undefined;
    if (first === undefined) {
      first = [...s.replicas].sort((a, b) => leads.get(a)! - leads.get(b)! || a - b)[0];
    }
    leads.set(first, leads.get(first)! + 1);
    // Keep the others in their current order where they were replicas already.
    const rest = s.replicas.filter((id) => id !== first);
    rest.sort((a, b) => order(s.p.replicas, a) - order(s.p.replicas, b));
    s.replicas = [first, ...rest];
  }
  // The greedy pass can leave a broker leading two more than another (the current first replicas
  // it kept came first): hand a partition's first place to a less-leading replica of it until
  // no such pair is left. Only the order changes: nothing more is copied.
  for (let guard = 0; guard < sets.length * bs.length; guard++) {
    let moved = false;
    for (const hi of [...bs].sort((a, b) => leads.get(b)! - leads.get(a)! || a - b)) {
      for (const s of sets) {
        if (s.replicas[0] !== hi) continue;
        const lo = s.replicas.slice(1).filter((id) => leads.get(id)! <= leads.get(hi)! - 2)
          .sort((a, b) => leads.get(a)! - leads.get(b)! || a - b)[0];
        if (lo === undefined) continue;
        s.replicas = [lo, ...s.replicas.filter((id) => id !== lo)];
        leads.set(hi, leads.get(hi)! - 1);
        leads.set(lo, leads.get(lo)! + 1);
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  return sets.map((s) => ({ topic: s.p.topic, partition: s.p.partition, replicas: s.replicas }));
}

function order(replicas: readonly number[], id: number): number {
  const i = replicas.indexOf(id);
  return i < 0 ? replicas.length : i;
}
