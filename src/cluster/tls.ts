// TLS for the cluster port: every TCP connection between brokers (Raft, replica fetches,
// controller calls, group requests passed on, large gossip, joins) is TLS 1.3. Three ways:
// - "mutual" (--cluster-tls-cert/-key/-ca): both sides present a certificate the CA signed;
// - "verified" (--cluster-tls-cert/-key): the server's certificate must chain to a system root
//   and name the host dialled;
// - "auto" (TLS on the Kafka listener, no --cluster-tls-*): the listener's certificate and key,
//   and no chain is checked: identity comes from the join-token handshake alone.
// In every way the handshake (transport.ts) covers the TLS session's exporter value (RFC 9266's
// tls-exporter, see channelBinding), so a man in the middle who terminates TLS on both sides
// holds two sessions whose values differ and cannot relay a proof. Accepted sockets are wrapped
// after the TCP accept, so the listener's limits on connections in their handshake cover the TLS
// handshake too. docs/security.md.
import { createConnection, isIP, type Socket } from "node:net";
import {
  connect as tlsConnect,
  createSecureContext,
  type SecureContext,
  TLSSocket,
} from "node:tls";

/** PEM text of this broker's certificate chain, its key and the CA its peers' certificates need. */
export interface ClusterTlsPem {
  cert: string;
  key: string;
  /** Given: mutual TLS, peers (both ways) must hold a certificate this CA signed. */
  ca?: string;
}

/** How a peer's certificate is checked (see the file's head). */
export type ClusterTlsMode = "mutual" | "verified" | "auto";

/**
 * TLS 1.3 only: its exporter is unique to one session (in TLS 1.2 it is only with the extended
 * master secret, which a client cannot insist on here), and every broker runs this code.
 */
const MIN_VERSION = "TLSv1.3";
/** The exporter label of the handshake's channel binding (RFC 5705 / RFC 8446 section 7.5). */
const EXPORTER_LABEL = "EXPORTER-broker-cluster-handshake-v1";

export class ClusterTls {
  readonly #server: SecureContext;
  readonly mode: ClusterTlsMode;

  /**
   * Throws (a bad PEM, a key not matching the certificate) so a broker refuses to start.
   * `auto`: no certificate chain is checked (the Kafka listener's certificate reused).
   */
  constructor(readonly pem: ClusterTlsPem, opts: { auto?: boolean } = {}) {
    if (opts.auto && pem.ca !== undefined) throw new Error("auto cluster TLS takes no CA");
    this.#server = createSecureContext({
      cert: pem.cert,
      key: pem.key,
      ca: pem.ca,
      minVersion: MIN_VERSION,
    });
    this.mode = pem.ca !== undefined ? "mutual" : opts.auto ? "auto" : "verified";
  }

  get mutual(): boolean {
    return this.mode === "mutual";
  }

  /** An accepted TCP connection as the TLS server side (nothing is read before its handshake). */
  serve(raw: Socket): Socket {
    return new TLSSocket(raw, {
      isServer: true,
      secureContext: this.#server,
      requestCert: this.mutual,
      rejectUnauthorized: this.mutual,
    });
  }

  /**
   * A TLS connection to a peer, `ready` called once the TLS handshake finished and, unless in
   * auto mode, the peer's certificate checked out: signed by the CA (or a system root without
   * one) and naming `host` in its subjectAltName.
   */
  connect(host: string, port: number, ready: () => void): Socket {
    const verify = this.mode !== "auto";
    const sock = tlsConnect({
      host,
      port,
      minVersion: MIN_VERSION,
      // In auto mode no client certificate: the server asks for none and the listener's
      // certificate may not be meant for client authentication.
      ...(verify ? { cert: this.pem.cert, key: this.pem.key } : {}),
      ...(this.pem.ca !== undefined ? { ca: this.pem.ca } : {}),
      // SNI takes names only; an IP address is checked against the certificate's IP entries.
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: verify,
    });
    sock.setNoDelay(true);
    sock.once("secureConnect", ready);
    return sock;
  }
}

/** A connection to a peer's cluster port, TLS when `tls` is given; `ready` once it may be used. */
export function dialCluster(
  host: string,
  port: number,
  tls: ClusterTls | undefined,
  ready: () => void,
): Socket {
  if (tls !== undefined) return tls.connect(host, port, ready);
  const sock = createConnection({ host, port, noDelay: true });
  sock.once("connect", ready);
  return sock;
}

/**
 * What the cluster handshake's proofs cover of the connection itself: null on plain TCP, else
 * 32 bytes exported from the TLS session (base64url). Both ends of one TLS session compute the
 * same value; a relay that terminates TLS towards each side holds two sessions, so the value each
 * end computes differs and neither end's proof verifies at the other. Throws when a TLS socket
 * cannot export (the handshake then fails closed).
 */
export function channelBinding(sock: Socket): string | null {
  if (!(sock instanceof TLSSocket)) return null;
  if (sock.getProtocol() !== MIN_VERSION) throw new Error("the cluster port needs TLS 1.3");
  return sock.exportKeyingMaterial(32, EXPORTER_LABEL, Buffer.alloc(0)).toString("base64url");
}

/**
 * Whether `chunk`, the first bytes of a connection, is a TLS record (handshake 0x16 or alert
 * 0x15, version 3.x). A cluster frame can never start so: its length would be over 300 MiB.
 */
export function looksLikeTls(chunk: Uint8Array): boolean {
  return chunk.length >= 3 && (chunk[0] === 0x16 || chunk[0] === 0x15) && chunk[1] === 0x03;
}

/** Whether a TLS socket's error says the other side answered in plain text (not TLS). */
export function isPlainTextAnswer(e: unknown): boolean {
  return (e as { code?: unknown })?.code === "ERR_SSL_WRONG_VERSION_NUMBER";
}

const HOW_TLS = "--kafka-tls-cert/--kafka-tls-key (the cluster port then reuses them) or " +
  "--cluster-tls-cert/--cluster-tls-key, without --cluster-tls off";

/**
 * The log line for a broker with TLS and one without: they cannot talk, and which flag to set.
 * `weTls`: this broker's cluster port speaks TLS.
 */
export function tlsMismatch(peer: string, weTls: boolean): string {
  return weTls
    ? `${peer} speaks plain text on the cluster port but this broker speaks TLS there, so they ` +
      `cannot talk: give that broker TLS too (${HOW_TLS}), or run every broker with ` +
      "--cluster-tls off"
    : `${peer} speaks TLS on the cluster port but this broker speaks plain text there ` +
      "(--cluster-tls off, or no certificate), so they cannot talk: give this broker TLS " +
      `(${HOW_TLS}), or run every broker with --cluster-tls off`;
}
