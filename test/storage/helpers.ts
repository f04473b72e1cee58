// Shared helpers for storage tests: batch builders, a fake clock, a store on the simulated disk.
import { encodeRecordBatch, type RecordInput } from "../../src/protocol/record-batch.ts";
import { CrashFileIO } from "../../src/storage/crash-fs.ts";
import { SegmentLogStore, type SegmentStoreOptions } from "../../src/storage/log-store.ts";
import type { Clock } from "../../src/storage/types.ts";

export class FakeClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface BatchOpts {
  count?: number;
  /** Timestamp of each record (defaults to `ts`). */
  ts?: number;
  timestamps?: number[];
  valueSize?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  /** Header maxTimestamp override (kafkajs-style wrong value). */
  maxTimestamp?: number;
  tag?: number;
}

export function batch(o: BatchOpts = {}): Uint8Array {
  const count = o.count ?? 1;
  const ts = o.ts ?? 1_700_000_000_000;
  const records: RecordInput[] = [];
  for (let i = 0; i < count; i++) {
    const v = new Uint8Array(o.valueSize ?? 16);
    v.fill(((o.tag ?? 0) + i) & 0xff);
    records.push({
      key: new TextEncoder().encode(`k${i}`),
      value: v,
      timestamp: o.timestamps ? o.timestamps[i] : ts,
    });
  }
  return encodeRecordBatch({
    records,
    baseTimestamp: o.timestamps ? o.timestamps[0] : ts,
    maxTimestamp: o.maxTimestamp,
    producerId: o.producerId ?? -1,
    producerEpoch: o.producerEpoch ?? -1,
    baseSequence: o.producerId !== undefined ? (o.baseSequence ?? 0) : -1,
  });
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A segment store on a fresh simulated file system (no background checkpointer). */
export async function simulatedStore(
  opts: Partial<SegmentStoreOptions> = {},
): Promise<{ io: CrashFileIO; store: SegmentLogStore }> {
  const io = new CrashFileIO();
  io.mkdirp("/data");
  return { io, store: await storeOn(io, opts) };
}

/** A segment store on the simulated file system `io`: its first open, or again after a crash. */
export function storeOn(
  io: CrashFileIO,
  opts: Partial<SegmentStoreOptions> = {},
): Promise<SegmentLogStore> {
  return SegmentLogStore.open({
    dataDir: "/data",
    io,
    clock: new FakeClock(),
    checkpointIntervalMs: 0,
    ...opts,
  });
}
