// A follower that starts following one more partition of a leader while its fetch is parked
// there asks the leader to end that fetch (replicaWake), so the new partition is fetched at once
// instead of after the long poll (FETCH_WAIT_MS). Both halves, with fakes for the cluster.
import { expect, test } from "bun:test";
import { Fetcher } from "../../src/replication/replica-manager.ts";
import type { Replica } from "../../src/replication/replica.ts";
import { leaderManager, silentLog } from "./fakes.ts";

test("leader: a parked follower fetch ends when that follower asks, not when another does", async () => {
  const { m, handlers } = leaderManager({
    meta: { isUnfenced: () => false },
    partitions: () => [],
  });
  try {
    const serve = handlers.get("replicaFetch")!;
    const wake = handlers.get("replicaWake")!;
    const t0 = performance.now();
    let done = -1;
    const p = serve(2, { maxWaitMs: 3000, partitions: [] }, new Uint8Array()).then(() => {
      done = performance.now() - t0;
    });
    await Bun.sleep(50);
    await wake(3, {}, new Uint8Array()); // another follower: no effect on broker 2's poll
    await Bun.sleep(50);
    expect(done).toBe(-1);
    await wake(2, {}, new Uint8Array());
    await p;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(2000); // ended by the wake, not the 3 s poll
  } finally {
    m.stop();
  }
});

function fakeReplica(partition: number): Replica {
  return {
    isLeader: false,
    leader: 1,
    leaderEpoch: 0,
    topicId: "tid",
    topic: "t",
    partition,
    log: {
      logEndOffset: () => 0,
      latestEpoch: () => -1,
      durableEndOffset: () => 0,
      logStartOffset: () => 0,
    },
  } as unknown as Replica;
}

test("follower: a replica added while a fetch is in flight without it sends one wake", async () => {
  const calls: string[] = [];
  let answer: (() => void) | undefined;
  const link = {
    call(method: string) {
      calls.push(method);
      if (method === "replicaWake") return Promise.resolve({ body: {}, tail: new Uint8Array() });
      // The fetch stays parked until the test lets it go (an empty, well-formed answer).
      return new Promise((resolve) => {
        answer = () =>
          resolve({ body: { results: [{ errorCode: 0, bytes: 0 }] }, tail: new Uint8Array() });
      });
    },
    close() {},
  };
  const mgr = { stats: { fetchesSent: 0 }, leaving: false, log: silentLog };
  type Args = ConstructorParameters<typeof Fetcher>;
  const f = new Fetcher(1, link as unknown as Args[1], mgr as unknown as Args[2]);
  const a = fakeReplica(0);
  f.set([a]);
  f.start();
  await Bun.sleep(20);
  expect(calls).toEqual(["replicaFetch"]);
  f.set([a]); // the same set again (the periodic refresh): nothing new, no wake
  expect(calls).toEqual(["replicaFetch"]);
  f.add(fakeReplica(1));
  f.add(fakeReplica(2)); // one wake per fetch in flight is enough
  expect(calls).toEqual(["replicaFetch", "replicaWake"]);
  f.stop();
  answer?.();
});
