// The cluster port's IO: TCP for Raft RPCs, requests (join, add-learner, register) and large
// gossip, UDP on the same port number for SWIM datagrams. Every TCP frame (frames.ts) and every
// datagram is validated (size, version, kind, cluster id, JSON shape) and a bad one closes the
// connection or is dropped: hostile input never throws out of here. Sends are best effort, as
// Raft and SWIM expect. Every TCP connection opens with a challenge-response handshake over the
// cluster's join token (handshake.ts): nothing else on it is read before that, and the
// connection then speaks only as the node id it proved. Every SWIM datagram carries a MAC and a
// counter checked against a replay window (wrapSwim / unwrapSwim). docs/security.md.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import { ClusterKey, MAC_BYTES, ReplayWindow, SwimCounter } from "./auth.ts";
import {
  AuthError,
  type CallAnswer,
  callFramePieces,
  decodeCall,
  encodeFrame,
  FrameDecoder,
  FrameKind,
  isObj,
  jsonFrame,
  parseJson,
  RequestError,
  splitAddr,
  TlsMismatchError,
} from "./frames.ts";
import {
  type ClientAuth,
  ClientHandshake,
  dialError,
  HANDSHAKE_TIMEOUT_MS,
  MAX_HANDSHAKE_FRAME,
  NODE_ID_MAX,
  type ProvenClient,
  ServerHandshake,
} from "./handshake.ts";
import {
  channelBinding,
  type ClusterTls,
  dialCluster,
  isPlainTextAnswer,
  looksLikeTls,
  tlsMismatch,
} from "./tls.ts";

// The framing and the handshake, for the modules and tests that import them from here.
export * from "./frames.ts";
export * from "./handshake.ts";

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

/** Above this, SWIM messages go over TCP (UDP datagrams should fit one MTU-ish packet). */
export const MAX_DATAGRAM_BYTES = 1400;
/** Bytes queued per outbound connection before further sends are dropped. */
const MAX_QUEUED_BYTES = 16 << 20;
/** After a failed connect, sends to that address are dropped for this long. */
const RECONNECT_BACKOFF_MS = 200;

/** The first byte of a gossip envelope (1 was the unauthenticated envelope, refused now). */
export const SWIM_ENVELOPE_VERSION = 2;

export interface SwimEnvelope {
  clusterId: string;
  /** The sender's cluster address. */
  fromAddr: string;
  /** The sender's node id: the SWIM message inside must be from it. */
  sender: number;
  /** The sender's strictly increasing counter (replay protection). */
  counter: number;
  swim: Uint8Array;
  /** The bytes the MAC covers, and the MAC. */
  signed: Uint8Array;
  mac: Uint8Array;
}

/**
 * UDP/TCP gossip envelope: [u8 version=2][u8 len][cluster id][u8 len][sender's cluster address]
 * [u32 sender id][u64 counter][SWIM bytes][32-byte HMAC-SHA256 of everything before it].
 */
export function wrapSwim(
  key: ClusterKey,
  clusterId: string,
  fromAddr: string,
  sender: number,
  counter: number,
  swim: Uint8Array,
): Uint8Array {
  const cid = enc.encode(clusterId);
  const addr = enc.encode(fromAddr);
  const head = 3 + cid.length + addr.length;
  const body = head + 12 + swim.length;
  const out = new Uint8Array(body + MAC_BYTES);
  out[0] = SWIM_ENVELOPE_VERSION;
  out[1] = cid.length;
  out.set(cid, 2);
  out[2 + cid.length] = addr.length;
  out.set(addr, 3 + cid.length);
  const v = new DataView(out.buffer);
  v.setUint32(head, sender);
  v.setBigUint64(head + 4, BigInt(counter));
  out.set(swim, head + 12);
  out.set(key.swimMac(out.subarray(0, body)), body);
  return out;
}

/** Parses an envelope (its MAC is checked by the caller: ClusterKey.checkSwimMac). */
export function unwrapSwim(b: Uint8Array): SwimEnvelope | undefined {
  try {
    if (b.length < 3 || b[0] !== SWIM_ENVELOPE_VERSION) return undefined;
    const cl = b[1];
    if (b.length < 3 + cl) return undefined;
    const clusterId = dec.decode(b.subarray(2, 2 + cl));
    const al = b[2 + cl];
    const head = 3 + cl + al;
    if (b.length < head + 12 + MAC_BYTES) return undefined;
    const fromAddr = dec.decode(b.subarray(3 + cl, head));
    const v = new DataView(b.buffer, b.byteOffset, b.length);
    const sender = v.getUint32(head);
    const counter = Number(v.getBigUint64(head + 4));
    const body = b.length - MAC_BYTES;
    return {
      clusterId,
      fromAddr,
      sender,
      counter,
      swim: b.subarray(head + 12, body),
      signed: b.subarray(0, body),
      mac: b.subarray(body),
    };
  } catch {
    return undefined;
  }
}

/** How a client proves itself: a ClientAuth, or just the token (operators' tools, tests). */
export type RequestAuth = ClientAuth | { token: string; tls?: ClusterTls };

/**
 * One request to a broker's cluster port on its own short-lived connection, after the handshake
 * (joiners, operators' tools and tests prove the token only; members also their node id);
 * rejects on timeout or an error answer, with an AuthError when the credentials are refused.
 */
export function clusterRequest(
  addr: string,
  method: string,
  body: unknown,
  timeoutMs: number,
  auth: RequestAuth,
): Promise<unknown> {
  const a = splitAddr(addr);
  if (a === undefined) return Promise.reject(new RequestError(`bad address ${addr}`));
  const ca: ClientAuth = "token" in auth
    ? {
      key: new ClusterKey(auth.token),
      clusterId: null,
      nodeId: null,
      addr: null,
      session: "request",
      tls: auth.tls,
    }
    : auth;
  return new Promise((resolve, reject) => {
    const hs = new ClientHandshake({ ...ca, session: "request" }, () => channelBinding(sock));
    const sock = dialCluster(a.host, a.port, ca.tls, () => sock.write(hs.hello()));
    const decoder = new FrameDecoder();
    let authed = false;
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
    sock.on(
      "error",
      (e) =>
        finish(
          dialError(ca.tls, addr, e, (x) => new RequestError(`${method} to ${addr}: ${x.message}`)),
        ),
    );
    sock.on("close", () => finish(new RequestError(`${method} to ${addr}: connection closed`)));
    sock.on("data", (chunk: Buffer) => {
      try {
        if (!authed) hs.screen(chunk, addr);
        for (const f of decoder.push(new Uint8Array(chunk))) {
          if (!authed) {
            const st = hs.step(f.kind, f.payload);
            if (st.send) sock.write(st.send);
            if (st.server) {
              authed = true;
              sock.write(jsonFrame(FrameKind.request, { method, body }));
            }
            continue;
          }
          const r = f.kind === FrameKind.response ? parseJson(f.payload) : undefined;
          if (!isObj(r)) return finish(new RequestError(`${method} to ${addr}: bad answer`));
          if (r.ok === true) return finish(undefined, r.body);
          return finish(new RequestError(String(r.error ?? "request failed").slice(0, 1000)));
        }
      } catch (e) {
        if (e instanceof AuthError) {
          const E = e instanceof TlsMismatchError ? TlsMismatchError : AuthError;
          return finish(new E(`${method} to ${addr}: ${e.message}`));
        }
        finish(e as Error);
      }
    });
  });
}

export interface Hello {
  clusterId: string;
  nodeId: number;
  addr: string;
}

/** Who sent a request: the node id its connection proved, or null (a joiner or a tool). */
export interface RequestFrom {
  nodeId: number | null;
}

export interface NetHandlers {
  /** A Raft message from an authenticated peer (its `from` is the peer's proven node id). */
  onRaft(msg: unknown): void;
  /** An authenticated peer connection: the peer's current cluster address. */
  onPeer(nodeId: number, addr: string): void;
  /** An authenticated SWIM message from `sender` (MAC, counter and cluster id checked). */
  onSwim(swim: Uint8Array, fromAddr: string, sender: number): void;
  /** Answers a request; a thrown error becomes an error response. */
  onRequest(method: string, body: unknown, from: RequestFrom): Promise<unknown>;
  /**
   * Answers a call from an identified peer (its handshake's node id): JSON body plus raw bytes.
   * A thrown error becomes an error reply.
   */
  onCall?(from: number, method: string, body: unknown, tail: Uint8Array): Promise<CallAnswer>;
  /** A connection from an authenticated peer closed: a hint it may be gone. */
  onPeerClosed?(nodeId: number): void;
  /** A handshake failed (a wrong token, a forged proof, another cluster): for the log. */
  onAuthFailure?(what: string): void;
  /** A peer speaks TLS on the cluster port and this broker not, or the other way round. */
  onTlsMismatch?(what: string): void;
}

/**
 * Connections still in their handshake beyond this many (in all, or from one remote address)
 * are refused at once: a stranger holding many half-open handshakes cannot crowd out brokers
 * on other addresses.
 */
const MAX_PENDING_HANDSHAKES = 1024;
const MAX_PENDING_HANDSHAKES_PER_ADDRESS = 64;

interface Outbound {
  sock: Socket;
  /** The handshake finished: frames go straight to the socket. */
  connected: boolean;
  /** The node id the server proved (once connected). */
  serverId: number | undefined;
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
  /** Open inbound peer connections per node (after their handshake). */
  #peerConns = new Map<number, number>();

  /** Whether `nodeId` holds a connection to this node now (a live peer keeps its Raft one). */
  peerConnected(nodeId: number): boolean {
    return (this.#peerConns.get(nodeId) ?? 0) > 0;
  }
  #handlers: NetHandlers | undefined;
  #hello: Hello | undefined;
  #key: ClusterKey | undefined;
  readonly #counter = new SwimCounter();
  readonly #replay = new ReplayWindow();
  /** Inbound connections still in their handshake, in all and per remote address. */
  #handshaking = 0;
  readonly #handshakingFrom = new Map<string, number>();
  #closed = false;
  /**
   * --cluster-tls-*: every TCP connection is TLS, and gossip goes over TCP (TLS) only: UDP
   * datagrams are neither sent nor read, so nothing between brokers is in clear text.
   */
  readonly #tls: ClusterTls | undefined;

  private constructor(server: Server, udp: UdpSocket, port: number, tls: ClusterTls | undefined) {
    this.#server = server;
    this.#udp = udp;
    this.port = port;
    this.#tls = tls;
    server.on("connection", (s) => this.#accept(s));
    udp.on("message", (msg) => this.#datagram(new Uint8Array(msg)));
    udp.on("error", () => {/* a bad datagram or ICMP error: gossip copes with loss */});
  }

  /**
   * Binds TCP on host:port and UDP on the same port number. With port 0 the kernel picks the
   * TCP port; if UDP cannot have the same number, both are retried a few times.
   */
  static async bind(host: string, port: number, tls?: ClusterTls): Promise<ClusterNet> {
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
        return new ClusterNet(server, udp, bound, tls);
      } catch (e) {
        lastErr = e;
        udp.close();
        server.close();
      }
    }
    throw lastErr instanceof Error ? lastErr : new Error(String(lastErr));
  }

  /**
   * Who we are, and the cluster's key: until set, every inbound connection and datagram is
   * refused and nothing is sent.
   */
  setIdentity(h: Hello, key: ClusterKey): void {
    this.#hello = { ...h };
    this.#key = key;
  }

  setHandlers(h: NetHandlers): void {
    this.#handlers = h;
  }

  sendRaft(addr: string, msg: unknown): void {
    const to = isObj(msg) && typeof msg.to === "number" ? msg.to : undefined;
    this.#send(addr, jsonFrame(FrameKind.raft, msg), to);
  }

  sendSwim(addr: string, swim: Uint8Array): void {
    const me = this.#hello;
    if (me === undefined || this.#key === undefined || this.#closed) return;
    const env = wrapSwim(this.#key, me.clusterId, me.addr, me.nodeId, this.#counter.next(), swim);
    if (env.length <= MAX_DATAGRAM_BYTES && this.#tls === undefined) {
      const a = splitAddr(addr);
      if (a === undefined) return;
      try {
        this.#udp.send(env, a.port, a.host);
      } catch { /* best effort */ }
    } else this.#send(addr, encodeFrame(FrameKind.swim, env));
  }

  /**
   * One request on its own short-lived connection, as this member (its node id proven);
   * rejects on timeout or an error answer. `expectNodeId`: refuse a server proving another id.
   */
  request(
    addr: string,
    method: string,
    body: unknown,
    timeoutMs: number,
    expectNodeId?: number,
  ): Promise<unknown> {
    const me = this.#hello;
    if (me === undefined || this.#key === undefined) {
      return Promise.reject(new RequestError("the cluster identity is not settled yet"));
    }
    return clusterRequest(addr, method, body, timeoutMs, {
      key: this.#key,
      clusterId: me.clusterId,
      nodeId: me.nodeId,
      addr: me.addr,
      session: "request",
      expectNodeId,
      tls: this.#tls,
    });
  }

  /** How this member proves itself on a connection of its own (PeerLink). */
  clientAuth(expectNodeId?: number): ClientAuth | undefined {
    const me = this.#hello;
    if (me === undefined || this.#key === undefined || this.#closed) return undefined;
    return {
      key: this.#key,
      clusterId: me.clusterId,
      nodeId: me.nodeId,
      addr: me.addr,
      session: "peer",
      expectNodeId,
      tls: this.#tls,
    };
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

  #send(addr: string, frame: Uint8Array, expectNodeId?: number): void {
    const auth = this.clientAuth(expectNodeId);
    if (auth === undefined) return;
    let o = this.#out.get(addr);
    if (o === undefined) {
      const failed = this.#failedAt.get(addr);
      if (failed !== undefined && performance.now() - failed < RECONNECT_BACKOFF_MS) return;
      const a = splitAddr(addr);
      if (a === undefined) return;
      const hs = new ClientHandshake(auth, () => channelBinding(sock));
      const sock = dialCluster(a.host, a.port, auth.tls, () => sock.write(hs.hello()));
      const out: Outbound = {
        sock,
        connected: false,
        serverId: undefined,
        pending: [],
        pendingBytes: 0,
      };
      o = out;
      this.#out.set(addr, out);
      const decoder = new FrameDecoder(MAX_HANDSHAKE_FRAME);
      // A peer that never finishes the handshake (not a member, paused) is dropped; the next
      // send reconnects after the backoff.
      const timer = setTimeout(() => {
        this.#failedAt.set(addr, performance.now());
        sock.destroy();
      }, HANDSHAKE_TIMEOUT_MS);
      sock.on("error", (e) => {
        this.#failedAt.set(addr, performance.now());
        const err = dialError(auth.tls, addr, e, (x) => x);
        if (err instanceof TlsMismatchError) this.#handlers?.onTlsMismatch?.(err.message);
      });
      sock.on("close", () => {
        clearTimeout(timer);
        if (this.#out.get(addr) === out) this.#out.delete(addr);
      });
      sock.on("data", (chunk: Buffer) => {
        // After the welcome nothing is expected on our outbound connections: drained, ignored.
        if (out.connected) return;
        try {
          hs.screen(chunk, addr);
          for (const f of decoder.push(new Uint8Array(chunk))) {
            const st = hs.step(f.kind, f.payload);
            if (st.send) sock.write(st.send);
            if (st.server) {
              clearTimeout(timer);
              out.connected = true;
              out.serverId = st.server.nodeId;
              this.#failedAt.delete(addr);
              for (const p of out.pending) sock.write(p);
              out.pending = [];
              out.pendingBytes = 0;
              return;
            }
          }
        } catch (e) {
          this.#failedAt.set(addr, performance.now());
          sock.destroy();
          if (e instanceof TlsMismatchError) this.#handlers?.onTlsMismatch?.(e.message);
          else if (e instanceof AuthError) {
            this.#handlers?.onAuthFailure?.(`to ${addr}: ${e.message}`);
          }
        }
      });
    } else if (
      o.serverId !== undefined && expectNodeId !== undefined && o.serverId !== expectNodeId
    ) {
      // The address now belongs to another broker: this frame is not for it.
      return;
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

  #accept(raw: Socket): void {
    const me = this.#hello;
    const key = this.#key;
    const from = raw.remoteAddress ?? "";
    const remote = `${raw.remoteAddress}:${raw.remotePort}`;
    if (
      this.#closed || me === undefined || key === undefined ||
      this.#handshaking >= MAX_PENDING_HANDSHAKES ||
      (this.#handshakingFrom.get(from) ?? 0) >= MAX_PENDING_HANDSHAKES_PER_ADDRESS
    ) {
      raw.destroy();
      return;
    }
    raw.setNoDelay(true);
    // With TLS nothing reaches the frame decoder before the TLS handshake (the peer's
    // certificate, with a CA) succeeded; the handshake timer and limits below cover it too.
    const sock = this.#tls === undefined ? raw : this.#tls.serve(raw);
    raw.on("error", () => {});
    this.#inbound.add(sock);
    // Handshake frames are read with a small limit: nothing large is buffered for a stranger.
    let decoder = new FrameDecoder(MAX_HANDSHAKE_FRAME);
    const hs = new ServerHandshake(
      key,
      { clusterId: me.clusterId, nodeId: me.nodeId },
      () => channelBinding(sock),
    );
    let peer: ProvenClient | undefined;
    let counted = false;
    this.#handshaking++;
    this.#handshakingFrom.set(from, (this.#handshakingFrom.get(from) ?? 0) + 1);
    let handshaking = true;
    const endHandshake = () => {
      if (!handshaking) return;
      handshaking = false;
      this.#handshaking--;
      const n = (this.#handshakingFrom.get(from) ?? 1) - 1;
      if (n > 0) this.#handshakingFrom.set(from, n);
      else this.#handshakingFrom.delete(from);
      clearTimeout(timer);
    };
    const timer = setTimeout(() => sock.destroy(), HANDSHAKE_TIMEOUT_MS);
    sock.on("error", (e: Error) => {
      // A TLS handshake refused (no certificate, another CA, not TLS at all): for the log.
      if (this.#tls !== undefined && handshaking) {
        if (isPlainTextAnswer(e)) {
          this.#handlers?.onTlsMismatch?.(tlsMismatch(`the broker at ${remote}`, true));
        } else this.#handlers?.onAuthFailure?.(`from ${remote}: TLS: ${e.message.slice(0, 200)}`);
      }
      sock.destroy();
    });
    sock.on("close", () => {
      endHandshake();
      this.#inbound.delete(sock);
      if (peer === undefined || !counted || peer.nodeId === null) return;
      const id = peer.nodeId;
      // A hint only when the peer's last connection went: a live broker keeps its Raft
      // connection while it opens and closes others (fetchers follow leadership).
      const left = (this.#peerConns.get(id) ?? 1) - 1;
      if (left > 0) {
        this.#peerConns.set(id, left);
        return;
      }
      this.#peerConns.delete(id);
      if (!this.#closed) this.#handlers?.onPeerClosed?.(id);
    });
    let refused = false;
    sock.on("data", (chunk: Buffer) => {
      if (refused) return;
      let frames;
      try {
        frames = decoder.push(new Uint8Array(chunk));
      } catch {
        if (this.#tls === undefined && handshaking && looksLikeTls(chunk)) {
          // A TLS ClientHello on our plain port: say so in the log, and answer in plain text
          // (the peer's TLS library then reports that it got no TLS back).
          this.#handlers?.onTlsMismatch?.(tlsMismatch(`the broker at ${remote}`, false));
          refused = true;
          sock.end(jsonFrame(FrameKind.denied, { error: "this cluster port speaks plain text" }));
          setTimeout(() => sock.destroy(), 100).unref?.();
          return;
        }
        sock.destroy();
        return;
      }
      for (let i = 0; i < frames.length; i++) {
        const f = frames[i];
        if (peer === undefined) {
          const st = hs.step(f.kind, f.payload);
          if (st.send && !sock.destroyed) sock.write(st.send);
          if (st.close !== undefined) {
            if (f.kind === FrameKind.proof) {
              this.#handlers?.onAuthFailure?.(`from ${remote}: ${st.close}`);
            }
            // The denial (if any) is flushed, then the connection goes; nothing more is read.
            refused = true;
            sock.end();
            setTimeout(() => sock.destroy(), 100).unref?.();
            return;
          }
          if (st.client === undefined) continue;
          // The client waits for our welcome before it sends anything else: frames already
          // here break the protocol.
          if (i !== frames.length - 1) {
            sock.destroy();
            return;
          }
          endHandshake();
          peer = st.client;
          decoder = new FrameDecoder();
          if (peer.session === "peer" && peer.nodeId !== null) {
            counted = true;
            this.#peerConns.set(peer.nodeId, (this.#peerConns.get(peer.nodeId) ?? 0) + 1);
            if (peer.addr !== null) this.#handlers?.onPeer(peer.nodeId, peer.addr);
          }
          continue;
        }
        if (!this.#frame(sock, f.kind, f.payload, peer)) {
          sock.destroy();
          return;
        }
      }
    });
  }

  /** Handles one inbound frame of an authenticated connection; false closes the connection. */
  #frame(sock: Socket, kind: number, payload: Uint8Array, peer: ProvenClient): boolean {
    const h = this.#handlers;
    switch (kind) {
      case FrameKind.raft: {
        if (peer.nodeId === null) return false;
        const m = parseJson(payload);
        // A peer speaks only for itself: a message claiming another sender is dropped.
        if (!isObj(m) || m.from !== peer.nodeId) return true;
        h?.onRaft(m);
        return true;
      }
      case FrameKind.swim: {
        if (peer.nodeId === null) return false;
        const u = this.#openSwim(payload);
        if (u !== undefined && u.sender === peer.nodeId) h?.onSwim(u.swim, u.fromAddr, u.sender);
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
          answer = h.onRequest(v.method, v.body, { nodeId: peer.nodeId });
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
        // Only a member's connection may call: the node id is the proven one, never the body's.
        if (peer.nodeId === null || h?.onCall === undefined) return false;
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
        const from = peer.nodeId;
        try {
          answer = h.onCall(from, method, body, c.tail);
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
        // Handshake frames again, responses, replies: not from a client.
        return false;
    }
  }

  /** An envelope of our cluster whose MAC verifies and whose counter is fresh, else undefined. */
  #openSwim(b: Uint8Array): SwimEnvelope | undefined {
    const me = this.#hello;
    const key = this.#key;
    if (me === undefined || key === undefined) return undefined;
    const u = unwrapSwim(b);
    if (u === undefined || u.clusterId !== me.clusterId || u.sender > NODE_ID_MAX) return undefined;
    if (!key.checkSwimMac(u.signed, u.mac)) return undefined;
    if (!this.#replay.accept(u.sender, u.counter)) return undefined;
    return u;
  }

  #datagram(b: Uint8Array): void {
    // With TLS, gossip comes over TLS connections only.
    if (this.#closed || this.#tls !== undefined) return;
    const u = this.#openSwim(b);
    if (u !== undefined) this.#handlers?.onSwim(u.swim, u.fromAddr, u.sender);
  }
}
