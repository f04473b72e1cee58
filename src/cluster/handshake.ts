// The challenge-response handshake that opens every TCP connection of the cluster port (sans
// IO: transport.ts and peer-link.ts feed it frames), and how a dial's errors read. The flow and
// what it proves are below and in docs/security.md.
import { type ClusterKey, isNonce, newNonce } from "./auth.ts";
import {
  AuthError,
  FrameKind,
  isObj,
  jsonFrame,
  parseJson,
  splitAddr,
  TlsMismatchError,
} from "./frames.ts";
import { type ClusterTls, isPlainTextAnswer, looksLikeTls, tlsMismatch } from "./tls.ts";

// ---- handshake ------------------------------------------------------------------------------
//
// client                                     server
//   hello {nonce Nc, clusterId?, nodeId?, addr?, session}  ->
//                                          <-  challenge {nonce Ns}
//   proof {HMAC(k, client, Nc, Ns, claims)}  ->      (checked: else denied, close)
//                                          <-  welcome {clusterId, nodeId, HMAC(k, server, ...)}
//   frames (the client waited for the welcome, so nothing is sent to an unproven server, and
//   the server reads nothing before the proof)  ->
//
// Each proof covers both nonces, so a proof recorded from one connection is worthless on any
// other; the client's claims (node id, address, cluster id, session kind) are bound to the
// connection by its proof. On TLS each proof also covers the session's exporter value
// (channelBinding in tls.ts): a relay terminating TLS on both sides cannot pass a proof on.
// Frames after the handshake are not MACed (docs/security.md).

/** Handshake frames are small; a longer one closes the connection before it is buffered. */
export const MAX_HANDSHAKE_FRAME = 4096;
/** A connection that has not finished its handshake in this long is closed. */
export const HANDSHAKE_TIMEOUT_MS = 5000;
export interface ClientAuth {
  key: ClusterKey;
  /** The cluster we belong to (null: a joiner or a tool that does not know it). */
  clusterId: string | null;
  /** Our node id (null: a joiner before it has one, or an operator's tool). */
  nodeId: number | null;
  /** Our cluster address, for the peer to learn (null for tools). */
  addr: string | null;
  /** "peer": a long-lived connection of a member (Raft, gossip, calls); "request": one request. */
  session: "peer" | "request";
  /** The node id we mean to reach, when known: a server proving another id is refused. */
  expectNodeId?: number;
  /** The cluster port speaks TLS (--cluster-tls-*): connections are made with it. */
  tls?: ClusterTls;
}

/** The server of a connection, as its welcome proved it. */
export interface ProvenServer {
  clusterId: string;
  nodeId: number;
}

/** The client of an inbound connection, as its proof bound it. */
export interface ProvenClient {
  nodeId: number | null;
  addr: string | null;
  session: "peer" | "request";
}

export const NODE_ID_MAX = 0x7fffffff;
const isNodeIdOrNull = (v: unknown): v is number | null =>
  v === null || (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= NODE_ID_MAX);

/** The client side of one connection's handshake. step() throws AuthError on any failure. */
export class ClientHandshake {
  readonly #nc = newNonce();
  #ns: string | undefined;
  #done = false;
  /** What the proofs cover of the connection: [] on plain TCP, [exporter value] on TLS. */
  #channel: string[] = [];
  /**
   * `channelOf`: the connection's channelBinding (tls.ts), read once the server has answered, i.e.
   * after the TLS handshake; without it the connection counts as plain TCP.
   */
  constructor(readonly auth: ClientAuth, readonly channelOf: () => string | null = () => null) {}

  /**
   * The server's first bytes, before they are parsed as frames: TLS records answering our
   * plain-text hello mean the peer speaks TLS and we do not.
   */
  screen(chunk: Uint8Array, addr: string): void {
    if (this.#ns === undefined && this.auth.tls === undefined && looksLikeTls(chunk)) {
      throw new TlsMismatchError(tlsMismatch(`the broker at ${addr}`, false));
    }
  }

  hello(): Uint8Array {
    const a = this.auth;
    return jsonFrame(FrameKind.hello, {
      nonce: this.#nc,
      clusterId: a.clusterId,
      nodeId: a.nodeId,
      addr: a.addr,
      session: a.session,
    });
  }

  /** The server's next frame: what to send back, and the server once it proved itself. */
  step(kind: number, payload: Uint8Array): { send?: Uint8Array; server?: ProvenServer } {
    const a = this.auth;
    const v = parseJson(payload);
    if (kind === FrameKind.denied) {
      const why = isObj(v) && typeof v.error === "string" ? v.error.slice(0, 300) : "refused";
      throw new AuthError(why);
    }
    if (this.#done || !isObj(v)) throw new AuthError("unexpected frame in the handshake");
    if (this.#ns === undefined) {
      if (kind !== FrameKind.challenge || !isNonce(v.nonce)) {
        throw new AuthError("the peer does not speak the cluster handshake");
      }
      this.#ns = v.nonce;
      this.#channel = bindingOf(this.channelOf);
      const proof = a.key.proof("client", [
        this.#nc,
        this.#ns,
        a.clusterId,
        a.nodeId,
        a.addr,
        a.session,
        ...this.#channel,
      ]);
      return { send: jsonFrame(FrameKind.proof, { proof }) };
    }
    if (
      kind !== FrameKind.welcome || typeof v.clusterId !== "string" ||
      !isNodeIdOrNull(v.nodeId) || v.nodeId === null ||
      !a.key.checkProof(
        "server",
        [this.#nc, this.#ns, v.clusterId, v.nodeId, a.nodeId, ...this.#channel],
        v.proof,
      )
    ) {
      throw new AuthError("the peer did not prove it knows the cluster's join token");
    }
    if (a.clusterId !== null && v.clusterId !== a.clusterId) {
      throw new AuthError(`the peer belongs to cluster ${v.clusterId.slice(0, 64)}`);
    }
    if (a.expectNodeId !== undefined && v.nodeId !== a.expectNodeId) {
      throw new AuthError(`the peer is broker ${v.nodeId}, not broker ${a.expectNodeId}`);
    }
    this.#done = true;
    return { server: { clusterId: v.clusterId, nodeId: v.nodeId } };
  }
}

/**
 * The server side of one inbound connection's handshake: the client's node id, if any, is the
 * one its proof covers. step() answers `close` (after sending `send`, if any) on any failure.
 */
export class ServerHandshake {
  readonly #ns = newNonce();
  #hello: ProvenClient & { nonce: string; clusterId: string | null } | undefined;
  /** `channelOf`: as ClientHandshake's, of the accepted connection. */
  constructor(
    readonly key: ClusterKey,
    readonly me: { clusterId: string; nodeId: number },
    readonly channelOf: () => string | null = () => null,
  ) {}

  step(
    kind: number,
    payload: Uint8Array,
  ): { send?: Uint8Array; client?: ProvenClient; close?: string } {
    const v = parseJson(payload);
    if (!isObj(v)) return { close: "a malformed handshake frame" };
    if (this.#hello === undefined) {
      if (
        kind !== FrameKind.hello || !isNonce(v.nonce) ||
        !(v.clusterId === null || typeof v.clusterId === "string") ||
        !isNodeIdOrNull(v.nodeId) ||
        !(v.addr === null || (typeof v.addr === "string" && splitAddr(v.addr) !== undefined)) ||
        (v.session !== "peer" && v.session !== "request") ||
        // A member's long-lived connection names itself fully.
        (v.session === "peer" && (v.nodeId === null || v.addr === null || v.clusterId === null))
      ) return { close: "a frame before the handshake, or a malformed hello" };
      this.#hello = {
        nonce: v.nonce,
        clusterId: v.clusterId as string | null,
        nodeId: v.nodeId,
        addr: v.addr as string | null,
        session: v.session,
      };
      return { send: jsonFrame(FrameKind.challenge, { nonce: this.#ns }) };
    }
    const h = this.#hello;
    if (kind !== FrameKind.proof) return { close: "a frame before the handshake finished" };
    let channel: string[];
    try {
      channel = bindingOf(this.channelOf);
    } catch (e) {
      return { close: (e as Error).message };
    }
    const ok = this.key.checkProof("client", [
      h.nonce,
      this.#ns,
      h.clusterId,
      h.nodeId,
      h.addr,
      h.session,
      ...channel,
    ], v.proof);
    if (!ok) {
      return {
        close: "a wrong proof (not this cluster's join token, a replayed handshake, or a " +
          "handshake relayed from another TLS session)",
        send: jsonFrame(FrameKind.denied, {
          error: "cluster authentication failed: the join token is not this cluster's",
        }),
      };
    }
    if (h.clusterId !== null && h.clusterId !== this.me.clusterId) {
      return {
        close: `a member of cluster ${h.clusterId.slice(0, 64)}`,
        send: jsonFrame(FrameKind.denied, {
          error: `this broker belongs to cluster ${this.me.clusterId}, not ${h.clusterId}`,
        }),
      };
    }
    const proof = this.key.proof("server", [
      h.nonce,
      this.#ns,
      this.me.clusterId,
      this.me.nodeId,
      h.nodeId,
      ...channel,
    ]);
    return {
      send: jsonFrame(FrameKind.welcome, {
        clusterId: this.me.clusterId,
        nodeId: this.me.nodeId,
        proof,
      }),
      client: { nodeId: h.nodeId, addr: h.addr, session: h.session },
    };
  }
}

/**
 * A connection's channel binding as proof fields: none on plain TCP (so plain handshakes are as
 * before it existed), one on TLS; a TLS socket that cannot give one fails the handshake.
 */
function bindingOf(channelOf: () => string | null): string[] {
  try {
    const b = channelOf();
    return b === null ? [] : [b];
  } catch (e) {
    throw new AuthError(`cannot bind the handshake to the TLS session: ${(e as Error).message}`);
  }
}

/**
 * A client connection's error, as the caller should see it: a TLS handshake answered in plain
 * text is a TlsMismatchError (what to set), anything else `other`.
 */
export function dialError(
  tls: ClusterTls | undefined,
  addr: string,
  e: unknown,
  other: (e: Error) => Error,
): Error {
  if (tls !== undefined && isPlainTextAnswer(e)) {
    return new TlsMismatchError(tlsMismatch(`the broker at ${addr}`, true));
  }
  return other(e instanceof Error ? e : new Error(String(e)));
}
