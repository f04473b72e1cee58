// A replica far behind its leader (a reassignment's new replica copying a whole log, a follower
// back from a restart) catches up in large steps: the leader gives it what the response has left
// after every partition got its own share (up to 2 MiB in all), and the follower fetches on while
// its last bytes sync, waiting for the sync only once it has reached the leader's end (so what it
// reports as synced stays true), and asks for its next records before appending these. Both
// halves, with a real log on the leader and fakes for the cluster.
import { expect, spyOn, test } from "bun:test";
import { MemoryLogStore } from "../../src/storage/memory-store.ts";
import { Fetcher } from "../../src/replication/fetcher.ts";
import { bulkKey, bulkWait } from "../../src/replication/replica-manager.ts";
import { Replica } from "../../src/replication/replica.ts";
import type { ReplicaFetchResult } from "../../src/replication/follower.ts";
import { readI64 } from "../../src/protocol/record-batch.ts";
import { batch, concat } from "../storage/helpers.ts";
import { leaderManager, silentLog } from "./fakes.ts";

type Handler = (
  from: number,
  body: unknown,
  tail: Uint8Array,
) => Promise<{ body: { results: ReplicaFetchResult[] }; tail: Uint8Array[] }>;

async function leaderReplica(partition: number, batches: number, valueSize: number) {
  // Batches up to 2 MiB (a topic's max.message.bytes may be raised past the 1 MiB share).
  const log = await new MemoryLogStore().openLog({
    topic: "t",
    partition,
    topicId: "tid",
    config: { maxMessageBytes: 2 << 20 },
  });
  const r = new Replica(
    "t",
    partition,
    "tid",
    log,
    1,
    {
      leader: 1,
      leaderEpoch: 3,
      partitionEpoch: 5,
      replicas: [1, 2],
      isr: [1, 2],
    },
    1,
    {
      onHighWatermark: () => {},
      propose: () => {},
      lagTimeMaxMs: 10_000,
      now: () => 0,
      log: () => {},
      debug: () => {},
    },
  );
  for (let i = 0; i < batches; i++) {
    log.append(batch({ count: 4, valueSize }), { leaderEpoch: 3 });
    r.afterAppend();
  }
  return r;
}

function leaderOf(replicas: Replica[]) {
  const { m, handlers } = leaderManager({
    meta: { isUnfenced: () => true },
    partitions: () => replicas,
    has: (_t: string, p: number) => replicas.some((r) => r.partition === p),
    partition: (_t: string, p: number) => replicas.find((r) => r.partition === p)!,
  });
  return { m, serve: handlers.get("replicaFetch")! as Handler };
}

const ask = (partition: number, fetchOffset: number) => ({
  topicId: "tid",
  topic: "t",
  partition,
  currentLeaderEpoch: 3,
  fetchOffset,
  lastFetchedEpoch: fetchOffset === 0 ? -1 : 3,
  durableEnd: fetchOffset,
  logStartOffset: 0,
});

/** Base offsets of the batches in `bytes`, in order. */
function baseOffsets(bytes: Uint8Array): number[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let p = 0; p < bytes.length; p += 12 + v.getInt32(p + 8)) out.push(readI64(v, p));
  return out;
}

test("leader: a follower far behind gets the rest of the response, after every partition's share", async () => {
  // Partition 0 is near its end (one small batch to copy); partition 1 holds 12 MiB (192
  // batches of 64 KiB) and its follower has none of it.
  const near = await leaderReplica(0, 2, 100);
  const far = await leaderReplica(1, 192, 16 * 1024);
  const { m, serve } = leaderOf([near, far]);
  try {
    const a = await serve(
      2,
      { maxWaitMs: 0, partitions: [ask(0, 4), ask(1, 0)] },
      new Uint8Array(),
    );
    const [r0, r1] = a.body.results;
    expect(r0.errorCode).toBe(0);
    expect(r0.bytes).toBeGreaterThan(0); // its share first
    const tail = concat(...a.tail);
    expect(tail.length).toBe(r0.bytes + r1.bytes);
    expect(baseOffsets(tail.subarray(0, r0.bytes))).toEqual([4]);
    // More than the 1 MiB per partition, within the 2 MiB a response with a bulk copy may
    // hold (the leader's event loop reads and checks all of it at once), whole batches from
    // offset 0 on without a gap (one record set, as the follower appends it).
    const offs = baseOffsets(tail.subarray(r0.bytes));
    expect(r1.bytes).toBeGreaterThan(1.5 * 2 ** 20);
    expect(r1.bytes + r0.bytes).toBeLessThanOrEqual(2 * 2 ** 20);
    expect(offs).toEqual(offs.map((_, i) => i * 4));
    // Alone, it still gets no more than that.
    const c = await serve(2, { maxWaitMs: 0, partitions: [ask(1, 64)] }, new Uint8Array());
    expect(c.body.results[0].bytes).toBeGreaterThan(1.5 * 2 ** 20);
    expect(c.body.results[0].bytes).toBeLessThanOrEqual(2 * 2 ** 20);
    // Near its end, the same follower gets what is left: the last 12 batches, whole.
    const b = await serve(2, { maxWaitMs: 0, partitions: [ask(1, 4 * 180)] }, new Uint8Array());
    const rest = concat(...b.tail);
    expect(b.body.results[0].bytes).toBe(rest.length);
    expect(baseOffsets(rest)).toEqual(Array.from({ length: 12 }, (_, i) => 4 * (180 + i)));
  } finally {
    m.stop();
  }
});

test("bulkWait: only a fetch that just goes on with bulk copies waits, for the turn left", () => {
  const turn = { at: 110, next: new Set([bulkKey("tid", 1, 720), bulkKey("tid", 2, 64)]) };
  const q = (partition: number, fetchOffset: number) => ({ ...ask(partition, fetchOffset) });
  expect(bulkWait(turn, [q(1, 720)], 100)).toBe(10);
  expect(bulkWait(turn, [q(1, 720), q(2, 64)], 104)).toBe(6);
  // Anything else in the fetch (a partition near its end, a copy elsewhere): no wait.
  expect(bulkWait(turn, [q(1, 720), q(0, 5)], 100)).toBe(0);
  expect(bulkWait(turn, [q(1, 700)], 100)).toBe(0);
  expect(bulkWait(turn, [], 100)).toBe(0);
  // The turn has come, or there is none.
  expect(bulkWait(turn, [q(1, 720)], 110)).toBe(0);
  expect(bulkWait(undefined, [q(1, 720)], 100)).toBe(0);
  // Never long, whatever the clock said.
  expect(bulkWait({ ...turn, at: 1e9 }, [q(1, 720)], 0)).toBe(100);
});

test("leader: a bulk copy's next fetch waits as long as its last answer held the loop", async () => {
  const far = await leaderReplica(1, 192, 16 * 1024);
  const near = await leaderReplica(0, 2, 100);
  // Batches of 1.2 MiB: an answer holds one, no more than its share fits beside it.
  const big = await leaderReplica(2, 8, 300 * 1024);
  const { m, serve } = leaderOf([near, far, big]);
  // The leader's clock moves only while it reads partitions 1 and 2 (10 ms a read), so what an
  // answer held is known exactly; and the wait is recorded, not slept.
  let now = 1000;
  const clock = spyOn(performance, "now").mockImplementation(() => now);
  for (const r of [far, big]) {
    const read = r.log.read.bind(r.log);
    r.log.read = (...a: Parameters<typeof read>) => {
      now += 10;
      return read(...a);
    };
  }
  const sleep = spyOn(Bun, "sleep").mockImplementation(() => Promise.resolve());
  const endOf = (tail: Uint8Array[]) => baseOffsets(tail[tail.length - 1]).at(-1)! + 4;
  try {
    const t0 = now;
    const a = await serve(2, { maxWaitMs: 0, partitions: [ask(1, 0)] }, new Uint8Array());
    const held = now - t0;
    expect(held).toBeGreaterThanOrEqual(20); // its share, then more
    expect(sleep).not.toHaveBeenCalled();
    // Going on from there at once: it waits as long as that answer held the loop.
    const b = await serve(
      2,
      { maxWaitMs: 0, partitions: [ask(1, endOf(a.tail))] },
      new Uint8Array(),
    );
    expect(sleep.mock.calls).toEqual([[held]]);
    // With a partition near its end in it, or from elsewhere, a fetch does not wait, even one
    // that goes on with the copy.
    await serve(
      2,
      { maxWaitMs: 0, partitions: [ask(0, 4), ask(1, endOf(b.tail))] },
      new Uint8Array(),
    );
    await serve(2, { maxWaitMs: 0, partitions: [ask(1, 0)] }, new Uint8Array());
    expect(sleep).toHaveBeenCalledTimes(1);
    // A copy whose every answer is one batch larger than its share waits too.
    const t1 = now;
    const c = await serve(2, { maxWaitMs: 0, partitions: [ask(2, 0)] }, new Uint8Array());
    const heldC = now - t1;
    expect(c.body.results[0].bytes).toBeGreaterThan(2 ** 20);
    expect(baseOffsets(concat(...c.tail))).toEqual([0]);
    await serve(2, { maxWaitMs: 0, partitions: [ask(2, endOf(c.tail))] }, new Uint8Array());
    expect(sleep.mock.calls[1]).toEqual([heldC]);
  } finally {
    sleep.mockRestore();
    clock.mockRestore();
    m.stop();
  }
});

test("leader: a throttled copy gets no more than its share", async () => {
  const far = await leaderReplica(0, 64, 16 * 1024);
  far.reassignment = {
    target: [1, 2],
    original: [1],
    originalLeader: 1,
    started: true,
    throttle: 0,
  };
  far.isr = [1];
  const { m, serve } = leaderOf([far]);
  try {
    m.defaultReassignThrottle = 100 * 2 ** 20; // a high rate: the bucket, not the rate, limits
    const a = await serve(2, { maxWaitMs: 0, partitions: [ask(0, 0)] }, new Uint8Array());
    expect(a.body.results[0].bytes).toBeLessThanOrEqual(2 ** 20);
  } finally {
    m.stop();
  }
});

/** A follower's replica of t-0 (leader 1, leader epoch 3) over a fake log. */
const followerReplica = (log: Record<string, unknown>) =>
  ({
    isLeader: false,
    leader: 1,
    leaderEpoch: 3,
    topicId: "tid",
    topic: "t",
    partition: 0,
    log,
  }) as unknown as Replica;

/**
 * A follower's replica whose fetches come from a fake leader `leaderEnd` offsets ahead: each
 * answer brings 10 offsets. Syncs finish only when the test says so.
 */
function followerSetup(leaderEnd: number) {
  let end = 0;
  let durable = 0;
  const syncs: (() => void)[] = [];
  const r = followerReplica({
    logEndOffset: () => end,
    latestEpoch: () => 3,
    durableEndOffset: () => durable,
    logStartOffset: () => 0,
    waitDurable: (o: number) =>
      new Promise<void>((resolve) =>
        syncs.push(() => {
          durable = Math.max(durable, o);
          resolve();
        })
      ),
  });
  const fetched: number[] = [];
  const link = {
    call(_method: string, body: { partitions: { fetchOffset: number }[] }) {
      fetched.push(body.partitions[0].fetchOffset);
      const n = Math.min(10, leaderEnd - end);
      const res = {
        topicId: "tid",
        partition: 0,
        errorCode: 0,
        highWatermark: leaderEnd,
        logStartOffset: 0,
        logEndOffset: leaderEnd,
        bytes: n,
      };
      const answer = { body: { results: [res] }, tail: new Uint8Array(n) };
      // Nothing new: the leader parks the fetch (an immediate answer would spin the loop).
      return n > 0 ? Promise.resolve(answer) : Bun.sleep(10).then(() => answer);
    },
    close() {},
  };
  const mgr = {
    stats: { fetchesSent: 0 },
    leaving: false,
    log: silentLog,
    applyFetched: (_r: Replica, res: ReplicaFetchResult) => {
      end += res.bytes;
      return Promise.resolve(res.bytes > 0);
    },
    copied: () => 0,
  };
  type Args = ConstructorParameters<typeof Fetcher>;
  const f = new Fetcher(1, link as unknown as Args[1], mgr as unknown as Args[2]);
  f.set([r]);
  return { f, fetched, syncs, end: () => end };
}

test("follower: fetches on while behind without waiting for syncs; waits once at the leader's end", async () => {
  const { f, fetched, syncs, end } = followerSetup(100);
  f.start();
  await Bun.sleep(30);
  // Ten answers of 10 offsets each went by without a sync finishing; the tenth reached the
  // leader's end, and the next fetch waits for its sync (it will report the synced end).
  expect(end()).toBe(100);
  expect(fetched).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  for (const s of syncs.splice(0)) s();
  await Bun.sleep(5);
  f.stop();
  expect(fetched.at(10)).toBe(100);
});

/**
 * A follower 8 MiB behind a fake leader that answers 2 MiB (32 batches of 4 records) a fetch,
 * each batch in epoch 3. `appendOk(n)` says whether the n-th append (from 0) goes through.
 */
function pipelineSetup(appendOk: (n: number) => boolean = () => true) {
  const leaderEnd = 512;
  let end = 0;
  let epoch = -1;
  const events: string[] = [];
  const r = followerReplica({
    logEndOffset: () => end,
    latestEpoch: () => epoch,
    durableEndOffset: () => end,
    logStartOffset: () => 0,
    waitDurable: () => Promise.resolve(),
  });
  const answer = (from: number) => {
    const parts: Uint8Array[] = [];
    for (let o = from; o < Math.min(from + 128, leaderEnd); o += 4) {
      const b = batch({ count: 4, valueSize: 16 * 1024 });
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      v.setUint32(4, o); // base offset (low half)
      v.setInt32(12, 3); // leader epoch
      parts.push(b);
    }
    const tail = concat(...parts);
    const res = {
      topicId: "tid",
      partition: 0,
      errorCode: 0,
      highWatermark: leaderEnd,
      logStartOffset: 0,
      logEndOffset: leaderEnd,
      bytes: tail.length,
    };
    return { body: { results: [res] }, tail };
  };
  const link = {
    call(
      _method: string,
      body: { partitions: { fetchOffset: number; lastFetchedEpoch: number }[] },
    ) {
      const q = body.partitions[0];
      events.push(`fetch ${q.fetchOffset}`);
      if (q.fetchOffset >= leaderEnd) return Bun.sleep(10).then(() => answer(leaderEnd));
      return Bun.sleep(1).then(() => answer(q.fetchOffset));
    },
    close() {},
  };
  let appends = 0;
  const mgr = {
    stats: { fetchesSent: 0 },
    leaving: false,
    log: silentLog,
    throttledCopy: () => false,
    applyFetched: (_r: Replica, res: ReplicaFetchResult, records: Uint8Array) => {
      if (res.bytes === 0) return Promise.resolve(false);
      const offs = baseOffsets(records);
      if (!appendOk(appends++) || offs[0] !== end) {
        events.push(`refused ${offs[0]}`);
        return Promise.reject(new Error("refused"));
      }
      end = offs[offs.length - 1] + 4;
      epoch = 3;
      events.push(`append ${offs[0]}-${end}`);
      return Promise.resolve(true);
    },
    copied: () => 0,
  };
  type Args = ConstructorParameters<typeof Fetcher>;
  const f = new Fetcher(1, link as unknown as Args[1], mgr as unknown as Args[2]);
  f.set([r]);
  /** Follow until the log reaches the leader's end (or `tries` looks), then stop. */
  const copy = async (tries: number) => {
    f.start();
    for (let i = 0; i < tries && end < leaderEnd; i++) await Bun.sleep(5);
    f.stop();
  };
  return { copy, events, end: () => end };
}

test("follower: a bulk copy asks for its next records before appending these, never past the end", async () => {
  const { copy, events, end } = pipelineSetup();
  await copy(100);
  expect(end()).toBe(512);
  // Each fetch while behind goes out before the answer before it is appended; the answer that
  // reaches the leader's end is appended before the next fetch (which then reports it synced).
  expect(events.slice(0, 9)).toEqual([
    "fetch 0",
    "fetch 128",
    "append 0-128",
    "fetch 256",
    "append 128-256",
    "fetch 384",
    "append 256-384",
    "append 384-512",
    "fetch 512",
  ]);
});

test("follower: an early fetch whose append did not go through is dropped, and asked again", async () => {
  // The second append is refused: the answer fetched early from 256 is not applied; the
  // follower asks again from where its log really ends.
  const { copy, events, end } = pipelineSetup((n) => n !== 1);
  await copy(200);
  expect(end()).toBe(512);
  expect(events.slice(0, 6)).toEqual([
    "fetch 0",
    "fetch 128",
    "append 0-128",
    "fetch 256",
    "refused 128",
    "fetch 128",
  ]);
  expect(events).not.toContain("refused 256"); // the dropped answer was never applied
});
