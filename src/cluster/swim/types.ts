// SWIM membership: the shared vocabulary of the state machine, its wire codec and its users.
// Everything here is plain data so the core stays pure and the codec can round-trip it.

/** A member's addresses as opaque "host:port" strings; `cluster` is where SWIM messages go. */
export interface MemberAddrs {
  cluster: string;
  kafka: string;
  http: string;
}

/** Member state as gossiped. Order matters: at equal incarnation a higher rank wins. */
export type MemberState = "alive" | "suspect" | "dead" | "left";

export const STATE_RANK: Readonly<Record<MemberState, number>> = {
  alive: 0,
  suspect: 1,
  dead: 2,
  left: 2,
};

/** What one node believes about one member. */
export interface Member {
  id: number;
  incarnation: number;
  addrs: MemberAddrs;
  state: MemberState;
}

/**
 * One piggybacked gossip item. `from` is who asserts it: the accuser of a suspicion, the
 * declarer of a death, or the member itself for alive/left.
 */
export interface Update {
  id: number;
  incarnation: number;
  state: MemberState;
  addrs: MemberAddrs;
  from: number;
}

/** Common header: who sends, at which incarnation (an alive claim by the sender itself). */
export interface Header {
  from: number;
  fromIncarnation: number;
}

/** Direct probe; `target` guards against a recycled address answering for someone else. */
export interface PingMsg extends Header {
  type: "ping";
  seq: number;
  target: number;
  updates: Update[];
}

/** Ask the receiver to probe `target` on our behalf and forward its ack. */
export interface PingReqMsg extends Header {
  type: "ping-req";
  seq: number;
  target: number;
  targetAddr: string;
  updates: Update[];
}

export interface AckMsg extends Header {
  type: "ack";
  seq: number;
  updates: Update[];
}

/** Sent by a ping-req relay whose own probe of the target timed out (Lifeguard). */
export interface NackMsg extends Header {
  type: "nack";
  seq: number;
}

/** Fire-and-forget updates (graceful leave, telling a sender it is considered dead). */
export interface GossipMsg extends Header {
  type: "gossip";
  updates: Update[];
}

/**
 * Full state exchange. A join request is a push-pull carrying only the joiner's record with
 * `join` and `wantReply` set; the answer carries the whole membership with `wantReply` clear.
 * These can be large: the IO shell may carry them on a stream transport.
 */
export interface PushPullMsg extends Header {
  type: "push-pull";
  join: boolean;
  wantReply: boolean;
  members: Member[];
}

export type SwimMessage = PingMsg | PingReqMsg | AckMsg | NackMsg | GossipMsg | PushPullMsg;

/** A message to send. `to` is always the cluster address; `toId` is set when it is a member. */
export interface Outbound {
  to: string;
  toId?: number;
  msg: SwimMessage;
}

export type MembershipEventType = "alive" | "suspect" | "dead" | "left" | "address-changed";

/** A change in this node's view. A hint for the controller, never a fencing decision. */
export interface MembershipEvent {
  type: MembershipEventType;
  member: Member;
  /** For address-changed: the addresses before. */
  previousAddrs?: MemberAddrs;
}

export interface SwimOutput {
  send: Outbound[];
  events: MembershipEvent[];
}

/** Uniform random source in [0, 1); the simulation passes its seeded RNG. */
export interface SwimRandom {
  next(): number;
}

/** Counters for metrics and the simulation's reports. */
export interface SwimStats {
  probes: number;
  probeFailures: number;
  pingReqsSent: number;
  nacksSent: number;
  suspicionsRaised: number;
  refutations: number;
  deathsDeclared: number;
  joinRequestsSent: number;
  pushPullsSent: number;
  messagesSent: number;
  updatesPiggybacked: number;
}

export function sameAddrs(a: MemberAddrs, b: MemberAddrs): boolean {
  return a.cluster === b.cluster && a.kafka === b.kafka && a.http === b.http;
}

export function copyMember(m: Member): Member {
  return { ...m, addrs: { ...m.addrs } };
}
