// The replication shell of one broker: serves followers' fetches of the partitions it leads,
// runs one fetcher per leader it follows (each on a connection of its own, never behind Raft
// traffic), sends leaders' ISR changes to the controller, and ticks the leader cores. The
// decisions are the cores' (leader.ts, follower.ts); this file moves bytes and messages.
import { open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { ClusterService } from "../cluster/node.ts";
import type { CallAnswer } from "../cluster/transport.ts";
import type { PartitionManager, ReplicationHooks } from "../core/partition-manager.ts";
import type { Logger } from "../log.ts";
import {
  findDivergence,
  followerActions,
  type ReplicaFetchPartition,
  type ReplicaFetchResult,
} from "./follower.ts";
import {
  FetchSessionCache,
  type ForgottenPartition,
  mustAnswer,
  type SessionPartition,
  type SessionRef,
} from "./fetch-session.ts";
import type { IsrProposal } from "./leader.ts";
import type { Replica } from "./replica.ts";
import { FETCH_WAIT_MS, Fetcher } from "./fetcher.ts";
import { Throttle } from "./throttle.ts";

export { Fetcher };

const PARTITION_MAX_BYTES = 1 << 20;
const RESPONSE_MAX_BYTES = 8 << 20;
/**
 * A partition far behind gets what its response has left up to this size (its own 1 MiB share
 * aside): the leader's event loop is held for the read and CRC check of every byte of a response,
 * and its producers wait meanwhile (a 256 MiB move under an acks=all producer, 2 MiB against 4:
 * the producer kept 0.42-0.66 of its rate against 0.36-0.65, and the new replica used less system
 * CPU; an 8 MiB answer was also more than the socket took at once, so the runtime copied the rest).
 * With the next fetch sent before this one is appended (fetchAhead) the round trips overlap.
 */
const BULK_RESPONSE_BYTES = 2 << 20;
/** The longest a bulk copy's fetch waits for its turn (bulkWait). */
const MAX_BULK_WAIT_MS = 100;
const MAX_PARTITIONS_PER_FETCH = 100_000;
const TICK_MS = 200;
/** Where each partition's high watermark is checkpointed (Kafka's replication-offset-checkpoint). */
export const HW_CHECKPOINT_FILE = "replication-offset-checkpoint.json";
const CHECKPOINT_MS = 1000;

const E = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
} as const;

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

function parseFetchPartition(v: unknown): ReplicaFetchPartition | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object") return undefined;
  if (
    typeof o.topicId !== "string" || typeof o.topic !== "string" || o.topic.length > 249 ||
    !isInt(o.partition) || !isInt(o.currentLeaderEpoch) || !isInt(o.fetchOffset) ||
    !isInt(o.lastFetchedEpoch) || !isInt(o.durableEnd) || !isInt(o.logStartOffset) ||
    o.fetchOffset < 0
  ) return undefined;
  return o as unknown as ReplicaFetchPartition;
}

/**
 * A follower's bulk copy (a partition of the answer it got stopped at its share with more to
 * copy): when the leader may read its next bulk answer, and where each such partition goes on.
 */
export interface BulkTurn {
  at: number;
  next: Set<string>;
}

export const bulkKey = (topicId: string, partition: number, offset: number): string =>
  `${topicId}\u0000${partition}\u0000${offset}`;

/**
 * Ms a follower's fetch waits before the leader reads its answer. A bulk copy's next fetch comes
 * at once (fetchAhead), and reading and checking its megabytes holds the leader's event loop:
 * back to back, producers of the leader's partitions waited behind them. So a fetch that only
 * goes on with bulk copies (every partition where the last bulk answer ended) waits as long as
 * that answer held the loop: bulk copies get at most half of it. A fetch with anything else in
 * it (a partition near its end, whose acks=all writes may wait for it) never waits.
 */
export function bulkWait(
  turn: BulkTurn | undefined,
  wanted: readonly ReplicaFetchPartition[],
  now: number,
): number {
  if (turn === undefined || turn.at <= now || wanted.length === 0) return 0;
  for (const q of wanted) {
    if (!turn.next.has(bulkKey(q.topicId, q.partition, q.fetchOffset))) return 0;
  }
  return Math.min(turn.at - now, MAX_BULK_WAIT_MS);
}

/** Every entry of a request's list, or the request is refused. */
function parseAll<T>(list: unknown[], parse: (v: unknown) => T | undefined, what: string): T[] {
  const out: T[] = [];
  for (const v of list) {
    const p = parse(v);
    if (p === undefined) throw new Error(`bad replicaFetch ${what}`);
    out.push(p);
  }
  return out;
}

function parseSession(v: unknown): SessionRef | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object") return undefined;
  if (!isInt(o.id) || !isInt(o.epoch) || o.id < 0 || o.epoch < 0) return undefined;
  return { id: o.id, epoch: o.epoch };
}

function parseForgotten(v: unknown): ForgottenPartition | undefined {
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== "object") return undefined;
  if (typeof o.topicId !== "string" || !isInt(o.partition)) return undefined;
  return { topicId: o.topicId, partition: o.partition };
}

export interface ReplicationStats {
  fetchesServed: number;
  bytesServed: number;
  fetchesSent: number;
  bytesCopied: number;
  truncations: number;
  isrProposals: number;
  /** Bytes served to / copied by replicas a reassignment adds (before they are in sync). */
  reassignBytesServed: number;
  reassignBytesCopied: number;
}

export class ReplicaManager implements ReplicationHooks {
  readonly stats: ReplicationStats = {
    fetchesServed: 0,
    bytesServed: 0,
    fetchesSent: 0,
    bytesCopied: 0,
    truncations: 0,
    isrProposals: 0,
    reassignBytesServed: 0,
    reassignBytesCopied: 0,
  };
  /** Reassignment traffic limits of this broker as a leader and as a follower. */
  readonly #leaderThrottle = new Throttle(() => performance.now());
  readonly #followerThrottle = new Throttle(() => performance.now());
  /** Bytes/s for a reassignment that sets none (--reassignment-throttle); 0: unthrottled. */
  defaultReassignThrottle = 0;
  readonly #fetchers = new Map<number, Fetcher>();
  /** Followers' incremental fetch sessions with this broker as their leader. */
  readonly #sessions = new FetchSessionCache();
  #timer: ReturnType<typeof setInterval> | undefined;
  #checkpointTimer: ReturnType<typeof setInterval> | undefined;
  #checkpointed = new Map<string, number>();
  #lastCheckpoint = "";
  #checkpointing: Promise<void> | null = null;
  #canLead = false;
  #stopped = false;
  #noFetch = false;
  #leaving = false;
  #refreshQueued = false;
  #refreshAll = false;
  readonly #changedReplicas = new Set<Replica>();
  /** Long-polling follower fetches, woken by any append to a partition led here. */
  readonly #appendWaiters = new Set<() => void>();
  /** Followers copying in bulk: their next turn (bulkWait). */
  readonly #bulkTurn = new Map<number, BulkTurn>();
  /** The same long-polls by the follower that sent them (a follower may ask to end its own). */
  readonly #parkedBy = new Map<number, Set<() => void>>();

  constructor(
    readonly partitions: PartitionManager,
    readonly cluster: ClusterService,
    readonly log: Logger,
    readonly controllerCall: (method: string, body: unknown) => Promise<unknown>,
    readonly lagTimeMaxMs = 10_000,
    readonly dataDir?: string,
  ) {}

  /** Read the high watermarks checkpointed before a restart (before the logs open). */
  async loadCheckpoint(): Promise<void> {
    if (this.dataDir === undefined) return;
    try {
      const v = JSON.parse(await readFile(join(this.dataDir, HW_CHECKPOINT_FILE), "utf8"));
      for (const [k, hw] of Object.entries(v as Record<string, unknown>)) {
        if (Number.isSafeInteger(hw) && (hw as number) >= 0) {
          this.#checkpointed.set(k, hw as number);
        }
      }
    } catch { /* absent or damaged: watermarks start at 0 and catch up from the followers */ }
  }

  /** Write every partition's high watermark (write, sync, rename), if any moved. */
  checkpoint(): Promise<void> {
    if (this.dataDir === undefined) return Promise.resolve();
    if (this.#checkpointing) return this.#checkpointing;
    const out: Record<string, number> = {};
    for (const r of this.partitions.partitions()) {
      out[`${r.topic}\u0000${r.partition}`] = r.highWatermark();
    }
    const json = JSON.stringify(out);
    if (json === this.#lastCheckpoint) return Promise.resolve();
    const dir = this.dataDir;
    const run = async () => {
      const tmp = join(dir, `${HW_CHECKPOINT_FILE}.tmp`);
      const f = await open(tmp, "w");
      try {
        await f.writeFile(json);
        await f.datasync();
      } finally {
        await f.close();
      }
      await rename(tmp, join(dir, HW_CHECKPOINT_FILE));
      this.#lastCheckpoint = json;
    };
    this.#checkpointing = run().catch((e) => {
      this.log.warn("could not checkpoint high watermarks", { error: String(e) });
    }).finally(() => this.#checkpointing = null);
    return this.#checkpointing;
  }

  start(): void {
    this.#checkpointTimer = setInterval(() => void this.checkpoint(), CHECKPOINT_MS);
    this.cluster.handleCall("replicaFetch", (from, body) => this.serve(from, body));
    // A follower that starts following another partition here while its fetch is parked asks
    // for that fetch to end now, so the new partition is fetched without waiting out the poll.
    this.cluster.handleCall("replicaWake", (from) => {
      for (const w of [...(this.#parkedBy.get(from) ?? [])]) w();
      return Promise.resolve({ body: {} });
    });
    let ticks = 0;
    this.#timer = setInterval(() => {
      for (const r of this.partitions.partitions()) r.tick();
      // A leader whose address was unknown at the last change gets its fetcher now.
      if (++ticks % 5 === 0) {
        this.#refreshFetchers();
        this.#sessions.expire(performance.now());
      }
    }, TICK_MS);
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#checkpointTimer);
    for (const f of this.#fetchers.values()) f.stop();
    this.#fetchers.clear();
    for (const w of [...this.#appendWaiters]) w();
  }

  /**
   * Controlled shutdown begins: keep copying (partitions whose ISR still names this broker wait
   * for it until the controller has taken it out, so stopping first stalled their acks=all
   * writes for a metadata round), but say so in every fetch, so no leader proposes this broker
   * back into an ISR it is leaving (such a proposal would count it for the HW until refused).
   */
  beginLeaving(): void {
    this.#leaving = true;
  }

  get leaving(): boolean {
    return this.#leaving;
  }

  /** Controlled shutdown done (leadership moved, out of the ISRs): stop copying. */
  stopFetching(): void {
    this.#noFetch = true;
    for (const f of this.#fetchers.values()) f.stop();
    this.#fetchers.clear();
  }

  // ---- ReplicationHooks ----------------------------------------------------------------------

  canLead(): boolean {
    return this.#canLead;
  }

  #lease: () => boolean = () => true;

  /** The session client's lease: a leader writes only while it is valid. */
  setLease(fn: () => boolean): void {
    this.#lease = fn;
  }

  mayAppend(): boolean {
    return this.#lease();
  }

  /** The controller unfenced (or fenced) this broker: leadership named in the metadata follows. */
  setCanLead(v: boolean): void {
    if (this.#canLead === v) return;
    this.#canLead = v;
    this.log.info(v ? "broker may lead partitions" : "broker fenced: leading nothing", {});
    void this.partitions.reconcile();
  }

  propose(r: Replica, p: IsrProposal): void {
    this.stats.isrProposals++;
    this.controllerCall("alterPartition", {
      topicId: r.topicId,
      partition: r.partition,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: p.partitionEpoch,
      isr: p.isr,
    }).then((res) => {
      const code = (res as { errorCode?: number } | null)?.errorCode ?? -1;
      if (code !== 0) {
        this.log.warn("ISR change refused", { topic: r.topic, partition: r.partition, res });
        r.proposalRefused(code, p);
      }
    }, () => r.proposalRefused(undefined, p));
  }

  checkpointedHw(topic: string, partition: number): number {
    return this.#checkpointed.get(`${topic}\u0000${partition}`) ?? 0;
  }

  /**
   * Appends and role changes: wake long-polling followers; fetchers follow role changes. With a
   * replica only that one moves between fetchers (a topic's new partitions or one partition's new
   * leader cost what they change); without, every partition is looked at.
   */
  changed(r?: Replica): void {
    this.#wakeFollowers();
    if (this.#stopped) return;
    if (r === undefined) this.#refreshAll = true;
    else this.#changedReplicas.add(r);
    if (this.#refreshQueued) return;
    this.#refreshQueued = true;
    queueMicrotask(() => {
      this.#refreshQueued = false;
      const some = [...this.#changedReplicas];
      this.#changedReplicas.clear();
      if (this.#refreshAll) {
        this.#refreshAll = false;
        this.#refreshFetchers();
      } else this.#refreshSome(some);
    });
  }

  appended(): void {
    this.#wakeFollowers();
  }

  #wakeFollowers(): void {
    if (this.#appendWaiters.size === 0) return;
    const ws = [...this.#appendWaiters];
    this.#appendWaiters.clear();
    for (const w of ws) w();
  }

  // ---- follower side -----------------------------------------------------------------------

  #refreshFetchers(): void {
    if (this.#noFetch || this.#stopped) return;
    const byLeader = new Map<number, Replica[]>();
    for (const r of this.partitions.partitions()) {
      if (r.isLeader || r.leader < 0 || r.leader === this.cluster.nodeId) continue;
      const l = byLeader.get(r.leader) ?? [];
      l.push(r);
      byLeader.set(r.leader, l);
    }
    for (const [id, f] of this.#fetchers) {
      if (!byLeader.has(id)) {
        f.stop();
        this.#fetchers.delete(id);
      }
    }
    for (const [id, rs] of byLeader) {
      let f = this.#fetchers.get(id);
      if (f === undefined) {
        const link = this.cluster.link(id);
        if (link === undefined) continue; // address unknown yet: the next change retries
        f = new Fetcher(id, link, this);
        this.#fetchers.set(id, f);
        f.start();
      }
      f.set(rs);
    }
  }

  /** Move just these replicas to the fetcher of their leader (or out of every fetcher). */
  #refreshSome(rs: readonly Replica[]): void {
    if (this.#noFetch || this.#stopped) return;
    for (const r of rs) {
      const held = this.partitions.has(r.topic, r.partition) &&
        this.partitions.partition(r.topic, r.partition) === r;
      const follows = held && !r.isLeader && r.leader >= 0 && r.leader !== this.cluster.nodeId;
      for (const [id, f] of this.#fetchers) {
        if (follows && id === r.leader) continue;
        f.delete(r);
        if (f.size === 0) {
          f.stop();
          this.#fetchers.delete(id);
        }
      }
      if (!follows) continue;
      let f = this.#fetchers.get(r.leader);
      if (f === undefined) {
        const link = this.cluster.link(r.leader);
        if (link === undefined) continue; // address unknown yet: the periodic refresh retries
        f = new Fetcher(r.leader, link, this);
        this.#fetchers.set(r.leader, f);
        f.start();
      }
      f.add(r);
    }
  }

  // ---- leader side -------------------------------------------------------------------------

  async serve(from: number, body: unknown): Promise<CallAnswer> {
    const b = (body ?? {}) as Record<string, unknown>;
    const list = Array.isArray(b.partitions) ? b.partitions : undefined;
    if (list === undefined || list.length > MAX_PARTITIONS_PER_FETCH) {
      throw new Error("bad replicaFetch request");
    }
    const listed = parseAll(list, parseFetchPartition, "partition");
    // A fetch in a session names only what changed; the session holds the rest (fetch-session.ts).
    // Without one (a broker of an older version), the fetch lists every partition, as before.
    let wanted = listed;
    let session: { id: number; parts: SessionPartition[]; named: Set<string> } | undefined;
    if (b.session !== undefined) {
      const ref = parseSession(b.session);
      const gone = b.forgotten ?? [];
      if (ref === undefined || !Array.isArray(gone) || gone.length > MAX_PARTITIONS_PER_FETCH) {
        throw new Error("bad replicaFetch session");
      }
      const forgotten = parseAll(gone, parseForgotten, "forgotten partition");
      const opened = this.#sessions.open(
        from,
        { session: ref, partitions: listed, forgotten },
        performance.now(),
      );
      if ("errorCode" in opened) return { body: { errorCode: opened.errorCode, results: [] } };
      const parts = [...opened.session.parts.values()];
      if (parts.length > MAX_PARTITIONS_PER_FETCH) {
        throw new Error("replicaFetch session too large");
      }
      session = { id: opened.session.id, parts, named: opened.named };
      wanted = parts.map((p) => p.q);
    }
    const maxWait = isInt(b.maxWaitMs) ? Math.min(Math.max(b.maxWaitMs, 0), 5000) : FETCH_WAIT_MS;
    // A follower may be proposed for an ISR only while its broker is unfenced (as the metadata
    // here says) and not shutting down (as its fetch says).
    const mayJoin = b.leaving !== true && this.partitions.meta.isUnfenced(from);
    const deadline = performance.now() + maxWait;
    // The follower may ask for this poll to end early (replicaWake).
    let ended = false;
    let wakeNow: (() => void) | undefined;
    const end = () => {
      ended = true;
      wakeNow?.();
    };
    // Registered only once the fetch parks: most fetches under load answer at once.
    let parked: Set<() => void> | undefined;
    const wait = bulkWait(this.#bulkTurn.get(from), wanted, performance.now());
    if (wait > 0) await Bun.sleep(wait);
    try {
      for (;;) {
        const t0 = performance.now();
        let budget = RESPONSE_MAX_BYTES;
        const results: ReplicaFetchResult[] = [];
        const tails: Uint8Array[][] = [];
        /** Partitions whose read stopped at PARTITION_MAX_BYTES with more to copy: where. */
        const more: { i: number; next: number }[] = [];
        let any = false;
        let throttled = false;
        for (const q of wanted) {
          const { result, records, held, next } = this.#serveOne(from, q, budget, mayJoin);
          if (held) throttled = true;
          if (next !== undefined) more.push({ i: results.length, next });
          results.push(result);
          tails.push(records === undefined ? [] : [records]);
          if (records !== undefined) budget -= records.length;
          if (result.errorCode !== 0 || result.bytes > 0 || result.diverging) any = true;
        }
        // What the partitions near their end left of the response goes to those far behind (a
        // new replica copying a whole log, a follower back from a restart): one round trip then
        // carries up to BULK_RESPONSE_BYTES of it instead of 1 MiB, while every partition still
        // got its own 1 MiB first.
        let bulk = BULK_RESPONSE_BYTES - (RESPONSE_MAX_BYTES - budget);
        const goesOn = new Set<string>();
        for (const { i, next } of more) {
          const q = wanted[i];
          const got = bulk > 0 ? this.#serveMore(q, next, results[i], tails[i], bulk) : undefined;
          bulk -= got?.added ?? 0;
          goesOn.add(bulkKey(q.topicId, q.partition, got?.next ?? next));
        }
        const now = performance.now();
        const left = deadline - now;
        if (any || left <= 0 || this.#stopped || ended) {
          if (more.length > 0) this.#bulkTurn.set(from, { at: now + (now - t0), next: goesOn });
          else this.#bulkTurn.delete(from);
          this.stats.fetchesServed++;
          if (session === undefined) {
            const tail = tails.flat();
            for (const t of tail) this.stats.bytesServed += t.length;
            return { body: { results }, tail };
          }
          // In a session, only what the follower does not know yet goes back.
          const told: ReplicaFetchResult[] = [];
          const tail: Uint8Array[] = [];
          for (let i = 0; i < results.length; i++) {
            const p = session.parts[i];
            if (!mustAnswer(p, results[i], session.named.has(p.key))) continue;
            told.push(results[i]);
            for (const t of tails[i]) {
              tail.push(t);
              this.stats.bytesServed += t.length;
            }
          }
          return { body: { results: told, session: { id: session.id } }, tail };
        }
        if (parked === undefined) {
          parked = this.#parkedBy.get(from);
          if (parked === undefined) this.#parkedBy.set(from, parked = new Set());
          parked.add(end);
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            this.#appendWaiters.delete(wake);
            wakeNow = undefined;
            resolve();
          };
          // A throttled copy is looked at again soon: its bucket refills without any append.
          const timer = setTimeout(wake, throttled ? Math.min(left, 50) : left);
          this.#appendWaiters.add(wake);
          wakeNow = wake;
        });
      }
    } finally {
      if (parked !== undefined) {
        parked.delete(end);
        if (parked.size === 0 && this.#parkedBy.get(from) === parked) this.#parkedBy.delete(from);
      }
    }
  }

  #serveOne(
    from: number,
    q: ReplicaFetchPartition,
    budget: number,
    mayJoin: boolean,
  ): { result: ReplicaFetchResult; records?: Uint8Array; held?: boolean; next?: number } {
    const base: ReplicaFetchResult = {
      topicId: q.topicId,
      partition: q.partition,
      errorCode: 0,
      highWatermark: -1,
      logStartOffset: -1,
      logEndOffset: -1,
      bytes: 0,
    };
    if (!this.partitions.has(q.topic, q.partition)) {
      return { result: { ...base, errorCode: E.UNKNOWN_TOPIC_OR_PARTITION } };
    }
    const r = this.partitions.partition(q.topic, q.partition);
    if (r.topicId !== q.topicId) {
      return { result: { ...base, errorCode: E.UNKNOWN_TOPIC_OR_PARTITION } };
    }
    // Identity is the connection's (the hello), and it must be one of the partition's replicas.
    if (!r.isLeader || !r.replicas.includes(from) || from === this.cluster.nodeId) {
      return { result: { ...base, errorCode: E.NOT_LEADER_OR_FOLLOWER } };
    }
    if (q.currentLeaderEpoch !== r.leaderEpoch) {
      const code = q.currentLeaderEpoch < r.leaderEpoch
        ? E.FENCED_LEADER_EPOCH
        : E.UNKNOWN_LEADER_EPOCH;
      return { result: { ...base, errorCode: code } };
    }
    const log = r.log;
    const filled = {
      ...base,
      highWatermark: r.highWatermark(),
      logStartOffset: log.logStartOffset(),
      logEndOffset: log.logEndOffset(),
    };
    // Below the leader's log start: nothing to compare; the follower starts over there.
    if (q.fetchOffset < log.logStartOffset()) return { result: filled };
    const diverging = findDivergence(
      (e) => log.endOffsetForEpoch(e),
      q.lastFetchedEpoch,
      q.fetchOffset,
      log.logStartOffset(),
    );
    if (diverging !== undefined) return { result: { ...filled, diverging } };
    if (q.fetchOffset > log.logEndOffset()) {
      return { result: { ...filled, errorCode: E.OFFSET_OUT_OF_RANGE } };
    }
    // Only a position in this leader's history counts (checked above): record it.
    r.onFollowerFetch(from, q.fetchOffset, q.durableEnd, mayJoin);
    const out = { ...filled, highWatermark: r.highWatermark() };
    if (
      q.fetchOffset < log.logStartOffset() || q.fetchOffset >= log.logEndOffset() || budget <= 0
    ) {
      return { result: out };
    }
    let max = Math.min(PARTITION_MAX_BYTES, budget);
    const rate = this.copyRate(r, from);
    if (rate > 0) {
      const allow = this.#leaderThrottle.allowance(rate);
      if (allow === 0) return { result: out, held: true };
      max = Math.min(max, allow);
    }
    const read = log.read(q.fetchOffset, max, log.logEndOffset());
    if (rate > 0) {
      this.#leaderThrottle.take(read.records.length, rate);
      this.stats.reassignBytesServed += read.records.length;
    }
    const result = { ...out, bytes: read.records.length };
    // Unthrottled, stopped by the per-partition limit with more after it: `next` says where the
    // rest of the response may go on (serve's second pass).
    const more = rate === 0 && max === PARTITION_MAX_BYTES && read.records.length > 0 &&
      read.nextOffset < log.logEndOffset();
    return { result, records: read.records, next: more ? read.nextOffset : undefined };
  }

  /**
   * A partition far behind gets more of the response: its records go on from `at` (where its
   * first read stopped), up to `budget` bytes, segment by segment. Returns the bytes added and
   * where they end.
   */
  #serveMore(
    q: ReplicaFetchPartition,
    at: number,
    res: ReplicaFetchResult,
    tail: Uint8Array[],
    budget: number,
  ): { added: number; next: number } {
    const log = this.partitions.partition(q.topic, q.partition).log;
    let added = 0;
    while (added < budget && at < log.logEndOffset()) {
      let read;
      try {
        read = log.read(at, budget - added, log.logEndOffset());
      } catch {
        break; // damage further on: the next fetch's first read meets it and says so
      }
      // Only whole batches within the budget (a first read may hand out one larger batch).
      if (read.records.length === 0 || read.records.length > budget - added) break;
      tail.push(read.records);
      added += read.records.length;
      at = read.nextOffset;
    }
    res.bytes += added;
    return { added, next: at };
  }

  /**
   * The throttle on `follower`'s copy of `r`: a replica a reassignment adds, not yet in sync, is
   * held to the reassignment's rate (or the broker's default); every other fetch goes unthrottled,
   * so ordinary replication of in-sync followers is never slowed. 0: unthrottled.
   */
  copyRate(r: Replica, follower: number): number {
    const ra = r.reassignment;
    if (!ra?.started || ra.original.includes(follower) || !ra.target.includes(follower)) return 0;
    if (r.isr.includes(follower)) return 0;
    return ra.throttle > 0 ? ra.throttle : this.defaultReassignThrottle;
  }

  /** Whether this broker's copy of `r` is throttled (a follower-side bucket paces it). */
  throttledCopy(r: Replica): boolean {
    return this.copyRate(r, this.cluster.nodeId) > 0;
  }

  /** A follower copied `bytes` of `r`: ms its next fetch of it waits (follower-side throttle). */
  copied(r: Replica, bytes: number): number {
    const rate = this.copyRate(r, this.cluster.nodeId);
    if (rate === 0) return 0;
    this.stats.reassignBytesCopied += bytes;
    return this.#followerThrottle.take(bytes, rate);
  }

  // ---- used by fetchers --------------------------------------------------------------------

  /** Apply one partition's fetch answer on this follower. Returns true if bytes were appended. */
  async applyFetched(r: Replica, res: ReplicaFetchResult, records: Uint8Array): Promise<boolean> {
    const log = r.log;
    const actions = followerActions(res, {
      logEnd: log.logEndOffset(),
      logStart: log.logStartOffset(),
      endOffsetFor: (e) => log.endOffsetForEpoch(e),
    });
    let appended = false;
    for (const a of actions) {
      switch (a.kind) {
        case "truncate":
          this.stats.truncations++;
          this.log.warn("follower truncating to where its log agrees with the leader's", {
            topic: r.topic,
            partition: r.partition,
            from: log.logEndOffset(),
            to: a.offset,
            diverging_epoch: res.diverging?.epoch,
          });
          {
            const before = `${log.logEndOffset()}/${log.latestEpoch()}`;
            await log.truncateTo(a.offset);
            r.capFollowerHw();
            // The next fetch must ask something new, or the two would repeat this for ever.
            if (`${log.logEndOffset()}/${log.latestEpoch()}` === before) {
              throw new Error(`divergence at ${a.offset} made no progress`);
            }
          }
          break;
        case "reset":
          this.log.warn("follower starts over at the leader's log start", {
            topic: r.topic,
            partition: r.partition,
            log_end: log.logEndOffset(),
            leader_log_start: a.offset,
          });
          await log.resetTo(a.offset);
          r.capFollowerHw();
          return false;
        case "append":
          // In place: the reply's buffer is ours, and a replicated batch is not rewritten.
          log.append(records, { leaderEpoch: r.leaderEpoch, origin: "replication", inPlace: true });
          this.stats.bytesCopied += records.length;
          appended = true;
          break;
        case "deleteBefore":
          if (a.offset <= log.logEndOffset()) await log.deleteRecords(a.offset);
          break;
        case "highWatermark":
          r.setFollowerHw(a.offset);
          break;
      }
    }
    return appended;
  }
}
