// Replication views and operator elections (src/core/replication-admin.ts): Kafka's election
// rules over the metadata, the controller's part (appends with the partition epoch, one retry of a
// raced change), broker session states, followers' positions and ISR change counting.
import { describe, expect, test } from "bun:test";
import type { ClusterService } from "../../src/cluster/node.ts";
import type { PartitionManager } from "../../src/core/partition-manager.ts";
import {
  type ControllerView,
  ElectionType,
  followerPositions,
  leaderPartitionStats,
  NotControllerError,
  planElections,
  ReplicationAdmin,
} from "../../src/core/replication-admin.ts";
import { Metrics } from "../../src/core/metrics.ts";
import type { Logger } from "../../src/log.ts";
import { MetaError } from "../../src/meta/index.ts";
import type { MetadataRecord } from "../../src/meta/records.ts";
import type { BrokerInfo, PartitionInfo, TopicInfo } from "../../src/meta/store.ts";
import { ErrorCode } from "../../src/protocol/kafka/error-codes.ts";
import type { Replica } from "../../src/replication/replica.ts";
import { SessionTracker } from "../../src/replication/sessions.ts";

const E = ErrorCode;

function part(partition: number, o: Partial<PartitionInfo> = {}): PartitionInfo {
  return {
    partition,
    leader: 1,
    leaderEpoch: 4,
    partitionEpoch: 9,
    replicas: [1, 2, 3],
    isr: [1, 2, 3],
    ...o,
  };
}

function topic(name: string, partitions: PartitionInfo[]): TopicInfo {
  return { topicId: `${name}-id`, name, internal: false, configs: {}, createdAt: 0, partitions };
}

const liveSet = (...ids: number[]) => (id: number) => ids.includes(id);

describe("planElections: preferred", () => {
  const topics = [
    topic("t", [
      part(0), // the preferred replica leads
      part(1, { leader: 2 }), // 1 is live and in the ISR: elect it
      part(2, { leader: 2, isr: [2, 3] }), // 1 is out of the ISR
      part(3, { leader: 2, replicas: [3, 2, 1] }), // 3 is not live
    ]),
  ];

  test("Kafka's answers per partition, in the order named", () => {
    const plan = planElections(
      topics,
      liveSet(1, 2),
      ElectionType.PREFERRED,
      [0, 1, 2, 3].map((p) => ({ topic: "t", partition: p })),
    );
    expect(plan.results.map((r) => r.errorCode)).toEqual([
      E.ELECTION_NOT_NEEDED,
      0,
      E.PREFERRED_LEADER_NOT_AVAILABLE,
      E.PREFERRED_LEADER_NOT_AVAILABLE,
    ]);
    expect(plan.results[2].message).toContain("not in the ISR");
    expect(plan.results[3].message).toContain("not live");
    expect([...plan.changes.keys()]).toEqual([1]);
    const c = plan.changes.get(1)!;
    expect(c).toMatchObject({
      topicId: "t-id",
      partition: 1,
      partitionEpoch: 9,
      leader: 1,
      leaderEpoch: 5,
      isr: [1, 2, 3],
    });
  });

  test("unknown topics and partitions", () => {
    const plan = planElections(topics, liveSet(1, 2, 3), ElectionType.PREFERRED, [
      { topic: "nope", partition: 0 },
      { topic: "t", partition: 9 },
    ]);
    expect(plan.results.map((r) => r.errorCode)).toEqual([
      E.UNKNOWN_TOPIC_OR_PARTITION,
      E.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(plan.changes.size).toBe(0);
  });

  test("every partition (targets null): those that need no election are left out", () => {
    const plan = planElections(topics, liveSet(1, 2), ElectionType.PREFERRED, null);
    expect(plan.results.map((r) => [r.partition, r.errorCode])).toEqual([
      [1, 0],
      [2, E.PREFERRED_LEADER_NOT_AVAILABLE],
      [3, E.PREFERRED_LEADER_NOT_AVAILABLE],
    ]);
    expect(plan.changes.get(0)?.partition).toBe(1);
  });

  test("a partition named twice is elected once and answered twice", () => {
    const plan = planElections(topics, liveSet(1, 2), ElectionType.PREFERRED, [
      { topic: "t", partition: 1 },
      { topic: "t", partition: 1 },
    ]);
    expect(plan.results.map((r) => r.errorCode)).toEqual([0, 0]);
    expect(plan.changes.size).toBe(1);
  });
});

describe("planElections: unclean", () => {
  const topics = [
    topic("u", [
      part(0), // has a leader
      part(1, { leader: -1, isr: [2] }), // its ISR member 2 is live: a clean election
      part(2, { leader: -1, isr: [1], replicas: [1, 3, 2] }), // 1 is gone: any live replica
      part(3, { leader: -1, isr: [1], replicas: [1, 4] }), // nothing live
    ]),
  ];

  test("a live ISR member first, else any live replica as the whole ISR", () => {
    const plan = planElections(
      topics,
      liveSet(2, 3),
      ElectionType.UNCLEAN,
      [0, 1, 2, 3].map((p) => ({ topic: "u", partition: p })),
    );
    expect(plan.results.map((r) => r.errorCode)).toEqual([
      E.ELECTION_NOT_NEEDED,
      0,
      0,
      E.ELIGIBLE_LEADERS_NOT_AVAILABLE,
    ]);
    expect(plan.changes.get(1)).toMatchObject({ leader: 2, leaderEpoch: 5, isr: [2] });
    expect(plan.changes.get(1)!.reason).toContain("ISR member");
    expect(plan.changes.get(2)).toMatchObject({ leader: 3, leaderEpoch: 5, isr: [3] });
    expect(plan.changes.get(2)!.reason).toContain("UNCLEAN");
  });
});

// ---- the service with fakes ------------------------------------------------------------------

const silent: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silent;
  },
} as unknown as Logger;

function broker(nodeId: number, fenced = false): BrokerInfo {
  return {
    nodeId,
    host: "h",
    kafkaPort: 1,
    httpPort: 2,
    clusterPort: 3,
    rack: null,
    fenced,
    epoch: 1,
    registeredAt: 0,
  } as unknown as BrokerInfo;
}

interface Fake {
  admin: ReplicationAdmin;
  appended: MetadataRecord[];
  topics: TopicInfo[];
  brokers: BrokerInfo[];
  sessions: SessionTracker;
  controller: { active: boolean; sessions: SessionTracker; counters: ControllerView["counters"] };
  /** Make the next N appends fail as stale (and bump the partition epoch as a racing change). */
  raceNext(n: number): void;
  replicas: unknown[];
}

function fake(o: { self?: number; controllerId?: number } = {}): Fake {
  const self = o.self ?? 1;
  const topics = [topic("t", [part(0, { leader: 2 }), part(1)])];
  const brokers = [broker(1), broker(2), broker(3)];
  const appended: MetadataRecord[] = [];
  let races = 0;
  const replicas: unknown[] = [];
  const meta = { listTopics: () => topics, listBrokers: () => brokers };
  const partitions = { meta, partitions: () => replicas } as unknown as PartitionManager;
  const cluster = {
    nodeId: self,
    controllerId: () => o.controllerId ?? self,
    link: () => undefined,
    handleCall: () => {},
    appendAsController: (r: MetadataRecord) => {
      if (r.type !== "PartitionChanged") throw new Error("unexpected record");
      const p = topics[0].partitions.find((x) => x.partition === r.partition)!;
      if (races > 0) {
        races--;
        p.partitionEpoch++;
        return Promise.reject(new MetaError("INVALID_UPDATE_VERSION", "stale"));
      }
      appended.push(r);
      p.leader = r.leader ?? p.leader;
      p.leaderEpoch = r.leaderEpoch ?? p.leaderEpoch;
      p.partitionEpoch++;
      return Promise.resolve(appended.length);
    },
  } as unknown as ClusterService;
  const sessions = new SessionTracker();
  const controller = {
    active: true,
    sessions,
    counters: { elections: 2, fences: 1, unfences: 1, isrChanges: 0 },
  };
  const admin = new ReplicationAdmin(partitions, cluster, controller, silent);
  return {
    admin,
    appended,
    topics,
    brokers,
    sessions,
    controller,
    raceNext: (n) => races = n,
    replicas,
  };
}

describe("ReplicationAdmin elections", () => {
  test("the controller appends each election with the partition epoch it was planned from", async () => {
    const f = fake();
    const results = await f.admin.electLeaders(ElectionType.PREFERRED, null);
    expect(results).toEqual([{ topic: "t", partition: 0, errorCode: 0, message: null }]);
    expect(f.appended).toEqual([{
      type: "PartitionChanged",
      topicId: "t-id",
      partition: 0,
      partitionEpoch: 9,
      leader: 1,
      leaderEpoch: 5,
      isr: [1, 2, 3],
      reason: "ElectLeaders: preferred replica 1 leads again",
    }]);
    expect(f.admin.controllerCounters()).toMatchObject({ active: true, elections: 3 });
    // Done: a second request needs no election.
    const again = await f.admin.electLeaders(ElectionType.PREFERRED, [{
      topic: "t",
      partition: 0,
    }]);
    expect(again[0].errorCode).toBe(E.ELECTION_NOT_NEEDED);
  });

  test("a change refused as stale is planned again once, from the new epoch", async () => {
    const f = fake();
    f.raceNext(1);
    const results = await f.admin.electLeaders(ElectionType.PREFERRED, [
      { topic: "t", partition: 0 },
    ]);
    expect(results[0].errorCode).toBe(0);
    expect(f.appended.map((r) => (r as { partitionEpoch: number }).partitionEpoch)).toEqual([10]);
  });

  test("stale twice: the error is the answer", async () => {
    const f = fake();
    f.raceNext(2);
    const results = await f.admin.electLeaders(ElectionType.PREFERRED, [
      { topic: "t", partition: 0 },
    ]);
    expect(results[0].errorCode).toBe(E.INVALID_UPDATE_VERSION);
    expect(f.appended).toEqual([]);
  });

  test("no controller: NOT_CONTROLLER, nothing appended", async () => {
    const f = fake();
    f.controller.active = false;
    const e = await f.admin.electLeaders(ElectionType.PREFERRED, null).catch((x) => x);
    expect(e).toBeInstanceOf(NotControllerError);
    expect((e as MetaError).errorCode).toBe(E.NOT_CONTROLLER);
    const unknown = fake({ controllerId: -1 });
    expect(await unknown.admin.electLeaders(ElectionType.PREFERRED, null).catch((x) => x))
      .toBeInstanceOf(NotControllerError);
    // Another broker is the controller but its address is unknown.
    const away = fake({ self: 2, controllerId: 1 });
    expect(await away.admin.electLeaders(ElectionType.PREFERRED, null).catch((x) => x))
      .toBeInstanceOf(NotControllerError);
    expect(away.appended).toEqual([]);
  });
});

describe("ReplicationAdmin broker sessions", () => {
  test("the controller's view: alive, fenced, shutting down, unknown", async () => {
    const f = fake();
    f.brokers.push(broker(4));
    f.brokers[1] = broker(2, true);
    const now = performance.now();
    f.sessions.start([1, 2, 3, 4], now);
    f.sessions.heartbeat(1, now, 5);
    f.sessions.heartbeat(3, now, 5, true);
    const s = await f.admin.brokerSessions();
    expect(s.source).toBe("controller");
    expect(s.brokers.map((b) => [b.id, b.state])).toEqual([
      [1, "alive"],
      [2, "fenced"],
      [3, "shutting_down"],
      [4, "unknown"], // no heartbeat to this controller yet
    ]);
    expect(s.brokers[0].heartbeatAgeMs).toBeGreaterThanOrEqual(0);
    expect(s.brokers[3].heartbeatAgeMs).toBeNull();
  });

  test("controller not reachable: the metadata's fenced flags", async () => {
    const f = fake({ self: 2, controllerId: 1 });
    f.brokers[2] = broker(3, true);
    const s = await f.admin.brokerSessions();
    expect(s.source).toBe("metadata");
    expect(s.brokers.map((b) => b.state)).toEqual(["alive", "alive", "fenced"]);
  });
});

// ---- followers' positions and ISR changes --------------------------------------------------------

function replica(o: {
  logEnd: number;
  followers: { id: number; logEnd: number; durableEnd: number; lastCaughtUpMs: number }[];
  now: number;
  isr?: number[];
  leaderEpoch?: number;
  partitionEpoch?: number;
}) {
  return {
    topic: "t",
    partition: 0,
    isLeader: true,
    leaderEpoch: o.leaderEpoch ?? 1,
    partitionEpoch: o.partitionEpoch ?? 1,
    isr: o.isr ?? [1, 2, 3],
    replicas: [1, 2, 3],
    minInsyncReplicas: 2,
    log: { logEndOffset: () => o.logEnd, logStartOffset: () => 0, sizeBytes: () => 100 },
    highWatermark: () => 7,
    hooks: { now: () => o.now },
    followers: () => o.followers,
  };
}

describe("followers' positions", () => {
  test("log end as fetched, and time since last caught up (0 while caught up)", () => {
    const r = replica({
      logEnd: 10,
      now: 5000,
      followers: [
        { id: 2, logEnd: 10, durableEnd: 10, lastCaughtUpMs: 1000 },
        { id: 3, logEnd: 4, durableEnd: 4, lastCaughtUpMs: 3500 },
        { id: 4, logEnd: -1, durableEnd: -1, lastCaughtUpMs: 4000 },
      ],
    }) as unknown as Replica;
    expect(followerPositions(r)).toEqual([
      { id: 2, logEnd: 10, caughtUpAgoMs: 0 },
      { id: 3, logEnd: 4, caughtUpAgoMs: 1500 },
      { id: 4, logEnd: -1, caughtUpAgoMs: 1000 },
    ]);
  });

  test("the partitionStats answer carries them, for partitions led here only", () => {
    const r = replica({
      logEnd: 10,
      now: 0,
      followers: [{ id: 2, logEnd: 8, durableEnd: 8, lastCaughtUpMs: 0 }],
    });
    const partitions = {
      leaderError: (_t: string, p: number) => (p === 0 ? 0 : 6),
      partition: () => r,
    } as unknown as PartitionManager;
    expect(leaderPartitionStats(partitions, "t", [0, 1])).toEqual([{
      partition: 0,
      logStartOffset: 0,
      highWatermark: 7,
      sizeBytes: 100,
      logEndOffset: 10,
      followers: [{ id: 2, logEnd: 8, caughtUpAgoMs: 0 }],
    }]);
  });
});

describe("collected counters", () => {
  test("render with the counter type", () => {
    const m = new Metrics();
    m.collect(() => [
      { name: "x_total", help: "x", type: "counter", samples: [{ labels: {}, value: 3 }] },
      { name: "y", help: "y", samples: [{ labels: { a: "1" }, value: 1 }] },
    ]);
    const text = m.render();
    expect(text).toContain("# TYPE x_total counter\nx_total 3");
    expect(text).toContain('# TYPE y gauge\ny{a="1"} 1');
  });
});
