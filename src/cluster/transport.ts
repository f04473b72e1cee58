// The cluster port's IO: TCP for Raft RPCs, requests (join, add-learner, register) and large
// gossip, UDP on the same port number for SWIM datagrams. Every TCP frame is
// [u32 length][u8 version][u8 kind][payload]; every frame and datagram is validated (size,
// version, kind, cluster id, JSON shape) and a bad one closes the connection or is dropped:
// hostile input never throws out of here. Sends are best effort, as Raft and SWIM expect.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createConnection, createServer, type Server, type Socket } from "node:net";

export const FRAME_VERSION = 1;
/** Large enough for a snapshot of a big metadata image; a bigger length closes the socket. */
export const MAX_FRAME_BYTES = 64 << 20;
/** Above this, SWIM messages go over TCP (UDP datagrams should fit one MTU-ish packet). */
export const MAX_DATAGRAM_BYTES = 1400;
/** Bytes queued per outbound connection before further sends are dropped. */
const MAX_QUEUED_BYTES = 16 << 20;
/** After a failed connect, sends to that address are dropped for this long. */
const RECONNECT_BACKOFF_MS = 200;

export const FrameKind = {
  hello: 1,
  raft: 2,
  request: 3,
  response: 4,
  swim: 5,
  /** A call on an identified connection (after hello): replica fetches, controller sessions. */
  call: 6,
  reply: 7,
} as const;
type Kind = (typeof FrameKind)[keyof typeof FrameKind];
const KINDS = new Set<number>(Object.values(FrameKind));

export class FrameError extends Error {
  override readonly name = "FrameError";
}

export class RequestError extends Error {
  override readonly name = "RequestError";
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
  // A growable buffer with read/write positions: a large frame arriving in many chunks is
  // copied once per doubling, not once per chunk.
  #buf = new Uint8Array(4096);
  #start = 0;
  #end = 0;
  constructor(readonly maxFrame = MAX_FRAME_BYTES) {}

  push(chunk: Uint8Array): { kind: number; payload: Uint8Array }[] {
    if (this.#end + chunk.length > this.#buf.length) {
      const live = this.#end - this.#start;
      const need = live + chunk.length;
      const next = need > this.#buf.length
        ? new Uint8Array(Math.max(need, this.#buf.length * 2))
        : this.#buf;
      next.set(this.#buf.subarray(this.#start, this.#end), 0);
      this.#buf = next;
      this.#start = 0;
      this.#end = live;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
    const out: { kind: number; payload: Uint8Array }[] = [];
    const b = this.#buf;
    while (this.#end - this.#start >= 4) {
      const pos = this.#start;
      const len = new DataView(b.buffer, b.byteOffset + pos).getUint32(0);
      if (len < 2 || len > this.maxFrame) throw new FrameError(`bad frame length ${len}`);
      if (this.#end - pos - 4 < len) break;
      const version = b[pos + 4];
      const kind = b[pos + 5];
      if (version !== FRAME_VERSION) throw new FrameError(`unsupported frame version ${version}`);
      if (!KINDS.has(kind)) throw new FrameError(`unknown frame kind ${kind}`);
      out.push({ kind, payload: b.slice(pos + 6, pos + 4 + len) });
      this.#start = pos + 4 + len;
    }
    if (this.#start === this.#end) this.#start = this.#end = 0;
    return out;
  }
}

export function parseJson(payload: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(payload));
  } catch {
    return undefined;
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function splitAddr(addr: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2], port };
}

/** UDP/TCP gossip envelope: the cluster id and the sender's cluster address, then SWIM bytes. */
export function wrapSwim(clusterId: string, fromAddr: string, swim: Uint8Array): Uint8Array {
  const cid = enc.encode(clusterId);
  const addr = enc.encode(fromAddr);
  const out = new Uint8Array(3 + cid.length + addr.length + swim.length);
  out[0] = FRAME_VERSION;
  out[1] = cid.length;
  out.set(cid, 2);
  out[2 + cid.length] = addr.length;
  out.set(addr, 3 + cid.length);
  out.set(swim, 3 + cid.length + addr.length);
  return out;
}

export function unwrapSwim(
  b: Uint8Array,
): { clusterId: string; fromAddr: string; swim: Uint8Array } | undefined {
  try {
    if (b.length < 3 || b[0] !== FRAME_VERSION) return undefined;
    const cl = b[1];
    if (b.length < 3 + cl) return undefined;
    const clusterId = dec.decode(b.subarray(2, 2 + cl));
    const al = b[2 + cl];
    if (b.length < 3 + cl + al) return undefined;
    const fromAddr = dec.decode(b.subarray(3 + cl, 3 + cl + al));
    return { clusterId, fromAddr, swim: b.subarray(3 + cl + al) };
  } catch {
    return undefined;
  }
}

/**
 * One request to a broker's cluster port on its own short-lived connection (no identity
 * needed: joiners, operators and tests use it); rejects on timeout or an error answer.
 */
export function clusterRequest(
  addr: string,
  method: string,
  body: unknown,
  timeoutMs: number,
): Promise<unknown> {
  const a = splitAddr(addr);
  if (a === undefined) return Promise.reject(new RequestError(`bad address ${addr}`));
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: a.host, port: a.port, noDelay: true });
    const decoder = new FrameDecoder();
    let done = false;
    const finish = (err: Error | undefined, v?: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(v);
    };
    const timer = setTimeout(
      () => finish(new RequestError(`${method} to ${addr}: no answer in ${timeoutMs} ms`)),
      timeoutMs,
    );
    sock.on("error", (e) => finish(new RequestError(`${method} to ${addr}: ${e.message}`)));
    sock.on("close", () => finish(new RequestError(`${method} to ${addr}: connection closed`)));
    sock.on("data", (chunk: Buffer) => {
      try {
        for (const f of decoder.push(new Uint8Array(chunk))) {
          const r = f.kind === FrameKind.response ? parseJson(f.payload) : undefined;
          if (!isObj(r)) return finish(new RequestError(`${method} to ${addr}: bad answer`));
          if (r.ok === true) return finish(undefined, r.body);
          return finish(new RequestError(String(r.error ?? "request failed").slice(0, 1000)));
        }
      } catch (e) {
        finish(e as Error);
      }
    });
    sock.write(jsonFrame(FrameKind.request, { method, body }));
  });
}

export interface Hello {
  clusterId: string;
  nodeId: number;
  addr: string;
}

export interface NetHandlers {
  /** A Raft message from a peer that said hello with our cluster id (`from` checked). */
  onRaft(msg: unknown): void;
  /** A peer's hello: its current cluster address. */
  onPeer(nodeId: number, addr: string): void;
  onSwim(swim: Uint8Array, fromAddr: string): void;
  /** Answers a request; a thrown error becomes an error response. */
  onRequest(method: string, body: unknown): Promise<unknown>;
  /**
   * Answers a call from an identified peer (its hello's node id): JSON body plus raw bytes.
   * A thrown error becomes an error reply.
   */
  onCall?(from: number, method: string, body: unknown, tail: Uint8Array): Promise<CallAnswer>;
  /** A connection from a peer that said hello closed: a hint it may be gone. */
  onPeerClosed?(nodeId: number): void;
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
  const head = new Uint8Array(6 + 4 + h.length);
  const v = new DataView(head.buffer);
  v.setUint32(0, 2 + 4 + h.length + tailLen);
  head[4] = FRAME_VERSION;
  head[5] = kind;
  v.setUint32(6, h.length);
  head.set(h, 10);
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

interface Outbound {
  sock: Socket;
  connected: boolean;
  pending: Uint8Array[];
  pendingBytes: number;
}

/** The TCP listener, UDP socket and outbound connections of one broker's cluster port. */
export class ClusterNet {
  readonly port: number;
  #server: Server;
  #udp: UdpSocket;
  #out = new Map<string, Outbound>();
  #failedAt = new Map<string, number>();
  #inbound = new Set<Socket>();
  /** Open inbound connections per peer node (after its hello). */
  #peerConns = new Map<number, number>();

  /** Whether `nodeId` holds a connection to this node now (a live peer keeps its Raft one). */
  peerConnected(nodeId: number): boolean {
    return (this.#peerConns.get(nodeId) ?? 0) > 0;
  }
  #handlers: NetHandlers | undefined;
  #hello: Hello | undefined;
  #closed = false;

  private constructor(server: Server, udp: UdpSocket, port: number) {
    this.#server = server;
    this.#udp = udp;
    this.port = port;
    server.on("connection", (s) => this.#accept(s));
    udp.on("message", (msg) => this.#datagram(new Uint8Array(msg)));
    udp.on("error", () => {/* a bad datagram or ICMP error: gossip copes with loss */});
  }

  /**
   * Binds TCP on host:port and UDP on the same port number. With port 0 the kernel picks the
   * TCP port; if UDP cannot have the same number, both are retried a few times.
   */
  static async bind(host: string, port: number): Promise<ClusterNet> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < (port === 0 ? 10 : 1); attempt++) {
      const server = createServer({ noDelay: true });
      try {
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen({ host, port, exclusive: true }, () => resolve());
        });
      } catch (e) {
        lastErr = e;
        server.close();
        continue;
      }
      const bound = (server.address() as { port: number }).port;
      const udp = createSocket({ type: host.includes(":") ? "udp6" : "udp4" });
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once("error", reject);
          udp.bind(bound, host, () => resolve());
        });
        return new ClusterNet(server, udp, bound);
      } catch (e) {
        lastErr = e;
        udp.close();
        server.close();
      }
    }
    throw lastErr instanceof Error ? lastErr : new Error(String(lastErr));
  }

  /** Who we are on outbound connections; until set, Raft and gossip traffic is ignored. */
  setIdentity(h: Hello): void {
    this.#hello = { ...h };
  }

  setHandlers(h: NetHandlers): void {
    this.#handlers = h;
  }

  sendRaft(addr: string, msg: unknown): void {
    this.#send(addr, jsonFrame(FrameKind.raft, msg));
  }

  sendSwim(addr: string, swim: Uint8Array): void {
    if (this.#hello === undefined || this.#closed) return;
    const env = wrapSwim(this.#hello.clusterId, this.#hello.addr, swim);
    if (env.length <= MAX_DATAGRAM_BYTES) {
      const a = splitAddr(addr);
      if (a === undefined) return;
      try {
        this.#udp.send(env, a.port, a.host);
      } catch { /* best effort */ }
    } else this.#send(addr, encodeFrame(FrameKind.swim, env));
  }

  /** One request on its own short-lived connection; rejects on timeout or an error answer. */
  request(addr: string, method: string, body: unknown, timeoutMs: number): Promise<unknown> {
    return clusterRequest(addr, method, body, timeoutMs);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const o of this.#out.values()) o.sock.destroy();
    for (const s of this.#inbound) s.destroy();
    this.#out.clear();
    this.#server.close();
    try {
      this.#udp.close();
    } catch { /* already closed */ }
  }

  #send(addr: string, frame: Uint8Array): void {
    if (this.#closed || this.#hello === undefined) return;
    let o = this.#out.get(addr);
    if (o === undefined) {
      const failed = this.#failedAt.get(addr);
      if (failed !== undefined && performance.now() - failed < RECONNECT_BACKOFF_MS) return;
      const a = splitAddr(addr);
      if (a === undefined) return;
      const sock = createConnection({ host: a.host, port: a.port, noDelay: true });
      const out: Outbound = { sock, connected: false, pending: [], pendingBytes: 0 };
      o = out;
      this.#out.set(addr, out);
      sock.on("connect", () => {
        out.connected = true;
        this.#failedAt.delete(addr);
        for (const p of out.pending) sock.write(p);
        out.pending = [];
        out.pendingBytes = 0;
      });
      sock.on("error", () => this.#failedAt.set(addr, performance.now()));
      sock.on("close", () => {
        if (this.#out.get(addr) === out) this.#out.delete(addr);
      });
      // Inbound traffic on our outbound connections is not expected; drain and ignore it.
      sock.on("data", () => {});
      this.#queue(out, jsonFrame(FrameKind.hello, this.#hello));
    }
    this.#queue(o, frame);
  }

  #queue(o: Outbound, frame: Uint8Array): void {
    if (!o.connected) {
      if (o.pendingBytes + frame.length > MAX_QUEUED_BYTES) return;
      o.pending.push(frame);
      o.pendingBytes += frame.length;
      return;
    }
    // A peer that stopped reading (paused process) must not grow our memory without bound.
    if (o.sock.writableLength > MAX_QUEUED_BYTES) return;
    o.sock.write(frame);
  }

  #accept(sock: Socket): void {
    if (this.#closed) {
      sock.destroy();
      return;
    }
    this.#inbound.add(sock);
    sock.setNoDelay(true);
    const decoder = new FrameDecoder();
    let peer: Hello | undefined;
    sock.on("error", () => {});
    sock.on("close", () => {
      this.#inbound.delete(sock);
      if (peer === undefined) return;
      // A hint only when the peer's last connection went: a live broker keeps its Raft
      // connection while it opens and closes others (fetchers follow leadership).
      const left = (this.#peerConns.get(peer.nodeId) ?? 1) - 1;
      if (left > 0) {
        this.#peerConns.set(peer.nodeId, left);
        return;
      }
      this.#peerConns.delete(peer.nodeId);
      if (!this.#closed) this.#handlers?.onPeerClosed?.(peer.nodeId);
    });
    sock.on("data", (chunk: Buffer) => {
      let frames;
      try {
        frames = decoder.push(new Uint8Array(chunk));
      } catch {
        sock.destroy();
        return;
      }
      for (const f of frames) {
        if (!this.#frame(sock, f.kind, f.payload, peer, (h) => peer = h)) {
          sock.destroy();
          return;
        }
      }
    });
  }

  /** Handles one inbound frame; false closes the connection. */
  #frame(
    sock: Socket,
    kind: number,
    payload: Uint8Array,
    peer: Hello | undefined,
    setPeer: (h: Hello) => void,
  ): boolean {
    const h = this.#handlers;
    const me = this.#hello;
    switch (kind) {
      case FrameKind.hello: {
        const v = parseJson(payload);
        if (
          !isObj(v) || typeof v.clusterId !== "string" || typeof v.addr !== "string" ||
          typeof v.nodeId !== "number" || !Number.isSafeInteger(v.nodeId) || v.nodeId < 0 ||
          splitAddr(v.addr) === undefined || peer !== undefined
        ) return false;
        if (me === undefined || v.clusterId !== me.clusterId) return false;
        setPeer({ clusterId: v.clusterId, nodeId: v.nodeId, addr: v.addr });
        this.#peerConns.set(v.nodeId, (this.#peerConns.get(v.nodeId) ?? 0) + 1);
        h?.onPeer(v.nodeId, v.addr);
        return true;
      }
      case FrameKind.raft: {
        if (peer === undefined) return false;
        const m = parseJson(payload);
        // A peer speaks only for itself: a message claiming another sender is dropped.
        if (!isObj(m) || m.from !== peer.nodeId) return true;
        h?.onRaft(m);
        return true;
      }
      case FrameKind.swim: {
        const u = unwrapSwim(payload);
        if (u === undefined || me === undefined || u.clusterId !== me.clusterId) return true;
        h?.onSwim(u.swim, u.fromAddr);
        return true;
      }
      case FrameKind.request: {
        const v = parseJson(payload);
        if (!isObj(v) || typeof v.method !== "string" || h === undefined) return false;
        const reply = (r: unknown) => {
          if (!sock.destroyed) sock.write(jsonFrame(FrameKind.response, r));
        };
        let answer: Promise<unknown>;
        try {
          answer = h.onRequest(v.method, v.body);
        } catch (e) {
          answer = Promise.reject(e);
        }
        answer.then(
          (body) => reply({ ok: true, body }),
          (e) => reply({ ok: false, error: e instanceof Error ? e.message : String(e) }),
        );
        return true;
      }
      case FrameKind.call: {
        // Only a peer that said hello may call: the node id is the hello's, never the body's.
        if (peer === undefined || h?.onCall === undefined) return false;
        const c = decodeCall(payload);
        if (c === undefined || !isObj(c.header)) return false;
        const { id, method, body } = c.header;
        if (!Number.isSafeInteger(id) || typeof method !== "string") return false;
        const reply = (header: unknown, tail?: Uint8Array[]) => {
          if (sock.destroyed) return;
          for (const piece of callFramePieces(FrameKind.reply, header, tail)) sock.write(piece);
        };
        // A handler that throws at once must not throw out of the socket's data event (that
        // ends the process): it becomes an error reply like a rejected promise.
        let answer: Promise<CallAnswer>;
        try {
          answer = h.onCall(peer.nodeId, method, body, c.tail);
        } catch (e) {
          answer = Promise.reject(e);
        }
        answer.then(
          (a) => reply({ id, ok: true, body: a.body }, a.tail),
          (e) => reply({ id, ok: false, error: e instanceof Error ? e.message : String(e) }),
        );
        return true;
      }
      default:
        return false;
    }
  }

  #datagram(b: Uint8Array): void {
    const me = this.#hello;
    if (me === undefined || this.#closed) return;
    const u = unwrapSwim(b);
    if (u === undefined || u.clusterId !== me.clusterId) return;
    this.#handlers?.onSwim(u.swim, u.fromAddr);
  }
}
