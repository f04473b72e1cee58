// The partition operations the HTTP routes need — append with acks, read from a position with
// count and byte limits and a long-poll wait, positions and offsets — served by this broker's
// logs for partitions it leads and by the leader over the cluster port for the others
// (src/cluster/remote-partitions.ts). A read over partitions of several leaders is split per
// leader and asked in parallel; with a wait it answers as soon as any leader has records. Every
// remote call is bounded by the caller's deadline; failures become the API's JSON errors, and a
// partition without a known leader is the 503 it always was.
import type { Broker } from "../broker.ts";
import type { TopicInfo } from "../meta/index.ts";
import type { Acks } from "../core/partition-manager.ts";
import { PeerCallError } from "../cluster/peer-calls.ts";
import {
  appendError,
  type From,
  MAX_CALL_WAIT_MS,
  MAX_READ_LIMIT,
  type ReadSpec,
  RemotePartitions,
  RemoteRefusal,
  startOffset,
  type WireError,
  type WireResult,
} from "../cluster/remote-partitions.ts";
import type { KafkaRecord } from "../protocol/record-batch.ts";
import { ErrorCode } from "../protocol/kafka/index.ts";
import { CorruptLogError, OffsetOutOfRangeError } from "../storage/index.ts";
import { reportDamage } from "../core/damage-log.ts";
import { damagedData, HttpError, kafkaError, toHttpError } from "./errors.ts";
import { collect, decodeInto, leaderUrl } from "./render.ts";

export type { From, ReadSpec };

/** One partition's answer. */
export interface PartResult {
  topic: string;
  partition: number;
  records: KafkaRecord[];
  /** The resolved start position (the spec's offset when not answered). */
  offset: number;
  /** The position after what was returned. */
  next: number;
  /** -1 when the partition did not answer (a wait ended first). */
  highWatermark: number;
  logStartOffset: number;
  /** Log bytes the records came from. */
  bytes: number;
  /** The position is outside the log (retention passed it, or beyond the end): its range. */
  outOfRange?: { logStartOffset: number; highWatermark: number };
  /** This partition could not be read (leader unknown or unreachable, storage error, …). */
  error?: HttpError;
  /** The leader asked does not lead it (yet, or any more): worth asking again shortly. */
  retry?: boolean;
}

/** Whole stored batches of one partition, as its leader keeps them (GET …/batches). */
export interface StoredBatches {
  /** Whole RecordBatch v2 batches, the first holding the offset asked for; empty at the end. */
  bytes: Uint8Array;
  /** Where the next read starts (past the last whole batch). */
  next: number;
  highWatermark: number;
  logStartOffset: number;
}

export interface ReadOptions {
  /** Long-poll: when nothing is there at once, wait this long for records on any partition. */
  waitMs?: number;
  /** Bytes of log per leader asked (default: the sum of the specs' maxBytes, at most 32 MiB). */
  maxBytes?: number;
  /** performance.now() time by which every call must be answered. */
  deadline: number;
  /** Ends a wait early (the client left, the broker stops). */
  signal?: AbortSignal;
  /**
   * Waits still pending from an earlier read of the same positions are reused rather than asked
   * again (a live tail's waits on partitions where nothing arrived go on across its rounds).
   */
  waits?: Map<string, Promise<unknown>>;
  /**
   * "local": read this broker's own copies (a follower's, up to its high watermark) instead of
   * the leaders' (for checking replicas); partitions it holds no copy of are 404.
   */
  replica?: "leader" | "local";
}

/** A refusal because leadership is moving is retried this long, every RETRY_PAUSE_MS. */
const RETRY_WINDOW_MS = 1000;
const RETRY_PAUSE_MS = 50;

/** How long a forwarded call may take beyond a wait it asks for. */
export const FORWARD_MARGIN_MS = 10_000;
/** The deadline of a produce request (as Kafka's request.timeout.ms). */
export const PRODUCE_TIMEOUT_MS = 30_000;

interface Group {
  /** -1: this broker. */
  leader: number;
  idx: number[];
  results: PartResult[];
}

const noRecords = (s: ReadSpec, offset: number): PartResult => ({
  topic: s.topic,
  partition: s.partition,
  records: [],
  offset,
  next: offset,
  highWatermark: -1,
  logStartOffset: -1,
  bytes: 0,
});

/** Something to answer with: records, a position moved past control batches, or a range error. */
const hasData = (r: PartResult) =>
  r.outOfRange !== undefined || r.records.length > 0 || r.next > r.offset;

/** 416 with the log's range: `offset` is before its start or past its high watermark. */
export function outsideLog(offset: number, logStartOffset: number, highWatermark: number) {
  return new HttpError(
    416,
    41601,
    `offset ${offset} is outside the log [${logStartOffset}, ${highWatermark}]`,
    ErrorCode.OFFSET_OUT_OF_RANGE,
    { log_start_offset: logStartOffset, high_watermark: highWatermark },
  );
}

/** 503: nobody is known to lead the partition right now (as before forwarding existed). */
export function leaderUnknown(topic: string, partition: number, why?: string): HttpError {
  return new HttpError(
    503,
    50306,
    `partition ${topic}-${partition} has no leader right now${
      why ? ` (${why})` : ""
    }: retry shortly`,
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
  );
}

export class PartitionAccess {
  #remote: RemotePartitions | undefined;

  constructor(readonly broker: Broker, remote?: RemotePartitions) {
    this.#remote = remote;
  }

  get remote(): RemotePartitions | undefined {
    // Apps built without the broker's own (tests) make one on the first forwarded request.
    this.#remote ??= this.broker.cluster
      ? new RemotePartitions(
        this.broker.cluster,
        this.broker.partitions,
        this.broker.meta,
        this.broker.log,
      )
      : undefined;
    return this.#remote;
  }

  /** Whether this broker leads the partition (its log answers). No metadata query. */
  leadsHere(topic: string, partition: number): boolean {
    const pm = this.broker.partitions;
    return pm.has(topic, partition) && pm.leaderError(topic, partition) === 0;
  }

  /** Topics' metadata, read once per event-loop turn (a read over many partitions asks once). */
  readonly #memo = new Map<string, TopicInfo | undefined>();
  #topic(topic: string): TopicInfo | undefined {
    if (this.#memo.size === 0) setImmediate(() => this.#memo.clear());
    if (!this.#memo.has(topic)) this.#memo.set(topic, this.broker.meta.getTopic(topic));
    return this.#memo.get(topic);
  }

  /** The leader the metadata names (this broker included), -1 for none. */
  #named(topic: string, partition: number): number {
    const pm = this.broker.partitions;
    return pm.has(topic, partition)
      ? pm.leaderOf(topic, partition)
      : this.#topic(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  /** The broker to forward to; -1 when nobody else is known to lead the partition. */
  leaderFor(topic: string, partition: number): number {
    const leader = this.#named(topic, partition);
    return leader === this.broker.nodeId ? -1 : leader;
  }

  /**
   * Whether someone is known to lead the partition: here, elsewhere, or this broker about to
   * (named its leader, still taking over).
   */
  hasLeader(topic: string, partition: number): boolean {
    return this.leadsHere(topic, partition) || this.#named(topic, partition) >= 0;
  }

  /** Named the leader here but not leading yet (opening the log, just unfenced): wait a moment. */
  async #takingOver(topic: string, partition: number, deadline: number): Promise<boolean> {
    const since = performance.now();
    while (this.#named(topic, partition) === this.broker.nodeId) {
      if (this.leadsHere(topic, partition)) return true;
      if (!this.#mayRetry(since, deadline)) return false;
      await Bun.sleep(RETRY_PAUSE_MS);
    }
    return this.leadsHere(topic, partition);
  }

  /** Append record batches to a partition wherever it is led; resolves with the base offset. */
  async append(
    topic: string,
    partition: number,
    topicId: string | undefined,
    batches: Uint8Array,
    acks: Acks,
    deadline: number,
    /** The caller gives `batches` up until this resolves: the log may rewrite them in place. */
    owned = false,
  ): Promise<{ baseOffset: number }> {
    if (this.leadsHere(topic, partition) || await this.#takingOver(topic, partition, deadline)) {
      return await this.broker.partitions.append(topic, partition, batches, acks, owned);
    }
    let leader = this.leaderFor(topic, partition);
    const since = performance.now();
    for (;;) {
      if (leader < 0) throw leaderUnknown(topic, partition);
      const remote = this.remote;
      if (remote === undefined) throw leaderUnknown(topic, partition, "no cluster");
      try {
        return await remote.append(leader, topic, topicId, partition, batches, acks, deadline);
      } catch (e) {
        if (e instanceof PeerCallError) throw this.#callError(e, topic, partition, true);
        if (!(e instanceof RemoteRefusal)) throw e;
        const code = e.error.code;
        const moving = code === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
          code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        // Leadership is moving (nothing was written): again, where the metadata then says.
        if (moving && this.#mayRetry(since, deadline)) {
          const moved = this.#movedTo(e.error, leader, topic, partition);
          if (moved === undefined) await Bun.sleep(RETRY_PAUSE_MS);
          if (moved === -1 || this.leadsHere(topic, partition)) {
            return await this.broker.partitions.append(topic, partition, batches, acks, owned);
          }
          leader = moved ?? this.leaderFor(topic, partition);
          continue;
        }
        if (code === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
          throw leaderUnknown(topic, partition, `broker ${leader} does not lead it`);
        }
        throw appendError(e.error);
      }
    }
  }

  #mayRetry(since: number, deadline: number, signal?: AbortSignal): boolean {
    const now = performance.now();
    return now - since < RETRY_WINDOW_MS && now + RETRY_PAUSE_MS < deadline && !signal?.aborted;
  }

  /**
   * Read partitions (possibly of several leaders). Results come in the order of `specs`. With
   * `waitMs`, when nothing is there at once, waits until any partition has records or the wait
   * ends; partitions that had not answered by then come back without records, at their positions.
   */
  async read(specs: ReadSpec[], opts: ReadOptions): Promise<PartResult[]> {
    const out = await this.#readOnce(specs, 0, opts);
    // A leader that does not lead (yet, or any more) refused: nothing was read. Ask again, where
    // the metadata then says, for a moment (a new partition's leader is still opening it, a
    // leadership change is being applied).
    const since = performance.now();
    for (;;) {
      const again = out.flatMap((r, i) => (r.retry ? [i] : []));
      if (again.length === 0 || !this.#mayRetry(since, opts.deadline, opts.signal)) break;
      await Bun.sleep(RETRY_PAUSE_MS);
      const redo = await this.#readOnce(again.map((i) => specs[i]), 0, opts);
      again.forEach((i, k) => (out[i] = redo[k]));
    }
    const waitMs = Math.min(opts.waitMs ?? 0, Math.max(0, opts.deadline - performance.now()));
    if (waitMs <= 0 || out.some(hasData) || opts.signal?.aborted) return out;
    // Wait from the resolved positions (what "latest" meant when the read started).
    const positioned: ReadSpec[] = specs.map((s, i) => ({ ...s, from: out[i].offset }));
    const waited = await this.#readOnce(positioned, waitMs, opts, out);
    return waited;
  }

  /**
   * Whole stored batches of a partition from `offset` (about `maxBytes`, at least one batch),
   * wherever it is led: this broker's log, or the leader's bytes over the cluster port as they
   * are (nothing decoded). An offset outside [log start, high watermark] is the 416 it is at the
   * leader; a leadership move is followed for a moment, as appends do.
   */
  async batches(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    deadline: number,
  ): Promise<StoredBatches> {
    const local = () => {
      const st = this.broker.partitions.partition(topic, partition);
      const hw = st.highWatermark();
      const lso = st.log.logStartOffset();
      if (offset < lso || offset > hw) throw outsideLog(offset, lso, hw);
      // Views of the segment's mapping, as the Kafka fetch path serves past its lending cap: a
      // fresh buffer per request cost a page fault per 4 KiB (most of the route's CPU).
      const r = this.broker.partitions.read(topic, partition, offset, maxBytes);
      return {
        bytes: r.records,
        next: r.nextOffset,
        highWatermark: r.highWatermark,
        logStartOffset: r.logStartOffset,
      };
    };
    if (this.leadsHere(topic, partition) || await this.#takingOver(topic, partition, deadline)) {
      return local();
    }
    const since = performance.now();
    for (let leader = this.leaderFor(topic, partition);;) {
      if (leader < 0) throw leaderUnknown(topic, partition);
      const remote = this.remote;
      if (remote === undefined) throw leaderUnknown(topic, partition, "no cluster");
      let answer;
      try {
        // No record limit: the bytes bound the answer, as at the leader.
        const spec = { topic, partition, from: offset, limit: MAX_READ_LIMIT, maxBytes };
        [answer] = await remote.read(leader, [spec], 0, maxBytes, deadline);
      } catch (e) {
        if (e instanceof PeerCallError) throw this.#callError(e, topic, partition, false);
        if (e instanceof RemoteRefusal) {
          throw new HttpError(
            502,
            50200,
            `broker ${leader} (leader of ${topic}-${partition}): ${e.message}`,
          );
        }
        throw e;
      }
      const { result: w, bytes } = answer;
      if (w.error === undefined) {
        // As at the leader: past the high watermark is out of range, not "nothing yet".
        if (offset > w.highWatermark) throw outsideLog(offset, w.logStartOffset, w.highWatermark);
        return {
          bytes,
          next: w.next,
          highWatermark: w.highWatermark,
          logStartOffset: w.logStartOffset,
        };
      }
      const e = w.error;
      if (e.code === ErrorCode.OFFSET_OUT_OF_RANGE) {
        throw outsideLog(offset, e.logStartOffset ?? -1, e.highWatermark ?? -1);
      }
      const moving = e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
        e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      if (!moving || !this.#mayRetry(since, deadline)) {
        throw this.#refusal(e, topic, partition, leader);
      }
      const moved = this.#movedTo(e, leader, topic, partition);
      if (moved === undefined) await Bun.sleep(RETRY_PAUSE_MS);
      if (moved === -1 || this.leadsHere(topic, partition)) return local();
      leader = moved ?? this.leaderFor(topic, partition);
    }
  }

  /** Log start and high watermark of partitions (a read of no bytes). */
  async offsets(
    topic: string,
    partitions: number[],
    from: From = "latest",
    deadline = performance.now() + FORWARD_MARGIN_MS,
  ): Promise<PartResult[]> {
    return await this.read(
      partitions.map((p) => ({ topic, partition: p, from, limit: 1, maxBytes: 0 })),
      { deadline },
    );
  }

  async #readOnce(
    specs: ReadSpec[],
    waitMs: number,
    opts: ReadOptions,
    before?: PartResult[],
  ): Promise<PartResult[]> {
    const out: PartResult[] = before
      ? [...before]
      : specs.map((s) => noRecords(s, typeof s.from === "number" ? s.from : -1));
    const groups = new Map<number, number[]>();
    specs.forEach((s, i) => {
      if (before && (before[i].error || before[i].outOfRange)) return;
      const here = this.#here(s, opts);
      const leader = here || opts.replica === "local" ? -1 : this.leaderFor(s.topic, s.partition);
      if (leader === -1 && !here) {
        out[i] = {
          ...noRecords(s, out[i].offset),
          error: this.#unknownOrMissing(s, opts),
          // Named the leader here, still taking over: read again in a moment.
          retry: this.#named(s.topic, s.partition) === this.broker.nodeId,
        };
        return;
      }
      const g = groups.get(leader);
      if (g) g.push(i);
      else groups.set(leader, [i]);
    });
    if (groups.size === 0) return out;
    const ac = new AbortController();
    const stop = () => ac.abort();
    opts.signal?.addEventListener("abort", stop, { once: true });
    try {
      const pending = [...groups].map(([leader, idx]) =>
        this.#group(leader, idx, specs, waitMs, opts, ac.signal)
      );
      if (waitMs <= 0) {
        for (const g of await Promise.all(pending)) this.#merge(out, g);
        return out;
      }
      // A wait ends with the first leader that has something, when every one answered, or
      // when the wait is over (a reused wait may have been asked for longer).
      const settled: Group[] = [];
      await new Promise<void>((resolve) => {
        let left = pending.length;
        const timer = setTimeout(resolve, waitMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        ac.signal.addEventListener("abort", done, { once: true });
        for (const p of pending) {
          p.then((g) => {
            settled.push(g);
            if (g.results.some(hasData) || --left === 0) done();
          }, () => {
            if (--left === 0) done();
          });
        }
      });
      for (const g of settled) this.#merge(out, g);
      return out;
    } finally {
      ac.abort();
      opts.signal?.removeEventListener("abort", stop);
    }
  }

  #merge(out: PartResult[], g: Group): void {
    g.idx.forEach((i, j) => (out[i] = g.results[j]));
  }

  #unknownOrMissing(s: ReadSpec, opts: ReadOptions): HttpError {
    if (!this.#topic(s.topic)?.partitions.some((p) => p.partition === s.partition)) {
      return kafkaError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `unknown topic or partition ${s.topic}-${s.partition}`,
      );
    }
    if (opts.replica === "local") {
      return new HttpError(
        404,
        40402,
        `broker ${this.broker.nodeId} holds no replica of ${s.topic}-${s.partition}`,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
      );
    }
    return leaderUnknown(s.topic, s.partition);
  }

  #group(
    leader: number,
    idx: number[],
    specs: ReadSpec[],
    waitMs: number,
    opts: ReadOptions,
    signal: AbortSignal,
  ): Promise<Group> {
    if (leader === -1) return this.#local(idx, idx.map((i) => specs[i]), waitMs, opts, signal);
    if (waitMs <= 0 || opts.waits === undefined) {
      return this.#remoteGroup(leader, idx, idx.map((i) => specs[i]), waitMs, opts);
    }
    // A wait still pending for the same partitions at the same positions is joined, not asked
    // again (in a stable order, whatever order the caller asked in).
    const sorted = [...idx].sort((a, b) =>
      specs[a].topic < specs[b].topic
        ? -1
        : specs[a].topic > specs[b].topic
        ? 1
        : specs[a].partition - specs[b].partition
    );
    const mine = sorted.map((i) => specs[i]);
    const key = `${leader}|${
      mine.map((s) => `${s.topic}:${s.partition}:${JSON.stringify(s.from)}:${s.limit}`).join(",")
    }`;
    const waits = opts.waits as Map<string, Promise<Group>>;
    const reused = waits.get(key);
    if (reused) return reused.then((g) => ({ ...g, idx: sorted }));
    const p = this.#remoteGroup(leader, sorted, mine, waitMs, opts);
    waits.set(key, p);
    // Only a pending wait is worth joining: once answered, the next read sees the same records.
    const drop = () => waits.get(key) === p && waits.delete(key);
    p.then(drop, drop);
    return p;
  }

  async #local(
    idx: number[],
    specs: ReadSpec[],
    waitMs: number,
    opts: ReadOptions,
    signal: AbortSignal,
  ): Promise<Group> {
    const readAll = () => {
      let budget = opts.maxBytes ?? Infinity;
      return specs.map((s) => {
        const r = this.#readLocal(s, Math.max(0, budget), opts);
        budget -= r.bytes;
        return r;
      });
    };
    let results = readAll();
    if (waitMs > 0 && !results.some(hasData) && !signal.aborted) {
      const pm = this.broker.partitions;
      const ac = new AbortController();
      const stop = () => ac.abort();
      signal.addEventListener("abort", stop, { once: true });
      try {
        await Promise.race(
          results.filter((r) => !r.error).map((r) =>
            pm.waitForData(r.topic, r.partition, r.offset, waitMs, ac.signal).catch(() => true)
          ),
        );
      } finally {
        ac.abort();
        signal.removeEventListener("abort", stop);
      }
      specs = specs.map((s, i) => (results[i].error ? s : { ...s, from: results[i].offset }));
      results = readAll();
    }
    return { leader: -1, idx, results };
  }

  /** Whether this broker answers for the partition: it leads it (or holds a copy, when asked). */
  #here(s: ReadSpec, opts: ReadOptions): boolean {
    return opts.replica === "local"
      ? this.broker.partitions.has(s.topic, s.partition)
      : this.leadsHere(s.topic, s.partition);
  }

  #readLocal(s: ReadSpec, budget: number, opts: ReadOptions): PartResult {
    const pm = this.broker.partitions;
    let offset = typeof s.from === "number" ? s.from : -1;
    try {
      if (!this.#here(s, opts)) {
        return { ...noRecords(s, offset), error: this.#unknownOrMissing(s, opts) };
      }
      const st = pm.partition(s.topic, s.partition);
      const hw = pm.highWatermark(s.topic, s.partition);
      const lso = st.log.logStartOffset();
      offset = startOffset(s.from, st.log, lso, hw);
      const base = { ...noRecords(s, offset), highWatermark: hw, logStartOffset: lso };
      if (s.maxBytes === 0) return base;
      const got = collect(
        this.broker,
        s.topic,
        s.partition,
        offset,
        s.limit,
        Math.min(s.maxBytes, Math.max(1, budget)),
      );
      return {
        ...base,
        records: got.records,
        next: got.next,
        bytes: got.bytes,
        highWatermark: pm.highWatermark(s.topic, s.partition),
      };
    } catch (e) {
      if (e instanceof OffsetOutOfRangeError && pm.has(s.topic, s.partition)) {
        const range = {
          logStartOffset: pm.partition(s.topic, s.partition).log.logStartOffset(),
          highWatermark: pm.highWatermark(s.topic, s.partition),
        };
        return { ...noRecords(s, offset), ...range, outOfRange: range };
      }
      if (e instanceof CorruptLogError) {
        reportDamage(this.broker.log, e, { via: `HTTP read of ${s.topic}-${s.partition}` });
      }
      const h = toHttpError(e);
      if (h === undefined) throw e;
      return { ...noRecords(s, offset), error: h };
    }
  }

  async #remoteGroup(
    leader: number,
    idx: number[],
    specs: ReadSpec[],
    waitMs: number,
    opts: ReadOptions,
  ): Promise<Group> {
    const remote = this.remote;
    const fallback = (error: (s: ReadSpec) => HttpError): Group => ({
      leader,
      idx,
      results: specs.map((s) => ({
        ...noRecords(s, typeof s.from === "number" ? s.from : -1),
        error: error(s),
      })),
    });
    if (remote === undefined) {
      return fallback((s) => leaderUnknown(s.topic, s.partition, "no cluster"));
    }
    const total = Math.min(
      opts.maxBytes ?? specs.reduce((n, s) => n + s.maxBytes, 0),
      32 << 20,
    );
    const until = performance.now() + waitMs;
    for (;;) {
      const left = Math.max(0, Math.min(until - performance.now(), MAX_CALL_WAIT_MS));
      const asked = performance.now();
      let answer;
      try {
        answer = await remote.read(
          leader,
          specs,
          left,
          total,
          Math.min(
            opts.deadline,
            performance.now() + left + FORWARD_MARGIN_MS,
          ),
        );
      } catch (e) {
        if (e instanceof PeerCallError) {
          return fallback((s) => this.#callError(e, s.topic, s.partition, false));
        }
        if (e instanceof RemoteRefusal) {
          return fallback((s) =>
            new HttpError(
              502,
              50200,
              `broker ${leader} (leader of ${s.topic}-${s.partition}): ${e.message}`,
            )
          );
        }
        throw e;
      }
      const results = answer.map((a, j) => this.#fromWire(specs[j], a.result, a.bytes, leader));
      const more = until - performance.now();
      const failed = results.some((r) => r.error !== undefined);
      if (waitMs <= 0 || failed || results.some(hasData) || more <= 0 || opts.signal?.aborted) {
        return { leader, idx, results };
      }
      // The leader answered before the wait was over without anything (its wait is capped, or
      // it had too many waiting): ask again, not faster than every 250 ms.
      if (performance.now() - asked < 250) await Bun.sleep(Math.min(250, more));
      specs = specs.map((s, j) => ({ ...s, from: results[j].error ? s.from : results[j].offset }));
    }
  }

  #fromWire(s: ReadSpec, w: WireResult, bytes: Uint8Array, leader: number): PartResult {
    const base: PartResult = {
      topic: s.topic,
      partition: s.partition,
      records: [],
      offset: w.offset,
      next: w.next,
      highWatermark: w.highWatermark,
      logStartOffset: w.logStartOffset,
      bytes: w.bytes,
    };
    if (w.error) {
      const e = w.error;
      const at = typeof s.from === "number" ? s.from : -1;
      if (e.code === ErrorCode.OFFSET_OUT_OF_RANGE) {
        const range = {
          logStartOffset: e.logStartOffset ?? -1,
          highWatermark: e.highWatermark ?? -1,
        };
        return { ...base, offset: at, next: at, ...range, outOfRange: range };
      }
      return {
        ...base,
        offset: at,
        next: at,
        error: this.#refusal(e, s.topic, s.partition, leader),
        retry: e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
          e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      };
    }
    if (bytes.length === 0) return base;
    const records: KafkaRecord[] = [];
    let next: number;
    try {
      next = decodeInto(bytes, records, s.limit, w.offset);
    } catch {
      return {
        ...base,
        next: w.offset,
        error: new HttpError(
          502,
          50200,
          `the records of ${s.topic}-${s.partition} from broker ${leader} could not be decoded`,
        ),
      };
    }
    if (records.length < s.limit) next = Math.max(next, w.next);
    return { ...base, records, next };
  }

  /** A leader's refusal as the API's error. */
  #refusal(e: WireError, topic: string, partition: number, leader: number): HttpError {
    if (e.corrupt) return damagedData(e.message);
    if (e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
      return leaderUnknown(
        topic,
        partition,
        `broker ${leader} no longer leads it${
          e.leader !== undefined && e.leader >= 0 ? `; broker ${e.leader} does` : ""
        }`,
      );
    }
    return kafkaError(e.code, `${e.message} (at broker ${leader})`);
  }

  /** Where leadership went, if the refusal says it moved: a broker id, -1 for here, or undefined. */
  #movedTo(e: WireError, from: number, topic: string, partition: number): number | undefined {
    if (e.code !== ErrorCode.NOT_LEADER_OR_FOLLOWER) return undefined;
    if (this.leadsHere(topic, partition)) return -1;
    const now = this.leaderFor(topic, partition);
    if (now >= 0 && now !== from) return now;
    if (
      e.leader !== undefined && e.leader >= 0 && e.leader !== from &&
      e.leader !== this.broker.nodeId
    ) {
      return e.leader;
    }
    return undefined;
  }

  /** A call that failed before any answer. */
  #callError(e: PeerCallError, topic: string, partition: number, write: boolean): HttpError {
    const who = `broker ${e.nodeId}${
      leaderUrl(this.broker, e.nodeId)
    }, the leader of ${topic}-${partition}`;
    switch (e.kind) {
      case "unknown":
        return leaderUnknown(topic, partition, `no address known for broker ${e.nodeId}`);
      case "busy":
        return kafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `${e.message}: retry shortly`);
      case "timeout":
        return kafkaError(
          ErrorCode.REQUEST_TIMED_OUT,
          `${who}, did not answer in time${
            write ? "; the records may or may not have been written" : ""
          }`,
        );
      default:
        return kafkaError(
          ErrorCode.BROKER_NOT_AVAILABLE,
          `${who}, cannot be reached (${e.message}); retry shortly`,
        );
    }
  }
}
