// One long-lived, identified connection to a peer's cluster port for calls that need answers:
// replica fetches (bulk record bytes) and controller heartbeats. Each user opens its own link,
// so bulk data never queues behind Raft heartbeats or the other way round. Calls carry ids and
// may overlap; a lost connection fails the calls in flight and the next call reconnects.
// Every connection starts with the cluster handshake (handshake.ts): calls wait for it, and a
// peer that cannot prove the cluster's token (or proves another node id) gets nothing.
import type { Socket } from "node:net";
import { channelBinding, dialCluster } from "./tls.ts";
import {
  AuthError,
  callFramePieces,
  type ClientAuth,
  ClientHandshake,
  decodeCall,
  FrameDecoder,
  FrameKind,
  HANDSHAKE_TIMEOUT_MS,
  RequestError,
  splitAddr,
} from "./transport.ts";

export interface CallResult {
  body: unknown;
  tail: Uint8Array;
  /** The caller is done with `tail`: its buffer may be reused for a later reply. */
  release?: () => void;
}

interface Pending {
  resolve: (r: CallResult) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** At most this many calls in flight on one link (each user keeps one or two). */
const MAX_IN_FLIGHT = 64;

export class PeerLink {
  #sock: Socket | undefined;
  /** Call frames written before the handshake finished (sent once it has). */
  #queued: Uint8Array[] | undefined;
  #addr: string;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  /**
   * `auth`: how this broker proves itself, asked at each connect (undefined: closing). Its
   * `expectNodeId`, when set, is the only node id the peer may prove.
   */
  constructor(addr: string, readonly auth: () => ClientAuth | undefined) {
    this.#addr = addr;
  }

  get addr(): string {
    return this.#addr;
  }

  /** Point the link elsewhere (the peer moved): the current connection is dropped. */
  retarget(addr: string): void {
    if (addr === this.#addr) return;
    this.#addr = addr;
    this.#drop(new RequestError("peer address changed"));
  }

  /** `tail`: raw bytes sent after the JSON header (record batches stay bytes). */
  call(
    method: string,
    body: unknown,
    timeoutMs: number,
    tail: readonly Uint8Array[] = [],
  ): Promise<CallResult> {
    if (this.#closed) return Promise.reject(new RequestError("link closed"));
    if (this.#pending.size >= MAX_IN_FLIGHT) {
      return Promise.reject(new RequestError("too many calls in flight"));
    }
    const sock = this.#connect();
    if (sock === undefined) return Promise.reject(new RequestError(`bad address ${this.#addr}`));
    const id = this.#nextId++;
    return new Promise<CallResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new RequestError(`${method} to ${this.#addr}: no answer in ${timeoutMs} ms`));
        // A peer that does not answer in time may be paused: start afresh next time.
        this.#drop(new RequestError("timed out"));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      const queued = this.#queued;
      for (const piece of callFramePieces(FrameKind.call, { id, method, body }, tail)) {
        if (queued !== undefined) queued.push(piece);
        else sock.write(piece);
      }
    });
  }

  close(): void {
    this.#closed = true;
    this.#drop(new RequestError("link closed"));
  }

  #connect(): Socket | undefined {
    if (this.#sock !== undefined) return this.#sock;
    const auth = this.auth();
    const a = splitAddr(this.#addr);
    if (a === undefined || auth === undefined) return undefined;
    const hs = new ClientHandshake({ ...auth, session: "peer" }, () => channelBinding(sock));
    const sock = dialCluster(a.host, a.port, auth.tls, () => sock.write(hs.hello()));
    this.#sock = sock;
    const queued: Uint8Array[] = [];
    this.#queued = queued;
    let authed = false;
    const timer = setTimeout(() => {
      if (this.#sock === sock) this.#drop(new RequestError(`no handshake with ${this.#addr}`));
    }, HANDSHAKE_TIMEOUT_MS);
    const decoder = new FrameDecoder();
    sock.on("error", () => {});
    sock.on("close", () => {
      clearTimeout(timer);
      if (this.#sock === sock) this.#drop(new RequestError(`connection to ${this.#addr} closed`));
    });
    sock.on("data", (chunk: Buffer) => {
      if (this.#sock !== sock) return;
      let frames;
      try {
        if (!authed) hs.screen(chunk, this.#addr);
        // A view, not a copy: each chunk is a fresh buffer nothing writes to again.
        frames = decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } catch (e) {
        this.#drop(e instanceof AuthError ? e : new RequestError("bad frame from peer"));
        return;
      }
      for (const f of frames) {
        if (!authed) {
          try {
            const st = hs.step(f.kind, f.payload);
            if (st.send) sock.write(st.send);
            if (st.server === undefined) continue;
          } catch (e) {
            const msg = e instanceof Error ? e.message : String(e);
            this.#drop(new AuthError(`cluster handshake with ${this.#addr}: ${msg}`));
            return;
          }
          authed = true;
          clearTimeout(timer);
          if (this.#queued === queued) this.#queued = undefined;
          for (const piece of queued) sock.write(piece);
          continue;
        }
        const c = f.kind === FrameKind.reply ? decodeCall(f.payload) : undefined;
        const h = c?.header as { id?: unknown; ok?: unknown; body?: unknown; error?: unknown };
        if (c === undefined || h === null || typeof h !== "object" || typeof h.id !== "number") {
          this.#drop(new RequestError("bad reply from peer"));
          return;
        }
        const p = this.#pending.get(h.id);
        if (p === undefined) continue; // timed out meanwhile
        this.#pending.delete(h.id);
        clearTimeout(p.timer);
        const payload = f.payload;
        let released = false;
        const release = () => {
          if (!released) decoder.recycle(payload);
          released = true;
        };
        if (h.ok === true) p.resolve({ body: h.body, tail: c.tail, release });
        else p.reject(new RequestError(String(h.error ?? "call failed").slice(0, 1000)));
      }
    });
    return sock;
  }

  #drop(err: Error): void {
    const s = this.#sock;
    this.#sock = undefined;
    this.#queued = undefined;
    s?.destroy();
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.#pending.clear();
  }
}
