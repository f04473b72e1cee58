// The front of a listener that requires SASL: until a connection has authenticated, only
// ApiVersions, SaslHandshake and SaslAuthenticate are served, as Kafka's SaslServerAuthenticator
// does. Any other request closes the connection unanswered; an unknown mechanism is answered
// with UNSUPPORTED_SASL_MECHANISM (33) and a failed login with SASL_AUTHENTICATION_FAILED (58),
// then the connection is closed. SaslHandshake v0 is followed by bare SASL tokens (a 4-byte size
// and the token, no request header: kafka-python 2.0 speaks that), v1 by SaslAuthenticate
// requests. Once authenticated, every frame goes to the wrapped dispatcher.
//
// Re-authentication (KIP-368), with connections.max.reauth.ms > 0: a client that authenticated
// with SaslAuthenticate v1+ is told the session's lifetime (session_lifetime_ms) and must
// authenticate again on the same connection (SaslHandshake v1, SaslAuthenticate) before it ends,
// as the same principal with the same mechanism; a request other than that after the session
// expired closes the connection, as Kafka's broker does. Clients of SaslAuthenticate v0 (or the
// bare tokens of SaslHandshake v0) cannot re-authenticate and keep their sessions, as in Kafka.
import { randomBytes } from "node:crypto";
import {
  ApiKey,
  decodeRequestFrame,
  decodeRequestHeader,
  encodeResponseFrame,
  ErrorCode,
  ProtocolDecodeError,
} from "../../protocol/kafka/index.ts";
import type { Metrics } from "../../core/metrics.ts";
import { type Logger, WarnLimiter } from "../../log.ts";
import type { FrameDispatcher, FrameOutcome, KafkaConnection } from "../connection.ts";
import { principalString } from "../principal.ts";
import {
  type ExchangeDeps,
  isSaslMechanism,
  type SaslExchange,
  type SaslMechanism,
  startExchange,
} from "./exchange.ts";

/** Kafka's sasl.server.max.receive.size: the largest frame before authentication. */
export const SASL_MAX_RECEIVE_BYTES = 512 * 1024;

type State =
  /** Waiting for SaslHandshake (ApiVersions may come first). */
  | "handshake"
  /** After SaslHandshake v1: SaslAuthenticate requests. */
  | "authenticate"
  /** After SaslHandshake v0: bare tokens. */
  | "raw"
  /** A step is being checked: anything arriving meanwhile breaks the protocol. */
  | "busy";

interface Session {
  state: State;
  exchange: SaslExchange | null;
  /** Re-authenticating: who the connection was, which must not change. */
  reauth?: { principal: string; mechanism: SaslMechanism };
}

/** An authenticated session that expires (KIP-368). */
interface Lifetime {
  /** When the session ends (the gate's clock, ms). */
  expiresAt: number;
  principal: string;
  mechanism: SaslMechanism;
}

export interface SaslGateOptions extends Omit<ExchangeDeps, "fakeSecret"> {
  /** The enabled mechanisms (sasl.enabled.mechanisms), in the order clients are told. */
  mechanisms: readonly SaslMechanism[];
  log: Logger;
  metrics: Metrics;
  /** connections.max.reauth.ms: the session lifetime told to clients (0: sessions never end). */
  maxReauthMs?: number;
  /** The clock sessions expire by (ms); tests move it. */
  now?: () => number;
}

export class SaslGate implements FrameDispatcher {
  readonly #sessions = new WeakMap<KafkaConnection, Session>();
  readonly #lifetimes = new WeakMap<KafkaConnection, Lifetime>();
  readonly #now: () => number;
  readonly #deps: ExchangeDeps;
  readonly #warnings: WarnLimiter;
  readonly #outcomes;

  constructor(readonly inner: FrameDispatcher, readonly opts: SaslGateOptions) {
    this.#deps = { ...opts, fakeSecret: randomBytes(32) };
    this.#now = opts.now ?? Date.now;
    this.#warnings = new WarnLimiter(opts.log);
    this.#outcomes = opts.metrics.counter(
      "broker_kafka_authentications_total",
      "SASL authentications on the Kafka listener, by mechanism and result",
    );
  }

  dispatch(frame: Uint8Array, conn: KafkaConnection): Promise<FrameOutcome> {
    if (!conn.mustAuthenticate) {
      const life = this.#lifetimes.get(conn);
      return life === undefined ? this.inner.dispatch(frame, conn) : this.#live(frame, conn, life);
    }
    let s = this.#sessions.get(conn);
    if (s === undefined) this.#sessions.set(conn, s = { state: "handshake", exchange: null });
    if (s.state === "raw") return this.#rawToken(frame, conn, s);
    let apiKey: number, version: number, correlationId: number;
    try {
      ({ apiKey, apiVersion: version, correlationId } = decodeRequestHeader(frame));
    } catch (e) {
      if (!(e instanceof ProtocolDecodeError)) throw e;
      return this.#refuse(conn, "an unparseable request before authentication");
    }
    if (apiKey === ApiKey.ApiVersions && s.state === "handshake") {
      return this.inner.dispatch(frame, conn);
    }
    if (apiKey === ApiKey.SaslHandshake && s.state === "handshake") {
      return Promise.resolve(this.#handshake(frame, conn, s, version, correlationId));
    }
    if (apiKey === ApiKey.SaslAuthenticate && s.state === "authenticate") {
      return this.#authenticate(frame, conn, s, version, correlationId);
    }
    return this.#refuse(conn, `request ${apiKey} v${version} in SASL state ${s.state}`);
  }

  closed(conn: KafkaConnection): void {
    this.#sessions.delete(conn);
    this.#lifetimes.delete(conn);
    this.inner.closed(conn);
  }

  /**
   * A frame of an authenticated connection whose session expires: re-authentication, or a
   * request served while the session lasts (closed after it ended).
   */
  #live(frame: Uint8Array, conn: KafkaConnection, life: Lifetime): Promise<FrameOutcome> {
    const s = this.#sessions.get(conn);
    let apiKey: number, version: number, correlationId: number;
    try {
      ({ apiKey, apiVersion: version, correlationId } = decodeRequestHeader(frame));
    } catch (e) {
      if (!(e instanceof ProtocolDecodeError)) throw e;
      return Promise.resolve("close");
    }
    if (s === undefined && apiKey === ApiKey.SaslHandshake && version >= 1) {
      const started: Session = {
        state: "handshake",
        exchange: null,
        reauth: { principal: life.principal, mechanism: life.mechanism },
      };
      this.#sessions.set(conn, started);
      return Promise.resolve(this.#handshake(frame, conn, started, version, correlationId));
    }
    if (s !== undefined) {
      if (apiKey === ApiKey.SaslAuthenticate && s.state === "authenticate") {
        return this.#authenticate(frame, conn, s, version, correlationId);
      }
      // Anything else in the middle of re-authenticating breaks the sequence.
      return this.#refuse(conn, `request ${apiKey} v${version} while re-authenticating`);
    }
    if (this.#now() >= life.expiresAt) {
      this.#outcomes.inc({ mechanism: life.mechanism, result: "expired" });
      this.opts.log.info("closing a Kafka connection: its SASL session expired", {
        remote: conn.remoteHost,
        principal: life.principal,
        request: apiKey,
      });
      return Promise.resolve("close");
    }
    return this.inner.dispatch(frame, conn);
  }

  /** Closed unanswered: what Kafka does with a request out of the authentication sequence. */
  #refuse(conn: KafkaConnection, what: string): Promise<FrameOutcome> {
    this.opts.log.debug("closing a Kafka connection: a request before SASL authentication", {
      remote: conn.remoteHost,
      request: what,
    });
    this.#outcomes.inc({ mechanism: "none", result: "refused" });
    return Promise.resolve("close");
  }

  #handshake(
    frame: Uint8Array,
    conn: KafkaConnection,
    s: Session,
    version: number,
    correlationId: number,
  ): FrameOutcome {
    let mechanism: string;
    try {
      mechanism = String(decodeRequestFrame(frame).body.mechanism ?? "");
    } catch {
      return "close";
    }
    const enabled = this.opts.mechanisms;
    // Re-authentication keeps the mechanism (Kafka refuses a change).
    const ok = isSaslMechanism(mechanism) && enabled.includes(mechanism) &&
      (s.reauth === undefined || s.reauth.mechanism === mechanism);
    const chunks = encodeResponseFrame(ApiKey.SaslHandshake, version, correlationId, {
      errorCode: ok ? ErrorCode.NONE : ErrorCode.UNSUPPORTED_SASL_MECHANISM,
      mechanisms: [...enabled],
    });
    if (!ok) {
      this.#outcomes.inc({ mechanism: "unsupported", result: "failure" });
      this.#warnings.warn("sasl_mechanism", "Kafka client asked for a SASL mechanism not enabled", {
        remote: conn.remoteHost,
        mechanism: mechanism.slice(0, 64),
        enabled: enabled.join(","),
      });
      return { chunks, close: true };
    }
    s.exchange = startExchange(mechanism as SaslMechanism, this.#deps);
    s.state = version === 0 ? "raw" : "authenticate";
    return chunks;
  }

  async #authenticate(
    frame: Uint8Array,
    conn: KafkaConnection,
    s: Session,
    version: number,
    correlationId: number,
  ): Promise<FrameOutcome> {
    let token: Uint8Array;
    try {
      const b = decodeRequestFrame(frame).body.authBytes;
      if (!(b instanceof Uint8Array)) return "close";
      token = b;
    } catch {
      return "close";
    }
    s.state = "busy";
    const r = await s.exchange!.step(token);
    // KIP-368: v1+ clients are told the session's lifetime and re-authenticate before it ends.
    const lifetime = version >= 1 ? this.opts.maxReauthMs ?? 0 : 0;
    const respond = (
      errorCode: number,
      message: string | null,
      bytes: Uint8Array,
      sessionLifetimeMs = 0,
    ) =>
      encodeResponseFrame(ApiKey.SaslAuthenticate, version, correlationId, {
        errorCode,
        errorMessage: message,
        authBytes: bytes,
        sessionLifetimeMs,
      });
    const fail = (message: string, user?: string): FrameOutcome => {
      this.#failed(conn, s, message, user);
      return {
        chunks: respond(ErrorCode.SASL_AUTHENTICATION_FAILED, message, new Uint8Array(0)),
        close: true,
      };
    };
    if (r.kind === "failed") return fail(r.message, r.user);
    if (r.kind !== "done") {
      s.state = "authenticate";
      return respond(ErrorCode.NONE, null, r.token);
    }
    if (s.reauth !== undefined && principalString(r.principal) !== s.reauth.principal) {
      return fail("Cannot change principals during re-authentication");
    }
    this.#succeeded(conn, s, r.principal);
    if (lifetime > 0) {
      this.#lifetimes.set(conn, {
        expiresAt: this.#now() + lifetime,
        principal: principalString(r.principal),
        mechanism: s.exchange!.mechanism,
      });
    } else this.#lifetimes.delete(conn);
    return respond(ErrorCode.NONE, null, r.token, lifetime);
  }

  /** After SaslHandshake v0: the frame is a bare token, answered by a bare token. */
  async #rawToken(frame: Uint8Array, conn: KafkaConnection, s: Session): Promise<FrameOutcome> {
    s.state = "busy";
    const r = await s.exchange!.step(frame);
    if (r.kind === "failed") {
      // No error can be sent in this framing: Kafka closes the connection.
      this.#failed(conn, s, r.message, r.user);
      return "close";
    }
    if (r.kind === "done") this.#succeeded(conn, s, r.principal);
    else s.state = "raw";
    const size = new Uint8Array(4);
    new DataView(size.buffer).setInt32(0, r.token.length);
    return [size, r.token];
  }

  #succeeded(
    conn: KafkaConnection,
    s: Session,
    principal: Parameters<KafkaConnection["authenticated"]>[0],
  ): void {
    const mechanism = s.exchange!.mechanism;
    conn.authenticated(principal);
    this.#sessions.delete(conn);
    this.#outcomes.inc({ mechanism, result: "success" });
    this.opts.log.debug("Kafka client authenticated", {
      remote: conn.remoteHost,
      principal: principalString(principal),
      mechanism,
    });
  }

  #failed(conn: KafkaConnection, s: Session, message: string, user?: string): void {
    const mechanism = s.exchange!.mechanism;
    this.#sessions.delete(conn);
    this.#outcomes.inc({ mechanism, result: "failure" });
    this.#warnings.warn("sasl_failed", "Kafka SASL authentication failed", {
      remote: conn.remoteHost,
      mechanism,
      ...(user !== undefined ? { user: user.slice(0, 128) } : {}),
      reason: message,
    });
  }
}
