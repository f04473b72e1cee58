// Compact, versioned binary encoding of SWIM messages. Big-endian; strings are u8-length
// prefixed UTF-8 (addresses are short). Decoding hostile bytes only ever throws SwimDecodeError.
//
// Layout (version 1):
//   header   : version u8 | type u8 | from i32 | fromIncarnation u32
//   ping     : seq u32 | target i32 | updates
//   ping-req : seq u32 | target i32 | targetAddr str | updates
//   ack      : seq u32 | updates
//   nack     : seq u32
//   gossip   : updates
//   push-pull: flags u8 (1 join, 2 wantReply) | count u32 | member*count
//   updates  : count u8 | (member fields | from i32)*count
//   member   : id i32 | incarnation u32 | state u8 | cluster str | kafka str | http str
import { DecodeError } from "../../protocol/decode-error.ts";
import type { Member, MemberAddrs, MemberState, SwimMessage, Update } from "./types.ts";

export const SWIM_WIRE_VERSION = 1;
/** Upper bound on any encoded message; larger input is refused before parsing. */
export const MAX_MESSAGE_BYTES = 4 << 20;
/** Piggybacked updates per message, as a hard wire limit (the node sends far fewer). */
export const MAX_WIRE_UPDATES = 64;
/** Members in one push-pull. */
export const MAX_WIRE_MEMBERS = 16384;
export const MAX_ADDR_BYTES = 255;
export const HEADER_BYTES = 10;

export class SwimDecodeError extends DecodeError {
  override readonly name: string = "SwimDecodeError";
}

/** A value the encoder cannot represent (a programming error, not hostile input). */
export class SwimEncodeError extends Error {
  override readonly name: string = "SwimEncodeError";
}

const TYPE_CODES = {
  ping: 1,
  "ping-req": 2,
  ack: 3,
  nack: 4,
  gossip: 5,
  "push-pull": 6,
} as const;
const STATES: readonly MemberState[] = ["alive", "suspect", "dead", "left"];
const STATE_CODES: Readonly<Record<MemberState, number>> = {
  alive: 0,
  suspect: 1,
  dead: 2,
  left: 3,
};
const FLAG_JOIN = 1;
const FLAG_WANT_REPLY = 2;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 byte length without allocating. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

function addrsBytes(a: MemberAddrs): number {
  return 3 + utf8Length(a.cluster) + utf8Length(a.kafka) + utf8Length(a.http);
}

/** Encoded size of a member record in a push-pull. */
export function memberWireSize(m: Member): number {
  return 9 + addrsBytes(m.addrs);
}

/** Encoded size of one piggybacked update; the node budgets bytes with it. */
export function updateWireSize(u: Update): number {
  return 13 + addrsBytes(u.addrs);
}

function updatesSize(us: readonly Update[]): number {
  let n = 1;
  for (const u of us) n += updateWireSize(u);
  return n;
}

/** Exact encoded size of a message. */
export function messageWireSize(m: SwimMessage): number {
  switch (m.type) {
    case "ping":
      return HEADER_BYTES + 8 + updatesSize(m.updates);
    case "ping-req":
      return HEADER_BYTES + 9 + utf8Length(m.targetAddr) + updatesSize(m.updates);
    case "ack":
      return HEADER_BYTES + 4 + updatesSize(m.updates);
    case "nack":
      return HEADER_BYTES + 4;
    case "gossip":
      return HEADER_BYTES + updatesSize(m.updates);
    case "push-pull": {
      let n = HEADER_BYTES + 5;
      for (const mem of m.members) n += memberWireSize(mem);
      return n;
    }
  }
}

// Byte arithmetic instead of DataView: creating views per message dominated the simulation.
class Writer {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  u8(v: number): void {
    this.buf[this.pos++] = v;
  }
  private be32(v: number): void {
    const b = this.buf;
    b[this.pos] = v >>> 24;
    b[this.pos + 1] = v >>> 16;
    b[this.pos + 2] = v >>> 8;
    b[this.pos + 3] = v;
    this.pos += 4;
  }
  u32(v: number, what: string): void {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new SwimEncodeError(`${what} out of u32 range: ${v}`);
    }
    this.be32(v);
  }
  id(v: number, what: string): void {
    if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) {
      throw new SwimEncodeError(`${what} is not a non-negative int32: ${v}`);
    }
    this.be32(v);
  }
  str(s: string, what: string): void {
    // ASCII fast path (addresses almost always are); TextEncoder otherwise.
    if (s.length <= MAX_ADDR_BYTES) {
      let ascii = true;
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          ascii = false;
          break;
        }
        this.buf[this.pos + 1 + i] = c;
      }
      if (ascii) {
        this.buf[this.pos] = s.length;
        this.pos += 1 + s.length;
        return;
      }
    }
    const r = utf8.encodeInto(s, this.buf.subarray(this.pos + 1));
    if (r.read !== s.length || r.written > MAX_ADDR_BYTES) {
      throw new SwimEncodeError(`${what} longer than ${MAX_ADDR_BYTES} bytes`);
    }
    this.buf[this.pos] = r.written;
    this.pos += 1 + r.written;
  }
  member(m: Member | Update): void {
    this.id(m.id, "member id");
    this.u32(m.incarnation, "incarnation");
    const code = STATE_CODES[m.state];
    if (code === undefined) throw new SwimEncodeError(`bad state ${String(m.state)}`);
    this.u8(code);
    this.str(m.addrs.cluster, "cluster address");
    this.str(m.addrs.kafka, "kafka address");
    this.str(m.addrs.http, "http address");
  }
  updates(us: readonly Update[]): void {
    if (us.length > MAX_WIRE_UPDATES) throw new SwimEncodeError(`too many updates: ${us.length}`);
    this.u8(us.length);
    for (const u of us) {
      this.member(u);
      this.id(u.from, "update origin");
    }
  }
}

/** Encode a message. Throws SwimEncodeError for values outside the wire's ranges. */
export function encodeSwim(m: SwimMessage): Uint8Array {
  const size = messageWireSize(m);
  if (size > MAX_MESSAGE_BYTES) throw new SwimEncodeError(`message of ${size} bytes too large`);
  const w = new Writer(new Uint8Array(size));
  const code = TYPE_CODES[m.type];
  if (code === undefined) throw new SwimEncodeError(`bad message type`);
  w.u8(SWIM_WIRE_VERSION);
  w.u8(code);
  w.id(m.from, "sender id");
  w.u32(m.fromIncarnation, "sender incarnation");
  switch (m.type) {
    case "ping":
      w.u32(m.seq, "seq");
      w.id(m.target, "target");
      w.updates(m.updates);
      break;
    case "ping-req":
      w.u32(m.seq, "seq");
      w.id(m.target, "target");
      w.str(m.targetAddr, "target address");
      w.updates(m.updates);
      break;
    case "ack":
      w.u32(m.seq, "seq");
      w.updates(m.updates);
      break;
    case "nack":
      w.u32(m.seq, "seq");
      break;
    case "gossip":
      w.updates(m.updates);
      break;
    case "push-pull":
      if (m.members.length > MAX_WIRE_MEMBERS) {
        throw new SwimEncodeError(`too many members: ${m.members.length}`);
      }
      w.u8((m.join ? FLAG_JOIN : 0) | (m.wantReply ? FLAG_WANT_REPLY : 0));
      w.u32(m.members.length, "member count");
      for (const mem of m.members) w.member(mem);
      break;
  }
  return w.buf.slice(0, w.pos);
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  need(n: number): void {
    if (this.pos + n > this.buf.length) throw new SwimDecodeError("truncated message", this.pos);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }
  u32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;
  }
  id(what: string): number {
    const at = this.pos;
    const v = this.u32();
    if (v > 0x7fffffff) throw new SwimDecodeError(`negative ${what}`, at);
    return v;
  }
  str(): string {
    const at = this.pos;
    const n = this.u8();
    this.need(n);
    const start = this.pos;
    this.pos += n;
    let ascii = "";
    for (let i = start; i < start + n; i++) {
      const c = this.buf[i];
      if (c >= 0x80) {
        try {
          return strictUtf8.decode(this.buf.subarray(start, start + n));
        } catch {
          throw new SwimDecodeError("invalid UTF-8 in string", at);
        }
      }
      ascii += String.fromCharCode(c);
    }
    return ascii;
  }
  member(): Member {
    const id = this.id("member id");
    const incarnation = this.u32();
    const at = this.pos;
    const state = STATES[this.u8()];
    if (state === undefined) throw new SwimDecodeError("unknown member state", at);
    const cluster = this.str();
    const kafka = this.str();
    const http = this.str();
    return { id, incarnation, state, addrs: { cluster, kafka, http } };
  }
  updates(): Update[] {
    const at = this.pos;
    const n = this.u8();
    if (n > MAX_WIRE_UPDATES) throw new SwimDecodeError(`too many updates (${n})`, at);
    const out: Update[] = [];
    for (let i = 0; i < n; i++) {
      const m = this.member();
      out.push({ ...m, from: this.id("update origin") });
    }
    return out;
  }
}

/** Decode one message. Any malformed input throws SwimDecodeError and nothing else. */
export function decodeSwim(bytes: Uint8Array): SwimMessage {
  if (!(bytes instanceof Uint8Array)) throw new SwimDecodeError("input is not bytes");
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw new SwimDecodeError(`message of ${bytes.length} bytes too large`);
  }
  const r = new Reader(bytes);
  const version = r.u8();
  if (version !== SWIM_WIRE_VERSION) {
    throw new SwimDecodeError(`unsupported SWIM wire version ${version}`, 0);
  }
  const type = r.u8();
  const from = r.id("sender id");
  const fromIncarnation = r.u32();
  let msg: SwimMessage;
  switch (type) {
    case TYPE_CODES.ping: {
      const seq = r.u32();
      const target = r.id("target");
      msg = { type: "ping", from, fromIncarnation, seq, target, updates: r.updates() };
      break;
    }
    case TYPE_CODES["ping-req"]: {
      const seq = r.u32();
      const target = r.id("target");
      const targetAddr = r.str();
      const updates = r.updates();
      msg = { type: "ping-req", from, fromIncarnation, seq, target, targetAddr, updates };
      break;
    }
    case TYPE_CODES.ack: {
      const seq = r.u32();
      msg = { type: "ack", from, fromIncarnation, seq, updates: r.updates() };
      break;
    }
    case TYPE_CODES.nack:
      msg = { type: "nack", from, fromIncarnation, seq: r.u32() };
      break;
    case TYPE_CODES.gossip:
      msg = { type: "gossip", from, fromIncarnation, updates: r.updates() };
      break;
    case TYPE_CODES["push-pull"]: {
      const at = r.pos;
      const flags = r.u8();
      if ((flags & ~(FLAG_JOIN | FLAG_WANT_REPLY)) !== 0) {
        throw new SwimDecodeError(`unknown push-pull flags ${flags}`, at);
      }
      const countAt = r.pos;
      const count = r.u32();
      // Each member takes at least 12 bytes: refuse counts the input cannot hold.
      if (count > MAX_WIRE_MEMBERS || count * 12 > bytes.length - r.pos) {
        throw new SwimDecodeError(`implausible member count ${count}`, countAt);
      }
      const members: Member[] = [];
      for (let i = 0; i < count; i++) members.push(r.member());
      msg = {
        type: "push-pull",
        from,
        fromIncarnation,
        join: (flags & FLAG_JOIN) !== 0,
        wantReply: (flags & FLAG_WANT_REPLY) !== 0,
        members,
      };
      break;
    }
    default:
      throw new SwimDecodeError(`unknown message type ${type}`, 1);
  }
  if (r.pos !== bytes.length) {
    throw new SwimDecodeError(`${bytes.length - r.pos} trailing bytes`, r.pos);
  }
  return msg;
}
