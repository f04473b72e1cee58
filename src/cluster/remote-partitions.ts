// Partition access over the cluster port, for HTTP requests that arrive at a broker that does not
// lead the partition: `partitionAppend` (record batches in the call's tail, appended with the
// caller's acks) and `partitionRead` (several partitions of one leader at once, from an offset,
// earliest, latest or a time, with count and byte limits and a long-poll wait; the log bytes come
// back in the reply's tail, so bytes stay bytes and the caller decodes them). Both are served
// only to registered brokers (the caller's identity is its hello's node id) and everything in
// them is checked: sizes, types, topic names, partitions, bounds of waits.
import type { MetadataStore } from "../meta/index.ts";
import { MAX_TOPIC_NAME_LENGTH } from "../meta/topic-names.ts";
import { type Acks, BrokerError, type PartitionManager } from "../core/partition-manager.ts";
import { ReplicaError } from "../replication/replica.ts";
import {
  ATTR_CONTROL,
  BATCH_HEADER_SIZE,
  batchSizeAt,
  OFF_ATTRIBUTES,
  OFF_LAST_OFFSET_DELTA,
  readI64,
} from "../protocol/record-batch.ts";
import { CorruptLogError, LogError, OffsetOutOfRangeError } from "../storage/index.ts";
import type { Logger } from "../log.ts";
import { reportDamage } from "../core/damage-log.ts";
import type { ClusterService } from "./node.ts";
import type { CallAnswer } from "./transport.ts";
import { PeerCalls } from "./peer-calls.ts";

/** A start position: an offset, the log start, the high watermark, or the first record at a time. */
export type From = number | "earliest" | "latest" | { timestamp: number };

/** The offset a read from `from` starts at (a time after every record: the high watermark). */
export function startOffset(
  from: From,
  log: { offsetForTimestamp(ts: number): { offset: number } | null },
  logStart: number,
  hw: number,
): number {
  if (from === "earliest") return logStart;
  if (from === "latest") return hw;
  if (typeof from === "number") return from;
  return log.offsetForTimestamp(from.timestamp)?.offset ?? hw;
}

export interface ReadSpec {
  topic: string;
  partition: number;
  from: From;
  /** At most about this many records (the caller trims exactly). */
  limit: number;
  /** About this many bytes of log (at least one batch); 0 resolves positions only. */
  maxBytes: number;
}

export interface WireError {
  code: number;
  message: string;
  /** With NOT_LEADER_OR_FOLLOWER: the leader as the answering broker knows it. */
  leader?: number;
  /** With OFFSET_OUT_OF_RANGE: the log's range. */
  logStartOffset?: number;
  highWatermark?: number;
  /** Damaged stored bytes (KAFKA_STORAGE_ERROR from a failed check). */
  corrupt?: boolean;
}

export interface WireResult {
  /** The resolved start offset. */
  offset: number;
  /** Where the next read starts once every record in the bytes is consumed. */
  next: number;
  highWatermark: number;
  logStartOffset: number;
  /** Length of this partition's bytes in the reply's tail. */
  bytes: number;
  error?: WireError;
}

/** Limits of one call, as the server enforces them. */
export const MAX_READ_PARTS = 10_000;
/**
 * Records per partition asked for: any count, as the bytes bound an answer (a read of stored
 * batches asks for whatever fits; the JSON routes ask for at most 10,000).
 */
export const MAX_READ_LIMIT = 0x7fffffff;
export const MAX_PART_BYTES = 16 << 20;
export const MAX_CALL_BYTES = 32 << 20;
/** The longest one call waits at the leader; a longer wait is several calls. */
export const MAX_CALL_WAIT_MS = 30_000;
/** Bytes appended per call (a frame is at most 64 MiB). */
export const MAX_APPEND_BYTES = 63 << 20;
/** Waiting reads and appends in flight served per calling broker; beyond, reads do not wait. */
const MAX_WAITING_PER_PEER = 64;
const MAX_APPENDS_PER_PEER = 256;
/** Log bytes read per step while counting records toward a limit. */
const READ_STEP = 1 << 20;

const E = {
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  BROKER_NOT_AVAILABLE: 8,
  INVALID_REQUEST: 42,
  KAFKA_STORAGE_ERROR: 56,
} as const;

const LEGAL_TOPIC = /^[a-zA-Z0-9._-]+$/;
const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max;
const isTopic = (v: unknown): v is string =>
  typeof v === "string" && v.length > 0 && v.length <= MAX_TOPIC_NAME_LENGTH && LEGAL_TOPIC.test(v);
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

function parseFrom(v: unknown): From | undefined {
  if (v === "earliest" || v === "latest") return v;
  if (isInt(v, 0, MAX_OFFSET)) return v;
  const o = v as { timestamp?: unknown } | null;
  if (
    o !== null && typeof o === "object" && !Array.isArray(o) && isInt(o.timestamp, 0, MAX_OFFSET)
  ) {
    return { timestamp: o.timestamp };
  }
  return undefined;
}

/** A read spec from the network, or undefined when anything in it is off. */
export function parseReadSpec(v: unknown): ReadSpec | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object" || Array.isArray(o)) return undefined;
  const from = parseFrom(o.from);
  if (
    !isTopic(o.topic) || !isInt(o.partition, 0, 0x7fffffff) || from === undefined ||
    !isInt(o.limit, 1, MAX_READ_LIMIT) || !isInt(o.maxBytes, 0, MAX_PART_BYTES)
  ) return undefined;
  return { topic: o.topic, partition: o.partition, from, limit: o.limit, maxBytes: o.maxBytes };
}

function parseWireError(v: unknown): WireError | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object" || !isInt(o.code, -1, 32767)) return undefined;
  const opt = (x: unknown) => (isInt(x, -1, MAX_OFFSET) ? x : undefined);
  return {
    code: o.code,
    message: typeof o.message === "string" ? o.message.slice(0, 2000) : "refused",
    leader: opt(o.leader),
    logStartOffset: opt(o.logStartOffset),
    highWatermark: opt(o.highWatermark),
    corrupt: o.corrupt === true,
  };
}

function parseWireResult(v: unknown): WireResult | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object") return undefined;
  const ints = ["offset", "next", "highWatermark", "logStartOffset", "bytes"] as const;
  if (!ints.every((k) => isInt(o[k], -1, MAX_OFFSET))) return undefined;
  const r: WireResult = {
    offset: o.offset as number,
    next: o.next as number,
    highWatermark: o.highWatermark as number,
    logStartOffset: o.logStartOffset as number,
    bytes: o.bytes as number,
  };
  if (o.error !== undefined) {
    r.error = parseWireError(o.error);
    if (r.error === undefined) return undefined;
  }
  return r;
}

/** A refusal by the leader (or by this broker for it), with the Kafka error code behind it. */
export class RemoteRefusal extends Error {
  override readonly name = "RemoteRefusal";
  constructor(readonly error: WireError) {
    super(error.message);
  }
}

/** An append refused on the records' own merits: a batch of other requests may still fit. */
const RECORD_LEVEL = new Set([2, 10, 18, 32, 87]);

/** The error a refusal becomes for the append path (the batcher splits on record-level ones). */
export function appendError(e: WireError): Error {
  if (RECORD_LEVEL.has(e.code)) return new LogError(e.code, e.message);
  return new BrokerError(e.code, e.message);
}

function errorOf(e: unknown, pm: PartitionManager, topic: string, partition: number): WireError {
  if (e instanceof CorruptLogError) {
    return { code: E.KAFKA_STORAGE_ERROR, message: e.message, corrupt: true };
  }
  if (e instanceof LogError || e instanceof BrokerError || e instanceof ReplicaError) {
    const w: WireError = { code: e.errorCode, message: e.message };
    if (e.errorCode === E.NOT_LEADER_OR_FOLLOWER) w.leader = pm.leaderOf(topic, partition);
    return w;
  }
  throw e;
}

interface RawRead {
  result: WireResult;
  chunks: Uint8Array[];
}

export class RemotePartitions {
  readonly peers: PeerCalls;
  readonly #waiting = new Map<number, number>();
  readonly #appending = new Map<number, number>();
  #brokers: { at: number; ids: Set<number> } = { at: -Infinity, ids: new Set() };
  #closed = false;

  constructor(
    readonly cluster: ClusterService,
    readonly partitions: PartitionManager,
    readonly meta: MetadataStore,
    readonly log: Logger,
  ) {
    this.peers = new PeerCalls(cluster);
  }

  /** Serve other brokers' forwarded appends and reads of the partitions this one leads. */
  serve(): void {
    this.cluster.handleCall(
      "partitionAppend",
      (from, body, tail) => this.#append(from, body, tail),
    );
    this.cluster.handleCall("partitionRead", (from, body) => this.#read(from, body));
  }

  close(): void {
    this.#closed = true;
    this.peers.close();
  }

  // ---- client side ---------------------------------------------------------------------------

  /** Append record batches at `leader`; resolves with the base offset, or throws. */
  async append(
    leader: number,
    topic: string,
    topicId: string | undefined,
    partition: number,
    batches: Uint8Array,
    acks: Acks,
    deadline: number,
  ): Promise<{ baseOffset: number }> {
    if (batches.length > MAX_APPEND_BYTES) {
      throw new LogError(
        18, // RECORD_LIST_TOO_LARGE
        `${batches.length} bytes of records cannot be passed to the leader of ${topic}-${partition} ` +
          `(broker ${leader}) in one request; the limit is ${MAX_APPEND_BYTES}: send fewer records per request`,
      );
    }
    const r = await this.peers.call(
      leader,
      "data",
      "partitionAppend",
      {
        topic,
        topicId,
        partition,
        acks,
      },
      deadline,
      [batches],
    );
    const b = r.body as { baseOffset?: unknown; error?: unknown } | null;
    if (b !== null && typeof b === "object" && b.error !== undefined) {
      const e = parseWireError(b.error);
      throw new RemoteRefusal(e ?? { code: -1, message: "bad answer from the leader" });
    }
    if (b === null || typeof b !== "object" || !isInt(b.baseOffset, -1, MAX_OFFSET)) {
      throw new RemoteRefusal({ code: -1, message: `bad append answer from broker ${leader}` });
    }
    return { baseOffset: b.baseOffset };
  }

  /**
   * Read partitions led by `leader`. With `waitMs` the leader answers as soon as one of them has
   * something new (or the wait ends). One result per spec, with its bytes.
   */
  async read(
    leader: number,
    specs: ReadSpec[],
    waitMs: number,
    maxBytes: number,
    deadline: number,
  ): Promise<{ result: WireResult; bytes: Uint8Array }[]> {
    const lane = waitMs > 0 ? "poll" : "data";
    const r = await this.peers.call(leader, lane, "partitionRead", {
      parts: specs,
      waitMs: Math.max(0, Math.floor(Math.min(waitMs, MAX_CALL_WAIT_MS))),
      maxBytes: Math.min(maxBytes, MAX_CALL_BYTES),
    }, deadline);
    const b = r.body as { results?: unknown } | null;
    const list = b !== null && typeof b === "object" && Array.isArray(b.results)
      ? b.results
      : undefined;
    if (list === undefined || list.length !== specs.length) {
      throw new RemoteRefusal({ code: -1, message: `bad read answer from broker ${leader}` });
    }
    const out: { result: WireResult; bytes: Uint8Array }[] = [];
    let at = 0;
    for (const v of list) {
      const res = parseWireResult(v);
      if (res === undefined || at + res.bytes > r.tail.length) {
        throw new RemoteRefusal({ code: -1, message: `bad read answer from broker ${leader}` });
      }
      out.push({ result: res, bytes: r.tail.subarray(at, at + res.bytes) });
      at += res.bytes;
    }
    return out;
  }

  // ---- server side ---------------------------------------------------------------------------

  /** Calls are served to registered brokers only (the list is re-read at most once a second). */
  #checkPeer(from: number): void {
    const now = performance.now();
    if (now - this.#brokers.at > 1000 || !this.#brokers.ids.has(from)) {
      this.#brokers = { at: now, ids: new Set(this.meta.listBrokers().map((b) => b.nodeId)) };
    }
    if (!this.#brokers.ids.has(from)) throw new Error(`broker ${from} is not registered`);
    if (this.#closed) throw new Error("shutting down");
  }

  async #append(from: number, body: unknown, tail: Uint8Array): Promise<CallAnswer> {
    this.#checkPeer(from);
    const b = body as Record<string, unknown> | null;
    if (
      b === null || typeof b !== "object" || !isTopic(b.topic) ||
      !isInt(b.partition, 0, 0x7fffffff) || (b.acks !== 0 && b.acks !== 1 && b.acks !== -1) ||
      (b.topicId !== undefined && (typeof b.topicId !== "string" || b.topicId.length > 64))
    ) throw new Error("bad partitionAppend request");
    const topic = b.topic;
    const partition = b.partition;
    const refuse = (code: number, message: string) => ({ body: { error: { code, message } } });
    if (tail.length < BATCH_HEADER_SIZE || tail.length > MAX_APPEND_BYTES) {
      return refuse(2, `a forwarded append of ${tail.length} bytes is not a record batch`);
    }
    if (this.partitions.isInternal(topic)) {
      return refuse(E.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic} is internal`);
    }
    if (
      b.topicId !== undefined && this.partitions.has(topic, partition) &&
      this.partitions.partition(topic, partition).topicId !== b.topicId
    ) {
      return refuse(
        E.UNKNOWN_TOPIC_OR_PARTITION,
        `topic ${topic} was deleted and created again meanwhile`,
      );
    }
    const n = this.#appending.get(from) ?? 0;
    if (n >= MAX_APPENDS_PER_PEER) {
      return refuse(E.BROKER_NOT_AVAILABLE, `too many appends forwarded by broker ${from}`);
    }
    this.#appending.set(from, n + 1);
    try {
      // The frame's bytes are ours: the log may assign offsets in place.
      const r = await this.partitions.append(topic, partition, tail, b.acks, true);
      return { body: { baseOffset: r.baseOffset, lastOffset: r.lastOffset } };
    } catch (e) {
      return { body: { error: errorOf(e, this.partitions, topic, partition) } };
    } finally {
      const left = (this.#appending.get(from) ?? 1) - 1;
      if (left <= 0) this.#appending.delete(from);
      else this.#appending.set(from, left);
    }
  }

  async #read(from: number, body: unknown): Promise<CallAnswer> {
    this.#checkPeer(from);
    const b = body as Record<string, unknown> | null;
    const list = b !== null && typeof b === "object" && Array.isArray(b.parts) ? b.parts : [];
    if (
      list.length === 0 || list.length > MAX_READ_PARTS || !isInt(b!.waitMs, 0, MAX_CALL_WAIT_MS) ||
      !isInt(b!.maxBytes, 0, MAX_CALL_BYTES)
    ) throw new Error("bad partitionRead request");
    const specs: ReadSpec[] = [];
    for (const v of list) {
      const s = parseReadSpec(v);
      if (s === undefined) throw new Error("bad partitionRead partition");
      specs.push(s);
    }
    let waitMs = b!.waitMs as number;
    const total = b!.maxBytes as number;
    let reads = this.#readAll(specs, total);
    const progress = (rs: RawRead[]) =>
      rs.some((r) => r.result.error !== undefined || r.result.next > r.result.offset);
    const waiting = this.#waiting.get(from) ?? 0;
    // A broker with too many waiting reads here gets answers at once (it then waits itself).
    if (waiting >= MAX_WAITING_PER_PEER) waitMs = 0;
    if (waitMs > 0 && !progress(reads)) {
      this.#waiting.set(from, waiting + 1);
      try {
        await this.#waitAny(
          reads.map((r, i) => ({ ...specs[i], from: r.result.offset })),
          waitMs,
        );
      } finally {
        const left = (this.#waiting.get(from) ?? 1) - 1;
        if (left <= 0) this.#waiting.delete(from);
        else this.#waiting.set(from, left);
      }
      // Positions resolved before the wait stay: "latest" means the end when the read started.
      reads = this.#readAll(
        reads.map((r, i) =>
          r.result.error === undefined ? { ...specs[i], from: r.result.offset } : specs[i]
        ),
        total,
      );
    }
    return {
      body: { results: reads.map((r) => r.result), waited: waitMs > 0 },
      tail: reads.flatMap((r) => r.chunks),
    };
  }

  #readAll(specs: ReadSpec[], total: number): RawRead[] {
    let budget = total;
    return specs.map((s) => {
      const r = this.#readOne(s, budget);
      budget -= r.result.bytes;
      return r;
    });
  }

  #waitAny(specs: ReadSpec[], waitMs: number): Promise<unknown> {
    const ac = new AbortController();
    const waits = specs.filter((s) =>
      typeof s.from === "number" && this.partitions.leaderError(s.topic, s.partition) === 0
    ).map((s) =>
      this.partitions.waitForData(s.topic, s.partition, s.from as number, waitMs, ac.signal)
        .catch(() => true)
    );
    if (waits.length === 0) return Promise.resolve();
    return Promise.race(waits).finally(() => ac.abort());
  }

  /** One partition's bytes from its position, within `budget` bytes of the whole answer. */
  #readOne(s: ReadSpec, budget: number): RawRead {
    const pm = this.partitions;
    const fail = (error: WireError): RawRead => ({
      result: { offset: -1, next: -1, highWatermark: -1, logStartOffset: -1, bytes: 0, error },
      chunks: [],
    });
    const code = pm.leaderError(s.topic, s.partition);
    if (code !== 0) {
      return fail({
        code,
        message: code === E.NOT_LEADER_OR_FOLLOWER
          ? `broker ${this.cluster.nodeId} does not lead ${s.topic}-${s.partition}`
          : `unknown topic or partition ${s.topic}-${s.partition}`,
        leader: pm.leaderOf(s.topic, s.partition),
      });
    }
    try {
      const st = pm.partition(s.topic, s.partition);
      const lso = st.log.logStartOffset();
      const hw = pm.highWatermark(s.topic, s.partition);
      const offset = startOffset(s.from, st.log, lso, hw);
      const base = { offset, next: offset, highWatermark: hw, logStartOffset: lso, bytes: 0 };
      const maxBytes = Math.min(s.maxBytes, budget);
      if (s.maxBytes === 0) return { result: base, chunks: [] };
      if (maxBytes <= 0) return { result: base, chunks: [] };
      // As render.ts `collect`, counting records from the batch headers instead of decoding.
      const chunks: Uint8Array[] = [];
      let next = offset;
      let bytes = 0;
      let count = 0;
      for (let i = 0; i < 1000 && count < s.limit && bytes < maxBytes; i++) {
        const want = Math.max(1, Math.min(READ_STEP, maxBytes - bytes));
        let read;
        try {
          read = pm.read(s.topic, s.partition, next, want);
        } catch (e) {
          if (e instanceof CorruptLogError && chunks.length > 0) break;
          throw e;
        }
        const buf = read.records;
        if (buf.length === 0) break;
        let end = 0;
        const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
        for (let pos = 0; pos + BATCH_HEADER_SIZE <= buf.length;) {
          const size = batchSizeAt(buf, pos);
          if (size < BATCH_HEADER_SIZE || pos + size > buf.length) break;
          const baseOffset = readI64(view, pos);
          const batchEnd = baseOffset + view.getInt32(pos + OFF_LAST_OFFSET_DELTA) + 1;
          if ((view.getInt16(pos + OFF_ATTRIBUTES) & ATTR_CONTROL) === 0) {
            count += Math.max(0, batchEnd - Math.max(next, baseOffset));
          }
          next = Math.max(next, batchEnd);
          pos += size;
          end = pos;
          if (count >= s.limit) break;
        }
        if (end === 0) break;
        chunks.push(buf.subarray(0, end));
        bytes += end;
        if (count >= s.limit || read.nextOffset >= read.highWatermark) break;
        next = Math.max(next, read.nextOffset);
      }
      return { result: { ...base, next, bytes }, chunks };
    } catch (e) {
      if (e instanceof OffsetOutOfRangeError) {
        const st = pm.partition(s.topic, s.partition);
        return fail({
          code: E.OFFSET_OUT_OF_RANGE,
          message: e.message,
          logStartOffset: st.log.logStartOffset(),
          highWatermark: pm.highWatermark(s.topic, s.partition),
        });
      }
      if (e instanceof CorruptLogError) {
        reportDamage(this.log, e, { via: `forwarded read of ${s.topic}-${s.partition}` });
      }
      return fail(errorOf(e, pm, s.topic, s.partition));
    }
  }
}
