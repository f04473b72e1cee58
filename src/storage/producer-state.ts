// Idempotent producer state per partition (kafka-protocol.md 3.5). Sans-IO: the log feeds it
// batch headers on append and recovery, and persists snapshots.
import { crc32c } from "../protocol/crc32c.ts";
import {
  InvalidProducerEpochError,
  InvalidRecordError,
  OutOfOrderSequenceError,
  type ProducerBatchInfo,
  type ProducerEntry,
} from "./types.ts";

const INT32_MAX = 2147483647;
const CACHED_BATCHES = 5;

export function lastSequence(baseSequence: number, lastOffsetDelta: number): number {
  const s = baseSequence + lastOffsetDelta;
  return s > INT32_MAX ? s - INT32_MAX - 1 : s;
}

function nextSequence(seq: number): number {
  return seq === INT32_MAX ? 0 : seq + 1;
}

export interface ProducerBatchHeader {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  lastOffsetDelta: number;
}

export class ProducerStateManager {
  private entries = new Map<number, ProducerEntry>();

  get(pid: number): ProducerEntry | undefined {
    return this.entries.get(pid);
  }

  size(): number {
    return this.entries.size;
  }

  /**
   * Check a client batch. Returns the cached batch when it is a duplicate (do not append);
   * null when it may be appended. Throws InvalidProducerEpoch / OutOfOrderSequence.
   */
  check(h: ProducerBatchHeader): ProducerBatchInfo | null {
    if (h.producerId < 0) return null;
    const e = this.entries.get(h.producerId);
    if (!e) return null; // no state known: any sequence is accepted
    if (h.producerEpoch < e.producerEpoch) {
      throw new InvalidProducerEpochError(
        `producer ${h.producerId} epoch ${h.producerEpoch} < current ${e.producerEpoch}`,
      );
    }
    if (h.producerEpoch > e.producerEpoch) {
      if (h.baseSequence !== 0) {
        throw new OutOfOrderSequenceError(`bumped epoch needs sequence 0, got ${h.baseSequence}`);
      }
      return null;
    }
    const last = lastSequence(h.baseSequence, h.lastOffsetDelta);
    for (const b of e.batches) {
      if (b.firstSeq === h.baseSequence && b.lastSeq === last) return b;
    }
    const tail = e.batches[e.batches.length - 1];
    if (tail && h.baseSequence !== nextSequence(tail.lastSeq)) {
      throw new OutOfOrderSequenceError(
        `producer ${h.producerId}: sequence ${h.baseSequence}, expected ${
          nextSequence(tail.lastSeq)
        }`,
      );
    }
    return null;
  }

  /** Record an appended batch (client or replicated, or replayed on recovery). */
  update(h: ProducerBatchHeader, baseOffset: number, now: number): void {
    if (h.producerId < 0) return;
    let e = this.entries.get(h.producerId);
    if (!e || h.producerEpoch !== e.producerEpoch) {
      if (e && h.producerEpoch < e.producerEpoch) return; // stale replay; keep the newer epoch
      e = {
        producerId: h.producerId,
        producerEpoch: h.producerEpoch,
        batches: [],
        lastUpdateMs: now,
      };
      this.entries.set(h.producerId, e);
    }
    e.batches.push({
      firstSeq: h.baseSequence,
      lastSeq: lastSequence(h.baseSequence, h.lastOffsetDelta),
      baseOffset,
      lastOffset: baseOffset + h.lastOffsetDelta,
    });
    if (e.batches.length > CACHED_BATCHES) e.batches.shift();
    e.lastUpdateMs = Math.max(e.lastUpdateMs, now);
  }

  /** Drop producers idle longer than `expirationMs`. */
  expire(now: number, expirationMs: number): number {
    let n = 0;
    for (const [pid, e] of this.entries) {
      if (now - e.lastUpdateMs >= expirationMs) {
        this.entries.delete(pid);
        n++;
      }
    }
    return n;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Snapshot bytes: a CRC-32C line then JSON. */
  encode(): Uint8Array {
    const json = JSON.stringify([...this.entries.values()]);
    const body = new TextEncoder().encode(json);
    const head = new TextEncoder().encode(crc32c(body).toString(16).padStart(8, "0") + "\n");
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    return out;
  }

  /** Parse a snapshot; null when damaged. */
  static decode(bytes: Uint8Array): ProducerStateManager | null {
    if (bytes.length < 9 || bytes[8] !== 10) return null;
    const crc = parseInt(new TextDecoder().decode(bytes.subarray(0, 8)), 16);
    const body = bytes.subarray(9);
    if (!Number.isFinite(crc) || crc32c(body) !== crc) return null;
    try {
      const list = JSON.parse(new TextDecoder().decode(body)) as ProducerEntry[];
      if (!Array.isArray(list)) return null;
      const m = new ProducerStateManager();
      for (const e of list) {
        if (typeof e.producerId !== "number" || !Array.isArray(e.batches)) return null;
        m.entries.set(e.producerId, e);
      }
      return m;
    } catch {
      return null;
    }
  }
}

/**
 * Sequence checks for one client append (several batches allowed). Returns the cached offsets
 * when the append is a single duplicate batch (do not append). Throws on epoch/sequence errors.
 */
export function checkAppendProducers(
  producers: ProducerStateManager,
  metas: (ProducerBatchHeader & { producerId: number })[],
): ProducerBatchInfo | null {
  // One batch (the usual append): no map to allocate on the hot path.
  if (metas.length === 1) return producers.check(metas[0]);
  const seen = new Map<number, ProducerBatchHeader>();
  for (const m of metas) {
    if (m.producerId < 0) continue;
    const prev = seen.get(m.producerId);
    if (prev) {
      if (prev.producerEpoch !== m.producerEpoch) {
        throw new InvalidRecordError("producer epoch changes inside one append");
      }
      const expect = nextSequence(lastSequence(prev.baseSequence, prev.lastOffsetDelta));
      if (m.baseSequence !== expect) {
        throw new OutOfOrderSequenceError("non-contiguous sequences inside one append");
      }
    } else {
      const dup = producers.check(m);
      if (dup) {
        if (metas.length !== 1) {
          throw new InvalidRecordError("duplicate batch in a multi-batch append");
        }
        return dup;
      }
    }
    seen.set(m.producerId, m);
  }
  return null;
}
