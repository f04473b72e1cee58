// Composition root: builds and wires storage, metadata and the front ends. Nothing else does wiring.
import { existsSync, readdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { BrokerConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { type DataDirLock, lockDataDir } from "./datadir-lock.ts";
import { createHttpApp } from "./http/app.ts";
import { VERSION } from "./version.ts";
import { META_DB_FILE, MetadataStore } from "./meta/index.ts";
import { type LogConfig, SegmentLogStore } from "./storage/index.ts";
import { logConfigOf, PartitionManager } from "./core/partition-manager.ts";
import { GroupService } from "./core/group-service.ts";
import { SpaceReserve } from "./core/space-reserve.ts";
import { decompress } from "./protocol/compression/index.ts";
import { resolveTopicConfig } from "./meta/index.ts";
import type { CompressionCodec } from "./protocol/record-batch.ts";

/** How often closed segments are checked against retention.ms / retention.bytes. */
const RETENTION_CHECK_MS = 1000;

export interface Broker {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly version: string;
  readonly log: Logger;
  readonly partitions: PartitionManager;
  readonly meta: MetadataStore;
  readonly groups: GroupService;
  isReady(): boolean;
  stop(): Promise<void>;
}

/** A start-up failure whose message is the whole story for the user (no stack trace). */
export class StartupError extends Error {
  readonly userFacing = true;
}

function hasPartitionData(dataDir: string): boolean {
  const logs = join(dataDir, "logs");
  if (!existsSync(logs)) return false;
  return readdirSync(logs).length > 0;
}

export async function startBroker(cfg: BrokerConfig, log: Logger): Promise<Broker> {
  const started = performance.now();
  const lock: DataDirLock = lockDataDir(cfg.dataDir);
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    // Without its metadata, a data dir's segments cannot be told apart from a deleted topic's:
    // refuse rather than risk deleting them.
    if (!existsSync(join(cfg.dataDir, META_DB_FILE)) && hasPartitionData(cfg.dataDir)) {
      throw new StartupError(
        `${join(cfg.dataDir, META_DB_FILE)} is missing but ${
          join(cfg.dataDir, "logs")
        } holds partition data; ` +
          "refusing to start (restore the metadata file, or move the logs away to start empty)",
      );
    }
    let meta: MetadataStore;
    try {
      meta = MetadataStore.open(cfg.dataDir, {
        nodeId: cfg.nodeId,
        topicDefaults: cfg.topicDefaults,
      });
    } catch (e) {
      throw new StartupError(`cannot open metadata in ${cfg.dataDir}: ${(e as Error).message}`);
    }
    cleanups.push(() => meta.close());
    const storageLog = log.child({ component: "storage" });
    const defaults: Partial<LogConfig> = logConfigOf(resolveTopicConfig({}, meta.topicDefaults));
    const store = await SegmentLogStore.open({
      dataDir: cfg.dataDir,
      flush: cfg.flush,
      logger: (level, msg, fields) => storageLog[level](msg, fields),
      decompress: (codec: CompressionCodec, bytes: Uint8Array) => decompress(codec, bytes),
      defaults,
    });
    const reserve = new SpaceReserve(cfg.dataDir, log);
    reserve.ensure();
    const partitions = new PartitionManager(
      meta,
      store,
      meta.nodeId,
      log.child({ component: "partitions" }),
      reserve,
    );
    const partitionsClose = () => partitions.close();
    cleanups.push(partitionsClose);
    await partitions.openAll();
    // Listeners bind before the broker registers, so it registers the ports really bound; they
    // answer 503 until everything behind them is up.
    let app: { fetch: (req: Request) => Response | Promise<Response> } | undefined;
    let server: ReturnType<typeof Bun.serve>;
    try {
      server = Bun.serve({
        hostname: cfg.httpAddr.host,
        port: cfg.httpAddr.port,
        fetch: (req) =>
          app
            ? app.fetch(req)
            : Response.json({ error_code: 50300, message: "starting" }, { status: 503 }),
        // Long-polls and live tails run for long; they send heartbeats, this is the backstop.
        idleTimeout: 255,
        maxRequestBodySize: 64 * 1024 * 1024,
      });
    } catch (e) {
      throw new StartupError(
        `cannot listen for HTTP on ${cfg.httpAddr.host}:${cfg.httpAddr.port}: ${
          (e as Error).message
        }`,
      );
    }
    // Cleanups run last-in first-out: on shutdown the listener stops accepting before anything closes.
    cleanups.push(() => server.stop(true));
    const advertisedHost = cfg.advertiseHost ??
      (cfg.httpAddr.host === "0.0.0.0" || cfg.httpAddr.host === "::"
        ? hostname()
        : cfg.httpAddr.host);
    await meta.registerBroker({
      nodeId: meta.nodeId,
      host: advertisedHost,
      kafkaPort: cfg.advertiseKafkaAddr?.port ?? cfg.kafkaAddr.port,
      httpPort: server.port ?? cfg.httpAddr.port,
      clusterPort: cfg.clusterAddr.port,
    });

    const groups = new GroupService(partitions, meta, log.child({ component: "groups" }), {
      initialRebalanceDelayMs: cfg.groupInitialRebalanceDelayMs,
    });
    await groups.start();
    // Before partitions close: offset appends in flight finish first.
    cleanups.splice(cleanups.indexOf(partitionsClose) + 1, 0, () => groups.stop());

    let ready = false;
    let retentionRunning = false;
    const retentionTimer = setInterval(() => {
      if (retentionRunning) return;
      retentionRunning = true;
      partitions.enforceRetention().catch((e) => log.error("retention failed", { error: e }))
        .finally(() => {
          retentionRunning = false;
        });
    }, RETENTION_CHECK_MS);
    cleanups.push(() => clearInterval(retentionTimer));

    const broker: Broker = {
      nodeId: meta.nodeId,
      clusterId: meta.clusterId,
      version: VERSION,
      log,
      partitions,
      meta,
      groups,
      isReady: () => ready,
      stop: async () => {
        ready = false;
        await undo();
      },
    };
    app = createHttpApp(broker);
    ready = true;
    log.info("broker started", {
      node_id: meta.nodeId,
      cluster_id: meta.clusterId,
      version: VERSION,
      data_dir: cfg.dataDir,
      http: `${cfg.httpAddr.host}:${server.port}`,
      partitions: partitions.partitions().length,
      flush: cfg.flush.kind === "always" ? "always" : `interval:${cfg.flush.ms}`,
      start_ms: Math.round(performance.now() - started),
    });
    return broker;
  } catch (e) {
    await undo().catch(() => {});
    throw e;
  }
}
