// TLS for the cluster port (--cluster-tls-cert/-key/-ca): every TCP connection between brokers
// (Raft, replica fetches, controller calls, group requests passed on, large gossip, joins) is
// TLS, and with a CA both sides must present a certificate it signed. The join-token handshake
// (transport.ts) still runs inside, so TLS adds confidentiality and on-path integrity and the
// token still proves membership and binds the node id. Accepted sockets are wrapped after the TCP
// accept, so the listener's limits on connections in their handshake cover the TLS handshake too.
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

export class ClusterTls {
  readonly #server: SecureContext;
  readonly mutual: boolean;

  /** Throws (a bad PEM, a key not matching the certificate) so a broker refuses to start. */
  constructor(readonly pem: ClusterTlsPem) {
    this.#server = createSecureContext({ cert: pem.cert, key: pem.key, ca: pem.ca });
    this.mutual = pem.ca !== undefined;
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
   * A TLS connection to a peer, `ready` called once the peer's certificate checked out: signed
   * by the CA (or a system root without one) and naming `host` in its subjectAltName.
   */
  connect(host: string, port: number, ready: () => void): Socket {
    const sock = tlsConnect({
      host,
      port,
      cert: this.pem.cert,
      key: this.pem.key,
      ...(this.pem.ca !== undefined ? { ca: this.pem.ca } : {}),
      // SNI takes names only; an IP address is checked against the certificate's IP entries.
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: true,
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
