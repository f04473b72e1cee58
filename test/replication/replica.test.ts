// The Replica shell: roles from committed metadata, the watermark consumers see, acks=all waiters
// released by the ISR's synced positions, refused on lost leadership or a shrunken ISR.
import { describe, expect, test } from "bun:test";
import { MemoryLogStore } from "../../src/storage/memory-store.ts";
import { Replica, type ReplicaAssignment } from "../../src/replication/replica.ts";
import type { IsrProposal } from "../../src/replication/leader.ts";
import { batch } from "../storage/helpers.ts";

async function replica(a: Partial<ReplicaAssignment> = {}, now = { t: 0 }) {
  const store = new MemoryLogStore();
  const log = await store.openLog({ topic: "t", partition: 0, topicId: "id" });
  const proposals: IsrProposal[] = [];
  const isrChanges: [boolean, boolean][] = [];
  let wakes = 0;
  const r = new Replica(
    "t",
    0,
    "id",
    log,
    1,
    {
      leader: 1,
      leaderEpoch: 3,
      partitionEpoch: 5,
      replicas: [1, 2, 3],
      isr: [1, 2, 3],
      ...a,
    },
    2,
    {
      onHighWatermark: () => wakes++,
      propose: (_r, p) => proposals.push(p),
      lagTimeMaxMs: 10_000,
      now: () => now.t,
      log: () => {},
      debug: () => {},
      onIsrChange: (_r, shrunk, expanded) => isrChanges.push([shrunk, expanded]),
    },
  );
  return { r, log, proposals, wakes: () => wakes, now, isrChanges };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("Replica", () => {
  test("ISR changes of a partition led here are reported as applied, within one leader epoch", async () => {
    const { r, isrChanges } = await replica();
    const at = (partitionEpoch: number, isr: number[], leaderEpoch = 3, leader = 1) =>
      r.update({ leader, leaderEpoch, partitionEpoch, replicas: [1, 2, 3], isr }, 2);
    at(6, [1, 2]); // 3 left
    at(7, [1, 2, 3]); // 3 back
    at(7, [1, 2]); // stale: ignored
    at(8, [1, 2]); // 3 left again
    at(9, [1, 3]); // one left, one joined
    expect(isrChanges).toEqual([[true, false], [false, true], [true, false], [true, true]]);
    at(1, [1], 4); // a new leader epoch starts afresh: no change counted
    at(1, [2, 3], 5, 2); // led elsewhere: not counted here
    expect(isrChanges.length).toBe(4);
  });

  test("a leader records its epoch at the log end before writing, and readers see only the HW", async () => {
    const { r, log } = await replica();
    expect(r.isLeader).toBe(true);
    expect(log.latestEpoch()).toBe(3);
    log.append(batch({ count: 4 }), { leaderEpoch: 3 });
    r.afterAppend();
    expect(log.logEndOffset()).toBe(4);
    expect(r.highWatermark()).toBe(0); // the followers have not synced anything yet
    r.onFollowerFetch(2, 4, 4);
    expect(r.highWatermark()).toBe(0); // 3 still holds it back
    r.onFollowerFetch(3, 4, 2);
    expect(r.highWatermark()).toBe(2); // 3 synced only 2
    r.onFollowerFetch(3, 4, 4);
    expect(r.highWatermark()).toBe(4);
  });

  test("acks=all waits for the ISR, then answers; a single replica answers at once", async () => {
    const { r, log } = await replica();
    log.append(batch({ count: 2 }), { leaderEpoch: 3 });
    r.afterAppend();
    let done = false;
    const w = r.waitCommitted(1).then(() => (done = true));
    r.onFollowerFetch(2, 2, 2);
    await settle();
    expect(done).toBe(false);
    r.onFollowerFetch(3, 2, 2);
    await w;
    expect(done).toBe(true);
    const single = await replica({ replicas: [1], isr: [1] });
    single.log.append(batch(), { leaderEpoch: 3 });
    single.r.afterAppend();
    expect(single.r.highWatermark()).toBe(1);
  });

  test("a single copy that gains a replica keeps its watermark: the new one must copy it all", async () => {
    // Issue 15's move of a one-replica partition to a new broker: [1] -> [1,2] -> [2].
    const { r, log, proposals } = await replica({ replicas: [1], isr: [1] });
    r.update({ leader: 1, leaderEpoch: 3, partitionEpoch: 5, replicas: [1], isr: [1] }, 1);
    for (let i = 0; i < 3; i++) {
      log.append(batch({ count: 100 }), { leaderEpoch: 3 });
      r.afterAppend();
      await r.waitCommitted(log.logEndOffset() - 1); // answered at once: one copy
    }
    expect(r.highWatermark()).toBe(300);
    // Nothing synced yet (a --flush interval): the watermark must not fall back to the disk's.
    log.durableEndOffset = () => 0;
    log.waitDurable = () => new Promise<void>(() => {});
    // The move starts: broker 2 is added outside the ISR (same leader epoch).
    r.update({ leader: 1, leaderEpoch: 3, partitionEpoch: 6, replicas: [1, 2], isr: [1] }, 1);
    expect(r.highWatermark()).toBe(300); // what readers saw and acks=all answered stays
    r.onFollowerFetch(2, 40, 40);
    expect(proposals).toEqual([]); // 40 of 300 copied: not caught up
    r.onFollowerFetch(2, 300, 300);
    expect(proposals.at(-1)?.isr).toEqual([1, 2]);
  });

  test("a new leader epoch naming another broker fails waiting acks=all writes at once", async () => {
    const { r, log } = await replica();
    log.append(batch(), { leaderEpoch: 3 });
    r.afterAppend();
    const w = r.waitCommitted(0);
    r.update({ leader: 2, leaderEpoch: 4, partitionEpoch: 6, replicas: [1, 2, 3], isr: [2, 3] }, 2);
    expect(r.isLeader).toBe(false);
    await expect(w).rejects.toMatchObject({ errorCode: 6 });
    await expect(r.waitCommitted(0)).rejects.toMatchObject({ errorCode: 6 });
  });

  test("an ISR shrink below min.insync.replicas answers NOT_ENOUGH_REPLICAS_AFTER_APPEND", async () => {
    const { r, log } = await replica();
    log.append(batch(), { leaderEpoch: 3 });
    r.afterAppend();
    const w = r.waitCommitted(0);
    r.onFollowerFetch(2, 0, 0);
    // The controller committed {1} (2 and 3 lagged): same leader epoch, next partition epoch.
    r.update({ leader: 1, leaderEpoch: 3, partitionEpoch: 6, replicas: [1, 2, 3], isr: [1] }, 2);
    await expect(w).rejects.toMatchObject({ errorCode: 20 });
  });

  test("a pending shrink does not lower the bar; the committed one does", async () => {
    const { r, log, proposals, now } = await replica();
    log.append(batch({ count: 3 }), { leaderEpoch: 3 });
    r.afterAppend();
    now.t = 19_000;
    r.onFollowerFetch(2, 3, 3); // caught up just now
    now.t = 20_000; // 3 never fetched: lagging past replica.lag.time.max.ms
    r.tick();
    expect(proposals.at(-1)?.isr).toEqual([1, 2]);
    expect(r.highWatermark()).toBe(0); // 3 still counts until committed
    r.update({ leader: 1, leaderEpoch: 3, partitionEpoch: 6, replicas: [1, 2, 3], isr: [1, 2] }, 2);
    expect(r.highWatermark()).toBe(3);
  });

  test("leadership named in the metadata is withheld while fenced, and dropped when fenced", async () => {
    const { r } = await replica({ gated: true, partitionEpoch: -1 });
    expect(r.isLeader).toBe(false);
    r.update(
      { leader: 1, leaderEpoch: 4, partitionEpoch: 7, replicas: [1, 2, 3], isr: [1, 2, 3] },
      2,
    );
    expect(r.isLeader).toBe(true);
    r.update({
      leader: 1,
      leaderEpoch: 4,
      partitionEpoch: -1,
      replicas: [1, 2, 3],
      isr: [1, 2, 3],
      gated: true,
    }, 2);
    expect(r.isLeader).toBe(false);
    // Unfenced again with the same assignment: it leads again.
    r.update(
      { leader: 1, leaderEpoch: 4, partitionEpoch: 7, replicas: [1, 2, 3], isr: [1, 2, 3] },
      2,
    );
    expect(r.isLeader).toBe(true);
  });

  test("a follower's watermark is the leader's, capped by its own log", async () => {
    const { r, log } = await replica({ leader: 2, isr: [2, 3] });
    expect(r.isLeader).toBe(false);
    r.setFollowerHw(10);
    expect(r.highWatermark()).toBe(0);
    const b = batch({ count: 3 });
    new DataView(b.buffer).setInt32(12, 3); // the leader's epoch in the batch header
    log.append(b, { leaderEpoch: 0, origin: "replication" });
    r.setFollowerHw(10);
    expect(r.highWatermark()).toBe(3);
  });
});
