// A follower's fetcher: one per leader this broker follows, on a connection of its own. It
// fetches, appends what comes back (ReplicaManager.applyFetched), syncs, and fetches again; a
// replica far behind asks for its next records before appending these (fetchAhead).
import type { CallResult, PeerLink } from "../cluster/peer-link.ts";
import { alignAnswer, FetchSessionClient, partitionKey } from "./fetch-session.ts";
import { fetchAhead, type ReplicaFetchPartition, type ReplicaFetchResult } from "./follower.ts";
import type { Replica } from "./replica.ts";
import type { ReplicaManager } from "./replica-manager.ts";

/** A follower's fetch waits at most this long at the leader when there is nothing new. */
export const FETCH_WAIT_MS = 500;

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

const replicaKey = (r: Replica): string => partitionKey(r.topicId, r.partition);

/** One leader's partitions followed here: fetch, apply, sync, fetch again. */
export class Fetcher {
  #parts = new Set<Replica>();
  #stopped = false;
  #backoff = new Map<Replica, number>();
  /** The replicas of the fetch in flight (null: none), and whether it was asked to end. */
  #inFlight: ReadonlySet<Replica> | null = null;
  #wakeSent = false;
  /** Names only the partitions whose position changed since the last fetch (fetch-session.ts). */
  readonly #session = new FetchSessionClient<Replica>();

  constructor(readonly leader: number, readonly link: PeerLink, readonly mgr: ReplicaManager) {}

  set(rs: Replica[]): void {
    this.#parts = new Set(rs);
    for (const r of rs) this.#newcomer(r);
  }

  add(r: Replica): void {
    this.#parts.add(r);
    this.#newcomer(r);
  }

  /**
   * A replica to fetch that the fetch in flight does not carry (a leadership moved here): that
   * fetch may be parked at the leader for up to FETCH_WAIT_MS, so ask the leader to end it.
   * Without this a new leader's watermark waited out a poll before its followers reported in.
   */
  #newcomer(r: Replica): void {
    if (this.#inFlight === null || this.#wakeSent || this.#inFlight.has(r)) return;
    this.#wakeSent = true;
    this.link.call("replicaWake", {}, 1000).catch(() => {});
  }

  delete(r: Replica): void {
    this.#parts.delete(r);
    this.#backoff.delete(r);
  }

  get size(): number {
    return this.#parts.size;
  }

  start(): void {
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.link.close();
  }

  async #run(): Promise<void> {
    /** A fetch sent before the last answer was appended (fetchAhead), and what it expects. */
    let ahead: Ahead | undefined;
    while (!this.#stopped) {
      let parts: Replica[];
      let req: ReplicaFetchPartition[];
      let call: Promise<CallResult>;
      if (ahead !== undefined) {
        ({ parts, req, call } = ahead);
        ahead = undefined;
      } else {
        const now = performance.now();
        parts = [...this.#parts].filter((r) =>
          !r.isLeader && r.leader === this.leader && (this.#backoff.get(r) ?? 0) <= now
        );
        if (parts.length === 0) {
          await Bun.sleep(50);
          continue;
        }
        req = parts.map((r): ReplicaFetchPartition => ({
          topicId: r.topicId,
          topic: r.topic,
          partition: r.partition,
          currentLeaderEpoch: r.leaderEpoch,
          fetchOffset: r.log.logEndOffset(),
          lastFetchedEpoch: r.log.latestEpoch(),
          durableEnd: r.log.durableEndOffset(),
          logStartOffset: r.log.logStartOffset(),
        }));
        call = this.#send(parts, req);
      }
      let res;
      try {
        res = await call;
      } catch (e) {
        this.#inFlight = null;
        // The leader may or may not have applied the lost request: start the session afresh.
        this.#session.reset();
        if (this.#stopped) return;
        this.mgr.log.debug("replica fetch failed", { leader: this.leader, error: String(e) });
        await Bun.sleep(200);
        continue;
      }
      this.#inFlight = null;
      const answer = (res.body ?? {}) as {
        results?: unknown;
        session?: unknown;
        errorCode?: unknown;
      };
      // A session the leader no longer knows (it restarted, or a request was lost): at once, in
      // full.
      if (Array.isArray(answer.results) && !this.#session.answered(answer)) continue;
      // In a session the answer names only the partitions with news: lined up with `parts`
      // again (undefined: nothing new), as a full answer is.
      const aligned = Array.isArray(answer.results)
        ? alignAnswer(parts, replicaKey, answer.results as ReplicaFetchResult[], res.tail)
        : undefined;
      if (aligned === undefined) {
        this.#session.reset();
        await Bun.sleep(200);
        continue;
      }
      const { results, tail } = aligned;
      ahead = this.#fetchAhead(parts, req, results, tail);
      let at = 0;
      const synced: Promise<void>[] = [];
      for (let i = 0; i < parts.length; i++) {
        const r = parts[i];
        const x = results[i];
        if (x === undefined) continue;
        const n = isInt(x.bytes) && x.bytes >= 0 ? x.bytes : 0;
        const records = tail.subarray(at, at + n);
        at += n;
        // The replica changed role or epoch while the fetch was out: the answer is stale.
        if (r.isLeader || r.leader !== this.leader || r.leaderEpoch !== req[i].currentLeaderEpoch) {
          continue;
        }
        if (x.errorCode !== 0) {
          this.#backoff.set(r, performance.now() + 100);
          continue;
        }
        try {
          if (await this.mgr.applyFetched(r, x, records)) {
            const wait = this.mgr.copied(r, records.length);
            if (wait > 0) this.#backoff.set(r, performance.now() + wait);
            // Report only synced bytes: sync before the next fetch says where we are. A replica
            // with more to copy fetches on while its sync runs (a shared round: the next fetch
            // reports whatever is durable by then): waiting added a sync to every round trip.
            const sync = r.log.waitDurable(r.log.logEndOffset()).catch(() => {});
            if (r.log.logEndOffset() >= x.logEndOffset) synced.push(sync);
          }
        } catch (e) {
          this.mgr.log.warn("could not apply replicated data", {
            topic: r.topic,
            partition: r.partition,
            error: e instanceof Error ? e.message : String(e),
          });
          this.#backoff.set(r, performance.now() + 500);
        }
      }
      // Every append wrote the records before returning (appends are synchronous): the reply's
      // buffer is free for the next one.
      res.release?.();
      // The early fetch asked from where these appends were to end: anything else (an append
      // refused, a role or epoch changed meanwhile) and its answer is dropped, unread.
      if (ahead !== undefined && !ahead.req.every((q, i) => aheadHolds(ahead!.parts[i], q))) {
        void ahead.call.then((a) => a.release?.(), () => {});
        ahead = undefined;
        this.#inFlight = null;
        // The leader took the dropped fetch's positions into the session; its answer is unread.
        this.#session.reset();
      }
      if (synced.length > 0) await Promise.all(synced);
    }
  }

  #send(parts: Replica[], req: ReplicaFetchPartition[]): Promise<CallResult> {
    this.#inFlight = new Set(parts);
    this.#wakeSent = false;
    this.mgr.stats.fetchesSent++;
    const s = this.#session.build(parts, req);
    const body = {
      maxWaitMs: FETCH_WAIT_MS,
      partitions: s.partitions,
      session: s.session,
      forgotten: s.forgotten,
    };
    return this.link.call(
      "replicaFetch",
      this.mgr.leaving ? { ...body, leaving: true } : body,
      5000,
    );
  }

  /**
   * The next fetch, sent now, before this answer is appended (fetchAhead): only when every
   * partition of it is a bulk copy with more to come and unthrottled (a throttled copy waits
   * for its bucket; a partition near its end fetches, and reports, after its append and sync).
   */
  #fetchAhead(
    parts: Replica[],
    req: ReplicaFetchPartition[],
    results: (ReplicaFetchResult | undefined)[],
    tail: Uint8Array,
  ): Ahead | undefined {
    const next: ReplicaFetchPartition[] = [];
    let at = 0;
    for (let i = 0; i < parts.length; i++) {
      const r = parts[i];
      const x = results[i];
      if (x === undefined) return undefined; // nothing new for it: not a bulk copy
      const n = isInt(x.bytes) && x.bytes >= 0 ? x.bytes : 0;
      const q = req[i];
      const to = fetchAhead(q.fetchOffset, x, tail.subarray(at, at + n));
      at += n;
      if (
        to === undefined || r.isLeader || r.leader !== this.leader ||
        r.leaderEpoch !== q.currentLeaderEpoch || r.log.logEndOffset() !== q.fetchOffset ||
        this.mgr.throttledCopy(r)
      ) return undefined;
      next.push({
        ...q,
        ...to,
        durableEnd: r.log.durableEndOffset(),
        logStartOffset: r.log.logStartOffset(),
      });
    }
    const call = this.#send(parts, next);
    call.catch(() => {}); // awaited next round, or dropped
    return { parts, req: next, call };
  }
}

interface Ahead {
  parts: Replica[];
  req: ReplicaFetchPartition[];
  call: Promise<CallResult>;
}

/** Whether `r`, once the answer before `q` was appended, is where `q` said it would be. */
function aheadHolds(r: Replica, q: ReplicaFetchPartition): boolean {
  return !r.isLeader && r.leaderEpoch === q.currentLeaderEpoch &&
    r.log.logEndOffset() === q.fetchOffset && r.log.latestEpoch() === q.lastFetchedEpoch;
}
