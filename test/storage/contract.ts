// One contract suite for every LogStore implementation (segment files and in-memory).
import { describe, expect, test } from "bun:test";
import {
  ATTR_TIMESTAMP_TYPE,
  decodeRecordBatches,
  readBatchHeader,
} from "../../src/protocol/record-batch.ts";
import {
  CorruptRecordError,
  InvalidProducerEpochError,
  InvalidRecordError,
  InvalidTimestampError,
  type LogConfig,
  type LogStore,
  MessageTooLargeError,
  OffsetOutOfRangeError,
  OutOfOrderSequenceError,
  TopicIdMismatchError,
} from "../../src/storage/types.ts";
import { batch, concat, FakeClock } from "./helpers.ts";

export interface StoreFactory {
  name: string;
  /** A fresh, empty store using `clock`. */
  make(clock: FakeClock): Promise<LogStore>;
  /** Reopen the same data (after closeAll) — a new store over the same directory/state. */
  reopen(clock: FakeClock): Promise<LogStore>;
}

const T0 = 1_700_000_000_000;

export function logStoreContract(f: StoreFactory): void {
  describe(`LogStore contract: ${f.name}`, () => {
    async function setup(config: Partial<LogConfig> = {}) {
      const clock = new FakeClock(T0 + 1000);
      const store = await f.make(clock);
      const log = await store.openLog({ topic: "t", partition: 0, topicId: "id-1", config });
      return { clock, store, log };
    }

    test("appends assign offsets; reads return whole batches and respect bounds", async () => {
      const { store, log } = await setup();
      expect(log.logEndOffset()).toBe(0);
      const a = log.append(batch({ count: 3, ts: T0 }), { leaderEpoch: 0 });
      expect([a.baseOffset, a.lastOffset, a.recordCount, a.duplicate]).toEqual([0, 2, 3, false]);
      const b = log.append(batch({ count: 2, ts: T0 }), { leaderEpoch: 0 });
      expect(b.baseOffset).toBe(3);
      expect(log.logEndOffset()).toBe(5);
      const r = log.read(4, 1 << 20);
      const decoded = decodeRecordBatches(r.records);
      expect(decoded.length).toBe(1);
      expect(decoded[0].header.baseOffset).toBe(3);
      expect(decoded[0].records!.map((x) => x.offset)).toEqual([3, 4]);
      // maxBytes smaller than a batch still returns one whole batch
      const small = log.read(0, 1);
      expect(decodeRecordBatches(small.records).length).toBe(1);
      expect(small.nextOffset).toBe(3);
      // upper offset (high watermark) excludes batches past it
      expect(log.read(0, 1 << 20, 3).nextOffset).toBe(3);
      expect(log.read(3, 1 << 20, 3).records.length).toBe(0);
      expect(log.read(5, 100).records.length).toBe(0);
      expect(() => log.read(6, 100)).toThrow(OffsetOutOfRangeError);
      expect(() => log.read(-1, 100)).toThrow(OffsetOutOfRangeError);
      await store.closeAll();
    });

    test("an in-place append stores what a copying append stores", async () => {
      const { store, log } = await setup();
      const src = batch({ count: 4, ts: T0, valueSize: 50 });
      const copied = src.slice();
      log.append(copied, { leaderEpoch: 2 });
      expect(Buffer.compare(copied, src)).toBe(0); // a copying append leaves the bytes alone
      const given = src.slice();
      const r = log.append(given, { leaderEpoch: 2, inPlace: true });
      expect(r.baseOffset).toBe(4);
      const back = decodeRecordBatches(log.read(0, 1 << 20).records);
      expect(back.map((b) => b.header.baseOffset)).toEqual([0, 4]);
      expect(back.map((b) => b.header.partitionLeaderEpoch)).toEqual([2, 2]);
      expect(back[1].records!.map((x) => [x.offset, x.value])).toEqual(
        back[0].records!.map((x) => [x.offset + 4, x.value]),
      );
      await store.closeAll();
    });

    test("readInto returns read's batches as a view of the caller's buffer", async () => {
      const { store, log } = await setup({ segmentBytes: 900 });
      for (let i = 0; i < 24; i++) {
        log.append(batch({ count: 1 + (i % 3), valueSize: 20 + ((i * 37) % 150) }), {
          leaderEpoch: 0,
        });
      }
      const end = log.logEndOffset();
      for (const size of [1, 100, 300, 1000, 1 << 16]) {
        const into = new Uint8Array(size).fill(0xee);
        for (let off = 0; off <= end; off++) {
          for (const upper of [undefined, Math.max(0, end - 5)]) {
            if (upper !== undefined && off > end) continue;
            const want = log.read(off, Math.min(400, size), upper);
            const got = log.readInto(off, 400, into, upper);
            expect([got.firstOffset, got.nextOffset, got.logEndOffset]).toEqual([
              want.firstOffset,
              want.nextOffset,
              want.logEndOffset,
            ]);
            expect(Buffer.from(got.records).equals(Buffer.from(want.records))).toBe(true);
            // A view of `into` whenever the batches fit; a new buffer only for a bigger first one.
            if (got.records.length === 0) continue;
            const fits = got.records.length <= size;
            expect(got.records.buffer === into.buffer).toBe(fits);
            if (fits) expect(got.records.byteOffset).toBe(into.byteOffset);
          }
        }
      }
      // The store keeps no reference to `into`: scribbling over it changes no later read.
      const into = new Uint8Array(1 << 16);
      const first = log.readInto(0, 1 << 16, into);
      const copy = first.records.slice();
      into.fill(0);
      expect(Buffer.from(log.read(0, 1 << 16).records).equals(Buffer.from(copy))).toBe(true);
      expect(() => log.readInto(end + 1, 100, into)).toThrow(OffsetOutOfRangeError);
      await store.closeAll();
    });

    test("stored bytes keep a valid CRC and carry offset and leader epoch", async () => {
      const { store, log } = await setup();
      log.append(batch({ count: 2 }), { leaderEpoch: 0 });
      log.append(batch({ count: 1 }), { leaderEpoch: 7 });
      const r = log.read(0, 1 << 20);
      const batches = decodeRecordBatches(r.records);
      expect(batches.map((x) => x.header.partitionLeaderEpoch)).toEqual([0, 7]);
      expect(log.latestEpoch()).toBe(7);
      expect(log.endOffsetForEpoch(0)).toEqual({ leaderEpoch: 0, endOffset: 2 });
      expect(log.endOffsetForEpoch(7)).toEqual({ leaderEpoch: 7, endOffset: 3 });
      expect(log.endOffsetForEpoch(3)).toEqual({ leaderEpoch: 0, endOffset: 2 });
      expect(log.endOffsetForEpoch(9)).toEqual({ leaderEpoch: -1, endOffset: -1 });
      expect(() => log.append(batch(), { leaderEpoch: 3 })).toThrow(InvalidRecordError);
      await store.closeAll();
    });

    test("validation errors", async () => {
      const { store, log } = await setup({ maxMessageBytes: 2000 });
      const bad = batch({ count: 2 });
      bad[bad.length - 1] ^= 0xff;
      expect(() => log.append(bad, { leaderEpoch: 0 })).toThrow(CorruptRecordError);
      expect(() => log.append(batch({ valueSize: 3000 }), { leaderEpoch: 0 })).toThrow(
        MessageTooLargeError,
      );
      const magic = batch();
      magic[16] = 1;
      expect(() => log.append(magic, { leaderEpoch: 0 })).toThrow(InvalidRecordError);
      expect(() => log.append(batch().subarray(0, 40), { leaderEpoch: 0 })).toThrow(
        CorruptRecordError,
      );
      expect(() => log.append(new Uint8Array(0), { leaderEpoch: 0 })).toThrow(InvalidRecordError);
      expect(log.logEndOffset()).toBe(0);
      // several batches in one buffer are accepted
      const r = log.append(concat(batch({ count: 2 }), batch({ count: 3 })), { leaderEpoch: 0 });
      expect([r.baseOffset, r.lastOffset]).toEqual([0, 4]);
      expect(decodeRecordBatches(log.read(0, 1 << 20).records).length).toBe(2);
      await store.closeAll();
    });

    test("timestamps: true maxTimestamp, range checks, LogAppendTime, lookups", async () => {
      const { clock, store, log } = await setup({ messageTimestampBeforeMaxMs: 3600_000 });
      // kafkajs-style: header claims an old maxTimestamp while a record is newer.
      log.append(
        batch({ count: 3, timestamps: [T0 - 10, T0 + 500, T0 - 5], maxTimestamp: T0 - 10 }),
        { leaderEpoch: 0 },
      );
      const h = readBatchHeader(log.read(0, 1 << 20).records);
      expect(h.maxTimestamp).toBe(T0 + 500);
      expect(log.offsetForTimestamp(T0 + 100)).toEqual({ offset: 1, timestamp: T0 + 500 });
      expect(log.offsetForTimestamp(T0 - 10)).toEqual({ offset: 0, timestamp: T0 - 10 });
      expect(log.offsetForTimestamp(T0 + 501)).toBeNull();
      expect(() => log.append(batch({ ts: clock.now() - 7200_000 }), { leaderEpoch: 0 })).toThrow(
        InvalidTimestampError,
      );
      log.updateConfig({ messageTimestampType: "LogAppendTime" });
      const r = log.append(batch({ ts: 5 }), { leaderEpoch: 0 });
      expect(r.logAppendTime).toBe(clock.now());
      const stored = decodeRecordBatches(log.read(3, 1 << 20).records)[0];
      expect(stored.header.attributes & ATTR_TIMESTAMP_TYPE).toBe(ATTR_TIMESTAMP_TYPE);
      expect(stored.header.maxTimestamp).toBe(clock.now());
      expect(stored.records![0].timestamp).toBe(clock.now());
      await store.closeAll();
    });

    test("idempotent producers: duplicate, epochs, gaps, unknown pid", async () => {
      const { store, log } = await setup();
      const p = { producerId: 42, producerEpoch: 0 };
      const first = batch({ ...p, count: 2, baseSequence: 0 });
      expect(log.append(first, { leaderEpoch: 0 }).baseOffset).toBe(0);
      log.append(batch({ count: 1 }), { leaderEpoch: 0 });
      const dup = log.append(first, { leaderEpoch: 0 });
      expect([dup.duplicate, dup.baseOffset, dup.lastOffset]).toEqual([true, 0, 1]);
      expect(log.logEndOffset()).toBe(3);
      expect(() => log.append(batch({ ...p, baseSequence: 5 }), { leaderEpoch: 0 })).toThrow(
        OutOfOrderSequenceError,
      );
      expect(log.append(batch({ ...p, baseSequence: 2 }), { leaderEpoch: 0 }).baseOffset).toBe(3);
      expect(() =>
        log.append(batch({ producerId: 42, producerEpoch: 1, baseSequence: 3 }), { leaderEpoch: 0 })
      )
        .toThrow(OutOfOrderSequenceError);
      log.append(batch({ producerId: 42, producerEpoch: 1, baseSequence: 0 }), { leaderEpoch: 0 });
      expect(() => log.append(batch({ ...p, baseSequence: 3 }), { leaderEpoch: 0 })).toThrow(
        InvalidProducerEpochError,
      );
      // no state for this pid: any sequence is accepted
      expect(
        log.append(batch({ producerId: 77, producerEpoch: 0, baseSequence: 1000 }), {
          leaderEpoch: 0,
        }).duplicate,
      )
        .toBe(false);
      const st = log.producerState(42)!;
      expect(st.producerEpoch).toBe(1);
      expect(st.batches.length).toBe(1);
      const noSeq = batch({ producerId: 9, producerEpoch: 0 });
      // baseSequence -1 with a pid is invalid
      const view = new DataView(noSeq.buffer);
      view.setInt32(53, -1);
      const crcFixed = (await import("../../src/protocol/record-batch.ts")).rewriteBatchCrc;
      crcFixed(noSeq, 0, noSeq.length);
      expect(() => log.append(noSeq, { leaderEpoch: 0 })).toThrow(InvalidRecordError);
      await store.closeAll();
    });

    test("retention by bytes and time, deleteRecords, active segment kept", async () => {
      const { clock, store, log } = await setup({
        segmentBytes: 300,
        retentionMs: -1,
        retentionBytes: -1,
      });
      for (let i = 0; i < 12; i++) {
        log.append(batch({ count: 1, valueSize: 100, ts: T0 + i }), { leaderEpoch: 0 });
      }
      expect(log.logEndOffset()).toBe(12);
      const size0 = log.sizeBytes();
      log.updateConfig({ retentionBytes: Math.floor(size0 / 2) });
      const r = await log.enforceRetention();
      expect(r.deletedSegments).toBeGreaterThan(0);
      expect(log.logStartOffset()).toBeGreaterThan(0);
      expect(log.sizeBytes()).toBeLessThanOrEqual(size0 / 2 + 300);
      expect(() => log.read(0, 100)).toThrow(OffsetOutOfRangeError);
      expect(log.read(log.logStartOffset(), 100).firstOffset).toBe(log.logStartOffset());
      log.updateConfig({ retentionBytes: -1, retentionMs: 1000 });
      clock.t = T0 + 100_000;
      await log.enforceRetention();
      // everything is expired, but the active segment stays
      expect(log.logEndOffset()).toBe(12);
      expect(log.sizeBytes()).toBeGreaterThan(0);
      const start = log.logStartOffset();
      expect(start).toBeLessThan(12);
      expect(await log.deleteRecords(11)).toBe(11);
      expect(log.logStartOffset()).toBe(11);
      expect(log.read(11, 100).firstOffset).toBe(11);
      await expect(log.deleteRecords(13)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
      await store.closeAll();
    });

    test("roll, then deleteRecords up to the new segment, keeps only what follows", async () => {
      const { store, log } = await setup();
      log.roll(); // an empty log: nothing to roll
      for (let i = 0; i < 5; i++) {
        log.append(batch({ count: 2, ts: T0, tag: i }), { leaderEpoch: 0 });
      }
      const before = log.sizeBytes();
      log.roll();
      log.roll(); // the new active segment is empty: a no-op
      const at = log.logEndOffset();
      log.append(batch({ count: 3, ts: T0, tag: 9 }), { leaderEpoch: 0 });
      // Reads reach both sides of the roll.
      expect(decodeRecordBatches(log.read(0, 1 << 20).records)[0].header.baseOffset).toBe(0);
      expect(decodeRecordBatches(log.read(at, 1 << 20).records)[0].header.baseOffset).toBe(at);
      expect(await log.deleteRecords(at)).toBe(at);
      expect(log.logStartOffset()).toBe(at);
      expect(log.sizeBytes()).toBeLessThan(before);
      expect(decodeRecordBatches(log.read(at, 1 << 20).records)[0].records!.length).toBe(3);
      await store.closeAll();
    });

    test("truncateTo drops the tail", async () => {
      const { store, log } = await setup({ segmentBytes: 250 });
      for (let i = 0; i < 10; i++) {
        log.append(batch({ count: 2, valueSize: 40 }), { leaderEpoch: i < 5 ? 1 : 2 });
      }
      await log.truncateTo(9);
      expect(log.logEndOffset()).toBe(8); // cut at the batch boundary below 9
      expect(log.endOffsetForEpoch(1)).toEqual({ leaderEpoch: 1, endOffset: 8 });
      expect(log.append(batch(), { leaderEpoch: 3 }).baseOffset).toBe(8);
      expect(decodeRecordBatches(log.read(0, 1 << 20).records).length).toBeGreaterThan(0);
      await store.closeAll();
    });

    test("truncation keeps the producer window from before the cut", async () => {
      // A follower cut back to its new leader: the batches it kept still tell a retried batch
      // from a new one, even when every batch of the cached window was above the cut.
      const { store, log } = await setup({ segmentBytes: 250 });
      const p = { producerId: 42, producerEpoch: 0 };
      for (let i = 0; i < 10; i++) {
        log.append(batch({ ...p, baseSequence: i, valueSize: 40 }), { leaderEpoch: 1 });
      }
      await log.truncateTo(5);
      expect(log.logEndOffset()).toBe(5);
      expect(log.producerState(42)!.batches.map((b) => b.lastSeq)).toContain(4);
      const retry = log.append(batch({ ...p, baseSequence: 4, valueSize: 40 }), { leaderEpoch: 2 });
      expect([retry.duplicate, retry.baseOffset]).toEqual([true, 4]);
      expect(() => log.append(batch({ ...p, baseSequence: 7 }), { leaderEpoch: 2 })).toThrow(
        OutOfOrderSequenceError,
      );
      expect(log.append(batch({ ...p, baseSequence: 5 }), { leaderEpoch: 2 }).baseOffset).toBe(5);
      await store.closeAll();
    });

    test("truncateTo at the log end drops an epoch recorded there with no data", async () => {
      const { store, log } = await setup();
      log.append(batch({ count: 2 }), { leaderEpoch: 1 });
      log.assignEpoch(2); // became leader, wrote nothing
      expect(log.latestEpoch()).toBe(2);
      await log.truncateTo(2);
      expect(log.latestEpoch()).toBe(1);
      expect(log.logEndOffset()).toBe(2);
      await store.closeAll();
    });

    test("replication appends keep offsets and epochs", async () => {
      const { store, log } = await setup();
      const b = batch({ count: 2 });
      const v = new DataView(b.buffer);
      v.setBigInt64(0, 0n);
      v.setInt32(12, 4);
      log.append(b, { leaderEpoch: 0, origin: "replication" });
      expect(log.latestEpoch()).toBe(4);
      const wrong = batch();
      new DataView(wrong.buffer).setBigInt64(0, 7n);
      expect(() => log.append(wrong, { leaderEpoch: 0, origin: "replication" })).toThrow(
        InvalidRecordError,
      );
      await store.closeAll();
    });

    test("resetTo: a follower below its leader's log start starts over there, and reopens so", async () => {
      const clock = new FakeClock(T0);
      const store = await f.make(clock);
      const log = await store.openLog({
        topic: "r",
        partition: 0,
        topicId: "R",
        config: { segmentBytes: 250 },
      });
      for (let i = 0; i < 4; i++) {
        log.append(batch({ count: 2, valueSize: 40 }), { leaderEpoch: 1 });
      }
      await expect(log.resetTo(3)).rejects.toBeInstanceOf(OffsetOutOfRangeError);
      await log.resetTo(100);
      expect(log.logStartOffset()).toBe(100);
      expect(log.logEndOffset()).toBe(100);
      expect(log.latestEpoch()).toBe(-1);
      const b = batch({ count: 3 });
      const v = new DataView(b.buffer);
      v.setBigInt64(0, 100n);
      v.setInt32(12, 5); // partition leader epoch
      log.append(b, { leaderEpoch: 0, origin: "replication" });
      expect(log.logEndOffset()).toBe(103);
      expect(log.latestEpoch()).toBe(5);
      await log.flush();
      await store.closeAll();
      const s2 = await f.reopen(clock);
      const l2 = await s2.openLog({ topic: "r", partition: 0, topicId: "R" });
      expect(l2.logStartOffset()).toBe(100);
      expect(l2.logEndOffset()).toBe(103);
      expect(decodeRecordBatches(l2.read(100, 1 << 20).records)[0].header.baseOffset).toBe(100);
      await s2.closeAll();
    });

    test("reopen keeps data; topic id mismatch refused; delete and list", async () => {
      const clock = new FakeClock(T0);
      const store = await f.make(clock);
      const log = await store.openLog({ topic: "t", partition: 1, topicId: "A" });
      log.append(batch({ count: 4, producerId: 5, producerEpoch: 0 }), { leaderEpoch: 2 });
      await store.closeAll();
      const s2 = await f.reopen(clock);
      expect(s2.listLogs().map((l) => [l.topic, l.partition, l.topicId])).toContainEqual([
        "t",
        1,
        "A",
      ]);
      await expect(s2.openLog({ topic: "t", partition: 1, topicId: "B" })).rejects.toBeInstanceOf(
        TopicIdMismatchError,
      );
      const l2 = await s2.openLog({ topic: "t", partition: 1, topicId: "A" });
      expect(l2.logEndOffset()).toBe(4);
      expect(l2.latestEpoch()).toBe(2);
      expect(l2.producerState(5)?.batches.length).toBe(1);
      const dup = l2.append(batch({ count: 4, producerId: 5, producerEpoch: 0 }), {
        leaderEpoch: 2,
      });
      expect(dup.duplicate).toBe(true);
      await s2.deleteLog("t", 1);
      expect(s2.listLogs().length).toBe(0);
      const l3 = await s2.openLog({ topic: "t", partition: 1, topicId: "B" });
      expect(l3.logEndOffset()).toBe(0);
      await s2.closeAll();
    });
  });
}
