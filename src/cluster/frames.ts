// The cluster port's framing: every TCP frame is [u32 length][u8 version][u8 kind][payload],
// validated (size, version, kind) before it is handed on; call and reply frames carry a JSON
// header and raw tail bytes; and the errors a cluster client sees. transport.ts does the IO.
export const FRAME_VERSION = 1;
/** Large enough for a snapshot of a big metadata image; a bigger length closes the socket. */
export const MAX_FRAME_BYTES = 64 << 20;
/** Call and reply tails up to this size are sent in the frame head's buffer (one write). */
const SMALL_TAIL = 16 << 10;

export const FrameKind = {
  hello: 1,
  raft: 2,
  request: 3,
  response: 4,
  swim: 5,
  /** A call on an identified connection (after hello): replica fetches, controller sessions. */
  call: 6,
  reply: 7,
  /** Handshake: the server's nonce (after the client's hello). */
  challenge: 8,
  /** Handshake: the client's proof over both nonces and its claimed identity. */
  proof: 9,
  /** Handshake: the server's identity and proof; the connection is open for frames. */
  welcome: 10,
  /** Handshake refused (wrong token, another cluster); the server closes the connection. */
  denied: 11,
} as const;
export type Kind = (typeof FrameKind)[keyof typeof FrameKind];
const KINDS = new Set<number>(Object.values(FrameKind));

export class FrameError extends Error {
  override readonly name = "FrameError";
}

export class RequestError extends Error {
  override readonly name: string = "RequestError";
}

/** The other side refused our credentials or failed to prove its own (never retried blindly). */
export class AuthError extends RequestError {
  override readonly name: string = "AuthError";
}

/** One side speaks TLS on the cluster port and the other plain text: they cannot talk. */
export class TlsMismatchError extends AuthError {
  override readonly name = "TlsMismatchError";
}

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

export function encodeFrame(kind: Kind, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(6 + payload.length);
  new DataView(out.buffer).setUint32(0, 2 + payload.length);
  out[4] = FRAME_VERSION;
  out[5] = kind;
  out.set(payload, 6);
  return out;
}

export function jsonFrame(kind: Kind, v: unknown): Uint8Array {
  return encodeFrame(kind, enc.encode(JSON.stringify(v)));
}

/** Splits a byte stream into frames; throws FrameError on a frame it must not accept. */
export class FrameDecoder {
  // The bytes of one incomplete frame, at #buf[0, #have). Frames wholly inside a chunk are not
  // copied (views of the chunk); a frame split over chunks is copied once, into a buffer big
  // enough for all of it as soon as its length is known, and handed out as a view of that
  // buffer, which the consumer may give back (recycle) for the next one. Why: replica fetch
  // replies (up to 1 MiB) were copied into a growing buffer, then sliced into a fresh one, and
  // fresh pages are expensive here (docs/benchmarks.md, Replicated: 65-69 % of a follower).
  readonly #small = new Uint8Array(4096);
  #buf: Uint8Array = this.#small;
  #have = 0;
  /** The big buffer last handed out, and one given back for reuse. */
  #lent: ArrayBuffer | null = null;
  #spare: ArrayBuffer | null = null;
  constructor(readonly maxFrame = MAX_FRAME_BYTES) {}

  /** Frames may be views of `chunk`: the caller must not write to it afterwards. */
  push(chunk: Uint8Array): { kind: number; payload: Uint8Array }[] {
    const out: { kind: number; payload: Uint8Array }[] = [];
    let at = 0;
    if (this.#have > 0) {
      if (this.#have < 4) {
        const n = Math.min(4 - this.#have, chunk.length);
        this.#buf.set(chunk.subarray(0, n), this.#have);
        this.#have += n;
        at = n;
        if (this.#have < 4) return out;
      }
      const total = 4 + this.#length(this.#buf, 0);
      if (this.#buf.length < total) {
        const b = this.#bigBuffer(total);
        b.set(this.#buf.subarray(0, this.#have));
        this.#buf = b;
      }
      const n = Math.min(total - this.#have, chunk.length - at);
      this.#buf.set(chunk.subarray(at, at + n), this.#have);
      this.#have += n;
      at += n;
      if (this.#have < total) return out;
      this.#have = 0;
      if (this.#buf === this.#small) {
        out.push(this.#frame(this.#small.slice(0, total), 0, total));
      } else {
        out.push(this.#frame(this.#buf, 0, total));
        this.#lent = this.#buf.buffer as ArrayBuffer;
        this.#buf = this.#small;
      }
    }
    while (chunk.length - at >= 4) {
      const total = 4 + this.#length(chunk, at);
      if (chunk.length - at < total) break;
      out.push(this.#frame(chunk, at, at + total));
      at += total;
    }
    const rest = chunk.length - at;
    if (rest > 0) {
      const need = rest >= 4 ? 4 + this.#length(chunk, at) : 4;
      this.#buf = need <= this.#small.length ? this.#small : this.#bigBuffer(need);
      this.#buf.set(chunk.subarray(at), 0);
      this.#have = rest;
    }
    return out;
  }

  /** The consumer is done with a frame's payload: its buffer may hold the next big frame. */
  recycle(payload: Uint8Array): void {
    if (this.#lent !== null && payload.buffer === this.#lent) {
      this.#spare = this.#lent;
      this.#lent = null;
    }
  }

  #bigBuffer(n: number): Uint8Array {
    const spare = this.#spare;
    if (spare !== null && spare.byteLength >= n) {
      this.#spare = null;
      return new Uint8Array(spare);
    }
    let cap = 1 << 16;
    while (cap < n) cap *= 2;
    return new Uint8Array(cap);
  }

  /** The length field of the frame at `pos` (4 bytes there), checked. */
  #length(b: Uint8Array, pos: number): number {
    const len = ((b[pos] << 24) | (b[pos + 1] << 16) | (b[pos + 2] << 8) | b[pos + 3]) >>> 0;
    if (len < 2 || len > this.maxFrame) throw new FrameError(`bad frame length ${len}`);
    return len;
  }

  /** The frame at b[pos, end): version and kind checked, payload a view. */
  #frame(b: Uint8Array, pos: number, end: number): { kind: number; payload: Uint8Array } {
    const version = b[pos + 4];
    const kind = b[pos + 5];
    if (version !== FRAME_VERSION) throw new FrameError(`unsupported frame version ${version}`);
    if (!KINDS.has(kind)) throw new FrameError(`unknown frame kind ${kind}`);
    return { kind, payload: b.subarray(pos + 6, end) };
  }
}

export function parseJson(payload: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(payload));
  } catch {
    return undefined;
  }
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function splitAddr(addr: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2], port };
}

export interface CallAnswer {
  body: unknown;
  /** Raw bytes after the JSON header (record batches: bytes stay bytes). */
  tail?: Uint8Array[];
}

/**
 * A whole call or reply frame as pieces for the socket: the frame head and the JSON header in one
 * small buffer, then the tail buffers as they are. Record bytes (a replica fetch's megabyte) are
 * never copied into a frame buffer: the socket queues the pieces.
 */
export function callFramePieces(
  kind: Kind,
  header: unknown,
  tail: readonly Uint8Array[] = [],
): Uint8Array[] {
  const h = enc.encode(JSON.stringify(header));
  let tailLen = 0;
  for (const t of tail) tailLen += t.length;
  // A small tail is copied into the head's buffer: one write, one segment on the wire (a reply
  // carrying one acks=all batch was two sends on the leader and often two reads on the follower).
  const inline = tailLen <= SMALL_TAIL ? tailLen : 0;
  const head = new Uint8Array(6 + 4 + h.length + inline);
  const v = new DataView(head.buffer);
  v.setUint32(0, 2 + 4 + h.length + tailLen);
  head[4] = FRAME_VERSION;
  head[5] = kind;
  v.setUint32(6, h.length);
  head.set(h, 10);
  if (inline > 0 || tailLen === 0) {
    let at = 10 + h.length;
    for (const t of tail) {
      head.set(t, at);
      at += t.length;
    }
    return [head];
  }
  return [head, ...tail.filter((t) => t.length > 0)];
}

/** [u32 header length][JSON header][tail bytes...] */
export function encodeCall(header: unknown, tail: readonly Uint8Array[] = []): Uint8Array {
  const h = enc.encode(JSON.stringify(header));
  let n = 4 + h.length;
  for (const t of tail) n += t.length;
  const out = new Uint8Array(n);
  new DataView(out.buffer).setUint32(0, h.length);
  out.set(h, 4);
  let at = 4 + h.length;
  for (const t of tail) {
    out.set(t, at);
    at += t.length;
  }
  return out;
}

export function decodeCall(payload: Uint8Array): { header: unknown; tail: Uint8Array } | undefined {
  if (payload.length < 4) return undefined;
  const len = new DataView(payload.buffer, payload.byteOffset).getUint32(0);
  if (len > payload.length - 4) return undefined;
  const header = parseJson(payload.subarray(4, 4 + len));
  if (header === undefined) return undefined;
  return { header, tail: payload.subarray(4 + len) };
}
