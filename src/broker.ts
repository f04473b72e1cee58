// Composition root: builds and wires storage, metadata and the front ends. Nothing else does wiring.
import { hostname } from "node:os";
import type { BrokerConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { lockDataDir } from "./datadir-lock.ts";
import { createHttpApp } from "./http/app.ts";
import { VERSION } from "./version.ts";

export interface Broker {
  readonly nodeId: number;
  readonly version: string;
  readonly log: Logger;
  readonly httpPort: number;
  isReady(): boolean;
  stop(): Promise<void>;
}

export async function startBroker(cfg: BrokerConfig, log: Logger): Promise<Broker> {
  const lock = lockDataDir(cfg.dataDir);
  let ready = false;
  const nodeId = cfg.nodeId ?? 0;
  const broker: Broker = {
    nodeId,
    version: VERSION,
    log,
    httpPort: 0,
    isReady: () => ready,
    stop: async () => {
      ready = false;
      server.stop(true);
      lock.release();
    },
  };
  const app = createHttpApp(broker);
  const server = Bun.serve({
    hostname: cfg.httpAddr.host,
    port: cfg.httpAddr.port,
    fetch: app.fetch,
    idleTimeout: 120,
  });
  (broker as { httpPort: number }).httpPort = server.port ?? 0;
  ready = true;
  log.info("broker started", {
    node_id: nodeId,
    version: VERSION,
    data_dir: cfg.dataDir,
    http: `${cfg.httpAddr.host}:${server.port}`,
    host: hostname(),
  });
  return broker;
}
