// The Kafka TCP listener: Bun.listen with one KafkaConnection per socket, a dispatcher shared
// by all of them, and the global produce byte budget.
import type { Socket, TCPSocketListener } from "bun";
import { ByteBudget } from "./budget.ts";
import { type ConnectionLimits, KafkaConnection } from "./connection.ts";
import type { KafkaContext } from "./context.ts";
import { FramePool } from "./frame-pool.ts";
import { Dispatcher } from "./dispatch.ts";

export interface KafkaListenerOptions extends Partial<ConnectionLimits> {
  host: string;
  port: number;
  /** Produce bytes held in memory across all connections. */
  produceBudgetBytes?: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  maxRequestBytes: 100 * 1024 * 1024,
  maxQueuedRequests: 500,
  maxQueuedBytes: 32 * 1024 * 1024,
};
export const DEFAULT_PRODUCE_BUDGET = 128 * 1024 * 1024;

export interface KafkaListener {
  readonly port: number;
  readonly dispatcher: Dispatcher;
  connections(): number;
  /** Stop accepting and close every connection. */
  stop(): void;
}

/** Bind the listener. Throws if the address cannot be bound. */
export function startKafkaListener(ctx: KafkaContext, opts: KafkaListenerOptions): KafkaListener {
  const limits: ConnectionLimits = {
    maxRequestBytes: opts.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
    maxQueuedRequests: opts.maxQueuedRequests ?? DEFAULT_LIMITS.maxQueuedRequests,
    maxQueuedBytes: opts.maxQueuedBytes ?? DEFAULT_LIMITS.maxQueuedBytes,
  };
  const budget = new ByteBudget(opts.produceBudgetBytes ?? DEFAULT_PRODUCE_BUDGET);
  const dispatcher = new Dispatcher(ctx);
  // Idle produce frames and fetch buffers kept for reuse across all connections (see
  // frame-pool.ts). Fetch responses waiting to be written hold at most 64 MiB of buffers; past
  // that, fetches read through the segment maps and cost no anonymous memory.
  const pool = new FramePool(32 * 1024 * 1024, 64 * 1024 * 1024);
  const live = new Set<KafkaConnection>();
  const onError = (msg: string, fields: Record<string, unknown>) => ctx.log.warn(msg, fields);
  const server: TCPSocketListener<KafkaConnection | undefined> = Bun.listen<
    KafkaConnection | undefined
  >({
    hostname: opts.host,
    port: opts.port,
    socket: {
      open(socket) {
        const conn = new KafkaConnection(
          socket as Socket<unknown>,
          limits,
          budget,
          dispatcher,
          onError,
          pool,
        );
        socket.data = conn;
        live.add(conn);
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
        live.delete(conn);
        conn.onClose();
      },
      error(socket, error) {
        ctx.log.debug("kafka socket error", { error, remote: socket.data?.remoteHost });
        // Never touch an errored socket again (a late response would write to it): its fd
        // number may already belong to another connection.
        const conn = socket.data;
        if (!conn) return;
        live.delete(conn);
        conn.onClose();
      },
    },
  });
  return {
    port: server.port,
    dispatcher,
    connections: () => live.size,
    stop: () => {
      server.stop(true);
      for (const c of live) c.socket.end();
      live.clear();
    },
  };
}
