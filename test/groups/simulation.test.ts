/**
 * Seeded randomized run: clients join, leave, crash (stop heartbeating), restart as the same
 * static instance, and send stale requests, while invariants are checked after every step.
 */
import { expect, test } from "bun:test";
import {
  type CoordinatorEffect,
  type CoordinatorInput,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  GroupCoordinator,
  type JoinGroupResponse,
  roundRobinAssignor,
  type SyncGroupResponse,
} from "../../src/groups/index.ts";

const TOPICS: Record<string, number> = { t1: 4, t2: 3, t3: 6 };
const G = "sim";

interface Client {
  name: string;
  instance: string | null;
  http: boolean;
  topics: string[];
  memberId: string;
  /** Generation of the last successful join. */
  generation: number;
  state: "joining" | "syncing" | "stable" | "crashed" | "gone";
  lastHeartbeat: number;
}

type Pending = { client: Client; kind: "join" | "sync"; generation: number };

function run(seed: number): { generations: number; syncs: number } {
  let s = seed >>> 0;
  const rnd = (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
  let now = 0;
  let ids = 0;
  let tokens = 0;
  const c = new GroupCoordinator({
    initialRebalanceDelayMs: rnd(2) === 0 ? 0 : 500,
    newMemberId: (cid) => `${cid}-${++ids}`,
    partitionCounts: (t) => TOPICS[t],
  });
  const clients: Client[] = [];
  const pending = new Map<number, Pending>();
  let lastGeneration = 0;
  let syncs = 0;
  /** generation → partition → owner (instance or member id). */
  const owners = new Map<number, Map<string, string>>();

  const subscription = (cl: Client) =>
    encodeSubscription({
      version: 0,
      topics: cl.topics,
      userData: null,
      ownedPartitions: [],
      generationId: -1,
      rackId: null,
    });

  const apply = (effects: CoordinatorEffect[]) => {
    for (const e of effects) {
      if (e.type === "append") {
        apply(c.handle({ type: "appendDone", appendId: e.appendId, errorCode: 0 }, now));
      } else if (e.type === "event" && e.event.kind === "generationStarted") {
        expect(e.event.generation).toBeGreaterThan(lastGeneration);
        lastGeneration = e.event.generation;
      } else if (e.type === "respond") {
        const p = pending.get(e.token);
        if (p === undefined) continue;
        pending.delete(e.token);
        if (p.kind === "join") onJoin(p.client, e.response as JoinGroupResponse);
        else onSync(p.client, p.generation, e.response as SyncGroupResponse);
      }
    }
  };
  const send = (input: CoordinatorInput, p?: Pending) => {
    if (p !== undefined && "token" in input) pending.set(input.token, p);
    apply(c.handle(input, now));
  };

  const join = (cl: Client) => {
    if (cl.state === "crashed" || cl.state === "gone") return;
    cl.state = "joining";
    const token = ++tokens;
    send({
      type: "join",
      token,
      groupId: G,
      memberId: cl.memberId,
      groupInstanceId: cl.instance,
      clientId: cl.name,
      clientHost: "h",
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 15_000,
      protocolType: "consumer",
      protocols: [{ name: "roundrobin", metadata: subscription(cl) }],
      requireKnownMemberId: true,
      brokerAssigns: cl.http,
    }, { client: cl, kind: "join", generation: -1 });
  };

  const onError = (cl: Client, code: number) => {
    if (cl.state === "crashed" || cl.state === "gone") return;
    if (code === 82) cl.state = "gone";
    else {
      if (code === 25) cl.memberId = "";
      join(cl);
    }
  };

  function onJoin(cl: Client, r: JoinGroupResponse) {
    if (cl.state === "crashed" || cl.state === "gone") return;
    if (r.errorCode === 79) {
      cl.memberId = r.memberId;
      return join(cl);
    }
    if (r.errorCode !== 0) return onError(cl, r.errorCode);
    expect(r.generationId).toBeGreaterThan(cl.memberId === r.memberId ? cl.generation - 1 : -1);
    cl.memberId = r.memberId;
    cl.generation = r.generationId;
    cl.state = "syncing";
    let assignments: { memberId: string; assignment: Uint8Array }[] = [];
    if (r.leader === r.memberId && !r.skipAssignment && !cl.http) {
      const members = r.members.map((m) => {
        const d = decodeSubscription(m.metadata);
        if (!d.ok) throw new Error(d.error);
        return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, subscription: d.value };
      });
      const plan = roundRobinAssignor.assign(members, (t) => TOPICS[t]);
      assignments = [...plan].map(([memberId, assignedPartitions]) => ({
        memberId,
        assignment: encodeAssignment({ version: 0, assignedPartitions, userData: null }),
      }));
    }
    const token = ++tokens;
    send({
      type: "sync",
      token,
      groupId: G,
      generationId: cl.generation,
      memberId: cl.memberId,
      groupInstanceId: cl.instance,
      protocolType: "consumer",
      protocolName: "roundrobin",
      assignments,
    }, { client: cl, kind: "sync", generation: cl.generation });
  }

  function onSync(cl: Client, generation: number, r: SyncGroupResponse) {
    if (cl.state === "crashed" || cl.state === "gone") return;
    if (r.errorCode !== 0) return onError(cl, r.errorCode);
    // Invariant: a SyncGroup answer belongs to the generation this member joined, which is current.
    expect(generation).toBe(cl.generation);
    expect(c.describeGroup(G).generation).toBe(generation);
    syncs++;
    cl.state = "stable";
    const a = decodeAssignment(r.assignment);
    if (!a.ok) throw new Error(a.error);
    let byPartition = owners.get(generation);
    if (byPartition === undefined) owners.set(generation, byPartition = new Map());
    const who = cl.instance ?? cl.memberId;
    for (const tp of a.value.assignedPartitions) {
      for (const p of tp.partitions) {
        const key = `${tp.topic}-${p}`;
        const prev = byPartition.get(key);
        if (prev !== undefined) expect(prev).toBe(who);
        byPartition.set(key, who);
      }
    }
  }

  const heartbeat = (cl: Client, generation: number): number => {
    const token = ++tokens;
    const fx = c.handle({
      type: "heartbeat",
      token,
      groupId: G,
      generationId: generation,
      memberId: cl.memberId,
      groupInstanceId: cl.instance,
    }, now);
    const mine = fx.find((e) => e.type === "respond" && e.token === token);
    apply(fx);
    return mine?.type === "respond" ? (mine.response as { errorCode: number }).errorCode : -999;
  };

  const live = () => clients.filter((x) => x.state !== "crashed" && x.state !== "gone");
  const freeInstance = () => {
    for (let i = 0; i < 3; i++) {
      const name = `inst-${i}`;
      if (!clients.some((x) => x.instance === name && x.state !== "gone")) return name;
    }
    return null;
  };
  const spawn = (instance: string | null) => {
    const topicsPick = ["t1", "t2", "t3"].filter(() => rnd(2) === 0);
    const cl: Client = {
      name: `c${clients.length}`,
      instance,
      http: rnd(4) === 0,
      topics: topicsPick.length > 0 ? topicsPick : ["t1"],
      memberId: "",
      generation: -1,
      state: "joining",
      lastHeartbeat: now,
    };
    clients.push(cl);
    join(cl);
  };

  for (let step = 0; step < 400; step++) {
    const action = rnd(20);
    const alive = live();
    if (action < 3 && alive.length < 6) spawn(rnd(3) === 0 ? freeInstance() : null);
    else if (action === 3 && alive.length > 0) {
      const cl = alive[rnd(alive.length)];
      if (cl.instance === null && cl.memberId !== "") {
        cl.state = "gone";
        send({
          type: "leave",
          token: ++tokens,
          groupId: G,
          members: [{ memberId: cl.memberId, groupInstanceId: null }],
        });
      }
    } else if (action === 4 && alive.length > 0) {
      alive[rnd(alive.length)].state = "crashed";
    } else if (action === 5) {
      // A crashed static instance restarts without its member id: it replaces the old member.
      const dead = clients.filter((x) => x.state === "crashed" && x.instance !== null);
      if (dead.length > 0) {
        const old = dead[rnd(dead.length)];
        old.state = "gone";
        const cl: Client = {
          ...old,
          name: `${old.name}r`,
          memberId: "",
          generation: -1,
          state: "joining",
          lastHeartbeat: now,
        };
        clients.push(cl);
        join(cl);
      }
    } else if (action === 6) {
      // A stale generation is always refused.
      const current = c.describeGroup(G).generation;
      const st = alive.filter((x) =>
        x.memberId !== "" && x.generation >= 1 && x.generation < current
      );
      for (const cl of st) expect(heartbeat(cl, cl.generation)).not.toBe(0);
      const anyone = alive.find((x) => x.state === "stable" && x.generation === current);
      if (anyone !== undefined && current > 1) {
        expect(heartbeat(anyone, current - 1)).toBe(22);
        const t = ++tokens;
        const fx = c.handle({
          type: "offsetCommit",
          token: t,
          groupId: G,
          generationId: current - 1,
          memberId: anyone.memberId,
          groupInstanceId: anyone.instance,
          retentionTimeMs: -1,
          topics: [{
            name: "t1",
            partitions: [{ partition: 0, offset: 1, leaderEpoch: -1, metadata: null }],
          }],
        }, now);
        const r = fx.find((e) => e.type === "respond" && e.token === t);
        expect(
          r?.type === "respond" && r.response.kind === "offsetCommit" &&
            r.response.topics[0].partitions[0].errorCode,
        )
          .toBe(22);
        apply(fx);
      }
    }
    now += rnd(1500);
    apply(c.handle({ type: "tick" }, now));
    for (const cl of live()) {
      if ((cl.state === "stable" || cl.state === "syncing") && now - cl.lastHeartbeat >= 2000) {
        cl.lastHeartbeat = now;
        const code = heartbeat(cl, cl.generation);
        if (code !== 0) onError(cl, code);
      }
    }
    // In Stable, the assignment (always from our assignor) covers each subscribed partition once.
    const d = c.describeGroup(G);
    if (d.state === "Stable") {
      const seen = new Set<string>();
      const subscribed = new Set<string>();
      for (const m of d.members) {
        const sub = decodeSubscription(m.metadata);
        if (sub.ok) { for (const t of sub.value.topics) subscribed.add(t); }
        const a = decodeAssignment(m.assignment);
        if (!a.ok) throw new Error(a.error);
        for (const tp of a.value.assignedPartitions) {
          for (const p of tp.partitions) {
            const key = `${tp.topic}-${p}`;
            expect(seen.has(key)).toBe(false);
            seen.add(key);
          }
        }
      }
      let expected = 0;
      for (const t of subscribed) expected += TOPICS[t];
      expect(seen.size).toBe(expected);
    }
  }
  return { generations: lastGeneration, syncs };
}

test("randomized membership keeps its invariants over many seeds", () => {
  let totalGenerations = 0;
  let totalSyncs = 0;
  for (let seed = 1; seed <= 25; seed++) {
    const r = run(seed);
    totalGenerations += r.generations;
    totalSyncs += r.syncs;
  }
  // The run must actually exercise rebalances, not idle.
  expect(totalGenerations).toBeGreaterThan(100);
  expect(totalSyncs).toBeGreaterThan(200);
});
