// Controller decisions with a fake cluster and metadata. AlterPartition requests that arrive
// together are decided as one event: their records are appended at once (one Raft batch), not
// one commit after another (a broker rejoining every ISR after a restart sends one request per
// partition at the same moment). A fenced broker is unfenced only once caught up.
import { expect, test } from "bun:test";
import { ControllerService } from "../../src/replication/controller-service.ts";
import { silentLog } from "./fakes.ts";

type Args = ConstructorParameters<typeof ControllerService>;
type Handler = (from: number, body: unknown) => Promise<{ body: unknown }>;

/** The controller's broker as far as these tests go: `commit` is how one append commits. */
function fakeCluster(
  handlers: Map<string, Handler>,
  commit: (rec: Record<string, unknown>) => Promise<void>,
) {
  let applied = 10;
  return {
    nodeId: 0,
    isController: () => true,
    controllerTerm: () => 1,
    appliedIndex: () => applied,
    peerConnected: () => true,
    handleCall: (m: string, fn: Handler) => handlers.set(m, fn),
    onPeerClosed() {},
    onBeforeRegister() {},
    async appendAsController(rec: Record<string, unknown>) {
      await commit(rec);
      return ++applied;
    },
  };
}

function setup(partitions: number, fenced: number[] = []) {
  const handlers = new Map<string, Handler>();
  let pending = 0;
  let maxPending = 0;
  const appended: unknown[] = [];
  // A commit takes a while; every append waiting at once is one batch.
  const cluster = fakeCluster(handlers, async (rec) => {
    appended.push(rec);
    maxPending = Math.max(maxPending, ++pending);
    await Bun.sleep(20);
    pending--;
  });
  const meta = {
    topicDefaults: {},
    listBrokers: () =>
      [0, 1, 2].map((nodeId) => ({
        nodeId,
        fenced: fenced.includes(nodeId),
        epoch: 1,
        rack: null,
      })),
    listTopics: () => [{
      topicId: "tid",
      name: "t",
      configs: {},
      partitions: Array.from({ length: partitions }, (_, partition) => ({
        partition,
        leader: 0,
        leaderEpoch: 3,
        partitionEpoch: 7,
        replicas: [0, 1, 2],
        isr: [0, 1],
      })),
    }],
  };
  const c = new ControllerService(
    cluster as unknown as Args[0],
    meta as unknown as Args[1],
    silentLog as unknown as Args[2],
  );
  c.start();
  const alter = (partition: number, isr: number[]) =>
    handlers.get("alterPartition")!(0, {
      topicId: "tid",
      partition,
      leaderEpoch: 3,
      partitionEpoch: 7,
      isr,
    });
  const heartbeat = (from: number, appliedIndex: number) =>
    handlers.get("heartbeat")!(from, { appliedIndex });
  return { c, alter, heartbeat, appended, maxPending: () => maxPending };
}

test("ISR changes arriving together are appended together, each answered", async () => {
  const { c, alter, appended, maxPending } = setup(19);
  try {
    const answers = await Promise.all(
      Array.from({ length: 19 }, (_, p) => alter(p, [0, 1, 2])),
    );
    for (const a of answers) expect(a.body).toEqual({ errorCode: 0 });
    expect(appended.length).toBe(19);
    expect(maxPending()).toBe(19); // one batch, not 19 commits in a row
  } finally {
    c.stop();
  }
});

test("a refused request in a batch is answered with its reason; the others commit", async () => {
  const { c, alter, appended } = setup(3);
  try {
    const [ok, bad] = await Promise.all([alter(0, [0, 1, 2]), alter(1, [1, 2])]);
    expect(ok.body).toEqual({ errorCode: 0 });
    expect((bad.body as { errorCode: number }).errorCode).toBe(42); // the leader left out
    expect(appended.length).toBe(1);
  } finally {
    c.stop();
  }
});

test("a fenced broker is unfenced only once it has applied what was decided while it was fenced", async () => {
  // Broker 2 was fenced by its session (cut off) and the controller, at applied index 10, has
  // since moved its leaderships. Having applied its own registration (index 1) is not enough:
  // unfenced behind, it would take back leaderships as it last knew them.
  const { c, heartbeat, appended } = setup(1, [2]);
  const unfences = () =>
    appended.filter((r) => (r as { type: string; fenced?: boolean }).fenced === false).length;
  try {
    await heartbeat(2, 5);
    await Bun.sleep(250);
    expect(unfences()).toBe(0);
    await heartbeat(2, 10);
    await Bun.sleep(250);
    expect(unfences()).toBe(1);
  } finally {
    c.stop();
  }
});

test("a move completes as soon as its new replica's ISR change commits, not at the next periodic check", async () => {
  // Partition 0 moves from [0] to [1]: broker 1 copies outside the ISR; when its leader's
  // proposal to add it commits, the completion is the controller's next event. The periodic
  // check (every 250 ms) ran once at the first tick and found nothing to do.
  const handlers = new Map<string, Handler>();
  const p = {
    partition: 0,
    leader: 0,
    leaderEpoch: 3,
    partitionEpoch: 7,
    replicas: [0, 1],
    isr: [0],
    reassignment: { target: [1], original: [0], originalLeader: 0, started: true, throttle: 0 } as
      | Record<string, unknown>
      | null,
  };
  const appended: { at: number; rec: Record<string, unknown> }[] = [];
  const cluster = fakeCluster(handlers, async (rec) => {
    await Bun.sleep(5);
    appended.push({ at: performance.now(), rec });
    for (const k of ["leader", "leaderEpoch", "isr", "replicas", "reassignment"] as const) {
      if (rec[k] !== undefined) (p as Record<string, unknown>)[k] = rec[k];
    }
    p.partitionEpoch++;
  });
  const meta = {
    topicDefaults: {},
    topicConfig: () => ({ minInsyncReplicas: 1 }),
    listBrokers: () => [0, 1].map((nodeId) => ({ nodeId, fenced: false, epoch: 1, rack: null })),
    listTopics: () => [{ topicId: "tid", name: "t", configs: {}, partitions: [{ ...p }] }],
  };
  const c = new ControllerService(
    cluster as unknown as Args[0],
    meta as unknown as Args[1],
    silentLog as unknown as Args[2],
  );
  c.start();
  try {
    await Bun.sleep(150); // the first tick's check: nothing to complete yet
    expect(appended.length).toBe(0);
    const a = await handlers.get("alterPartition")!(0, {
      topicId: "tid",
      partition: 0,
      leaderEpoch: 3,
      partitionEpoch: 7,
      isr: [0, 1],
    });
    expect(a.body).toEqual({ errorCode: 0 });
    const answered = performance.now();
    for (let i = 0; i < 40 && p.reassignment !== null; i++) await Bun.sleep(5);
    expect(p.reassignment).toBeNull();
    expect(p.replicas).toEqual([1]);
    expect(p.leader).toBe(1);
    // The completion came right after the ISR change, well before the next periodic check.
    expect(appended[1].at - answered).toBeLessThan(100);
  } finally {
    c.stop();
  }
});
