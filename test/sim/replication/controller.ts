// The controller of src/replication/controller-service.ts, one per broker, acting only while its
// broker's Raft node leads the metadata quorum. Its decisions are the real cores' (SessionTracker,
// onFenced / onUnfenced / preferredElections / checkIsrChange) over this broker's applied
// metadata, which may lag the log (a new controller acts before it has applied what its
// predecessor committed, as production does). Each decision is a record proposed through Raft.
//
// Events run one at a time as in ControllerService.#serial: a job is a generator that yields the
// proposals it awaits (an `await appendAsController` each) and resumes once all of them settled
// (committed and applied here, lost to another term, or refused by apply). A job outlives the
// term it started in, as the production promise chain does: a deposed controller's job resumes
// when its proposal settles and finds itself no longer active.
import { partitionChangeRecord } from "../../../src/replication/change-record.ts";
import {
  checkIsrChange,
  onFenced,
  onUnfenced,
  type PartitionChange,
  type PartitionView,
  preferredElections,
} from "../../../src/replication/elections.ts";
import type { MetadataRecord } from "../../../src/meta/records.ts";
import { planted } from "../../../src/replication/planted.ts";
import { SessionTracker } from "../../../src/replication/sessions.ts";
import {
  cancelReassignment,
  reassignmentSteps,
  submitReassignment,
} from "../../../src/replication/reassignment.ts";
import type { Broker } from "./broker.ts";
import type { Env } from "./cluster.ts";
import type { Proposal } from "./metadata.ts";
import {
  MIN_INSYNC,
  PREFERRED_EVERY_MS,
  registration,
  SESSIONS,
  TOPIC,
  TOPIC_ID,
} from "./model.ts";

type Step<T = void> = Generator<Proposal[], T, void>;

interface Job {
  key: string;
  run: () => Step;
  /** Called when the job ends: ok false when it threw (an append failed). */
  done?: (ok: boolean) => void;
}

/** An `await appendAsController(...)` that rejected. */
class AppendFailed extends Error {}

const NOT_CONTROLLER: Proposal = {
  index: -1,
  term: -1,
  settled: true,
  ok: false,
  error: "not_leader",
};

/** The production record shape (src/replication/change-record.ts). */
export const partitionRecord = partitionChangeRecord;

export class Controller {
  readonly sessions = new SessionTracker(SESSIONS);
  #term = -1;
  #queue: Job[] = [];
  #running: { job: Job; step: Step; wait: Proposal[] } | null = null;
  #busy = new Set<string>();
  /** Per fenced broker: the applied index it must reach to be unfenced (production's #unfenceAt). */
  readonly #unfenceAt = new Map<number, number>();
  #lastRebalance = 0;
  #pumping = false;
  #again = false;

  constructor(readonly b: Broker, readonly env: Env) {}

  get active(): boolean {
    return this.b.metaNode.isLeader;
  }

  get id(): number {
    return this.b.id;
  }

  // ---- the serial queue ----------------------------------------------------------------------

  #serial(key: string, run: () => Step, done?: (ok: boolean) => void): void {
    this.#queue.push({ key, run, done });
    this.#busy.add(key);
    this.pump();
  }

  /** Runs jobs until one waits on an unsettled proposal. */
  pump(): void {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        this.#run();
      } while (this.#again);
    } finally {
      this.#pumping = false;
    }
  }

  #run(): void {
    for (;;) {
      const cur = this.#running;
      if (cur === null) {
        const job = this.#queue.shift();
        if (job === undefined) return;
        this.#running = { job, step: job.run(), wait: [] };
        continue;
      }
      if (cur.wait.some((p) => !p.settled)) return;
      let r: IteratorResult<Proposal[], void>;
      let ok = true;
      try {
        r = cur.step.next();
      } catch (e) {
        if (!(e instanceof AppendFailed)) throw e;
        ok = false;
        r = { done: true, value: undefined };
      }
      if (!r.done) {
        cur.wait = r.value;
        continue;
      }
      this.#running = null;
      this.#busy.delete(cur.job.key);
      cur.job.done?.(ok);
    }
  }

  #append(r: MetadataRecord): Proposal {
    if (!this.active) return { ...NOT_CONTROLLER };
    const p = this.b.metaNode.propose(r);
    this.env.proposed?.(this.id, r);
    return p;
  }

  #ensureTerm(): boolean {
    if (!this.active) {
      this.#term = -1;
      return false;
    }
    const term = this.b.metaNode.term;
    if (term !== this.#term) {
      this.#term = term;
      this.#unfenceAt.clear();
      // A new controller: every broker gets a fresh (short) session; live ones heartbeat at once.
      this.sessions.start([...this.b.meta.brokers.keys()], this.env.now);
      this.env.counts.controllerTakeovers++;
      this.env.log(
        `broker ${this.id}: controller started (term ${term}, applied ${this.b.applied})`,
      );
    }
    return true;
  }

  // ---- periodic work -------------------------------------------------------------------------

  tick(): void {
    if (!this.#ensureTerm()) return;
    const now = this.env.now;
    for (const id of this.sessions.expire(now)) {
      const b = this.b.meta.brokers.get(id);
      if (b === undefined || b.fenced || id === this.id) continue;
      this.#serial(`fence:${id}`, () => this.#fence(id, "session expired"));
    }
    for (const [id, b] of [...this.b.meta.brokers]) {
      if (b.fenced && !this.#busy.has(`unfence:${id}`)) this.#maybeUnfence(id);
    }
    if (now - this.#lastRebalance > PREFERRED_EVERY_MS && !this.#busy.has("rebalance")) {
      this.#lastRebalance = now;
      this.#serial("rebalance", () => this.#electPreferred());
    }
    if (this.env.repairElections && !this.#busy.has("repair") && this.#owed().length > 0) {
      this.#serial("repair", () => this.#repair());
    }
    // ControllerService.#reassignSteps: moves start and complete from the committed state alone,
    // so a new controller carries on its predecessor's.
    if (this.b.meta.part.reassignment && !this.#busy.has("reassign")) {
      this.#serial("reassign", () => this.#reassignSteps());
    }
  }

  *#reassignSteps(): Step {
    if (!this.active) return;
    yield* this.#apply(reassignmentSteps([this.#view()], this.#live(), () => MIN_INSYNC, 1));
  }

  /**
   * An operator's request reaches this controller (ControllerService.reassign): a move to
   * `target`, or a cancel (null). Refusals (a move in progress, nothing to cancel, no original
   * replica in sync) are counted, not failures.
   */
  reassign(target: number[] | null): void {
    if (!this.#ensureTerm()) return;
    this.#serial("reassign-request", () => this.#reassignRequest(target));
  }

  *#reassignRequest(target: number[] | null): Step {
    if (!this.active) return;
    const p = this.#view();
    const c = target === null
      ? cancelReassignment(p, this.#live())
      : submitReassignment(p, target, (id) => this.b.meta.brokers.has(id));
    if (c === null) return;
    if ("errorCode" in c) {
      this.env.counts.reassignRefused++;
      this.env.log(`broker ${this.id} (controller): refused: ${c.message}`);
      return;
    }
    if (target === null) this.env.counts.reassignCancels++;
    else this.env.counts.reassignSubmits++;
    yield* this.#apply([c]);
  }

  /**
   * As ControllerService.#repair (the fix this model found, docs/replication-sim.md): the elections the
   * brokers' fenced flags call for, which a controller that failed between a BrokerFenced record
   * and the partition changes after it left undone — a fenced broker still leading or in an
   * online ISR (onFenced), an offline partition with a live ISR member (onUnfenced). No later
   * controller computes them again: fences and unfences are events, done once.
   */
  #owed(): PartitionChange[] {
    const view = [this.#view()];
    const live = this.#live();
    for (const [id, b] of this.b.meta.brokers) {
      const cs = b.fenced ? onFenced(view, id, live) : onUnfenced(view, id, live);
      if (cs.length > 0) return cs;
    }
    return [];
  }

  *#repair(): Step {
    if (!this.active) return;
    const cs = this.#owed();
    if (cs.length === 0) return;
    this.env.counts.repairedElections++;
    for (const c of cs) c.reason = `repair: ${c.reason}`;
    yield* this.#apply(cs);
  }

  #maybeUnfence(id: number): void {
    const now = this.env.now;
    const self = id === this.id;
    if (!self && !this.sessions.alive(id, now)) return;
    if (this.sessions.shuttingDown(id)) return;
    const b = this.b.meta.brokers.get(id);
    if (b === undefined || !b.fenced || this.#busy.has(`fence:${id}`)) return;
    // Caught up on metadata: its own registration, and everything decided while it was fenced
    // (as production's controller-service.ts).
    let at = this.#unfenceAt.get(id);
    if (at === undefined) this.#unfenceAt.set(id, at = this.b.applied);
    const applied = self ? this.b.applied : this.sessions.appliedIndex(id);
    if (applied < b.epoch) return;
    if (applied < at && !(planted.size !== 0 && planted.has("unfence-on-registration"))) return;
    this.#serial(`unfence:${id}`, () => this.#unfence(id));
  }

  /** A connection from `id` closed (the controller's onPeerClosed). */
  hint(id: number): void {
    this.sessions.hint(id, this.env.now);
  }

  // ---- views ---------------------------------------------------------------------------------

  #live(): (id: number) => boolean {
    const fenced = new Map([...this.b.meta.brokers].map(([id, b]) => [id, b.fenced]));
    return (id) => fenced.get(id) === false;
  }

  #view(): PartitionView {
    return { ...this.b.meta.part, topicId: TOPIC_ID, topic: TOPIC, partition: 0, unclean: false };
  }

  // ---- decisions -----------------------------------------------------------------------------

  *#apply(changes: PartitionChange[], alter = false): Step<number> {
    const bug = planted.size !== 0 &&
      planted.has(alter ? "alter-without-partition-epoch" : "decision-without-partition-epoch");
    const ps = changes.map((c) => {
      const r = partitionRecord(c);
      if (bug && r.type === "PartitionChanged") delete r.partitionEpoch;
      return { c, p: this.#append(r) };
    });
    yield ps.map((x) => x.p);
    let ok = 0;
    for (const { c, p } of ps) {
      if (p.ok) ok++;
      else this.env.counts.uncommittedDecisions++;
      this.env.log(
        `broker ${this.id} (controller): ${c.reason}: ${
          p.ok ? `committed at ${p.index}` : `not committed (${p.error})`
        }`,
      );
    }
    return ok;
  }

  *#fence(id: number, why: string): Step {
    if (!this.active) return;
    this.#unfenceAt.delete(id);
    const b = this.b.meta.brokers.get(id);
    if (b === undefined) return;
    if (!b.fenced) {
      const p = this.#append({ type: "BrokerFenced", nodeId: id, fenced: true });
      yield [p];
      if (!p.ok) throw new AppendFailed(p.error);
      this.env.log(`broker ${this.id} (controller): fenced ${id}: ${why}`);
    }
    yield* this.#apply(onFenced([this.#view()], id, this.#live()));
  }

  *#unfence(id: number): Step {
    if (!this.active) return;
    const b = this.b.meta.brokers.get(id);
    if (b === undefined || !b.fenced) return;
    const p = this.#append({ type: "BrokerFenced", nodeId: id, fenced: false });
    yield [p];
    if (!p.ok) throw new AppendFailed(p.error);
    this.#unfenceAt.delete(id);
    this.env.log(`broker ${this.id} (controller): unfenced ${id}`);
    yield* this.#apply(onUnfenced([this.#view()], id, this.#live()));
  }

  *#electPreferred(): Step {
    if (!this.active) return;
    yield* this.#apply(preferredElections([this.#view()], this.#live()));
  }

  // ---- calls from brokers --------------------------------------------------------------------

  /** The register request, on the metadata leader: fence the old incarnation, then register. */
  register(id: number, reply: (index: number) => void): void {
    this.#serial(`fence:${id}`, () => this.#beforeRegister(id), (ok) => {
      if (!ok) return reply(-1);
      // node.ts #leaderRequest: raft.append of the registration (no controller check).
      const p = this.b.metaNode.propose(registration(id));
      if (p.settled) return reply(p.ok ? p.index : -1);
      p.then = (q) => reply(q.ok ? q.index : -1);
    });
  }

  *#beforeRegister(id: number): Step {
    this.sessions.end(id);
    const b = this.b.meta.brokers.get(id);
    if (b !== undefined && !b.fenced) yield* this.#fence(id, "registered again (restarted)");
    else if (b !== undefined) yield* this.#apply(onFenced([this.#view()], id, this.#live()));
  }

  /** Answers { fenced }, or undefined: "not the controller" (the call fails). */
  heartbeat(from: number, applied: number): { fenced: boolean } | undefined {
    if (!this.#ensureTerm()) return undefined;
    this.sessions.heartbeat(from, this.env.now, applied, false);
    const reg = this.b.meta.brokers.get(from);
    const fenced = reg?.fenced ?? true;
    if (reg?.fenced) this.#maybeUnfence(from);
    return { fenced };
  }

  /** AlterPartition: replies an error code, or -1 when the call fails (not the controller). */
  alterPartition(
    from: number,
    req: { leaderEpoch: number; partitionEpoch: number; isr: number[] },
    reply: (errorCode: number) => void,
  ): void {
    if (!this.#ensureTerm()) return reply(-1);
    this.#serial("alter:0", () => this.#alter(from, req, reply));
  }

  *#alter(
    from: number,
    req: { leaderEpoch: number; partitionEpoch: number; isr: number[] },
    reply: (errorCode: number) => void,
  ): Step {
    const live = this.#live();
    const c = checkIsrChange(
      this.#view(),
      { from, ...req },
      (id) => live(id) && !this.sessions.shuttingDown(id),
    );
    if ("errorCode" in c) return reply(c.errorCode);
    const ok = yield* this.#apply([c], true);
    reply(ok === 1 ? 0 : 108);
  }
}
