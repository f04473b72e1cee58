// Partition reassignment as operators see it (HTTP /reassignments, `broker reassign`, Kafka's
// AlterPartitionReassignments / ListPartitionReassignments): requests go to the controller (run
// here when this broker is the controller, over the cluster port otherwise), and the progress of
// every move is read from the committed metadata plus what each partition's leader knows of its
// adding followers' positions.
import type { ClusterService, PartitionStats } from "../cluster/node.ts";
import { MetaError } from "../meta/index.ts";
import type { MetadataStore } from "../meta/index.ts";
import type { ReassignmentState } from "../meta/records.ts";
import { errorName } from "../protocol/kafka/error-codes.ts";
import {
  addingReplicas,
  progressOf,
  removingReplicas,
  type ReplicaProgress,
} from "../replication/reassignment.ts";
import {
  MAX_REASSIGN_PARTITIONS,
  type ReassignItem,
  type ReassignResult,
} from "../replication/reassign-requests.ts";
import { type PlannedPartition, proposeAssignment } from "../replication/reassign-plan.ts";

/** What this needs of the controller (ControllerService). */
export interface ReassignController {
  readonly active: boolean;
  reassign(body: unknown): Promise<{ body: unknown }>;
}

export class NoControllerError extends MetaError {
  constructor(message: string) {
    super("NOT_CONTROLLER", message);
  }
}

export interface MovingPartitionView {
  topic: string;
  partition: number;
  /** The replica set now (original ∪ target while copying). */
  replicas: number[];
  isr: number[];
  leader: number;
  target: number[];
  original: number[];
  adding: number[];
  removing: number[];
  /** queued: waits behind --reassignment-max-concurrent; copying: adding replicas catch up. */
  state: "queued" | "copying";
  throttle: number;
  /** One per adding replica (empty while queued or when the leader did not answer). */
  progress: ReplicaProgress[];
}

export interface ReassignmentsView {
  partitions: MovingPartitionView[];
  /** Sums over every adding replica. */
  copiedBytes: number;
  totalBytes: number;
  rateBytesPerSec: number | null;
  etaSec: number | null;
}

const admins = new WeakMap<object, ReassignmentAdmin>();

export class ReassignmentAdmin {
  /** The last sample of each adding replica's copy, for the rate between two views. */
  readonly #samples = new Map<string, { atMs: number; copied: number }>();

  constructor(
    readonly meta: MetadataStore,
    readonly cluster: ClusterService,
    readonly controller: ReassignController,
  ) {}

  /** Registered on the broker's metadata store: the HTTP API and Kafka handlers find it there. */
  static attach(
    meta: MetadataStore,
    cluster: ClusterService,
    controller: ReassignController,
  ): ReassignmentAdmin {
    const a = new ReassignmentAdmin(meta, cluster, controller);
    admins.set(meta, a);
    return a;
  }

  static of(meta: MetadataStore): ReassignmentAdmin | undefined {
    return admins.get(meta);
  }

  /**
   * Submit moves (`target` a replica list) and cancels (`target` null), at `throttle` bytes/s
   * for new moves (0: the brokers' default); `keepReplicationFactor` refuses a target of another
   * size (INVALID_REPLICATION_FACTOR). Answers per item with a Kafka error code.
   */
  async alter(
    items: readonly ReassignItem[],
    throttle = 0,
    keepReplicationFactor = false,
  ): Promise<ReassignResult[]> {
    return await this.#call({ op: "alter", items, throttle, keepReplicationFactor }, items.length);
  }

  /** The throttle of moving partitions (all when `items` is null). */
  async setThrottle(
    items: readonly { topic: string; partition: number }[] | null,
    throttle: number,
  ): Promise<ReassignResult[]> {
    const list = items ?? this.moving().map((p) => ({ topic: p.topic, partition: p.partition }));
    const named = list.map((x) => ({ ...x, target: null }));
    return await this.#call({ op: "throttle", items: named, throttle }, named.length);
  }

  async #call(req: unknown, n: number): Promise<ReassignResult[]> {
    if (n > MAX_REASSIGN_PARTITIONS) {
      throw new MetaError("INVALID_REQUEST", `at most ${MAX_REASSIGN_PARTITIONS} partitions`);
    }
    let body: unknown;
    const id = this.cluster.controllerId();
    if (id < 0) throw new NoControllerError("no controller is known (no metadata quorum leader)");
    try {
      if (id === this.cluster.nodeId) body = (await this.controller.reassign(req)).body;
      else {
        const link = this.cluster.link(id);
        if (link === undefined) {
          throw new NoControllerError(`the controller (broker ${id}) has no known address`);
        }
        try {
          body = (await link.call("reassign", req, 30_000)).body;
        } finally {
          link.close();
        }
      }
    } catch (e) {
      if (e instanceof MetaError) throw e;
      throw new NoControllerError(
        `the controller (broker ${id}) did not take the request: ${(e as Error).message}`,
      );
    }
    const results = (body as { results?: unknown } | null)?.results;
    if (!Array.isArray(results) || results.length !== n) {
      throw new Error("bad reassign answer from the controller");
    }
    return results as ReassignResult[];
  }

  /** The partitions moving now, from the applied metadata (no progress). */
  moving(topic?: string): MovingPartitionView[] {
    const out: MovingPartitionView[] = [];
    for (const t of this.meta.listTopics()) {
      if (topic !== undefined && t.name !== topic) continue;
      for (const p of t.partitions) {
        const ra = p.reassignment;
        if (!ra) continue;
        out.push(viewOf(t.name, p, ra));
      }
    }
    return out;
  }

  /**
   * Every move with its progress: per adding replica, the bytes it holds of the leader's log
   * (estimated from its fetch position over the leader's offsets and size), the rate since the
   * previous view, and the time left at that rate.
   */
  async view(topic?: string): Promise<ReassignmentsView> {
    const moving = this.moving(topic);
    const byLeader = new Map<number, Map<string, number[]>>();
    for (const m of moving) {
      if (m.state !== "copying" || m.leader < 0) continue;
      let topics = byLeader.get(m.leader);
      if (topics === undefined) byLeader.set(m.leader, topics = new Map());
      const ps = topics.get(m.topic) ?? [];
      ps.push(m.partition);
      topics.set(m.topic, ps);
    }
    const stats = new Map<string, PartitionStats>();
    await Promise.all(
      [...byLeader].flatMap(([leader, topics]) =>
        [...topics].map(async ([t, ps]) => {
          for (const s of await this.cluster.partitionStats(leader, t, ps)) {
            stats.set(`${t}\u0000${s.partition}`, s);
          }
        })
      ),
    );
    const now = performance.now();
    let copied = 0;
    let total = 0;
    let rate: number | null = null;
    let eta: number | null = 0;
    const live = new Set<string>();
    for (const m of moving) {
      const s = stats.get(`${m.topic}\u0000${m.partition}`);
      if (s === undefined) continue;
      const end = s.logEndOffset ?? s.highWatermark;
      const span = Math.max(0, end - s.logStartOffset);
      for (const id of m.adding) {
        const f = s.followers?.find((x) => x.id === id);
        const pos = f === undefined ? s.logStartOffset : Math.min(end, f.logEnd);
        const bytes = span === 0
          ? s.sizeBytes
          : Math.round(s.sizeBytes * Math.max(0, pos - s.logStartOffset) / span);
        const key = `${m.topic}\u0000${m.partition}\u0000${id}`;
        live.add(key);
        const prev = this.#samples.get(key);
        const pr = progressOf(id, m.isr.includes(id), bytes, s.sizeBytes, prev, now);
        if (prev === undefined || now - prev.atMs >= 500) {
          this.#samples.set(key, { atMs: now, copied: bytes });
        }
        m.progress.push(pr);
        copied += pr.copiedBytes;
        total += pr.totalBytes;
        if (pr.rateBytesPerSec !== null) rate = (rate ?? 0) + pr.rateBytesPerSec;
      }
    }
    for (const k of this.#samples.keys()) if (!live.has(k)) this.#samples.delete(k);
    const left = total - copied;
    if (left > 0) eta = rate !== null && rate > 0 ? Math.round(left / rate * 10) / 10 : null;
    return {
      partitions: moving,
      copiedBytes: copied,
      totalBytes: total,
      rateBytesPerSec: rate,
      etaSec: eta,
    };
  }

  /**
   * A proposal moving `topics` (all when empty) onto `brokers`: the current assignment and the
   * proposed one, in Kafka's reassignment JSON shape.
   */
  async generate(
    topics: readonly string[],
    brokers: readonly number[],
    replicationFactor?: number,
    includeInternal = false,
  ): Promise<{ current: PlannedPartition[]; proposed: PlannedPartition[] }> {
    const all = this.meta.listTopics();
    const known = new Set(this.meta.listBrokers().map((b) => b.nodeId));
    const unknown = brokers.find((id) => !known.has(id));
    if (unknown !== undefined) {
      throw new MetaError("INVALID_REPLICA_ASSIGNMENT", `broker ${unknown} is not registered`);
    }
    const chosen = topics.length === 0
      ? all.filter((t) => includeInternal || !t.internal)
      : topics.map((n) => {
        const t = all.find((x) => x.name === n);
        if (t === undefined) {
          throw new MetaError("UNKNOWN_TOPIC_OR_PARTITION", `No such topic as ${n}`);
        }
        return t;
      });
    const racks = new Map(this.meta.listBrokers().map((b) => [b.nodeId, b.rack ?? null]));
    const parts = [];
    for (const t of chosen) {
      const sizes = new Map<number, number>();
      const byLeader = new Map<number, number[]>();
      for (const p of t.partitions) {
        if (p.leader < 0) continue;
        byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p.partition]);
      }
      await Promise.all([...byLeader].map(async ([leader, ps]) => {
        for (const s of await this.cluster.partitionStats(leader, t.name, ps)) {
          sizes.set(s.partition, s.sizeBytes);
        }
      }));
      for (const p of t.partitions) {
        // A partition moving now is planned from where it is going.
        const replicas = p.reassignment ? p.reassignment.target : p.replicas;
        parts.push({
          topic: t.name,
          partition: p.partition,
          replicas,
          sizeBytes: sizes.get(p.partition),
        });
      }
    }
    const current = parts.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      replicas: [...p.replicas],
    }));
    let proposed: PlannedPartition[];
    try {
      proposed = proposeAssignment(parts, brokers, { racks, replicationFactor });
    } catch (e) {
      throw new MetaError("INVALID_REPLICATION_FACTOR", (e as Error).message);
    }
    return { current, proposed };
  }
}

function viewOf(
  topic: string,
  p: { partition: number; replicas: number[]; isr: number[]; leader: number },
  ra: ReassignmentState,
): MovingPartitionView {
  return {
    topic,
    partition: p.partition,
    replicas: [...p.replicas],
    isr: [...p.isr],
    leader: p.leader,
    target: [...ra.target],
    original: [...ra.original],
    adding: addingReplicas(ra),
    removing: removingReplicas(ra),
    state: ra.started ? "copying" : "queued",
    throttle: ra.throttle,
    progress: [],
  };
}

/** Kafka's error name for a reassignment result code (null: it succeeded). */
export function reassignErrorName(code: number): string | null {
  return code === 0 ? null : errorName(code);
}
