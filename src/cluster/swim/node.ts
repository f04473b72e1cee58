// The SWIM membership state machine (with Lifeguard's local health and dynamic suspicion).
// Pure and deterministic: inputs are received messages, clock readings and join/leave calls;
// outputs are messages to send and membership events. No IO, no timers, no global randomness.
import { updateWireSize } from "./codec.ts";
import {
  resolveSwimConfig,
  retransmitLimit,
  suspicionMinMs,
  suspicionTimeoutMs,
  type SwimConfig,
} from "./config.ts";
import { BroadcastQueue } from "./dissemination.ts";
import {
  copyMember as copy,
  type Member,
  type MemberAddrs,
  type MembershipEvent,
  type Outbound,
  sameAddrs,
  STATE_RANK,
  type SwimMessage,
  type SwimOutput,
  type SwimRandom,
  type SwimStats,
  type Update,
} from "./types.ts";

export interface SwimNodeOptions {
  id: number;
  addrs: MemberAddrs;
  rng: SwimRandom;
  config?: Partial<SwimConfig>;
  /** Starting incarnation (a shell that persists it avoids a refutation round on restart). */
  incarnation?: number;
  nowMs?: number;
}

interface Suspicion {
  startedAt: number;
  confirmers: Set<number>;
  k: number;
  minMs: number;
  maxMs: number;
  deadline: number;
}

interface Entry {
  member: Member;
  since: number;
  suspicion?: Suspicion;
}

interface Probe {
  seq: number;
  target: number;
  indirectAt: number;
  endAt: number;
  indirect: boolean;
  expectedNacks: number;
  nacks: number;
}

interface Relay {
  requester: number;
  requesterAddr: string;
  origSeq: number;
  deadline: number;
}

const MAX_INCARNATION = 0xffffffff;

export class SwimNode {
  readonly id: number;
  readonly config: SwimConfig;
  readonly stats: SwimStats = {
    probes: 0,
    probeFailures: 0,
    pingReqsSent: 0,
    nacksSent: 0,
    suspicionsRaised: 0,
    refutations: 0,
    deathsDeclared: 0,
    joinRequestsSent: 0,
    pushPullsSent: 0,
    messagesSent: 0,
    updatesPiggybacked: 0,
  };
  private addrs: MemberAddrs;
  private inc: number;
  private readonly rng: SwimRandom;
  private now: number;
  private hasLeft = false;
  private joined = true;
  private seeds: string[] = [];
  private joinAttempt = 0;
  private nextJoinAt = Infinity;
  private readonly table = new Map<number, Entry>();
  private readonly queue = new BroadcastQueue();
  private probeOrder: number[] = [];
  private probeIndex = 0;
  private probe: Probe | undefined;
  private readonly relays = new Map<number, Relay>();
  private readonly syncAsked = new Map<number, number>();
  private seq = 0;
  private health = 0;
  private nextProbeAt: number;
  private nextPushPullAt: number;
  private out: Outbound[] = [];
  private events: MembershipEvent[] = [];

  constructor(opts: SwimNodeOptions) {
    if (!Number.isInteger(opts.id) || opts.id < 0 || opts.id > 0x7fffffff) {
      throw new RangeError(`node id must be a non-negative int32: ${opts.id}`);
    }
    this.id = opts.id;
    this.addrs = { ...opts.addrs };
    this.rng = opts.rng;
    this.config = resolveSwimConfig(opts.config);
    this.inc = Math.min(MAX_INCARNATION, Math.max(0, Math.floor(opts.incarnation ?? 0)));
    this.now = opts.nowMs ?? 0;
    this.nextProbeAt = this.now + Math.floor(this.rng.next() * this.config.probeIntervalMs);
    this.nextPushPullAt = this.now + this.jittered(this.config.pushPullIntervalMs);
  }

  // ---- queries -------------------------------------------------------------------------------

  get incarnation(): number {
    return this.inc;
  }
  get addresses(): MemberAddrs {
    return { ...this.addrs };
  }
  /** Lifeguard local health score, 0 = healthy. */
  get localHealth(): number {
    return this.health;
  }
  get left(): boolean {
    return this.hasLeft;
  }
  /** False while a join is outstanding (no answer from any seed yet). */
  get isJoined(): boolean {
    return this.joined;
  }
  /** This node's own record. */
  self(): Member {
    return {
      id: this.id,
      incarnation: this.inc,
      addrs: { ...this.addrs },
      state: this.hasLeft ? "left" : "alive",
    };
  }
  /** Every other member this node knows of (dead and left ones until they are reaped). */
  members(): Member[] {
    return [...this.table.values()].map((e) => ({ ...e.member, addrs: { ...e.member.addrs } }));
  }
  member(id: number): Member | undefined {
    const e = this.table.get(id);
    return e ? { ...e.member, addrs: { ...e.member.addrs } } : undefined;
  }
  /** Live members (alive or suspect) including this node. */
  liveCount(): number {
    let n = this.hasLeft ? 0 : 1;
    for (const e of this.table.values()) {
      if (e.member.state === "alive" || e.member.state === "suspect") n++;
    }
    return n;
  }
  /** Updates still waiting to be piggybacked (a leaving node waits for this to drain). */
  pendingBroadcasts(): number {
    return this.queue.size;
  }

  /** The earliest time at which tick() has work to do; Infinity when none. */
  nextDeadline(): number {
    if (this.hasLeft) return Infinity;
    let t = Math.min(this.nextProbeAt, this.nextPushPullAt, this.nextJoinAt);
    if (this.probe) t = Math.min(t, this.probe.indirect ? this.probe.endAt : this.probe.indirectAt);
    for (const r of this.relays.values()) t = Math.min(t, r.deadline);
    for (const e of this.table.values()) {
      if (e.suspicion) t = Math.min(t, e.suspicion.deadline);
      if (e.member.state === "dead" || e.member.state === "left") {
        t = Math.min(t, e.since + this.config.deadRetentionMs);
      }
    }
    return t;
  }

  // ---- inputs --------------------------------------------------------------------------------

  /** Ask seeds (addresses of any members) to let us in; retried until one answers. */
  join(seeds: string | readonly string[], nowMs?: number): SwimOutput {
    this.advance(nowMs);
    this.seeds = (typeof seeds === "string" ? [seeds] : [...seeds]).filter((s) =>
      s !== this.addrs.cluster
    );
    if (this.hasLeft) {
      this.hasLeft = false;
      this.bumpIncarnation(this.inc + 1);
    }
    this.queue.enqueue(this.selfUpdate());
    if (this.seeds.length > 0) {
      this.joined = false;
      this.nextJoinAt = this.now;
      this.maybeJoin();
    }
    return this.flush();
  }

  /** Graceful leave: tell a few members directly, keep answering pings so it spreads. */
  leave(nowMs?: number): SwimOutput {
    this.advance(nowMs);
    if (this.hasLeft) return this.flush();
    this.hasLeft = true;
    this.probe = undefined;
    this.relays.clear();
    this.nextJoinAt = Infinity;
    const u = this.selfUpdate();
    this.queue.enqueue(u);
    for (const id of this.pick(this.config.leaveFanout, (e) => e.member.state === "alive")) {
      this.sendTo(id, { type: "gossip", ...this.header(), updates: [u] });
    }
    return this.flush();
  }

  /** Change this node's advertised addresses (announced with a new incarnation). */
  setAddresses(addrs: MemberAddrs, nowMs?: number): SwimOutput {
    this.advance(nowMs);
    this.addrs = { ...addrs };
    this.bumpIncarnation(this.inc + 1);
    this.queue.enqueue(this.selfUpdate());
    return this.flush();
  }

  /** Run every timer due at `nowMs`. */
  tick(nowMs: number): SwimOutput {
    this.advance(nowMs);
    if (this.hasLeft) return this.flush();
    const now = this.now;
    for (const [seq, r] of this.relays) {
      if (r.deadline <= now) {
        this.relays.delete(seq);
        this.stats.nacksSent++;
        this.send(r.requesterAddr, r.requester, { type: "nack", ...this.header(), seq: r.origSeq });
      }
    }
    if (this.probe && !this.probe.indirect && this.probe.indirectAt <= now) this.goIndirect();
    if (this.probe && this.probe.endAt <= now) this.finishProbe();
    for (const e of [...this.table.values()]) {
      const s = e.suspicion;
      if (s && s.deadline <= now && e.member.state === "suspect") {
        this.stats.deathsDeclared++;
        this.apply({ ...e.member, state: "dead", from: this.id });
      }
      if (
        (e.member.state === "dead" || e.member.state === "left") &&
        e.since + this.config.deadRetentionMs <= now
      ) {
        this.table.delete(e.member.id);
      }
    }
    if (this.nextProbeAt <= now) {
      if (this.probe) this.finishProbe();
      this.startProbe();
      this.nextProbeAt = now + this.config.probeIntervalMs * (1 + this.health);
    }
    if (this.nextPushPullAt <= now) {
      this.nextPushPullAt = now + this.jittered(this.config.pushPullIntervalMs);
      this.pushPull();
    }
    this.maybeJoin();
    return this.flush();
  }

  /**
   * Handle one decoded message. `fromAddr`, when the transport knows it, is the sender's cluster
   * address: replies go there even when our record of the sender is missing or stale.
   */
  receive(msg: SwimMessage, nowMs?: number, fromAddr?: string): SwimOutput {
    this.advance(nowMs);
    if (msg.from === this.id) return this.flush();
    if (this.hasLeft) {
      // Only answer probes, so the leave keeps spreading on the acks.
      if (msg.type === "ping" && msg.target === this.id) {
        const addr = fromAddr ?? this.table.get(msg.from)?.member.addrs.cluster;
        if (addr !== undefined) {
          this.send(addr, msg.from, { type: "ack", ...this.header(), seq: msg.seq, updates: [] });
        }
      }
      return this.flush();
    }
    if (msg.type !== "push-pull" && msg.type !== "nack") {
      for (const u of msg.updates) this.apply(u);
    }
    // A sender we still hold as failed at (or above) the incarnation in its header is told so,
    // so that it refutes: otherwise nobody would ever gossip to it again.
    const notice = this.senderNotice(msg.from, msg.fromIncarnation);
    const replyAddr = fromAddr ?? this.table.get(msg.from)?.member.addrs.cluster;
    if (fromAddr !== undefined && msg.type !== "push-pull") {
      this.syncIfStale(msg.from, msg.fromIncarnation, fromAddr);
    }
    switch (msg.type) {
      case "ping":
        if (msg.target === this.id) {
          this.reply(msg.from, replyAddr, notice, (updates) => ({
            type: "ack",
            ...this.header(),
            seq: msg.seq,
            updates,
          }));
        }
        return this.flush();
      case "ping-req":
        this.relay(msg.from, replyAddr, msg.seq, msg.target, msg.targetAddr, notice);
        return this.flush();
      case "ack":
        this.onAck(msg.seq);
        break;
      case "nack":
        if (this.probe && this.probe.seq === msg.seq) this.probe.nacks++;
        break;
      case "gossip":
        break;
      case "push-pull":
        this.onPushPull(msg.from, msg.wantReply, msg.members, fromAddr);
        return this.flush();
    }
    if (notice) this.sendUpdates(msg.from, [notice]);
    return this.flush();
  }

  // ---- membership rules ----------------------------------------------------------------------

  /**
   * Apply one update under SWIM's precedence: a higher incarnation wins; at equal incarnation
   * suspect beats alive and dead/left beat both; only the member itself raises its incarnation.
   * Protected so tests can inject faults into a subclass.
   */
  protected apply(u: Update): void {
    if (u.id === this.id) return this.applyAboutSelf(u);
    const e = this.table.get(u.id);
    if (!e) {
      // A stranger: keep failure news too (a tombstone stops stale alive news reviving it).
      const member: Member = {
        id: u.id,
        incarnation: u.incarnation,
        addrs: { ...u.addrs },
        state: u.state,
      };
      const entry: Entry = { member, since: this.now };
      this.table.set(u.id, entry);
      if (u.state === "alive" || u.state === "suspect") this.insertProbeTarget(u.id);
      if (u.state === "suspect") this.startSuspicion(entry, u.from);
      this.emit(u.state, member);
      this.queue.enqueue(u);
      return;
    }
    const cur = e.member;
    if (u.incarnation < cur.incarnation) return;
    if (u.incarnation === cur.incarnation && STATE_RANK[u.state] <= STATE_RANK[cur.state]) {
      if (u.state === "suspect" && cur.state === "suspect") this.confirm(e, u);
      return;
    }
    const prev = cur.state;
    const prevAddrs = cur.addrs;
    e.member = { id: u.id, incarnation: u.incarnation, addrs: { ...u.addrs }, state: u.state };
    e.since = this.now;
    e.suspicion = undefined;
    this.queue.enqueue(u);
    switch (u.state) {
      case "alive":
        if (prev !== "alive") {
          if (prev === "dead" || prev === "left") this.insertProbeTarget(u.id);
          this.emit("alive", e.member);
        }
        if (!sameAddrs(prevAddrs, u.addrs)) {
          this.events.push({
            type: "address-changed",
            member: copy(e.member),
            previousAddrs: prevAddrs,
          });
        }
        return;
      case "suspect":
        this.startSuspicion(e, u.from);
        if (prev !== "suspect") this.emit("suspect", e.member);
        return;
      case "dead":
      case "left":
        if (this.probe?.target === u.id) this.probe = undefined;
        this.emit(u.state, e.member);
        return;
    }
  }

  private applyAboutSelf(u: Update): void {
    if (this.hasLeft) return;
    const stale = u.state === "alive"
      ? u.incarnation > this.inc || (u.incarnation === this.inc && !sameAddrs(u.addrs, this.addrs))
      : u.incarnation >= this.inc;
    if (!stale) return;
    // Refute: only this node may raise its own incarnation above any claim about it.
    if (u.state !== "alive") {
      this.stats.refutations++;
      this.adjustHealth(1);
    }
    this.bumpIncarnation(u.incarnation + 1);
    this.queue.enqueue(this.selfUpdate());
  }

  private startSuspicion(e: Entry, accuser: number): void {
    const n = this.liveCount();
    const minMs = suspicionMinMs(this.config, n);
    const maxMs = minMs * this.config.suspicionMaxMult;
    const k = Math.max(0, Math.min(this.config.indirectChecks, n - 2));
    const startedAt = this.now;
    const deadline = startedAt + suspicionTimeoutMs(minMs, maxMs, k, 0);
    e.suspicion = { startedAt, confirmers: new Set([accuser]), k, minMs, maxMs, deadline };
  }

  /** Lifeguard: independent accusers shorten the suspicion; each is gossiped on, up to k. */
  private confirm(e: Entry, u: Update): void {
    const s = e.suspicion;
    if (!s || s.confirmers.has(u.from)) return;
    s.confirmers.add(u.from);
    const c = s.confirmers.size - 1;
    s.deadline = s.startedAt + suspicionTimeoutMs(s.minMs, s.maxMs, s.k, c);
    if (c <= s.k) this.queue.enqueue(u);
  }

  /**
   * A sender we do not know, or know only at an older incarnation, gets a state exchange: its
   * reply brings its current record (a new address after a restart, say). Once per incarnation.
   */
  private syncIfStale(from: number, fromInc: number, fromAddr: string): void {
    const known = this.table.get(from)?.member;
    if (known && known.incarnation >= fromInc) return;
    if (this.syncAsked.get(from) === fromInc) return;
    if (this.syncAsked.size >= 4096) this.syncAsked.clear();
    this.syncAsked.set(from, fromInc);
    this.stats.pushPullsSent++;
    this.send(fromAddr, from, {
      type: "push-pull",
      ...this.header(),
      join: false,
      wantReply: true,
      members: this.fullState(),
    });
  }

  /** Our failure verdict about the sender, if it has not refuted it yet. */
  private senderNotice(from: number, fromInc: number): Update | undefined {
    const m = this.table.get(from)?.member;
    if (!m || fromInc > m.incarnation) return undefined;
    if (m.state !== "suspect" && m.state !== "dead") return undefined;
    return { ...m, addrs: { ...m.addrs }, from: this.id };
  }

  // ---- probing -------------------------------------------------------------------------------

  private startProbe(): void {
    const target = this.nextProbeTarget();
    if (target === undefined) return;
    const e = this.table.get(target)!;
    const seq = this.nextSeq();
    const scale = 1 + this.health;
    this.probe = {
      seq,
      target,
      indirectAt: this.now + this.config.probeTimeoutMs * scale,
      endAt: this.now + this.config.probeIntervalMs * scale,
      indirect: false,
      expectedNacks: 0,
      nacks: 0,
    };
    this.stats.probes++;
    // Lifeguard's buddy system: a suspect learns of its suspicion from the probe itself.
    const buddy = e.member.state === "suspect" ? [this.suspectUpdate(e)] : [];
    this.sendTo(target, {
      type: "ping",
      ...this.header(),
      seq,
      target,
      updates: this.piggyback(buddy),
    });
  }

  private goIndirect(): void {
    const p = this.probe!;
    p.indirect = true;
    const target = this.table.get(p.target);
    if (!target) return;
    const helpers = this.pick(
      this.config.indirectChecks,
      (e) => e.member.state === "alive" && e.member.id !== p.target,
    );
    p.expectedNacks = helpers.length;
    for (const h of helpers) {
      this.stats.pingReqsSent++;
      this.sendTo(h, {
        type: "ping-req",
        ...this.header(),
        seq: p.seq,
        target: p.target,
        targetAddr: target.member.addrs.cluster,
        updates: this.piggyback([]),
      });
    }
  }

  private finishProbe(): void {
    const p = this.probe!;
    this.probe = undefined;
    this.stats.probeFailures++;
    // Lifeguard: missing nacks mean our own links are the likely problem.
    this.adjustHealth(p.expectedNacks > 0 ? p.expectedNacks - p.nacks : 1);
    const e = this.table.get(p.target);
    if (!e || (e.member.state !== "alive" && e.member.state !== "suspect")) return;
    if (e.member.state === "alive") this.stats.suspicionsRaised++;
    this.apply({ ...e.member, state: "suspect", from: this.id });
  }

  private onAck(seq: number): void {
    if (this.probe && this.probe.seq === seq) {
      this.probe = undefined;
      this.adjustHealth(-1);
      return;
    }
    const r = this.relays.get(seq);
    if (r) {
      this.relays.delete(seq);
      this.send(r.requesterAddr, r.requester, {
        type: "ack",
        ...this.header(),
        seq: r.origSeq,
        updates: this.piggyback([]),
      });
    }
  }

  private relay(
    requester: number,
    requesterAddr: string | undefined,
    origSeq: number,
    target: number,
    targetAddr: string,
    notice: Update | undefined,
  ): void {
    if (requesterAddr === undefined || target === this.id) return;
    const seq = this.nextSeq();
    this.relays.set(seq, {
      requester,
      requesterAddr,
      origSeq,
      deadline: this.now + Math.floor(this.config.probeTimeoutMs * 0.8),
    });
    const t = this.table.get(target);
    const buddy = t && t.member.state === "suspect" ? [this.suspectUpdate(t)] : [];
    this.send(targetAddr, target, {
      type: "ping",
      ...this.header(),
      seq,
      target,
      updates: this.piggyback(buddy),
    });
    if (notice) this.sendUpdates(requester, [notice]);
  }

  /** Round-robin over a shuffled list (SWIM's bounded detection time), reshuffled per pass. */
  private nextProbeTarget(): number | undefined {
    for (let pass = 0; pass < 2; pass++) {
      while (this.probeIndex < this.probeOrder.length) {
        const id = this.probeOrder[this.probeIndex++];
        const s = this.table.get(id)?.member.state;
        if (s === "alive" || s === "suspect") return id;
      }
      this.probeOrder = [...this.table.values()]
        .filter((e) => e.member.state === "alive" || e.member.state === "suspect")
        .map((e) => e.member.id);
      this.shuffle(this.probeOrder);
      this.probeIndex = 0;
    }
    return undefined;
  }

  private insertProbeTarget(id: number): void {
    const lo = this.probeIndex;
    const at = lo + Math.floor(this.rng.next() * (this.probeOrder.length - lo + 1));
    this.probeOrder.splice(at, 0, id);
  }

  // ---- full state: join and push-pull --------------------------------------------------------

  private maybeJoin(): void {
    if (this.hasLeft || this.seeds.length === 0) return;
    let others = 0;
    for (const e of this.table.values()) {
      if (e.member.state === "alive" || e.member.state === "suspect") others++;
    }
    if (others > 0 && this.joined) {
      this.nextJoinAt = Infinity;
      return;
    }
    if (this.nextJoinAt === Infinity) this.nextJoinAt = this.now;
    if (this.nextJoinAt > this.now) return;
    // Alone (never joined, or everyone else failed or was forgotten): ask a seed again.
    const seed = this.seeds[this.joinAttempt++ % this.seeds.length];
    this.nextJoinAt = this.now + this.config.joinRetryMs;
    this.stats.joinRequestsSent++;
    this.send(seed, undefined, {
      type: "push-pull",
      ...this.header(),
      join: true,
      wantReply: true,
      members: [this.self()],
    });
  }

  private pushPull(): void {
    // Half the time, reach for a member we think failed: after a partition both sides hold the
    // other as dead, and only a state exchange makes them refute and meet again.
    const dead = (e: Entry) => e.member.state === "dead";
    const live = (e: Entry) => e.member.state === "alive" || e.member.state === "suspect";
    const first = this.rng.next() < 0.5 ? dead : live;
    const [id] = this.pick(1, first).concat(this.pick(1, first === dead ? live : dead));
    if (id === undefined) return;
    this.stats.pushPullsSent++;
    this.sendTo(id, {
      type: "push-pull",
      ...this.header(),
      join: false,
      wantReply: true,
      members: this.fullState(),
    });
  }

  private onPushPull(
    from: number,
    wantReply: boolean,
    members: Member[],
    fromAddr: string | undefined,
  ): void {
    let senderAddr = fromAddr;
    for (const m of members) {
      if (m.id === from) senderAddr ??= m.addrs.cluster;
      const origin = m.state === "alive" || m.state === "left" ? m.id : from;
      this.apply({ ...m, from: origin });
    }
    if (wantReply) {
      senderAddr ??= this.table.get(from)?.member.addrs.cluster;
      if (senderAddr !== undefined) {
        this.send(senderAddr, from, {
          type: "push-pull",
          ...this.header(),
          join: false,
          wantReply: false,
          members: this.fullState(),
        });
      }
    } else if (!this.joined) {
      this.joined = true;
    }
  }

  private fullState(): Member[] {
    return [this.self(), ...this.members()];
  }

  // ---- output helpers ------------------------------------------------------------------------

  private header(): { from: number; fromIncarnation: number } {
    return { from: this.id, fromIncarnation: this.inc };
  }

  private selfUpdate(): Update {
    return { ...this.self(), from: this.id };
  }

  private suspectUpdate(e: Entry): Update {
    const first = e.suspicion ? [...e.suspicion.confirmers][0] : this.id;
    return { ...e.member, from: first ?? this.id };
  }

  /** Piggyback bounded by count and bytes; `first` go ahead of the queue. */
  private piggyback(first: Update[]): Update[] {
    const c = this.config;
    let bytes = 0;
    const out: Update[] = [];
    const skip = new Set<number>();
    for (const u of first) {
      if (out.length >= c.maxPiggybackUpdates) break;
      bytes += updateWireSize(u);
      out.push(u);
      skip.add(u.id);
    }
    const limit = retransmitLimit(c, this.liveCount());
    out.push(
      ...this.queue.take(
        c.maxPiggybackUpdates - out.length,
        c.maxPiggybackBytes - bytes,
        limit,
        skip,
      ),
    );
    this.stats.updatesPiggybacked += out.length;
    return out;
  }

  private reply(
    to: number,
    addr: string | undefined,
    notice: Update | undefined,
    build: (u: Update[]) => SwimMessage,
  ): void {
    if (addr === undefined) return;
    this.send(addr, to, build(this.piggyback(notice ? [notice] : [])));
  }

  private sendUpdates(to: number, updates: Update[]): void {
    this.sendTo(to, { type: "gossip", ...this.header(), updates });
  }

  private sendTo(id: number, msg: SwimMessage): void {
    const addr = this.table.get(id)?.member.addrs.cluster;
    if (addr !== undefined) this.send(addr, id, msg);
  }

  private send(to: string, toId: number | undefined, msg: SwimMessage): void {
    this.stats.messagesSent++;
    this.out.push(toId === undefined ? { to, msg } : { to, toId, msg });
  }

  private emit(type: MembershipEvent["type"], m: Member): void {
    this.events.push({ type, member: copy(m) });
  }

  private flush(): SwimOutput {
    const r = { send: this.out, events: this.events };
    this.out = [];
    this.events = [];
    return r;
  }

  // ---- small utilities -----------------------------------------------------------------------

  private advance(nowMs: number | undefined): void {
    if (nowMs !== undefined && nowMs > this.now) this.now = nowMs;
  }

  private bumpIncarnation(to: number): void {
    // u32 on the wire; at the (unreachable in practice) ceiling we stay, which only delays refutes.
    this.inc = Math.min(MAX_INCARNATION, Math.max(this.inc, to));
  }

  private adjustHealth(delta: number): void {
    this.health = Math.max(0, Math.min(this.config.maxLocalHealth - 1, this.health + delta));
  }

  private nextSeq(): number {
    this.seq = (this.seq + 1) >>> 0;
    return this.seq;
  }

  private jittered(ms: number): number {
    return Math.floor(ms * (0.5 + this.rng.next()));
  }

  /** Up to `n` distinct random members satisfying `ok`. */
  private pick(n: number, ok: (e: Entry) => boolean): number[] {
    const ids: number[] = [];
    for (const e of this.table.values()) if (ok(e)) ids.push(e.member.id);
    this.shuffle(ids);
    return ids.slice(0, n);
  }

  private shuffle(a: number[]): void {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.rng.next() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
  }
}
