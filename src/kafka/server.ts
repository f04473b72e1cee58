// The Kafka TCP listener: Bun.listen with one KafkaConnection per socket, a dispatcher shared
// by all of them, the listener's request budget (queued.max.request.bytes) and produce budget,
// the connection limits (max.connections, max.connections.per.ip) and the idle timeout
// (connections.max.idle.ms). With TLS the listener speaks TLS only (Kafka's SSL or SASL_SSL
// listener); with SASL required, a SaslGate in front of the dispatcher (sasl/gate.ts).
import type { Socket, TCPSocketListener } from "bun";
import { ByteBudget } from "./budget.ts";
import { type ConnectionLimits, KafkaConnection } from "./connection.ts";
import type { KafkaContext } from "./context.ts";
import { FramePool } from "./frame-pool.ts";
import { Dispatcher } from "./dispatch.ts";
import { WarnLimiter } from "../log.ts";
import type { FrameDispatcher } from "./connection.ts";
import { subjectName } from "./principal.ts";
import { SASL_MAX_RECEIVE_BYTES, SaslGate } from "./sasl/gate.ts";
import type { SaslMechanism } from "./sasl/exchange.ts";
import { type CredentialSource, PasswordChecker } from "./sasl/password.ts";

/** TLS for the listener: PEM text of the certificate chain, its key, and the client CA. */
export interface KafkaTlsOptions {
  cert: string;
  key: string;
  /** With a CA, clients must present a certificate it signed (ssl.client.auth=required). */
  ca?: string;
}

export interface KafkaSaslOptions {
  mechanisms: readonly SaslMechanism[];
  credentials: CredentialSource;
  /** Shared with the HTTP API's Basic logins (one cache of checked passwords). */
  passwords?: PasswordChecker;
  /** connections.max.reauth.ms (KIP-368); 0 or absent: sessions never end. */
  maxReauthMs?: number;
}

export interface KafkaListenerOptions extends Partial<ConnectionLimits> {
  host: string;
  port: number;
  /** Produce bytes held in memory across all connections. */
  produceBudgetBytes?: number;
  /** queued.max.request.bytes: request bytes held in memory across all connections. */
  queuedMaxRequestBytes?: number;
  /** max.connections (already lowered to fit the descriptor limit by the caller). */
  maxConnections?: number;
  /** max.connections.per.ip */
  maxConnectionsPerIp?: number;
  /** connections.max.idle.ms: a connection without a request this long is closed. */
  connectionsMaxIdleMs?: number;
  /** Speak TLS (only) on this listener. */
  tls?: KafkaTlsOptions;
  /** Require SASL authentication before anything else. */
  sasl?: KafkaSaslOptions;
}

export const DEFAULT_LIMITS: Required<ConnectionLimits> = {
  maxRequestBytes: 100 * 1024 * 1024,
  maxQueuedRequests: 500,
  maxQueuedBytes: 32 * 1024 * 1024,
  // Above clients' default max.request.size (1 MiB), so a client that sends Produce before any
  // other request (kafka-python with a pinned api_version) is still served.
  maxUnauthenticatedRequestBytes: 2 * 1024 * 1024,
};
export const DEFAULT_PRODUCE_BUDGET = 128 * 1024 * 1024;
export const DEFAULT_QUEUED_MAX_REQUEST_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_CONNECTIONS = 10_000;
export const DEFAULT_MAX_CONNECTIONS_PER_IP = 1_000;
export const DEFAULT_CONNECTIONS_MAX_IDLE_MS = 600_000;

/** The listener label of this listener's metrics. */
const LISTENER = "kafka";

export interface KafkaListener {
  readonly port: number;
  readonly dispatcher: Dispatcher;
  /** "PLAINTEXT", "SSL", "SASL_PLAINTEXT" or "SASL_SSL" (Kafka's security protocol names). */
  readonly securityProtocol: string;
  /** The listener's request budget (queued.max.request.bytes). */
  readonly requestBudget: ByteBudget;
  connections(): number;
  /** Stop accepting and close every connection. */
  stop(): void;
}

/** "::ffff:10.0.0.1" and "10.0.0.1" are one client for max.connections.per.ip. */
export function clientIp(addr: string | undefined): string {
  if (!addr) return "unknown";
  return addr.startsWith("::ffff:") && addr.includes(".") ? addr.slice(7) : addr;
}

/** Bind the listener. Throws if the address cannot be bound. */
export function startKafkaListener(ctx: KafkaContext, opts: KafkaListenerOptions): KafkaListener {
  const limits: ConnectionLimits = {
    maxRequestBytes: opts.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
    maxQueuedRequests: opts.maxQueuedRequests ?? DEFAULT_LIMITS.maxQueuedRequests,
    maxQueuedBytes: opts.maxQueuedBytes ?? DEFAULT_LIMITS.maxQueuedBytes,
    // Before SASL authentication, Kafka's sasl.server.max.receive.size.
    maxUnauthenticatedRequestBytes: opts.maxUnauthenticatedRequestBytes ??
      (opts.sasl ? SASL_MAX_RECEIVE_BYTES : DEFAULT_LIMITS.maxUnauthenticatedRequestBytes),
  };
  const requestBudget = new ByteBudget(
    opts.queuedMaxRequestBytes ?? DEFAULT_QUEUED_MAX_REQUEST_BYTES,
  );
  // Produce takes at most half of the request budget: fetches, heartbeats and metadata requests
  // still find room while producers push.
  const budget = new ByteBudget(
    opts.produceBudgetBytes ?? Math.min(DEFAULT_PRODUCE_BUDGET, requestBudget.limit / 2),
  );
  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const maxPerIp = opts.maxConnectionsPerIp ?? DEFAULT_MAX_CONNECTIONS_PER_IP;
  const idleMs = opts.connectionsMaxIdleMs ?? DEFAULT_CONNECTIONS_MAX_IDLE_MS;
  const dispatcher = new Dispatcher(ctx);
  const front: FrameDispatcher = opts.sasl
    ? new SaslGate(dispatcher, {
      mechanisms: opts.sasl.mechanisms,
      source: opts.sasl.credentials,
      passwords: opts.sasl.passwords ?? new PasswordChecker(opts.sasl.credentials),
      maxReauthMs: opts.sasl.maxReauthMs,
      log: ctx.log,
      metrics: ctx.metrics,
    })
    : dispatcher;
  const tls = opts.tls;
  // Idle produce frames and fetch buffers kept for reuse across all connections (see
  // frame-pool.ts). Fetch responses waiting to be written hold at most 64 MiB of buffers; past
  // that, fetches read through the segment maps and cost no anonymous memory.
  const pool = new FramePool(32 * 1024 * 1024, 64 * 1024 * 1024);
  const live = new Set<KafkaConnection>();
  const perIp = new Map<string, number>();
  const warnings = new WarnLimiter(ctx.log);
  const m = ctx.metrics;
  const refusedConnections = m.counter(
    "broker_connections_refused_total",
    "connections closed at once because a connection limit was reached, by listener and limit",
  );
  const idleClosed = m.counter(
    "broker_connections_idle_closed_total",
    "connections closed after connections.max.idle.ms without a request, by listener",
  );
  const refusedRequests = m.counter(
    "broker_kafka_requests_refused_total",
    "Kafka request frames refused from their size prefix (the connection is closed), by reason",
  );
  m.collect(() => {
    let waiting = 0;
    for (const c of live) if (c.waitingForMemory) waiting++;
    const l = { listener: LISTENER };
    return [
      {
        name: "broker_connections",
        help: "open client connections, by listener",
        samples: [{ labels: l, value: live.size }],
      },
      {
        name: "broker_connections_max",
        help: "max.connections in effect (lowered to leave descriptors free), by listener",
        samples: [{ labels: l, value: maxConnections }],
      },
      ...requestBudget.gauges(
        "broker_kafka_request_bytes_queued",
        "Kafka request bytes held in memory across all connections",
        "queued.max.request.bytes",
      ),
      {
        name: "broker_kafka_connections_waiting_for_memory",
        help: "Kafka connections not read until request bytes are released",
        samples: [{ labels: {}, value: waiting }],
      },
    ];
  });
  const onError = (msg: string, fields: Record<string, unknown>) => {
    const reason = typeof fields.reason === "string" ? fields.reason : "error";
    if (reason !== "handler_failed") refusedRequests.inc({ reason });
    warnings.warn(reason, msg, fields);
  };
  const forget = (conn: KafkaConnection) => {
    if (!live.delete(conn)) return;
    const ip = clientIp(conn.remoteHost);
    const n = (perIp.get(ip) ?? 1) - 1;
    if (n <= 0) perIp.delete(ip);
    else perIp.set(ip, n);
  };
  const server: TCPSocketListener<KafkaConnection | undefined> = Bun.listen<
    KafkaConnection | undefined
  >({
    hostname: opts.host,
    port: opts.port,
    ...(tls
      ? {
        tls: {
          cert: tls.cert,
          key: tls.key,
          ...(tls.ca ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
        },
      }
      : {}),
    socket: {
      // With TLS, open runs once the handshake is done (there is no handshake handler).
      open(socket) {
        if (tls?.ca && !(socket as { authorized?: boolean }).authorized) {
          // A client certificate the CA did not sign: Bun closes it; nothing is served.
          socket.data = undefined;
          warnings.warn("tls_client_refused", "refusing a Kafka TLS client certificate", {
            remote: clientIp(socket.remoteAddress),
          });
          socket.end();
          return;
        }
        // Over a limit: accepted and closed at once, so the kernel's accept queue keeps moving
        // and the descriptor is free again right away.
        const ip = clientIp(socket.remoteAddress);
        const fromIp = perIp.get(ip) ?? 0;
        const over = live.size >= maxConnections
          ? "max_connections"
          : fromIp >= maxPerIp
          ? "max_connections_per_ip"
          : null;
        if (over) {
          socket.data = undefined;
          refusedConnections.inc({ listener: LISTENER, limit: over });
          warnings.warn(
            over,
            over === "max_connections"
              ? "refusing a Kafka connection: max.connections reached"
              : "refusing a Kafka connection: max.connections.per.ip reached for its address",
            over === "max_connections"
              ? { remote: ip, connections: live.size, max: maxConnections }
              : { remote: ip, connections: fromIp, max: maxPerIp },
          );
          socket.end();
          return;
        }
        const conn = new KafkaConnection(
          socket as Socket<unknown>,
          limits,
          budget,
          front,
          onError,
          pool,
          requestBudget,
        );
        if (opts.sasl) conn.requireAuthentication();
        else if (tls?.ca) {
          // ssl.client.auth=required without SASL: the certificate's subject is the principal.
          const subject = subjectName(
            (socket as unknown as { getPeerCertificate(): import("node:tls").PeerCertificate })
              .getPeerCertificate(),
          );
          if (subject) conn.authenticated({ type: "User", name: subject, via: "SSL" });
        }
        socket.data = conn;
        live.add(conn);
        perIp.set(ip, fromIp + 1);
        // Small responses must not wait for Nagle's delayed ACK.
        socket.setNoDelay(true);
      },
      data(socket, chunk) {
        socket.data?.onData(chunk);
      },
      drain(socket) {
        socket.data?.onDrain();
      },
      close(socket) {
        const conn = socket.data;
        if (!conn) return;
        forget(conn);
        conn.onClose();
      },
      error(socket, error) {
        ctx.log.debug("kafka socket error", { error, remote: socket.data?.remoteHost });
        // Never touch an errored socket again (a late response would write to it): its fd
        // number may already belong to another connection.
        const conn = socket.data;
        if (!conn) return;
        forget(conn);
        conn.onClose();
      },
    },
  });
  // Idle connections: checked a few times per idle period (at most every 5 s), so one is closed
  // between idleMs and idleMs + the period after its last request.
  const sweepMs = Math.max(50, Math.min(5000, Math.floor(idleMs / 4)));
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const c of live) {
      if (c.idleFor(now) < idleMs) continue;
      idleClosed.inc({ listener: LISTENER });
      ctx.log.debug("closing an idle Kafka connection", {
        remote: c.remoteHost,
        idle_ms: idleMs,
      });
      c.terminate();
    }
  }, sweepMs);
  (sweeper as { unref?: () => void }).unref?.();
  return {
    port: server.port,
    dispatcher,
    securityProtocol: `${opts.sasl ? "SASL_" : ""}${tls ? "SSL" : "PLAINTEXT"}`,
    requestBudget,
    connections: () => live.size,
    stop: () => {
      clearInterval(sweeper);
      warnings.flush();
      server.stop(true);
      for (const c of live) c.socket.end();
      live.clear();
      perIp.clear();
    },
  };
}
