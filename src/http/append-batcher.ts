// Coalesces the appends of concurrent produce requests: the records that requests bring for one
// partition (with one acks level) within one event-loop turn become one record batch and one
// append, so many small POSTs cost one CRC, one validation pass and one write instead of one
// each. Each request still gets its own offsets (its records are contiguous, in arrival order).
// Should the combined batch be refused (over a small max.message.bytes, a timestamp out of the
// topic's bounds), every request is appended on its own, so each gets its own answer.
import type { Acks } from "../core/partition-manager.ts";
import { encodeRecordBatch, type RecordInput } from "../protocol/record-batch.ts";
import { LogError, StorageError } from "../storage/index.ts";

/** Above this many bytes of keys and values a group is appended at once (below the 1 MiB default max.message.bytes). */
const MAX_GROUP_BYTES = 256 * 1024;
/** Bounds one combined batch, whatever the record sizes. */
const MAX_GROUP_RECORDS = 10_000;

export type AppendFn = (
  topic: string,
  partition: number,
  batch: Uint8Array,
  acks: Acks,
) => Promise<{ baseOffset: number }>;

interface Part {
  inputs: RecordInput[];
  resolve: (baseOffset: number) => void;
  reject: (e: unknown) => void;
}

interface Group {
  topic: string;
  partition: number;
  acks: Acks;
  parts: Part[];
  records: number;
  bytes: number;
}

/** An upper bound of one record's encoded size (varint lengths and deltas included). */
function recordSize(r: RecordInput): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0) + 32;
  for (const h of r.headers ?? []) n += h.key.length * 3 + (h.value?.length ?? 0) + 10;
  return n;
}

function sizeOf(inputs: RecordInput[]): number {
  let n = 0;
  for (const r of inputs) n += recordSize(r);
  return n;
}

/** Room for a batch's own header (61 bytes) and slack, under max.message.bytes. */
const BATCH_OVERHEAD = 128;

export class AppendBatcher {
  readonly #groups = new Map<string, Group>();
  #scheduled = false;

  constructor(
    readonly append: AppendFn,
    readonly now: () => number = Date.now,
    /** The partition's max.message.bytes: a request larger than one batch may hold is split. */
    readonly maxBatchBytes: (topic: string, partition: number) => number = () => 1024 * 1024,
  ) {}

  /** Append `inputs` to one partition; resolves with the offset of the first. */
  add(topic: string, partition: number, inputs: RecordInput[], acks: Acks): Promise<number> {
    const bytes = sizeOf(inputs);
    // Large requests gain nothing from company.
    if (bytes >= MAX_GROUP_BYTES || inputs.length >= MAX_GROUP_RECORDS) {
      return this.#single(topic, partition, inputs, acks);
    }
    const key = `${topic}\u0000${partition}\u0000${acks}`;
    let g = this.#groups.get(key);
    if (
      g !== undefined && (g.bytes + bytes > MAX_GROUP_BYTES ||
        g.records + inputs.length > MAX_GROUP_RECORDS)
    ) {
      this.#groups.delete(key);
      this.#flush(g);
      g = undefined;
    }
    if (g === undefined) {
      g = { topic, partition, acks, parts: [], records: 0, bytes: 0 };
      this.#groups.set(key, g);
    }
    const { promise, resolve, reject } = Promise.withResolvers<number>();
    g.parts.push({ inputs, resolve, reject });
    g.records += inputs.length;
    g.bytes += bytes;
    if (!this.#scheduled) {
      this.#scheduled = true;
      // After the I/O of this loop turn: every request read in it has joined its group.
      setImmediate(() => this.#flushAll());
    }
    return promise;
  }

  async #single(topic: string, partition: number, inputs: RecordInput[], acks: Acks) {
    const ts = this.now();
    const limit = this.maxBatchBytes(topic, partition) - BATCH_OVERHEAD;
    let bytes: Uint8Array;
    if (sizeOf(inputs) <= limit) bytes = encodeRecordBatch({ records: inputs, baseTimestamp: ts });
    else {
      // Several batches, each within max.message.bytes, appended together (all or nothing, with
      // contiguous offsets). A single record over the limit still gets the log's refusal.
      const batches: Uint8Array[] = [];
      let from = 0;
      let size = 0;
      for (let i = 0; i < inputs.length; i++) {
        const n = recordSize(inputs[i]);
        if (i > from && size + n > limit) {
          batches.push(encodeRecordBatch({ records: inputs.slice(from, i), baseTimestamp: ts }));
          from = i;
          size = 0;
        }
        size += n;
      }
      batches.push(encodeRecordBatch({ records: inputs.slice(from), baseTimestamp: ts }));
      bytes = new Uint8Array(batches.reduce((n, b) => n + b.length, 0));
      let at = 0;
      for (const b of batches) {
        bytes.set(b, at);
        at += b.length;
      }
    }
    return (await this.append(topic, partition, bytes, acks)).baseOffset;
  }

  #flushAll(): void {
    this.#scheduled = false;
    const groups = [...this.#groups.values()];
    this.#groups.clear();
    for (const g of groups) this.#flush(g);
  }

  #flush(g: Group): void {
    const one = (p: Part) =>
      this.#single(g.topic, g.partition, p.inputs, g.acks).then(p.resolve, p.reject);
    if (g.parts.length === 1) {
      void one(g.parts[0]);
      return;
    }
    const all: RecordInput[] = [];
    for (const p of g.parts) for (const r of p.inputs) all.push(r);
    this.#single(g.topic, g.partition, all, g.acks).then(
      (base) => {
        let at = base;
        for (const p of g.parts) {
          p.resolve(at);
          at += p.inputs.length;
        }
      },
      async (e) => {
        // A record-level refusal happens before anything is written: append each request on its
        // own, in the same order, so each gets its own outcome. Any other failure (I/O, a sync,
        // an unknown partition) is every request's.
        if (!(e instanceof LogError) || e instanceof StorageError) {
          for (const p of g.parts) p.reject(e);
          return;
        }
        for (const p of g.parts) await one(p);
      },
    );
  }
}
