// The controller's IO shell. It runs on every broker and acts only while this broker leads the
// metadata quorum: it keeps broker sessions (SessionTracker), fences a broker whose session ended
// and elects new leaders for its partitions (elections.ts), unfences brokers that caught up, moves
// leadership away from a broker shutting down, moves it back to preferred replicas, and checks
// leaders' ISR changes. Every decision is a committed metadata record; events are handled one at
// a time, each on the metadata as applied after the previous one.
import type { ClusterService } from "../cluster/node.ts";
import type { Logger } from "../log.ts";
import type { MetadataStore } from "../meta/index.ts";
import { ErrorCode, errorCodeOf } from "../protocol/kafka/error-codes.ts";
import {
  checkIsrChange,
  onFenced,
  onShutdown,
  onUnfenced,
  type PartitionChange,
  type PartitionView,
  preferredElections,
} from "./elections.ts";
import { DEFAULT_SESSIONS, type SessionOptions, SessionTracker } from "./sessions.ts";
import { partitionChangeRecord } from "./change-record.ts";
import { OFFSETS_TOPIC } from "../groups/index.ts";
import { type MovingPartition, reassignmentSteps } from "./reassignment.ts";
import {
  parseReassignRequest,
  planReassignRequest,
  type ReassignResult,
} from "./reassign-requests.ts";

/** The replication factor __consumer_offsets grows to once the cluster has that many brokers. */
const OFFSETS_RF = 3;

/**
 * `replicas` grown to `target` with live brokers, in an order whose first (preferred) replica
 * rotates with the partition number over the live brokers, so leadership spreads once the new
 * replicas are in sync and preferred elections run. Existing replicas are kept.
 */
export function grownReplicas(
  replicas: readonly number[],
  live: readonly number[],
  partition: number,
  target: number,
): number[] {
  const sorted = [...live].sort((a, b) => a - b);
  const n = sorted.length;
  const set = [...replicas];
  for (let i = 0; i < n && set.length < target; i++) {
    const id = sorted[(partition + i) % n];
    if (!set.includes(id)) set.push(id);
  }
  const preferred = sorted[partition % n];
  if (!set.includes(preferred)) return set;
  return [preferred, ...set.filter((id) => id !== preferred)];
}

export interface ControllerOptions {
  sessions?: Partial<SessionOptions>;
  /** auto.leader.rebalance.enable */
  autoLeaderRebalance?: boolean;
  /** leader.imbalance.check.interval.seconds, in ms */
  rebalanceCheckMs?: number;
  /** leader.imbalance.per.broker.percentage / 100 */
  imbalance?: number;
  /** Partitions whose reassignment copies at once; more wait their turn (default 10). */
  reassignMaxConcurrent?: number;
}

export interface ControllerCounters {
  elections: number;
  fences: number;
  unfences: number;
  isrChanges: number;
}

const TICK_MS = 100;

/** An AlterPartition request waiting for the controller's next decision. */
interface PendingAlter {
  topicId: string;
  partition: number;
  req: { from: number; leaderEpoch: number; partitionEpoch: number; isr: number[] };
  resolve: (r: { body: unknown }) => void;
}
/** How often a controller looks for elections a failed predecessor left undone. */
const REPAIR_CHECK_MS = 1000;
/** How often a controller moves reassignments on (start queued ones, complete caught-up ones). */
const REASSIGN_CHECK_MS = 250;
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
/** The most unclean logs a registration lists; a broker with more sends none (keeps nothing). */
export const MAX_UNCLEAN_LOGS = 10_000;
const LOG_KEY = /^[0-9A-Za-z_-]{1,64}:\d{1,10}$/;

/**
 * Which partitions a restarted broker goes on leading without an election, from its register
 * call: single-replica partitions it is the only replica of, except those it lists as not
 * reopened clean (crash recovery may have dropped records, so their leader epoch must move on).
 * Nothing is kept for a body that lists none (an older broker) or one that does not parse.
 */
export function keptLeaderships(
  broker: number,
  body: Record<string, unknown>,
): ((p: PartitionView) => boolean) | undefined {
  const list = body.uncleanLogs;
  if (
    !Array.isArray(list) || list.length > MAX_UNCLEAN_LOGS ||
    !list.every((k) => typeof k === "string" && LOG_KEY.test(k))
  ) return undefined;
  const unclean = new Set(list as string[]);
  return (p) =>
    p.replicas.length === 1 && p.replicas[0] === broker &&
    !unclean.has(`${p.topicId}:${p.partition}`);
}

export class ControllerService {
  readonly sessions: SessionTracker;
  readonly counters: ControllerCounters = { elections: 0, fences: 0, unfences: 0, isrChanges: 0 };
  #term = -1;
  #queue: Promise<unknown> = Promise.resolve();
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastRebalance = 0;
  #lastOffsetsCheck = 0;
  #lastRepairCheck = 0;
  #lastReassignCheck = 0;
  #busy = new Set<string>();
  #stopped = false;
  /**
   * Restarted brokers registered but not unfenced yet, with the partitions they go on leading
   * (keptLeaderships): fences and repairs leave those alone until they are unfenced, or until
   * their session ends first (then they go offline as for any fenced broker). In memory only: a
   * new controller takes them offline and elects them again, as before.
   */
  readonly #returning = new Map<number, (p: PartitionView) => boolean>();
  /**
   * Per fenced broker: the applied index it must reach before it is unfenced, taken the first
   * time this controller looks at it once no fence pass for it is running, so it covers the
   * elections that took its leaderships away. Having applied its own registration is not
   * enough: a broker fenced by its session (cut off, still running) that is unfenced before it
   * has seen those elections takes its old leaderships back as it knows them (a chaos run saw
   * it answer OffsetFetch with offsets 795 commits old).
   */
  readonly #unfenceAt = new Map<number, number>();
  /**
   * Periodic checks (repair, rebalance, reassignment steps) that found nothing to do, with the
   * metadata index they looked at: each reads every partition, so while nothing is applied they
   * are not run again (at 10,000 partitions the listings every 250 ms kept a core busy).
   */
  readonly #idleAt = new Map<string, number>();

  constructor(
    readonly cluster: ClusterService,
    readonly meta: MetadataStore,
    readonly log: Logger,
    readonly o: ControllerOptions = {},
  ) {
    this.sessions = new SessionTracker({ ...DEFAULT_SESSIONS, ...o.sessions });
  }

  start(): void {
    this.cluster.handleCall("heartbeat", (from, body) => this.heartbeat(from, body));
    this.cluster.handleCall("alterPartition", (from, body) => this.alterPartition(from, body));
    this.cluster.handleCall("shutdown", (from) => this.shutdown(from));
    this.cluster.handleCall("reassign", (_from, body) => this.reassign(body));
    this.cluster.onPeerClosed((id) => this.sessions.hint(id, performance.now()));
    this.cluster.onBeforeRegister((id, body) => this.beforeRegister(id, body));
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  get active(): boolean {
    return !this.#stopped && this.cluster.isController();
  }

  /** Run one controller event after the previous one finished (each sees the applied state). */
  #serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#busy.add(key);
    this.#queue = run.catch(() => undefined).finally(() => this.#busy.delete(key));
    return run;
  }

  #ensureTerm(): boolean {
    if (!this.active) {
      this.#term = -1;
      return false;
    }
    const term = this.cluster.controllerTerm();
    if (term !== this.#term) {
      this.#term = term;
      this.#returning.clear();
      this.#idleAt.clear();
      this.#unfenceAt.clear();
      // A new controller: every broker gets a fresh (short) session; live ones heartbeat at once.
      this.sessions.start(
        this.meta.listBrokers().map((b) => b.nodeId),
        performance.now(),
        (id) => !this.cluster.peerConnected(id),
      );
      this.log.info("controller started", { term });
    }
    return true;
  }

  #tick(): void {
    if (!this.#ensureTerm()) return;
    const now = performance.now();
    for (const id of this.sessions.expire(now)) {
      if (id === this.cluster.nodeId) continue;
      const b = this.meta.listBrokers().find((x) => x.nodeId === id);
      // A restarted broker that went silent before it was unfenced: what it kept goes offline.
      const returned = this.#returning.delete(id);
      if (b === undefined || (b.fenced && !returned)) continue;
      void this.#serial(`fence:${id}`, () => this.#fence(id, "session expired"));
    }
    for (const b of this.meta.listBrokers()) {
      if (b.fenced && !this.#busy.has(`unfence:${b.nodeId}`)) this.#maybeUnfence(b.nodeId);
    }
    if (now - this.#lastOffsetsCheck > 2000 && !this.#busy.has("offsets")) {
      this.#lastOffsetsCheck = now;
      void this.#serial("offsets", () => this.#growOffsetsTopic());
    }
    if (
      (this.o.autoLeaderRebalance ?? true) &&
      now - this.#lastRebalance > (this.o.rebalanceCheckMs ?? 5000) && !this.#busy.has("rebalance")
    ) {
      this.#lastRebalance = now;
      void this.#serial("rebalance", () => this.#rebalance());
    }
    if (now - this.#lastRepairCheck > REPAIR_CHECK_MS && !this.#busy.has("repair")) {
      this.#lastRepairCheck = now;
      void this.#serial("repair", () => this.#repair());
    }
    if (now - this.#lastReassignCheck > REASSIGN_CHECK_MS) this.#reassignSoon();
  }

  /** Move reassignments on now (after the controller event running, if any), not a period later. */
  #reassignSoon(): void {
    // One already queued sees the latest state; one running may not: the next tick runs again.
    if (this.#busy.has("reassign")) {
      this.#lastReassignCheck = 0;
      return;
    }
    this.#lastReassignCheck = performance.now();
    void this.#serial("reassign", () => this.#reassignSteps());
  }

  /** Whether the check `task` found nothing to do with the metadata as applied now. */
  #idleNow(task: string): boolean {
    return this.#idleAt.get(task) === this.cluster.appliedIndex();
  }

  #noteIdle(task: string, at: number, idle: boolean): void {
    if (idle) this.#idleAt.set(task, at);
    else this.#idleAt.delete(task);
  }

  /** Reassignments move on: queued ones start (up to the bound), caught-up ones complete. */
  async #reassignSteps(): Promise<void> {
    if (!this.active || this.#idleNow("reassign")) return;
    const at = this.cluster.appliedIndex();
    const view = this.#view();
    if (!view.some((p) => p.reassignment)) return this.#noteIdle("reassign", at, true);
    const minIsr = new Map<string, number>();
    const changes = reassignmentSteps(
      view,
      this.#live(),
      (p) => {
        let m = minIsr.get(p.topic);
        if (m === undefined) {
          m = this.meta.topicConfig(p.topic).minInsyncReplicas;
          minIsr.set(p.topic, m);
        }
        return m;
      },
      this.o.reassignMaxConcurrent ?? 10,
    );
    this.#noteIdle("reassign", at, changes.length === 0);
    if (changes.length > 0) await this.#apply(changes);
  }

  /**
   * Submit, cancel or throttle reassignments (the "reassign" cluster call): planned over the
   * applied metadata, each change appended with the partition epoch it saw; one refused as
   * stale (it raced an ISR change or an election) is planned once more. Answers per partition.
   */
  async reassign(body: unknown): Promise<{ body: unknown }> {
    if (!this.#ensureTerm()) throw new Error("not the controller");
    const req = parseReassignRequest(body);
    return await this.#serial("reassign-request", async () => {
      const registered = new Set(this.meta.listBrokers().map((b) => b.nodeId));
      const results: ReassignResult[] = [];
      let todo = req.items.map((_, i) => i);
      for (let round = 0; round < 3 && todo.length > 0; round++) {
        const items = todo.map((i) => req.items[i]);
        const plan = planReassignRequest(
          { ...req, items },
          this.#view(),
          (id) => registered.has(id),
          this.#live(),
        );
        const stale: number[] = [];
        await Promise.all([...plan.changes].map(async ([j, c]) => {
          try {
            await this.cluster.appendAsController(partitionChangeRecord(c));
            this.log.info("reassignment", { partition: c.partition, reason: c.reason });
          } catch (e) {
            const code = errorCodeOf(e);
            if (code === ErrorCode.INVALID_UPDATE_VERSION) stale.push(j);
            plan.results[j].errorCode = code;
            plan.results[j].message = e instanceof Error ? e.message : String(e);
          }
        }));
        plan.results.forEach((r, j) => results[todo[j]] = r);
        todo = stale.map((j) => todo[j]);
      }
      this.#reassignSoon(); // a new move starts once this request is done, not a period later
      return { body: { results } };
    });
  }

  /**
   * Elections the brokers' fenced flags call for but nobody made: a controller that failed
   * between a BrokerFenced record and the partition changes after it leaves a fenced broker
   * leading or in an online ISR, or a partition offline with a live ISR member, and fences and
   * unfences are events done once. Found by the simulator (seeds 777 and 820): a partition
   * stayed offline with its only ISR member live.
   */
  async #repair(): Promise<void> {
    if (!this.active || this.#idleNow("repair")) return;
    const at = this.cluster.appliedIndex();
    const view = this.#view();
    const live = this.#live();
    for (const b of this.meta.listBrokers()) {
      const owed = b.fenced
        ? onFenced(view, b.nodeId, live, this.#returning.get(b.nodeId))
        : onUnfenced(view, b.nodeId, live);
      if (owed.length === 0) continue;
      for (const c of owed) c.reason = `repair: ${c.reason}`;
      this.#noteIdle("repair", at, false);
      await this.#apply(owed);
      return; // the next check sees the state these changes made
    }
    this.#noteIdle("repair", at, true);
  }

  #maybeUnfence(id: number): void {
    const now = performance.now();
    const self = id === this.cluster.nodeId;
    if (!self && !this.sessions.alive(id, now)) return;
    if (this.sessions.shuttingDown(id)) return;
    const b = this.meta.listBrokers().find((x) => x.nodeId === id);
    if (b === undefined || !b.fenced || this.#busy.has(`fence:${id}`)) return;
    // Caught up on metadata: its own registration, and everything decided while it was fenced.
    let at = this.#unfenceAt.get(id);
    if (at === undefined) this.#unfenceAt.set(id, at = this.cluster.appliedIndex());
    const applied = self ? this.cluster.appliedIndex() : this.sessions.appliedIndex(id);
    if (applied < b.epoch || applied < at) return;
    void this.#serial(`unfence:${id}`, () => this.#unfence(id));
  }

  // ---- views -------------------------------------------------------------------------------

  #live(): (id: number) => boolean {
    const fenced = new Map(this.meta.listBrokers().map((b) => [b.nodeId, b.fenced]));
    return (id) => fenced.get(id) === false;
  }

  /** The partitions as of an applied index: the tick's checks ask every 250 ms, and so does
   * every ISR proposal; a scan of every topic and partition each time was the controller's main
   * idle cost (and grows with the partition count). Read-only for callers. */
  #viewCache: { at: number; view: MovingPartition[] } | undefined;

  #view(): MovingPartition[] {
    const at = this.cluster.appliedIndex();
    if (at > 0 && this.#viewCache?.at === at) return this.#viewCache.view;
    const out: MovingPartition[] = [];
    const dflt = this.meta.topicDefaults["unclean.leader.election.enable"] === "true";
    for (const t of this.meta.listTopics()) {
      const v = t.configs["unclean.leader.election.enable"];
      const unclean = v === undefined ? dflt : v === "true";
      for (const p of t.partitions) {
        out.push({ ...p, topicId: t.topicId, topic: t.name, unclean });
      }
    }
    if (at > 0) this.#viewCache = { at, view: out };
    return out;
  }

  async #apply(changes: PartitionChange[]): Promise<number> {
    return (await this.#applyEach(changes)).filter((ok) => ok).length;
  }

  /** Appends every change at once (one Raft batch when they are many); which ones committed. */
  async #applyEach(changes: PartitionChange[]): Promise<boolean[]> {
    return await Promise.all(changes.map(async (c) => {
      const rec = partitionChangeRecord(c);
      try {
        await this.cluster.appendAsController(rec);
        if (c.leader !== undefined) this.counters.elections++;
        else this.counters.isrChanges++;
        const what = c.replicas !== undefined
          ? "replicas changed"
          : c.leader === undefined
          ? "ISR changed"
          : c.leader === -1
          ? "partition offline"
          : "leader elected";
        this.log.info(what, {
          topic_id: c.topicId,
          partition: c.partition,
          leader: c.leader,
          leader_epoch: c.leaderEpoch,
          isr: c.isr,
          reason: c.reason,
        });
        return true;
      } catch (e) {
        this.log.warn("partition change not committed", {
          partition: c.partition,
          reason: c.reason,
          error: e instanceof Error ? e.message : String(e),
        });
        return false;
      }
    }));
  }

  async #fence(id: number, why: string): Promise<void> {
    if (!this.active) return;
    this.#unfenceAt.delete(id);
    const b = this.meta.listBrokers().find((x) => x.nodeId === id);
    if (b === undefined) return;
    if (!b.fenced) {
      await this.cluster.appendAsController({ type: "BrokerFenced", nodeId: id, fenced: true });
      this.counters.fences++;
      this.log.warn("broker fenced", { broker: id, reason: why });
    }
    await this.#apply(onFenced(this.#view(), id, this.#live(), this.#returning.get(id)));
  }

  async #unfence(id: number): Promise<void> {
    if (!this.active) return;
    const b = this.meta.listBrokers().find((x) => x.nodeId === id);
    if (b === undefined || !b.fenced) return;
    await this.cluster.appendAsController({ type: "BrokerFenced", nodeId: id, fenced: false });
    this.#returning.delete(id);
    this.#unfenceAt.delete(id);
    this.counters.unfences++;
    this.log.info("broker unfenced", { broker: id });
    await this.#apply(onUnfenced(this.#view(), id, this.#live()));
  }

  /**
   * A cluster grows from one broker, so __consumer_offsets starts with one replica per
   * partition. Once three brokers are live, each partition gets replicas up to 3, placed so the
   * preferred replicas (and so, after preferred elections, the group coordinators) spread.
   */
  async #growOffsetsTopic(): Promise<void> {
    if (!this.active) return;
    const t = this.meta.getTopic(OFFSETS_TOPIC);
    if (t === undefined) return;
    const live = this.meta.listBrokers().filter((b) => !b.fenced).map((b) => b.nodeId);
    const target = Math.min(OFFSETS_RF, live.length);
    if (live.length < OFFSETS_RF) return;
    const changes: PartitionChange[] = [];
    for (const p of t.partitions) {
      if (p.replicas.length >= target || p.leader === -1 || p.reassignment) continue;
      const replicas = grownReplicas(p.replicas, live, p.partition, target);
      changes.push({
        topicId: t.topicId,
        partition: p.partition,
        partitionEpoch: p.partitionEpoch,
        replicas,
        reason: `${OFFSETS_TOPIC} raised to ${target} replicas`,
      });
    }
    if (changes.length > 0) await this.#apply(changes);
  }

  /**
   * A broker (re-)registers: a previous incarnation's leaderships and ISR places end first,
   * except the single-replica partitions whose logs it reopened clean (keptLeaderships): it
   * leads those again in the same epochs once unfenced, where going offline and being elected
   * back cost two records per partition (a restart of 10,000 partitions wrote 20,000). Its
   * session starts now, so a broker that never heartbeats loses what it kept.
   */
  async beforeRegister(id: number, body: Record<string, unknown> = {}): Promise<void> {
    await this.#serial(`fence:${id}`, async () => {
      this.sessions.end(id);
      const keep = keptLeaderships(id, body);
      if (keep !== undefined) {
        this.#returning.set(id, keep);
        if (id !== this.cluster.nodeId) this.sessions.expect(id, performance.now());
      } else this.#returning.delete(id);
      const b = this.meta.listBrokers().find((x) => x.nodeId === id);
      if (b !== undefined && !b.fenced) await this.#fence(id, "registered again (restarted)");
      else if (b !== undefined) await this.#apply(onFenced(this.#view(), id, this.#live(), keep));
    });
  }

  /** The periodic preferred-leader check (auto.leader.rebalance.enable). */
  async #rebalance(): Promise<void> {
    if (!this.active || this.#idleNow("rebalance")) return;
    const at = this.cluster.appliedIndex();
    const changes = preferredElections(this.#view(), this.#live(), this.o.imbalance ?? 0.1);
    this.#noteIdle("rebalance", at, changes.length === 0);
    if (changes.length > 0) await this.#apply(changes);
  }

  /** Preferred-leader elections; `force` ignores the imbalance threshold (ElectLeaders). */
  async electPreferred(force: boolean): Promise<number> {
    if (!this.active) return 0;
    return await this.#apply(
      preferredElections(this.#view(), this.#live(), this.o.imbalance ?? 0.1, force),
    );
  }

  // ---- calls from brokers ------------------------------------------------------------------

  heartbeat(from: number, body: unknown): Promise<{ body: unknown }> {
    if (!this.#ensureTerm()) return Promise.reject(new Error("not the controller"));
    const b = (body ?? {}) as Record<string, unknown>;
    const applied = isInt(b.appliedIndex) ? b.appliedIndex : -1;
    this.sessions.heartbeat(from, performance.now(), applied, b.shuttingDown === true);
    const reg = this.meta.listBrokers().find((x) => x.nodeId === from);
    if (reg?.fenced) this.#maybeUnfence(from);
    return Promise.resolve({
      body: { fenced: reg?.fenced ?? true, registered: reg !== undefined },
    });
  }

  alterPartition(from: number, body: unknown): Promise<{ body: unknown }> {
    if (!this.#ensureTerm()) return Promise.reject(new Error("not the controller"));
    const b = (body ?? {}) as Record<string, unknown>;
    if (
      typeof b.topicId !== "string" || !isInt(b.partition) || !isInt(b.leaderEpoch) ||
      !isInt(b.partitionEpoch) || !Array.isArray(b.isr) || b.isr.length > 1000 ||
      !b.isr.every(isInt)
    ) return Promise.reject(new Error("bad alterPartition request"));
    const req = {
      from,
      leaderEpoch: b.leaderEpoch,
      partitionEpoch: b.partitionEpoch,
      isr: b.isr as number[],
    };
    const answer = new Promise<{ body: unknown }>((resolve) => {
      this.#alters.push({
        topicId: b.topicId as string,
        partition: b.partition as number,
        req,
        resolve,
      });
    });
    this.#scheduleAlters();
    return answer;
  }

  /**
   * ISR changes wait in one queue and are decided together, as one controller event: a broker
   * rejoining every ISR after a restart sends one request per partition at once, and deciding
   * them one Raft commit after another took 15 ms each (a quarter of a second for 19 partitions,
   * each counting the broker for its high watermark meanwhile).
   */
  readonly #alters: PendingAlter[] = [];
  #altersQueued = false;

  #scheduleAlters(): void {
    if (this.#altersQueued || this.#alters.length === 0) return;
    this.#altersQueued = true;
    void this.#serial("alter", () => this.#decideAlters());
  }

  async #decideAlters(): Promise<void> {
    this.#altersQueued = false;
    const batch = this.#alters.splice(0);
    try {
      await this.#decideAltersOf(batch);
    } catch (e) {
      // Answered, whatever happened (an answer already given stays): the leader proposes again.
      const message = `not decided: ${e instanceof Error ? e.message : String(e)}`;
      for (const a of batch) {
        a.resolve({ body: { errorCode: ErrorCode.INVALID_UPDATE_VERSION, message } });
      }
    }
    this.#scheduleAlters();
  }

  async #decideAltersOf(batch: PendingAlter[]): Promise<void> {
    const byKey = new Map(this.#view().map((p) => [`${p.topicId}\u0000${p.partition}`, p]));
    // Only added brokers are checked: a fenced one, or one in a controlled shutdown (leaving
    // the ISRs), may not join.
    const live = this.#live();
    const eligible = (id: number) => live(id) && !this.sessions.shuttingDown(id);
    const taken = new Set<string>();
    const go: { a: PendingAlter; c: PartitionChange }[] = [];
    for (const a of batch) {
      const key = `${a.topicId}\u0000${a.partition}`;
      const p = byKey.get(key);
      if (p === undefined) {
        a.resolve({
          body: { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: "unknown partition" },
        });
        continue;
      }
      // A second request for one partition is decided after the first has committed.
      if (taken.has(key)) {
        this.#alters.push(a);
        continue;
      }
      const c = checkIsrChange(p, a.req, eligible);
      if ("errorCode" in c) {
        a.resolve({ body: c });
        continue;
      }
      taken.add(key);
      go.push({ a, c });
    }
    const oks = await this.#applyEach(go.map((x) => x.c));
    // A move whose new replica just joined the ISR may complete: at once, not at the next
    // periodic check (up to REASSIGN_CHECK_MS more on every move).
    if (
      go.some(({ a }, i) => oks[i] && byKey.get(`${a.topicId}\u0000${a.partition}`)?.reassignment)
    ) this.#reassignSoon();
    go.forEach(({ a }, i) =>
      a.resolve({
        body: oks[i]
          ? { errorCode: 0 }
          : { errorCode: ErrorCode.INVALID_UPDATE_VERSION, message: "not committed" },
      })
    );
  }

  /**
   * Controlled shutdown: leadership moves to other ISR members and the broker leaves the ISRs.
   * Answers `done` once it leads nothing another replica could take over; it is then fenced, so
   * its exit costs no session timeout.
   */
  shutdown(from: number): Promise<{ body: unknown }> {
    if (!this.#ensureTerm()) return Promise.reject(new Error("not the controller"));
    this.sessions.heartbeat(from, performance.now(), -1, true);
    return this.#serial(`shutdown:${from}`, async () => {
      await this.#apply(onShutdown(this.#view(), from, this.#live()));
      const remaining = onShutdown(this.#view(), from, this.#live()).length;
      if (remaining === 0 && from !== this.cluster.nodeId) {
        // Fenced after the answer (next in the queue): its exit still costs no session timeout,
        // and it cuts its clients, who wait for that to look for the new leaders, a commit sooner.
        void this.#serial(`fence:${from}`, () => this.#fence(from, "controlled shutdown"))
          .catch(() => {});
      }
      return { body: { done: remaining === 0 } };
    });
  }
}
