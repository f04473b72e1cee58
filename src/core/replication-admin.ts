// Replication as operators see it: what a partition's leader tells others about its followers
// (log ends, lag), the controller's view of broker sessions, leader elections asked for by an
// operator (Kafka ElectLeaders, POST /cluster/elect-leaders), and the counters /metrics shows.
// Requests that need the controller run here when this broker is the controller and are passed to
// it over a cluster call otherwise. Elections are computed from the applied metadata and appended
// with the partition epoch they were computed from, so one that raced another change is refused
// by the metadata apply, never applied twice.
import type { ClusterService, FollowerPosition, PartitionStats } from "../cluster/node.ts";
import type { Logger } from "../log.ts";
import { MetaError } from "../meta/index.ts";
import type { PartitionInfo, TopicInfo } from "../meta/store.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import type { ControllerCounters } from "../replication/controller-service.ts";
import {
  NO_LEADER,
  type PartitionChange,
  type PartitionView,
  pickLeader,
  preferredElections,
} from "../replication/elections.ts";
import type { Replica } from "../replication/replica.ts";
import { partitionChangeRecord } from "../replication/change-record.ts";
import type { SessionTracker } from "../replication/sessions.ts";
import type { PartitionManager } from "./partition-manager.ts";

// ---- what a leader tells others --------------------------------------------------------------

/** A leader's view of its followers: log end and how long since each last caught up. */
export function followerPositions(r: Replica): FollowerPosition[] {
  const end = r.log.logEndOffset();
  const now = r.hooks.now();
  return r.followers().map((f) => ({
    id: f.id,
    logEnd: f.logEnd,
    caughtUpAgoMs: f.logEnd >= end ? 0 : Math.max(0, Math.round(now - f.lastCaughtUpMs)),
  }));
}

/** The partitionStats answer: offsets, size and followers of the partitions led here. */
export function leaderPartitionStats(
  partitions: PartitionManager,
  topic: string,
  ps: number[],
): PartitionStats[] {
  const out: PartitionStats[] = [];
  for (const p of ps) {
    if (partitions.leaderError(topic, p) !== 0) continue;
    const r = partitions.partition(topic, p);
    out.push({
      partition: p,
      logStartOffset: r.log.logStartOffset(),
      highWatermark: r.highWatermark(),
      sizeBytes: r.log.sizeBytes(),
      logEndOffset: r.log.logEndOffset(),
      followers: followerPositions(r),
    });
  }
  return out;
}

// ---- elections ---------------------------------------------------------------------------------

/** ElectLeaders ElectionType. */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;
export type ElectionTypeValue = (typeof ElectionType)[keyof typeof ElectionType];

export interface ElectionTarget {
  topic: string;
  partition: number;
}

export interface ElectionResult extends ElectionTarget {
  errorCode: number;
  message: string | null;
}

export interface ElectionPlan {
  /** One per target (targets given), or per partition needing an election (all partitions). */
  results: ElectionResult[];
  /** The changes to append, keyed by the index of their result. */
  changes: Map<number, PartitionChange>;
}

function viewOf(t: TopicInfo, p: PartitionInfo): PartitionView {
  return { ...p, topicId: t.topicId, topic: t.name, unclean: false };
}

/**
 * Kafka's controller (ReplicationControlManager.electLeader) over the applied metadata.
 * Preferred: the first replica leads if it is live and in the ISR (ELECTION_NOT_NEEDED when it
 * leads already, PREFERRED_LEADER_NOT_AVAILABLE when it cannot). Unclean, for a partition without
 * a leader: a live ISR member if there is one, else any live replica, whose ISR becomes itself
 * (ELECTION_NOT_NEEDED when the partition has a leader, ELIGIBLE_LEADERS_NOT_AVAILABLE when no
 * replica is live). `targets` null means every partition, and then partitions that need no
 * election are left out of the results, as Kafka does.
 */
export function planElections(
  topics: readonly TopicInfo[],
  live: (id: number) => boolean,
  type: ElectionTypeValue,
  targets: readonly ElectionTarget[] | null,
): ElectionPlan {
  const byName = new Map(
    topics.map((t) => [t.name, { t, parts: new Map(t.partitions.map((p) => [p.partition, p])) }]),
  );
  const all = targets === null;
  const list: ElectionTarget[] = all
    ? topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })))
    : [...targets];
  const results: ElectionResult[] = [];
  const changes = new Map<number, PartitionChange>();
  const planned = new Set<string>();
  for (const target of list) {
    const t = byName.get(target.topic)?.t;
    const p = byName.get(target.topic)?.parts.get(target.partition);
    const answer = (errorCode: number, message: string | null) => {
      if (all && errorCode === ErrorCode.ELECTION_NOT_NEEDED) return;
      results.push({ ...target, errorCode, message });
    };
    if (t === undefined || p === undefined) {
      answer(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        t === undefined
          ? `No such topic as ${target.topic}`
          : `No such partition as ${target.topic}-${target.partition}`,
      );
      continue;
    }
    const name = `${t.name}-${p.partition}`;
    let change: PartitionChange | undefined;
    if (type === ElectionType.PREFERRED) {
      const preferred = p.replicas[0];
      if (p.leader === preferred) {
        answer(ErrorCode.ELECTION_NOT_NEEDED, `${preferred} leads ${name} already`);
        continue;
      }
      change = preferredElections([viewOf(t, p)], live, 0, true)[0];
      if (change === undefined) {
        answer(
          ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
          `the preferred replica ${preferred} of ${name} is ${
            !live(preferred) ? "not live" : "not in the ISR"
          }`,
        );
        continue;
      }
      change.reason = `ElectLeaders: preferred replica ${preferred} leads again`;
    } else {
      if (p.leader !== NO_LEADER) {
        answer(ErrorCode.ELECTION_NOT_NEEDED, `${name} has a leader (${p.leader})`);
        continue;
      }
      const clean = pickLeader(p.replicas, p.isr, live);
      const leader = clean !== NO_LEADER ? clean : p.replicas.find(live);
      if (leader === undefined) {
        answer(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, `no replica of ${name} is live`);
        continue;
      }
      change = {
        topicId: t.topicId,
        partition: p.partition,
        partitionEpoch: p.partitionEpoch,
        leader,
        leaderEpoch: p.leaderEpoch + 1,
        isr: clean !== NO_LEADER ? [...p.isr] : [leader],
        reason: clean !== NO_LEADER
          ? `ElectLeaders: ISR member ${leader} leads`
          : `ElectLeaders: UNCLEAN election of ${leader}`,
      };
    }
    // A partition named twice is elected once; both entries are answered.
    if (!planned.has(name)) changes.set(results.length, change);
    planned.add(name);
    results.push({ ...target, errorCode: 0, message: null });
  }
  return { results, changes };
}

// ---- broker sessions -------------------------------------------------------------------------

/**
 * A broker as the controller sees it. alive: unfenced with a live session; fenced: may lead
 * nothing (stopped, restarting or not caught up); shutting_down: in a controlled shutdown, not yet
 * fenced; unknown: unfenced but without a live session at this moment (a new controller awaiting
 * its first heartbeat, or a session that just ended and is about to be fenced).
 */
export type BrokerState = "alive" | "fenced" | "shutting_down" | "unknown";

export interface BrokerSession {
  id: number;
  state: BrokerState;
  /** Milliseconds since its last heartbeat reached the controller (null: none, or unknown). */
  heartbeatAgeMs: number | null;
}

export interface BrokerSessions {
  /** "controller": the controller's sessions; "metadata": its fenced flags (controller not reached). */
  source: "controller" | "metadata";
  brokers: BrokerSession[];
}

const STATES: ReadonlySet<string> = new Set(["alive", "fenced", "shutting_down", "unknown"]);

function parseSessions(v: unknown): BrokerSession[] | undefined {
  const list = (v as { brokers?: unknown } | null)?.brokers;
  if (!Array.isArray(list) || list.length > 100_000) return undefined;
  const out: BrokerSession[] = [];
  for (const b of list as Record<string, unknown>[]) {
    if (
      b === null || typeof b !== "object" || !Number.isSafeInteger(b.id) ||
      typeof b.state !== "string" || !STATES.has(b.state) ||
      (b.heartbeatAgeMs !== null && !Number.isSafeInteger(b.heartbeatAgeMs))
    ) return undefined;
    out.push({
      id: b.id as number,
      state: b.state as BrokerState,
      heartbeatAgeMs: b.heartbeatAgeMs as number | null,
    });
  }
  return out;
}

function parseResults(v: unknown): ElectionResult[] | undefined {
  if (!Array.isArray(v) || v.length > 1_000_000) return undefined;
  for (const r of v as Record<string, unknown>[]) {
    if (
      r === null || typeof r !== "object" || typeof r.topic !== "string" ||
      !Number.isSafeInteger(r.partition) || !Number.isSafeInteger(r.errorCode) ||
      (r.message !== null && typeof r.message !== "string")
    ) return undefined;
  }
  return v as ElectionResult[];
}

/** The most partitions one election request may name. */
export const MAX_ELECTION_TARGETS = 100_000;

function parseTargets(v: unknown): ElectionTarget[] | null | undefined {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length > MAX_ELECTION_TARGETS) return undefined;
  for (const t of v as Record<string, unknown>[]) {
    if (
      t === null || typeof t !== "object" || typeof t.topic !== "string" ||
      t.topic.length > 249 || !Number.isSafeInteger(t.partition)
    ) return undefined;
  }
  return v as ElectionTarget[];
}

// ---- the service -------------------------------------------------------------------------------

/** What this needs of the controller (ControllerService). */
export interface ControllerView {
  readonly active: boolean;
  readonly sessions: SessionTracker;
  readonly counters: ControllerCounters;
}

export class NotControllerError extends MetaError {
  constructor(message: string) {
    super("NOT_CONTROLLER", message);
  }
}

/** The longest a forwarded election may take. */
const MAX_ELECTION_MS = 30_000;

const admins = new WeakMap<PartitionManager, ReplicationAdmin>();

export class ReplicationAdmin {
  /** ISR changes of partitions led here: members left, members joined (counted as applied). */
  get isr(): { shrinks: number; expands: number } {
    return this.partitions.isrChanges;
  }
  /** Leaders elected through ElectLeaders while this broker was the controller. */
  adminElections = 0;

  constructor(
    readonly partitions: PartitionManager,
    readonly cluster: ClusterService,
    readonly controller: ControllerView,
    readonly log: Logger,
  ) {}

  /**
   * Serves the cluster calls. The HTTP API and the Kafka handlers find it
   * through the broker's PartitionManager (`ReplicationAdmin.of`).
   */
  static attach(
    partitions: PartitionManager,
    cluster: ClusterService,
    controller: ControllerView,
    log: Logger,
  ): ReplicationAdmin {
    const a = new ReplicationAdmin(partitions, cluster, controller, log);
    admins.set(partitions, a);
    cluster.handleCall("brokerSessions", async () => ({ body: a.#localSessions() }));
    cluster.handleCall(
      "electLeaders",
      async (_from, body) => ({ body: await a.#serveElect(body) }),
    );
    return a;
  }

  static of(partitions: PartitionManager): ReplicationAdmin | undefined {
    return admins.get(partitions);
  }

  /** Controller counters plus this broker's ElectLeaders elections. */
  controllerCounters(): ControllerCounters & { active: boolean } {
    const c = this.controller.counters;
    return {
      active: this.controller.active,
      elections: c.elections + this.adminElections,
      fences: c.fences,
      unfences: c.unfences,
      isrChanges: c.isrChanges,
    };
  }

  // ---- broker sessions ---------------------------------------------------------------------

  #localSessions(): { brokers: BrokerSession[] } {
    if (!this.controller.active) throw new NotControllerError("not the controller");
    const s = this.controller.sessions;
    const now = performance.now();
    return {
      brokers: this.partitions.meta.listBrokers().map((b) => {
        const hb = s.lastHeartbeat(b.nodeId);
        const state: BrokerState = b.fenced
          ? "fenced"
          : s.shuttingDown(b.nodeId)
          ? "shutting_down"
          : s.alive(b.nodeId, now)
          ? "alive"
          : "unknown";
        return {
          id: b.nodeId,
          state,
          heartbeatAgeMs: hb >= 0 ? Math.max(0, Math.round(now - hb)) : null,
        };
      }),
    };
  }

  /**
   * Every registered broker's session state as the controller sees it, asked of the controller
   * (at most `timeoutMs`); when it cannot be asked, the metadata's fenced flags.
   */
  async brokerSessions(timeoutMs = 1000): Promise<BrokerSessions> {
    try {
      const brokers = parseSessions(await this.#callController("brokerSessions", {}, timeoutMs));
      if (brokers !== undefined) return { source: "controller", brokers };
    } catch { /* the controller is not reachable: the metadata says what it last decided */ }
    return {
      source: "metadata",
      brokers: this.partitions.meta.listBrokers().map((b) => ({
        id: b.nodeId,
        state: b.fenced ? "fenced" : "alive",
        heartbeatAgeMs: null,
      })),
    };
  }

  // ---- elections ---------------------------------------------------------------------------

  /**
   * Elect leaders (Kafka ElectLeaders): run by the controller, passed to it from any other
   * broker. Throws NotControllerError when no controller can be reached.
   */
  async electLeaders(
    type: ElectionTypeValue,
    targets: readonly ElectionTarget[] | null,
    timeoutMs = 10_000,
  ): Promise<ElectionResult[]> {
    const wait = Math.max(1000, Math.min(timeoutMs, MAX_ELECTION_MS));
    let body: unknown;
    try {
      body = await this.#callController("electLeaders", { type, targets }, wait);
    } catch (e) {
      if (e instanceof MetaError) throw e;
      throw new NotControllerError(
        `the controller (broker ${this.cluster.controllerId()}) did not answer: ${
          (e as Error).message
        }`,
      );
    }
    const b = body as { errorCode?: unknown; message?: unknown; results?: unknown } | null;
    if (b?.errorCode === ErrorCode.NOT_CONTROLLER) {
      throw new NotControllerError(String(b.message ?? "not the controller"));
    }
    const results = parseResults(b?.results);
    if (results === undefined) throw new Error("bad electLeaders answer from the controller");
    return results;
  }

  async #serveElect(body: unknown): Promise<unknown> {
    const b = (body ?? {}) as Record<string, unknown>;
    const targets = parseTargets(b.targets);
    if ((b.type !== 0 && b.type !== 1) || targets === undefined) {
      throw new Error("bad electLeaders request");
    }
    try {
      return { errorCode: 0, results: await this.#elect(b.type, targets) };
    } catch (e) {
      if (e instanceof NotControllerError) {
        return { errorCode: ErrorCode.NOT_CONTROLLER, message: e.message };
      }
      throw e;
    }
  }

  /** The controller's part: plan over the applied metadata, append; a raced change once more. */
  async #elect(
    type: ElectionTypeValue,
    targets: readonly ElectionTarget[] | null,
  ): Promise<ElectionResult[]> {
    if (!this.controller.active) throw new NotControllerError("not the controller");
    const meta = this.partitions.meta;
    const plan = (ts: readonly ElectionTarget[] | null) => {
      const fenced = new Map(meta.listBrokers().map((b) => [b.nodeId, b.fenced]));
      return planElections(meta.listTopics(), (id) => fenced.get(id) === false, type, ts);
    };
    const first = plan(targets);
    const stale = await this.#append(first);
    if (stale.length === 0) return first.results;
    // A change refused as stale raced another (a fence, an ISR change): those are planned again.
    const again = plan(
      stale.map((i) => ({ topic: first.results[i].topic, partition: first.results[i].partition })),
    );
    await this.#append(again);
    stale.forEach((i, j) => first.results[i] = again.results[j]);
    return first.results;
  }

  /** Appends a plan's changes; failures go into its results. Indices refused as stale come back. */
  async #append(plan: ElectionPlan): Promise<number[]> {
    const stale: number[] = [];
    await Promise.all([...plan.changes].map(async ([i, c]) => {
      try {
        await this.cluster.appendAsController(partitionChangeRecord(c));
        this.adminElections++;
        this.log.info("leader elected", {
          topic: plan.results[i].topic,
          partition: c.partition,
          leader: c.leader,
          leader_epoch: c.leaderEpoch,
          isr: c.isr,
          reason: c.reason,
        });
      } catch (e) {
        const code = e instanceof MetaError ? e.errorCode : ErrorCode.UNKNOWN_SERVER_ERROR;
        if (code === ErrorCode.INVALID_UPDATE_VERSION) stale.push(i);
        const { topic, partition } = plan.results[i];
        for (const r of plan.results) {
          if (r.topic !== topic || r.partition !== partition) continue;
          r.errorCode = code;
          r.message = (e as Error).message;
        }
      }
    }));
    return stale;
  }

  // ---- calls to the controller -------------------------------------------------------------

  async #callController(method: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const id = this.cluster.controllerId();
    if (id < 0) throw new NotControllerError("no controller is known (no metadata quorum leader)");
    if (id === this.cluster.nodeId) {
      if (method === "brokerSessions") return this.#localSessions();
      return await this.#serveElect(body);
    }
    const link = this.cluster.link(id);
    if (link === undefined) {
      throw new NotControllerError(`the controller (broker ${id}) has no known address`);
    }
    try {
      return (await link.call(method, body, timeoutMs)).body;
    } finally {
      link.close();
    }
  }
}
