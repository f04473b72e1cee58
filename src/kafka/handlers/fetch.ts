// Fetch long-polls: it answers as soon as min_bytes are available, else waits on every
// requested partition at once (woken by appends, never polling) until max_wait_ms. Records go
// out as whole stored batches, never re-encoded: read by pread into one buffer lent for the
// response (cheaper than faulting in fresh mappings, see docs/benchmarks.md) and written as is.
import {
  ApiKey,
  ErrorCode,
  type FetchRequest,
  type FetchResponse,
} from "../../protocol/kafka/index.ts";
import {
  errorCodeOf,
  type KafkaContext,
  type LentBuffers,
  type RequestContext,
} from "../context.ts";
import { defineHandler } from "../api.ts";
import { batchTraffic } from "../traffic.ts";
import { CorruptLogError } from "../../storage/index.ts";
import { reportDamage } from "../../core/damage-log.ts";
import { leaderEpochError } from "./shared/leader-epoch.ts";

/** A client may ask for any wait; the broker holds a fetch at most this long. */
const MAX_WAIT_CAP_MS = 5 * 60_000;
/** Safety bound on wake-ups of one fetch (each one re-reads; normally 1-2 happen). */
const MAX_WAKEUPS = 10_000;
const EMPTY = new Uint8Array(0);
/** The most record bytes one response carries (clients ask again for more). */
const RESPONSE_CAP = 16 * 1024 * 1024;

/**
 * Who is fetching: consumers (-1; -2 is Kafka's debugging consumer) read below the high
 * watermark. Followers copy over the cluster port, identified by its handshake: a replica id
 * typed into a Kafka Fetch would let any client read past the high watermark (and, were it
 * counted, move it), so it is refused.
 */
function replicaError(replicaId: number): number {
  return replicaId < 0 ? 0 : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
}

interface Wanted {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  replicaId: number;
}

/** The response's record buffer: taken on the first read, filled front to back. */
class RecordSpace {
  #buf: Uint8Array | null = null;
  #used = 0;

  constructor(readonly size: number, readonly lender: LentBuffers | undefined) {}

  /** The unused rest of the buffer, or null when none can be lent right now. */
  rest(): Uint8Array | null {
    this.#buf ??= this.lender ? this.lender.take(this.size) : new Uint8Array(this.size);
    return this.#buf ? this.#buf.subarray(this.#used) : null;
  }

  /** `records` came from a read into `rest()`: keep those bytes. */
  keep(records: Uint8Array): void {
    if (this.#buf && records.buffer === this.#buf.buffer) this.#used += records.length;
  }

  /** Nothing references the bytes any more (a long-poll goes on waiting). */
  reset(): void {
    if (this.#buf) this.lender?.giveBack(this.#buf);
    this.#buf = null;
    this.#used = 0;
  }
}

function partitionResult(
  ctx: KafkaContext,
  w: Wanted,
  budget: number,
  hasData: boolean,
  readCommitted: boolean,
  space: RecordSpace,
) {
  const base = {
    partitionIndex: w.partition,
    errorCode: 0,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    abortedTransactions: readCommitted ? [] : null,
    preferredReadReplica: -1,
    records: EMPTY as Uint8Array,
  };
  const refused = replicaError(w.replicaId);
  if (refused !== 0) return { ...base, errorCode: refused };
  const where = ctx.partitions.leaderError(w.topic, w.partition);
  if (where !== 0) return { ...base, errorCode: where };
  const st = ctx.partitions.partition(w.topic, w.partition);
  const epochErr = leaderEpochError(w.currentLeaderEpoch, st.leaderEpoch);
  if (epochErr) return { ...base, errorCode: epochErr };
  const hw = ctx.partitions.highWatermark(w.topic, w.partition);
  const start = st.log.logStartOffset();
  const end = st.log.logEndOffset();
  const filled = { ...base, highWatermark: hw, lastStableOffset: hw, logStartOffset: start };
  if (w.offset < start || w.offset > end) {
    // Acknowledged offsets quarantined as damaged (docs/storage.md): a storage error the consumer
    // retries, not "out of range", which would reset its position.
    const d = w.offset > end ? st.log.damaged() : null;
    const kept = d?.state === "quarantined" && w.offset < (d.toOffset ?? 0);
    const errorCode = kept ? ErrorCode.KAFKA_STORAGE_ERROR : ErrorCode.OFFSET_OUT_OF_RANGE;
    return { ...filled, errorCode };
  }
  // Consumers see only what the in-sync replicas hold.
  const upTo = hw;
  if (w.offset >= upTo || budget <= 0) return filled;
  try {
    const into = space.rest();
    const max = Math.min(w.maxBytes, budget);
    // Past the lending cap (many responses waiting to be written), slices of the segment maps:
    // slower on cold data, but they cost no anonymous memory however many are queued.
    const r = into
      ? ctx.partitions.readInto(w.topic, w.partition, w.offset, max, into, upTo)
      : ctx.partitions.read(w.topic, w.partition, w.offset, max, upTo);
    // KIP-74: the first batch of a response may exceed the limits; later ones may not.
    if (hasData && r.records.length > budget) return filled;
    space.keep(r.records);
    return { ...filled, records: r.records };
  } catch (e) {
    if (e instanceof CorruptLogError) {
      reportDamage(ctx.log, e, { partition: `${w.topic}-${w.partition}`, via: "kafka fetch" });
    }
    return { ...filled, errorCode: errorCodeOf(e) };
  }
}

export async function fetch(
  ctx: KafkaContext,
  req: RequestContext<FetchRequest>,
): Promise<FetchResponse> {
  const b = req.body;
  if (b.sessionId !== 0) {
    // No sessions are ever created, so a client naming one has a stale id.
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
      sessionId: 0,
      responses: [],
    };
  }
  const maxWait = Math.min(Math.max(b.maxWaitMs, 0), MAX_WAIT_CAP_MS);
  const minBytes = Math.max(b.minBytes, 0);
  const maxBytes = b.maxBytes > 0 ? b.maxBytes : 0x7fffffff;
  const readCommitted = b.isolationLevel === 1;
  const replicaId = b.replicaId;
  // Served up to v12: topics are named (v13+ would name them by id).
  const wanted: Wanted[][] = b.topics.map((t) =>
    t.partitions.map((p) => ({
      topic: t.topic,
      partition: p.partition,
      offset: p.fetchOffset,
      maxBytes: Math.max(0, p.partitionMaxBytes),
      currentLeaderEpoch: p.currentLeaderEpoch,
      replicaId,
    }))
  );
  const deadline = performance.now() + maxWait;
  // Sized for what this request can carry: no more than max_bytes, the partitions' own
  // limits and the response cap.
  const wantBytes = wanted.flat().reduce((n, w) => n + w.maxBytes, 0);
  const limit = Math.max(1, Math.min(maxBytes, wantBytes, RESPONSE_CAP));
  const space = new RecordSpace(limit, req.buffers);
  for (let i = 0; i < MAX_WAKEUPS; i++) {
    let budget = limit;
    let bytes = 0;
    let errors = false;
    const responses = wanted.map((parts, ti) => ({
      topic: b.topics[ti].topic,
      partitions: parts.map((w) => {
        const r = partitionResult(ctx, w, budget, bytes > 0, readCommitted, space);
        bytes += r.records.length;
        budget -= r.records.length;
        if (r.errorCode !== 0) errors = true;
        return r;
      }),
    }));
    const remaining = deadline - performance.now();
    if (bytes >= minBytes || errors || remaining <= 0) {
      for (const t of responses) {
        for (const p of t.partitions) {
          if (p.records.length === 0) continue;
          const served = batchTraffic(p.records);
          ctx.metrics.consumed(t.topic, served.records, served.bytes);
        }
      }
      return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses };
    }
    space.reset();
    await waitAny(ctx, wanted.flat(), remaining);
  }
  space.reset();
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] };
}

/** Resolves when any partition gets data past its fetch offset, or after `ms`. */
async function waitAny(ctx: KafkaContext, wanted: Wanted[], ms: number): Promise<void> {
  const ac = new AbortController();
  const waits = [];
  for (const w of wanted) {
    if (!ctx.partitions.has(w.topic, w.partition)) continue;
    // Wait for bytes beyond what is visible now: what is there was not enough.
    const end = ctx.partitions.highWatermark(w.topic, w.partition);
    const from = Math.max(w.offset, end);
    waits.push(ctx.partitions.waitForData(w.topic, w.partition, from, ms, ac.signal));
  }
  if (waits.length === 0) {
    await Bun.sleep(ms);
    return;
  }
  await Promise.race(waits);
  ac.abort();
}

export default defineHandler({
  apiKey: ApiKey.Fetch,
  versions: [4, 12],
  handle: fetch,
});
