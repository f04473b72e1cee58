// The Raft state machine of one node. Pure and deterministic: inputs are step(message),
// tick(nowMs), propose/proposeConfChange/readIndex/transferLeadership; outputs accumulate
// into a Ready batch (see types.ts for the order in which the shell must carry it out). The
// only randomness is the election timeout jitter, drawn from the RandomSource passed in.
import { checkConfChange, emptyConfig, isMember, isVoter, quorum, quorumMin } from "./config.ts";
import { Progress } from "./progress.ts";
import { RaftLog } from "./raft-log.ts";
import type {
  ConfChange,
  Config,
  Entry,
  HardState,
  Message,
  NodeId,
  PersistedState,
  ProposeResult,
  RaftBugs,
  RaftEvent,
  RaftOptions,
  RandomSource,
  ReadState,
  Ready,
  Role,
  Snapshot,
} from "./types.ts";
import { DEFAULT_OPTIONS, NONE } from "./types.ts";

interface PendingRead {
  seq: number;
  index: number;
  ctx: string;
  from: NodeId;
}

export class RaftNode {
  readonly id: NodeId;
  readonly opts: RaftOptions;
  readonly log: RaftLog;
  #rng: RandomSource;
  #bugs: RaftBugs;

  #term = 0;
  #vote: NodeId = NONE;
  #commit = 0;
  #role: Role = "follower";
  #leader: NodeId = NONE;
  #now: number;

  #electionDeadline = 0;
  #heartbeatDue = 0;
  #checkQuorumDue = 0;
  #lastLeaderContact = -Infinity;
  #votes = new Map<NodeId, boolean>();
  #prs = new Map<NodeId, Progress>();
  #transferee: NodeId = NONE;
  #transferDeadline = 0;
  #readSeq = 0;
  #pendingReads: PendingRead[] = [];
  #readsAwaitingCommit: { ctx: string; from: NodeId }[] = [];

  // Outputs and the Ready in flight.
  #msgs: Message[] = [];
  /** Own proposals not yet sent to the followers (see #appendOwn). */
  #appendsDue = false;
  #events: RaftEvent[] = [];
  #readStates: ReadState[] = [];
  #hsDirty = false;
  #mustSync = false;
  #installed: Snapshot | undefined;
  #inflightReady = false;
  /** Highest index durably persisted (the leader counts itself only up to here). */
  #persisted: number;
  /** Highest index handed to the shell to apply. */
  #appliedOut: number;
  #snapshotAsked = false;

  /**
   * Starts (or restarts) a node from its persisted state. appliedIndex: how far the state
   * machine already is (e.g. SQLite's applied index); entries above it and up to the
   * persisted commit index come out again in `committed`.
   */
  constructor(
    opts: Partial<RaftOptions> & { id: NodeId },
    state: PersistedState,
    rng: RandomSource,
    nowMs: number,
    extra: { bugs?: RaftBugs; appliedIndex?: number } = {},
  ) {
    const bugs = extra.bugs ?? {};
    const appliedIndex = extra.appliedIndex ?? 0;
    this.opts = { ...DEFAULT_OPTIONS, ...opts };
    if (!(this.opts.heartbeatMs > 0 && this.opts.electionMs > this.opts.heartbeatMs)) {
      throw new RangeError("need 0 < heartbeatMs < electionMs");
    }
    this.id = opts.id;
    this.#rng = rng;
    this.#bugs = bugs;
    this.#now = nowMs;
    this.log = new RaftLog(emptyConfig(), state.snapshot, state.entries);
    this.#term = state.hardState.term;
    this.#vote = state.hardState.vote;
    this.#persisted = this.log.lastIndex();
    this.#commit = Math.min(Math.max(state.hardState.commit, this.log.snapIndex), this.#persisted);
    this.#appliedOut = Math.min(Math.max(appliedIndex, this.log.snapIndex), this.#commit);
    this.#resetElectionDeadline();
  }

  get term(): number {
    return this.#term;
  }
  get vote(): NodeId {
    return this.#vote;
  }
  get commit(): number {
    return this.#commit;
  }
  get role(): Role {
    return this.#role;
  }
  get leader(): NodeId {
    return this.#leader;
  }
  get config(): Config {
    return this.log.config();
  }
  get transferee(): NodeId {
    return this.#transferee;
  }
  hardState(): HardState {
    return { term: this.#term, vote: this.#vote, commit: this.#commit };
  }

  /** Leader only: the replication state of a peer (read only). */
  progress(id: NodeId): Readonly<Progress> | undefined {
    return this.#prs.get(id);
  }

  /**
   * Leader only: learners that have acknowledged every entry up to the leader's commit index
   * (now, when the promotion is decided) and answered since the last CheckQuorum round. A node
   * that never answers has matched nothing, so it is never promoted; promoting one would make a
   * voter of it that every later commit waits for.
   */
  caughtUpLearners(): NodeId[] {
    if (this.#role !== "leader") return [];
    const commit = this.#commit;
    return this.log.config().learners.filter((id) => {
      const p = this.#prs.get(id);
      return p !== undefined && p.match > 0 && p.match >= commit && p.recentActive;
    });
  }

  /** Local time at which tick() next has work to do. */
  nextDeadline(): number {
    if (this.#role === "leader") {
      let d = Math.min(this.#heartbeatDue, this.opts.checkQuorum ? this.#checkQuorumDue : Infinity);
      if (this.#transferee !== NONE) d = Math.min(d, this.#transferDeadline);
      return d;
    }
    return this.#electionDeadline;
  }

  tick(nowMs: number): void {
    if (nowMs > this.#now) this.#now = nowMs;
    const now = this.#now;
    if (this.#role === "leader") {
      if (this.#transferee !== NONE && now >= this.#transferDeadline) this.#transferee = NONE;
      if (this.opts.checkQuorum && now >= this.#checkQuorumDue) {
        this.#checkQuorumDue = now + this.opts.electionMs;
        if (!this.#quorumActive()) {
          this.#becomeFollower(this.#term, NONE);
          return;
        }
        for (const [id, p] of this.#prs) p.recentActive = id === this.id;
      }
      if (now >= this.#heartbeatDue) {
        this.#heartbeatDue = now + this.opts.heartbeatMs;
        this.#broadcastHeartbeat();
      }
      return;
    }
    if (now >= this.#electionDeadline) {
      if (isVoter(this.log.config(), this.id)) this.#campaign(this.opts.preVote, false);
      else this.#resetElectionDeadline();
    }
  }

  propose(data: string): ProposeResult {
    const r = this.#canPropose();
    if (r !== undefined) return r;
    return this.#appendOwn({ index: 0, term: 0, kind: "normal", data });
  }

  /**
   * Single-server change. Refused until an entry of this leader's term is committed (its
   * no-op) and while an earlier change is uncommitted; a promotion needs a caught-up learner;
   * the leader cannot remove itself (transfer leadership first).
   */
  proposeConfChange(change: ConfChange): ProposeResult {
    const r = this.#canPropose();
    if (r !== undefined) return r;
    if (this.log.term(this.#commit) !== this.#term) {
      return { ok: false, reason: "conf_pending", detail: "no entry of this term committed yet" };
    }
    if (this.log.lastConfIndex() > this.#commit) {
      return { ok: false, reason: "conf_pending", detail: "a configuration change is uncommitted" };
    }
    const why = checkConfChange(this.log.config(), change);
    if (why !== undefined) return { ok: false, reason: "invalid", detail: why };
    if (change.op === "remove" && change.node === this.id) {
      return { ok: false, reason: "invalid", detail: "the leader cannot remove itself" };
    }
    if (change.op === "promote" && !this.caughtUpLearners().includes(change.node)) {
      return { ok: false, reason: "invalid", detail: `learner ${change.node} is not caught up` };
    }
    return this.#appendOwn({ index: 0, term: 0, kind: "conf", change: { ...change } });
  }

  /**
   * Linearizable read: a ReadState {index, ctx} comes out once this node (or its leader)
   * has confirmed leadership with a majority; serve the read when applied >= index.
   * A readFailed event comes out instead when there is no leader or leadership is lost.
   */
  readIndex(ctx: string): void {
    if (this.#role === "leader") this.#leaderRead(ctx, this.id);
    else if (this.#leader !== NONE) {
      this.#send({ type: "readReq", from: this.id, to: this.#leader, term: 0, ctx });
    } else this.#events.push({ type: "readFailed", ctx, reason: "no leader" });
  }

  /**
   * A hint from the shell that `id` is gone (every connection from it closed, as when its
   * process dies). When it is this follower's leader, the lease is dropped and the election
   * comes within a few heartbeats instead of a full timeout; the random wait keeps two followers
   * told at once from splitting the vote. Harmless when wrong: the pre-vote is refused by every
   * voter still hearing from a live leader. Without pre-vote and check-quorum it does nothing.
   */
  hintPeerGone(id: NodeId): void {
    if (!this.opts.preVote || !this.opts.checkQuorum) return;
    if (this.#role !== "follower" || this.#leader !== id) return;
    this.#lastLeaderContact = -Infinity;
    const early = this.#now + Math.floor(this.#rng.next() * 3 * this.opts.heartbeatMs);
    this.#electionDeadline = Math.min(this.#electionDeadline, early);
  }

  /** Campaigns now, not at the election deadline (the shell does so for a lone voter). */
  campaignNow(): void {
    if (this.#role === "leader" || !isVoter(this.log.config(), this.id)) return;
    this.#campaign(this.opts.preVote, false);
  }

  /** Hands leadership to `target` (default: the most caught-up voter). */
  transferLeadership(target?: NodeId): ProposeResult {
    if (this.#role !== "leader") return { ok: false, reason: "not_leader" };
    const c = this.log.config();
    let to = target ?? NONE;
    if (to === NONE) {
      let best = -1;
      for (const v of c.voters) {
        const p = this.#prs.get(v);
        if (v !== this.id && p !== undefined && p.match > best) [best, to] = [p.match, v];
      }
    }
    if (to === NONE || to === this.id || !isVoter(c, to)) {
      return { ok: false, reason: "invalid", detail: "no voter to transfer to" };
    }
    this.#transferee = to;
    this.#transferDeadline = this.#now + this.opts.electionMs;
    const p = this.#prs.get(to)!;
    if (p.match === this.log.lastIndex()) this.#sendTimeoutNow(to);
    else this.#sendAppend(to);
    return { ok: true, index: this.log.lastIndex(), term: this.#term };
  }

  step(m: Message): void {
    if (m.to !== this.id || m.from === this.id) return;
    if (m.type === "readReq") {
      if (this.#role === "leader") this.#leaderRead(m.ctx, m.from);
      return;
    }
    if (m.type === "readResp") {
      if (m.from === this.#leader) this.#readStates.push({ index: m.index, ctx: m.ctx });
      return;
    }
    if (m.term > this.#term) {
      if (m.type === "vote" || m.type === "prevote") {
        // A voter that hears from a live leader ignores campaigns (CheckQuorum lease), so a
        // node coming back from a partition cannot depose a healthy leader.
        if (!m.transfer && this.#inLease()) return;
      }
      if (m.type === "prevote" || (m.type === "prevoteResp" && m.granted)) {
        // Pre-vote traffic never changes terms.
      } else {
        const lead = m.type === "app" || m.type === "hb" || m.type === "snap" ? m.from : NONE;
        this.#becomeFollower(m.term, lead);
      }
    } else if (m.term < this.#term) {
      // Tell a stale leader about the newer term so it steps down; refuse stale pre-votes.
      const [id, term] = [this.id, this.#term];
      if (m.type === "app" || m.type === "hb") {
        this.#send({
          type: "appResp",
          from: id,
          to: m.from,
          term,
          index: 0,
          reject: true,
          hint: 0,
        });
      } else if (m.type === "prevote") {
        this.#send({ type: "prevoteResp", from: id, to: m.from, term, granted: false });
      }
      return;
    }
    switch (m.type) {
      case "vote":
      case "prevote":
        return this.#handleVote(m);
      case "voteResp":
      case "prevoteResp":
        return this.#handleVoteResp(m);
      case "app":
      case "hb":
      case "snap":
        if (this.#role === "leader") return; // same-term leader: cannot happen
        if (this.#role !== "follower") this.#becomeFollower(this.#term, m.from);
        this.#leader = m.from;
        this.#lastLeaderContact = this.#now;
        this.#resetElectionDeadline();
        if (m.type === "app") return this.#handleAppend(m);
        if (m.type === "hb") return this.#handleHeartbeat(m);
        return this.#handleSnapshot(m.from, m.snapshot);
      case "appResp":
        return this.#handleAppendResp(m);
      case "hbResp":
        return this.#handleHeartbeatResp(m);
      case "timeoutNow":
        if (this.#role !== "leader" && isVoter(this.log.config(), this.id)) {
          this.#campaign(false, true);
        }
        return;
    }
  }

  /** The shell saved a snapshot of the state machine: drop the log entries it covers. */
  compact(s: Snapshot): void {
    this.#snapshotAsked = false;
    if (s.meta.index > this.#appliedOut) return;
    this.log.compact(s);
  }

  /** The shell could not take the snapshot asked for in snapshotDue; ask again later. */
  snapshotDeclined(): void {
    this.#snapshotAsked = false;
  }

  hasReady(): boolean {
    if (this.#inflightReady) return false;
    return this.#msgs.length > 0 || this.#appendsDue || this.#events.length > 0 ||
      this.#readStates.length > 0 ||
      this.#hsDirty || this.#installed !== undefined ||
      this.log.unstableFrom <= this.log.lastIndex() || this.#appliedOut < this.#commit ||
      this.#snapshotIsDue();
  }

  /** Takes the pending effects. Call advance(rd) once they are carried out. */
  ready(): Ready {
    if (this.#inflightReady) throw new Error("advance() the previous Ready first");
    if (this.#appendsDue) {
      this.#appendsDue = false;
      if (this.#role === "leader") this.#broadcastAppend();
    }
    this.#inflightReady = true;
    const rd: Ready = {
      hardState: undefined,
      snapshot: undefined,
      snapshotDue: undefined,
      entries: this.log.takeUnstable(),
      mustSync: this.#mustSync,
      messages: this.#msgs,
      committed: [],
      readStates: this.#readStates,
      events: this.#events,
    };
    if (this.#hsDirty) rd.hardState = this.hardState();
    if (this.#installed !== undefined) {
      rd.snapshot = this.#installed;
      this.#appliedOut = Math.max(this.#appliedOut, this.#installed.meta.index);
      this.#installed = undefined;
    }
    if (rd.entries.length > 0) rd.mustSync = true;
    if (this.#appliedOut < this.#commit) {
      rd.committed = this.log.slice(this.#appliedOut + 1, this.#commit + 1);
      this.#appliedOut = this.#commit;
    }
    if (this.#snapshotIsDue()) {
      this.#snapshotAsked = true;
      const i = this.#appliedOut;
      rd.snapshotDue = { index: i, term: this.log.term(i)!, config: this.log.configAt(i) };
    }
    this.#msgs = [];
    this.#readStates = [];
    this.#events = [];
    this.#hsDirty = false;
    this.#mustSync = false;
    return rd;
  }

  /** The shell persisted, sent and applied rd. */
  advance(rd: Ready): void {
    this.#inflightReady = false;
    if (rd.snapshot !== undefined) {
      this.#persisted = Math.max(this.#persisted, rd.snapshot.meta.index);
    }
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1];
      if (this.log.term(last.index) === last.term) {
        this.#persisted = Math.max(this.#persisted, last.index);
      }
    }
    this.#persisted = Math.min(this.#persisted, this.log.lastIndex(), this.log.unstableFrom - 1);
    if (this.#role === "leader") {
      const self = this.#prs.get(this.id);
      if (self !== undefined && self.maybeUpdate(this.#persisted) && this.#maybeCommit()) {
        this.#broadcastAppend();
      }
    }
  }

  #inLease(): boolean {
    if (!this.opts.checkQuorum) return false;
    if (this.#role === "leader") return true;
    return this.#leader !== NONE && this.#now - this.#lastLeaderContact < this.opts.electionMs;
  }

  #resetElectionDeadline(): void {
    const e = this.opts.electionMs;
    this.#electionDeadline = this.#now + e + Math.floor(this.#rng.next() * e);
  }

  #campaign(pre: boolean, transfer: boolean): void {
    const c = this.log.config();
    if (pre) {
      this.#setRole("precandidate", this.#term, NONE);
    } else {
      this.#term++;
      this.#vote = this.id;
      this.#hsDirty = true;
      this.#mustSync = true;
      this.#setRole("candidate", this.#term, NONE);
    }
    this.#resetElectionDeadline();
    this.#votes = new Map([[this.id, true]]);
    const type = pre ? "prevote" : "vote";
    for (const v of c.voters) {
      if (v === this.id) continue;
      this.#send({
        type,
        from: this.id,
        to: v,
        term: this.#term + (pre ? 1 : 0),
        lastIndex: this.log.lastIndex(),
        lastTerm: this.log.lastTerm(),
        transfer,
      });
    }
    this.#tally();
  }

  #handleVote(m: Extract<Message, { type: "vote" | "prevote" }>): void {
    const pre = m.type === "prevote";
    const canVote = this.#vote === m.from ||
      (this.#vote === NONE && this.#leader === NONE) ||
      (pre && m.term > this.#term);
    const upToDate = this.#bugs.voteIgnoresLog || this.log.isUpToDate(m.lastIndex, m.lastTerm);
    const granted = canVote && upToDate;
    if (granted && !pre) {
      this.#vote = m.from;
      this.#hsDirty = true;
      this.#mustSync = true;
      this.#resetElectionDeadline();
    }
    this.#send({
      type: pre ? "prevoteResp" : "voteResp",
      from: this.id,
      to: m.from,
      term: granted ? m.term : this.#term,
      granted,
    });
  }

  #handleVoteResp(m: Extract<Message, { type: "voteResp" | "prevoteResp" }>): void {
    const want = m.type === "prevoteResp" ? "precandidate" : "candidate";
    if (this.#role !== want) return;
    if (!isVoter(this.log.config(), m.from)) return;
    this.#votes.set(m.from, m.granted);
    this.#tally();
  }

  #tally(): void {
    const c = this.log.config();
    let yes = 0;
    let no = 0;
    for (const v of c.voters) {
      const g = this.#votes.get(v);
      if (g === true) yes++;
      else if (g === false) no++;
    }
    const q = quorum(c);
    if (yes >= q) {
      if (this.#role === "precandidate") this.#campaign(false, false);
      else this.#becomeLeader();
    } else if (no >= q) {
      this.#becomeFollower(this.#term, NONE);
    }
  }

  #setRole(role: Role, term: number, leader: NodeId): void {
    const changed = role !== this.#role || leader !== this.#leader || term !== this.#term;
    this.#role = role;
    this.#leader = leader;
    if (changed) this.#events.push({ type: "role", role, term, leader });
  }

  #becomeFollower(term: number, leader: NodeId): void {
    if (term > this.#term) {
      this.#term = term;
      this.#vote = NONE;
      this.#hsDirty = true;
      this.#mustSync = true;
    }
    const wasLeader = this.#role === "leader";
    this.#setRole("follower", this.#term, leader);
    this.#resetElectionDeadline();
    this.#transferee = NONE;
    if (wasLeader) {
      this.#prs.clear();
      for (const r of this.#pendingReads) this.#failRead(r.ctx, r.from);
      for (const r of this.#readsAwaitingCommit) this.#failRead(r.ctx, r.from);
      this.#pendingReads = [];
      this.#readsAwaitingCommit = [];
    }
  }

  #failRead(ctx: string, from: NodeId): void {
    if (from === this.id) this.#events.push({ type: "readFailed", ctx, reason: "leadership lost" });
  }

  #becomeLeader(): void {
    this.#setRole("leader", this.#term, this.id);
    this.#prs.clear();
    this.#readSeq = 0;
    this.#syncProgress();
    this.#heartbeatDue = this.#now + this.opts.heartbeatMs;
    this.#checkQuorumDue = this.#now + this.opts.electionMs;
    this.#appendOwn({ index: 0, term: 0, kind: "noop" });
  }

  #quorumActive(): boolean {
    const c = this.log.config();
    let n = 0;
    for (const v of c.voters) {
      if (v === this.id || this.#prs.get(v)?.recentActive) n++;
    }
    return n >= quorum(c);
  }

  #canPropose(): ProposeResult | undefined {
    if (this.#role !== "leader") return { ok: false, reason: "not_leader" };
    if (this.#transferee !== NONE) return { ok: false, reason: "transferring" };
    return undefined;
  }

  #appendOwn(e: Entry): ProposeResult {
    const index = this.log.lastIndex() + 1;
    this.log.append({ ...e, index, term: this.#term } as Entry);
    if (e.kind === "conf") this.#syncProgress();
    // Sent when the shell takes the next Ready, not now: proposals made together (a controller
    // pass of many partition changes) then leave as one append per follower, instead of one
    // each until maxInflight is reached and the rest a round trip later.
    this.#appendsDue = true;
    return { ok: true, index, term: this.#term };
  }

  /** Keeps one Progress per member of the latest configuration. */
  #syncProgress(): void {
    const c = this.log.config();
    for (const id of [...c.voters, ...c.learners]) {
      if (!this.#prs.has(id)) {
        const p = new Progress(this.log.lastIndex() + 1);
        if (id === this.id) {
          p.match = this.#persisted;
          p.recentActive = true;
        }
        this.#prs.set(id, p);
      }
    }
    for (const id of [...this.#prs.keys()]) if (!isMember(c, id)) this.#prs.delete(id);
    // A removal can shrink the quorum enough to commit what is pending.
    if (this.#role === "leader" && this.#maybeCommit()) this.#broadcastAppend();
  }

  #maybeCommit(): boolean {
    const c = this.log.config();
    let n: number;
    if (this.#bugs.commitWithoutMajority) {
      n = Math.max(...c.voters.map((v) => this.#prs.get(v)?.match ?? 0));
    } else n = quorumMin(c, (v) => this.#prs.get(v)?.match ?? 0);
    if (n <= this.#commit || this.log.term(n) !== this.#term) return false;
    this.#commit = n;
    this.#hsDirty = true;
    this.#releaseAwaitingReads();
    return true;
  }

  #broadcastAppend(): void {
    for (const id of this.#prs.keys()) if (id !== this.id) this.#sendAppends(id, true);
  }

  #broadcastHeartbeat(): void {
    if (this.#pendingReads.length > 0) this.#readSeq++;
    for (const [id, p] of this.#prs) {
      if (id === this.id) continue;
      this.#send({
        type: "hb",
        from: this.id,
        to: id,
        term: this.#term,
        commit: Math.min(p.match, this.#commit),
        readSeq: this.#readSeq,
      });
    }
  }

  /** Pipelines appends to `to` until caught up or paused. */
  #sendAppends(to: NodeId, sendIfEmpty: boolean): void {
    const p = this.#prs.get(to);
    if (p === undefined) return;
    for (let i = 0; i <= this.opts.maxInflight; i++) {
      if (!this.#sendAppend(to, sendIfEmpty && i === 0)) return;
      if (p.state !== "replicate" || p.next > this.log.lastIndex()) return;
    }
  }

  /** Sends one append (or the snapshot) to `to`; false when nothing was sent. */
  #sendAppend(to: NodeId, sendIfEmpty = true): boolean {
    const p = this.#prs.get(to);
    if (p === undefined || p.isPaused(this.opts.maxInflight)) return false;
    const prevIndex = p.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm === undefined) {
      const s = this.log.snapshot;
      if (s === undefined) return false;
      this.#send({ type: "snap", from: this.id, to, term: this.#term, snapshot: s });
      p.becomeSnapshot(s.meta.index, this.#now);
      return true;
    }
    const entries = this.log.slice(p.next, p.next + this.opts.maxBatchEntries);
    if (entries.length === 0 && !sendIfEmpty) return false;
    this.#send({
      type: "app",
      from: this.id,
      to,
      term: this.#term,
      prevIndex,
      prevTerm,
      entries,
      commit: this.#commit,
    });
    if (p.state === "replicate") {
      if (entries.length > 0) {
        p.next = entries[entries.length - 1].index + 1;
        p.inflight.push(p.next - 1);
      }
    } else p.probeSent = true;
    return true;
  }

  #sendTimeoutNow(to: NodeId): void {
    this.#send({ type: "timeoutNow", from: this.id, to, term: this.#term });
  }

  #handleAppendResp(m: Extract<Message, { type: "appResp" }>): void {
    if (this.#role !== "leader") return;
    const p = this.#prs.get(m.from);
    if (p === undefined) return;
    p.recentActive = true;
    if (m.reject) {
      if (p.maybeDecrTo(m.index, m.hint)) {
        if (p.state === "replicate") p.becomeProbe();
        this.#sendAppend(m.from);
      }
      return;
    }
    const updated = p.maybeUpdate(m.index);
    if (updated || (p.state === "probe" && p.match === m.index)) {
      if (p.state === "probe") p.becomeReplicate();
      else if (p.state === "snapshot" && p.match >= p.pendingSnapshot) p.becomeProbe();
      if (this.#maybeCommit()) this.#broadcastAppend();
    }
    // Only entries go out here: an empty append would be answered, and answered again.
    this.#sendAppends(m.from, false);
    if (m.from === this.#transferee && p.match === this.log.lastIndex()) {
      this.#sendTimeoutNow(m.from);
    }
  }

  #handleHeartbeatResp(m: Extract<Message, { type: "hbResp" }>): void {
    if (this.#role !== "leader") return;
    const p = this.#prs.get(m.from);
    if (p === undefined) return;
    p.recentActive = true;
    if (m.readSeq > p.readAck) p.readAck = m.readSeq;
    if (p.state === "snapshot" && this.#now - p.snapshotSentAt >= this.opts.electionMs) {
      p.becomeProbe(); // the snapshot was probably lost: start over
    }
    if (p.match < this.log.lastIndex()) {
      // Appends in flight may have been lost: fall back to probing from the match point.
      if (p.state === "replicate" && p.inflight.length >= this.opts.maxInflight) p.becomeProbe();
      p.probeSent = false;
      this.#sendAppend(m.from);
    }
    this.#confirmReads();
  }

  #handleAppend(m: Extract<Message, { type: "app" }>): void {
    const reply = (index: number, reject: boolean, hint = 0) =>
      this.#send({
        type: "appResp",
        from: this.id,
        to: m.from,
        term: this.#term,
        index,
        reject,
        hint,
      });
    if (m.prevIndex < this.#commit) return reply(this.#commit, false);
    const last = this.log.maybeAppend(m.prevIndex, m.prevTerm, m.entries);
    if (last === undefined) return reply(m.prevIndex, true, this.log.lastIndex());
    this.#commitTo(Math.min(m.commit, last));
    reply(last, false);
  }

  #handleHeartbeat(m: Extract<Message, { type: "hb" }>): void {
    this.#commitTo(Math.min(m.commit, this.log.lastIndex()));
    this.#send({ type: "hbResp", from: this.id, to: m.from, term: this.#term, readSeq: m.readSeq });
  }

  #handleSnapshot(from: NodeId, s: Snapshot): void {
    const reply = (index: number) =>
      this.#send({
        type: "appResp",
        from: this.id,
        to: from,
        term: this.#term,
        index,
        reject: false,
        hint: 0,
      });
    const i = s.meta.index;
    if (i <= this.#commit) return reply(this.#commit);
    if (this.log.term(i) === s.meta.term) {
      this.#commitTo(i);
      return reply(i);
    }
    this.log.restore(s);
    this.#commit = i;
    this.#hsDirty = true;
    // The reply acknowledges index i: the snapshot must be on disk before it goes out, or a
    // crash loses what the leader now counts as replicated here (found by the simulator).
    this.#mustSync = true;
    this.#installed = s;
    this.#persisted = Math.min(this.#persisted, i);
    reply(i);
  }

  #commitTo(n: number): void {
    if (n > this.#commit) {
      this.#commit = n;
      this.#hsDirty = true;
    }
  }

  #leaderRead(ctx: string, from: NodeId): void {
    if (this.log.term(this.#commit) !== this.#term) {
      // The commit index is only known to be current once this term has committed an entry.
      this.#readsAwaitingCommit.push({ ctx, from });
      return;
    }
    if (quorum(this.log.config()) <= 1) return this.#readDone(this.#commit, ctx, from);
    this.#readSeq++;
    this.#pendingReads.push({ seq: this.#readSeq, index: this.#commit, ctx, from });
    this.#broadcastHeartbeat();
  }

  #releaseAwaitingReads(): void {
    if (this.#readsAwaitingCommit.length === 0 || this.log.term(this.#commit) !== this.#term) {
      return;
    }
    const rs = this.#readsAwaitingCommit;
    this.#readsAwaitingCommit = [];
    for (const r of rs) this.#leaderRead(r.ctx, r.from);
  }

  #confirmReads(): void {
    if (this.#pendingReads.length === 0) return;
    const confirmed = quorumMin(
      this.log.config(),
      (v) => v === this.id ? this.#readSeq : this.#prs.get(v)?.readAck ?? 0,
    );
    while (this.#pendingReads.length > 0 && this.#pendingReads[0].seq <= confirmed) {
      const r = this.#pendingReads.shift()!;
      this.#readDone(r.index, r.ctx, r.from);
    }
  }

  #readDone(index: number, ctx: string, from: NodeId): void {
    if (from === this.id) this.#readStates.push({ index, ctx });
    else this.#send({ type: "readResp", from: this.id, to: from, term: 0, ctx, index });
  }

  #snapshotIsDue(): boolean {
    const t = this.opts.snapshotThreshold;
    return t > 0 && !this.#snapshotAsked && this.#commit - this.log.snapIndex >= t;
  }

  #send(m: Message): void {
    this.#msgs.push(m);
  }
}
