// Composition root: builds and wires storage, metadata and the front ends. Nothing else does wiring.
import { LiveAuthorizer } from "./acl/live.ts";
import { existsSync, readdirSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { advertisedKafka, type BrokerConfig, type HostPort } from "./config.ts";
import type { Logger } from "./log.ts";
import { type DataDirLock, lockDataDir } from "./datadir-lock.ts";
import { createHttpApp, HTTP_BODY_LIMIT, HTTP_QUEUED_BODY_LIMIT } from "./http/app.ts";
import type { ClientEnv } from "./http/acl.ts";
import { warnIfExposed } from "./http/auth.ts";
import { type KafkaSecurity, kafkaSecurity, pem, SecurityConfigError } from "./kafka/security.ts";
import { ClusterTls } from "./cluster/tls.ts";
import { Metrics } from "./core/metrics.ts";
import { buildInfo, processFamilies } from "./core/process-metrics.ts";
import { advertisedHost, isWildcard } from "./advertise.ts";
import { VERSION } from "./version.ts";
import { META_DB_FILE, MetadataStore } from "./meta/index.ts";
import { type MetaDbHealth, metaDbHealth, moveAside } from "./meta/damage.ts";
import { RAFT_DB_FILE, raftLogHasState } from "./cluster/raft-storage-sqlite.ts";
import { type LogConfig, SegmentLogStore } from "./storage/index.ts";
import { logConfigOf, PartitionManager } from "./core/partition-manager.ts";
import { GroupService } from "./core/group-service.ts";
import { SpaceReserve } from "./core/space-reserve.ts";
import { decompress } from "./protocol/compression/index.ts";
import { crc32cIsNative } from "./protocol/crc32c.ts";
import { resolveTopicConfig } from "./meta/index.ts";
import type { CompressionCodec } from "./protocol/record-batch.ts";
import {
  DEFAULT_CONNECTIONS_MAX_IDLE_MS,
  DEFAULT_LIMITS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_IP,
  DEFAULT_QUEUED_MAX_REQUEST_BYTES,
  type KafkaListener,
  startKafkaListener,
} from "./kafka/server.ts";
import { cappedConnections, openFileLimit, partitionFileBudget } from "./core/fd-limit.ts";
import { ProducerIdAllocator } from "./kafka/producer-ids.ts";
import type { BrokerSetting, KafkaContext } from "./kafka/context.ts";
import { localGroups } from "./http/groups.ts";
import { ClusterService } from "./cluster/node.ts";
import { RemotePartitions } from "./cluster/remote-partitions.ts";
import { ControllerService, MAX_UNCLEAN_LOGS } from "./replication/controller-service.ts";
import { ReassignmentAdmin } from "./core/reassignment-admin.ts";
import { ReplicaManager } from "./replication/replica-manager.ts";
import { SessionClient } from "./replication/session-client.ts";
import { leaderPartitionStats, ReplicationAdmin } from "./core/replication-admin.ts";

/** How often closed segments are checked against retention.ms / retention.bytes. */
const RETENTION_CHECK_MS = 1000;

export interface Broker {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly version: string;
  /** --data-dir: partition directories are under logs/ (an operator's repair decision goes there). */
  readonly dataDir: string;
  readonly log: Logger;
  readonly partitions: PartitionManager;
  readonly meta: MetadataStore;
  readonly groups: GroupService;
  /** Prometheus registry shared by the front ends (GET /metrics). */
  readonly metrics: Metrics;
  /** Membership (SWIM) and the Raft metadata quorum: status() for GET /cluster. */
  readonly cluster: ClusterService;
  isReady(): boolean;
  stop(): Promise<void>;
}

/** A start-up failure whose message is the whole story for the user (no stack trace). */
export class StartupError extends Error {
  readonly userFacing = true;
}

/**
 * Binds and at once closes each address. Only a probe: a port taken between it and the real bind
 * still fails there, with the same message.
 */
function probeListenAddrs(addrs: [string, { host: string; port: number }][]): void {
  for (const [what, { host, port }] of addrs) {
    if (port === 0) continue;
    let probe: { stop(closeActive?: boolean): void } | undefined;
    try {
      probe = Bun.listen({ hostname: host, port, socket: { data() {} } });
    } catch (e) {
      throw new StartupError(`cannot listen for ${what} on ${host}:${port}: ${listenFailure(e)}`);
    } finally {
      probe?.stop(true);
    }
  }
}

/** Bun's own message ("Failed to listen at HOST") names no cause; the usual one is a port in use. */
function listenFailure(e: unknown): string {
  const m = (e as Error).message;
  return /EADDRINUSE|in use/i.test(m) ? m : `${m} (is the port in use?)`;
}

function hasPartitionData(dataDir: string): boolean {
  const logs = join(dataDir, "logs");
  if (!existsSync(logs)) return false;
  return readdirSync(logs).length > 0;
}

/**
 * meta.db is rebuilt from the metadata log when it is missing or damaged and raft.db holds that
 * log. Without either, a data dir's segments cannot be told apart from a deleted topic's: refuse
 * rather than risk deleting them. A damaged file is kept, renamed, never deleted.
 */
function checkMetaDb(dataDir: string, log: Logger): void {
  const path = join(dataDir, META_DB_FILE);
  let health: MetaDbHealth;
  try {
    health = metaDbHealth(path);
  } catch (e) {
    throw new StartupError(`cannot open metadata in ${dataDir}: ${(e as Error).message}`);
  }
  if (health.kind === "ok") return;
  if (health.kind === "missing" && !hasPartitionData(dataDir)) return; // a new data dir
  const rebuild = raftLogHasState(dataDir);
  if (health.kind === "damaged") {
    if (!rebuild) {
      throw new StartupError(
        `${path} is damaged (${health.reason}) and ${join(dataDir, RAFT_DB_FILE)} holds no ` +
          "metadata log to rebuild it from; refusing to start (restore the metadata file)",
      );
    }
    const kept = moveAside(path);
    log.warn("meta.db is damaged: kept aside, rebuilding it from the metadata log", {
      reason: health.reason,
      kept,
    });
    return;
  }
  if (!rebuild) {
    throw new StartupError(
      `${path} is missing but ${join(dataDir, "logs")} holds partition data; ` +
        "refusing to start (restore the metadata file, or move the logs away to start empty)",
    );
  }
  log.warn("meta.db is missing: rebuilding it from the metadata log", { path });
}

/**
 * The cluster port's TLS (files read now; a bad one stops the start): --cluster-tls-* when
 * given, else, unless --cluster-tls off, the Kafka listener's certificate and key (auto mode:
 * no CA, the join-token handshake bound to the TLS session authenticates peers; tls.ts).
 */
function clusterTlsOf(cfg: BrokerConfig): ClusterTls | undefined {
  if (cfg.clusterTls === "off") return undefined;
  const [certFile, keyFile, flags] = cfg.clusterTlsCert !== undefined
    ? [cfg.clusterTlsCert, cfg.clusterTlsKey, ["--cluster-tls-cert", "--cluster-tls-key"]]
    : [cfg.kafkaTlsCert, cfg.kafkaTlsKey, ["--kafka-tls-cert", "--kafka-tls-key"]];
  if (certFile === undefined || keyFile === undefined) return undefined;
  const auto = cfg.clusterTlsCert === undefined;
  try {
    return new ClusterTls({
      cert: pem(certFile, flags[0], /CERTIFICATE/),
      key: pem(keyFile, flags[1], /PRIVATE KEY/),
      ...(cfg.clusterTlsCa ? { ca: pem(cfg.clusterTlsCa, "--cluster-tls-ca", /CERTIFICATE/) } : {}),
    }, { auto });
  } catch (e) {
    if (e instanceof SecurityConfigError) throw new StartupError(e.message);
    throw new StartupError(`${flags.join("/")} (cluster port): ${(e as Error).message}`);
  }
}

/** The limits of the front doors, with defaults for a config built without them. */
function frontDoorLimits(cfg: BrokerConfig) {
  const httpMaxBody = cfg.httpMaxBodyBytes ?? HTTP_BODY_LIMIT;
  const wanted = cfg.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  // Client connections may not take the descriptors the broker needs for its own files (a
  // flood of idle sockets once made a recovery checkpoint fail with EMFILE).
  const fdLimit = openFileLimit();
  const conns = cappedConnections(wanted, fdLimit);
  return {
    queuedMaxRequestBytes: cfg.queuedMaxRequestBytes ?? DEFAULT_QUEUED_MAX_REQUEST_BYTES,
    /** In effect: `wanted`, lowered to fit under the descriptor limit. */
    maxConnections: conns.max,
    maxConnectionsWanted: wanted,
    maxConnectionsCapped: conns.capped,
    openFileLimit: fdLimit,
    maxConnectionsPerIp: cfg.maxConnectionsPerIp ?? DEFAULT_MAX_CONNECTIONS_PER_IP,
    connectionsMaxIdleMs: cfg.connectionsMaxIdleMs ?? DEFAULT_CONNECTIONS_MAX_IDLE_MS,
    httpMaxBodyBytes: httpMaxBody,
    httpQueuedMaxBodyBytes: Math.max(
      httpMaxBody,
      cfg.httpQueuedMaxBodyBytes ?? HTTP_QUEUED_BODY_LIMIT,
    ),
  };
}

export async function startBroker(cfg: BrokerConfig, log: Logger): Promise<Broker> {
  const started = performance.now();
  const limits = frontDoorLimits(cfg);
  const lock: DataDirLock = lockDataDir(cfg.dataDir);
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    // A taken Kafka or HTTP port is found here, before anything in the data dir is written
    // (the cluster port binds first thing below, for the same reason).
    probeListenAddrs([
      ["Kafka", cfg.kafkaAddr],
      ["HTTP", cfg.httpAddr],
      ...(cfg.metricsAddr ? [["metrics", cfg.metricsAddr] as [string, HostPort]] : []),
    ]);
    // Without --advertise-host a wildcard listener advertises the first non-loopback address:
    // clients and other brokers can reach it where the hostname often does not resolve.
    const ifaces = networkInterfaces();
    const kafkaHost = advertisedHost(cfg.advertiseHost, cfg.kafkaAddr.host, ifaces);
    checkMetaDb(cfg.dataDir, log);
    const clusterTls = clusterTlsOf(cfg);
    if (clusterTls === undefined && cfg.kafkaTlsCert !== undefined) {
      log.warn(
        "the Kafka listener speaks TLS but the cluster port does not (--cluster-tls off): " +
          "records, metadata and gossip between brokers cross the network in clear text, and " +
          "brokers with TLS on their cluster port cannot talk to this one (docs/security.md)",
        {},
      );
    }
    // The cluster port binds first: a joiner learns its cluster id (and maybe node id) there
    // before the metadata opens, and the metadata log is the Raft log it runs.
    const cluster = await ClusterService.start({
      dataDir: cfg.dataDir,
      listen: cfg.clusterAddr,
      advertiseHost: cfg.advertiseHost ??
        (isWildcard(cfg.clusterAddr.host)
          ? advertisedHost(undefined, cfg.clusterAddr.host, ifaces).host
          : undefined),
      join: cfg.join,
      joinToken: cfg.joinToken,
      nodeId: cfg.nodeId,
      voters: cfg.voters ?? 3,
      log: log.child({ component: "cluster" }),
      tls: clusterTls,
    });
    cleanups.push(() => cluster.close());
    let meta: MetadataStore;
    try {
      meta = MetadataStore.open(cfg.dataDir, {
        nodeId: cluster.nodeId,
        expectedClusterId: cluster.clusterId,
        log: (db) => cluster.metadataLog(db),
        topicDefaults: cfg.topicDefaults,
        numPartitions: cfg.numPartitions,
        defaultReplicationFactor: cfg.defaultReplicationFactor,
        isDown: (id) => cluster.memberDown(id),
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
      zeroAhead: cfg.zeroAhead,
      logger: (level, msg, fields) => storageLog[level](msg, fields),
      decompress: (codec: CompressionCodec, bytes: Uint8Array) => decompress(codec, bytes),
      defaults,
      // Idle partitions' files close and reopen on use, so the partition count is not bounded by
      // the open-file limit (docs/storage.md, Descriptors).
      maxOpenFiles: partitionFileBudget(limits.openFileLimit, limits.maxConnections),
      // After a clean stop the logs open on first use (docs/storage.md, Lazy open).
      lazyOpen: true,
    });
    const reserve = new SpaceReserve(cfg.dataDir, log);
    reserve.ensure();
    // The metadata log too: on a full disk elections and ISR changes must still commit.
    cluster.onDiskFull(() => reserve.release());
    const partitions = new PartitionManager(
      meta,
      store,
      meta.nodeId,
      log.child({ component: "partitions" }),
      reserve,
    );
    const partitionsClose = () => partitions.close();
    cleanups.push(partitionsClose);
    // Replication: the controller (active while this broker leads the metadata quorum), the
    // session this broker holds with it, and the replica shell (followers' fetches, ISR changes).
    const controller = new ControllerService(
      cluster,
      meta,
      log.child({ component: "controller" }),
      {
        sessions: { sessionTimeoutMs: cfg.brokerSessionTimeoutMs, electionMs: cluster.electionMs },
        autoLeaderRebalance: cfg.autoLeaderRebalance,
        reassignMaxConcurrent: cfg.reassignmentMaxConcurrent,
      },
    );
    const late0: { session?: SessionClient } = {};
    const replication = new ReplicaManager(
      partitions,
      cluster,
      log.child({ component: "replication" }),
      (method, body) =>
        late0.session
          ? late0.session.call(method, body)
          : Promise.reject(new Error("no controller session yet")),
      cfg.replicaLagTimeMaxMs,
      cfg.dataDir,
    );
    replication.defaultReassignThrottle = cfg.reassignmentThrottle;
    await replication.loadCheckpoint();
    partitions.setReplication(replication);
    const session = new SessionClient(
      cluster,
      controller,
      log.child({ component: "session" }),
      (fenced) => replication.setCanLead(!fenced),
      250,
      cfg.brokerSessionTimeoutMs,
    );
    replication.setLease(() => session.leaseValid());
    late0.session = session;
    cleanups.push(async () => {
      session.stop();
      replication.stop();
      controller.stop();
      await replication.checkpoint();
    });
    controller.start();
    replication.start();
    await partitions.openAll();
    // The Kafka handlers and the metadata hook below need the group service, which exists only
    // after this broker registered.
    const late: { groups?: GroupService } = {};
    // What other brokers ask of the partitions led here (offsets, size, followers' positions);
    // the controller's views (broker sessions, ElectLeaders) for the HTTP API and Kafka handlers.
    cluster.onPartitionStats((topic, ps) => leaderPartitionStats(partitions, topic, ps));
    ReplicationAdmin.attach(
      partitions,
      cluster,
      controller,
      log.child({ component: "controller" }),
    );
    ReassignmentAdmin.attach(meta, cluster, controller);
    // HTTP on any broker: appends and reads forwarded to partitions' leaders over the cluster port.
    const remote = new RemotePartitions(
      cluster,
      partitions,
      meta,
      log.child({ component: "forward" }),
    );
    remote.serve();
    cleanups.push(() => remote.close());
    // Topics created, deleted or changed through another broker reach this one's logs too.
    cluster.onMetadataChanged((r) => {
      // Only what the record changed (one topic or partition); a snapshot (null): everything.
      void partitions.reconcile(r);
      // Offsets of a deleted topic go with it (a group coordinated here holds them).
      if (r?.type === "TopicDeleted") late.groups?.topicDeleted(r.name);
    });
    void partitions.reconcile(); // what was applied between openAll and the line above
    // Listeners bind before the broker registers, so it registers the ports really bound; they
    // answer 503 until everything behind them is up.
    const http: {
      app?: { fetch: (req: Request, env?: ClientEnv) => Response | Promise<Response> };
    } = {};
    let server: ReturnType<typeof Bun.serve>;
    try {
      server = Bun.serve({
        hostname: cfg.httpAddr.host,
        port: cfg.httpAddr.port,
        // The caller's address goes with the request: ACLs may name hosts (src/http/acl.ts).
        fetch: (req, srv) =>
          http.app
            ? http.app.fetch(req, { clientIp: srv.requestIP(req)?.address })
            : Response.json({ error_code: 50300, message: "starting" }, { status: 503 }),
        // Long-polls and live tails run for long; they send heartbeats, this is the backstop.
        idleTimeout: 255,
        // Far above the API's own limit: the app's body guard answers oversized bodies with its
        // JSON 413 without reading them (Bun would close the connection without an answer).
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      });
    } catch (e) {
      throw new StartupError(
        `cannot listen for HTTP on ${cfg.httpAddr.host}:${cfg.httpAddr.port}: ${listenFailure(e)}`,
      );
    }
    // Cleanups run last-in first-out: on shutdown the listener stops accepting before anything
    // closes. Long-polls answer and live tails end first (closing), so their clients get a whole
    // response rather than a cut connection; what has not finished within a second is cut.
    const closing = new AbortController();
    cleanups.push(async () => {
      closing.abort();
      const graceful = server.stop(false);
      const limit = Bun.sleep(1000).then(() => "late" as const);
      if ((await Promise.race([graceful.then(() => "done" as const), limit])) === "late") {
        await server.stop(true);
      }
    });
    // The Kafka listener binds next to HTTP, before registration, so the real port is registered.
    let kafkaAddr = { host: "", port: 0 };
    // The Kafka listener answers before the group coordinator has replayed __consumer_offsets.
    const groupsStarted = Promise.withResolvers<void>();
    // One registry for both front doors: GET /metrics shows Kafka and HTTP traffic together.
    const metrics = new Metrics();
    metrics.collect(() => [...processFamilies(), buildInfo(VERSION)]);
    const kafkaCtx: KafkaContext = {
      partitions,
      meta,
      get groups(): GroupService {
        if (!late.groups) throw new Error("the group coordinator is still starting");
        return late.groups;
      },
      groupsStarted: groupsStarted.promise,
      producerIds: new ProducerIdAllocator(cfg.dataDir, () => cluster.allocateProducerIdBlock()),
      log: log.child({ component: "kafka" }),
      metrics,
      autoCreateTopics: cfg.autoCreateTopics,
      brokerSettings: brokerSettings(cfg, meta, limits),
      ...(cfg.authorizer === "acl"
        ? { authorizer: new LiveAuthorizer(meta, new Set(cfg.superUsers)) }
        : {}),
      advertised: () => kafkaAddr,
      controllerId: () => cluster.controllerId(),
    };
    (limits.maxConnectionsCapped ? log.warn : log.info)("Kafka listener limits", {
      max_connections: limits.maxConnections,
      ...(limits.maxConnectionsCapped
        ? {
          max_connections_wanted: limits.maxConnectionsWanted,
          why: "lowered so that 10% of the open-file limit (at least 1024) stays free",
        }
        : {}),
      open_file_limit: limits.openFileLimit ?? "unknown",
      partition_files_max: partitionFileBudget(limits.openFileLimit, limits.maxConnections) ??
        "unbounded",
      max_connections_per_ip: limits.maxConnectionsPerIp,
      connections_max_idle_ms: limits.connectionsMaxIdleMs,
      queued_max_request_bytes: limits.queuedMaxRequestBytes,
      max_request_bytes: Math.min(DEFAULT_LIMITS.maxRequestBytes, limits.queuedMaxRequestBytes),
    });
    // TLS and SASL of the Kafka listener (docs/security.md); users live in the metadata.
    let security: KafkaSecurity;
    try {
      security = kafkaSecurity(cfg, meta, log.child({ component: "kafka" }));
    } catch (e) {
      if (e instanceof SecurityConfigError) throw new StartupError(e.message);
      throw e;
    }
    let kafka: KafkaListener;
    try {
      kafka = startKafkaListener(kafkaCtx, {
        host: cfg.kafkaAddr.host,
        port: cfg.kafkaAddr.port,
        tls: security.tls,
        sasl: security.sasl,
        queuedMaxRequestBytes: limits.queuedMaxRequestBytes,
        maxConnections: limits.maxConnections,
        maxConnectionsPerIp: limits.maxConnectionsPerIp,
        connectionsMaxIdleMs: limits.connectionsMaxIdleMs,
      });
    } catch (e) {
      throw new StartupError(
        `cannot listen for Kafka on ${cfg.kafkaAddr.host}:${cfg.kafkaAddr.port}: ${
          listenFailure(e)
        }`,
      );
    }
    // Pushed after the HTTP server's cleanup, so it runs first: Kafka stops before anything else.
    let kafkaStopped = false;
    const stopKafka = (why: string) => {
      if (kafkaStopped) return;
      kafkaStopped = true;
      log.info("kafka listener stopped", { reason: why, connections: kafka.connections() });
      kafka.stop();
    };
    cleanups.push(() => stopKafka("shutdown"));
    kafkaAddr = advertisedKafka(cfg, kafka.port, kafkaHost.host);
    // Through the Raft leader (this broker, or forwarded); resolves once applied here.
    await cluster.registerBroker({
      nodeId: meta.nodeId,
      host: kafkaAddr.host,
      kafkaPort: kafkaAddr.port,
      httpPort: server.port ?? cfg.httpAddr.port,
      uncleanLogs: partitions.uncleanLogs(MAX_UNCLEAN_LOGS),
    });
    // Runs early on shutdown: leadership moves away before anything closes.
    cleanups.push(() => cluster.leave());
    // Before that: partition leadership moves to in-sync replicas (controlled shutdown).
    cleanups.push(async () => {
      replication.beginLeaving();
      const moved = await session.shutdown(cfg.controlledShutdownMs);
      replication.stopFetching();
      log.info("controlled shutdown", { leadership_moved: moved });
      // Nothing is led here any more: closing the clients' connections now sends them to the new
      // leaders at once, instead of after the Raft hand-off below (librdkafka asks for metadata
      // as soon as a broker goes down, but after NOT_LEADER_OR_FOLLOWER only at its
      // topic.metadata.refresh.fast.interval.ms).
      if (moved) stopKafka("leadership moved");
    });
    // A registered broker starts fenced: the controller unfences it once it has caught up on
    // the metadata, and elects it where it is the partitions' leader; only then may it lead.
    session.start();
    await Promise.race([session.unfenced, Bun.sleep(15_000)]);
    if (session.fenced) log.warn("the controller has not unfenced this broker yet", {});
    await partitions.settled(10_000);

    const groups = new GroupService(partitions, meta, log.child({ component: "groups" }), {
      initialRebalanceDelayMs: cfg.groupInitialRebalanceDelayMs,
    });
    await groups.start();
    late.groups = groups;
    groupsStarted.resolve();
    cluster.onGroupList(() => localGroups(groups));
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
      dataDir: cfg.dataDir,
      log,
      partitions,
      meta,
      groups,
      metrics,
      cluster,
      isReady: () => ready,
      stop: async () => {
        ready = false;
        await undo();
      },
    };
    http.app = createHttpApp(broker, {
      token: cfg.httpToken,
      passwords: security.passwords,
      authorizer: kafkaCtx.authorizer,
      maxBodyBytes: limits.httpMaxBodyBytes,
      queuedMaxBodyBytes: limits.httpQueuedMaxBodyBytes,
      metrics: broker.metrics,
      closing: closing.signal,
      remote,
    });
    warnIfExposed(cfg.httpAddr, cfg.httpToken, log);
    const metricsServer = cfg.metricsAddr
      ? serveMetrics(cfg.metricsAddr, http.app, cfg.httpToken)
      : undefined;
    if (metricsServer) cleanups.push(() => metricsServer.stop(true));
    ready = true;
    log.info("broker started", {
      node_id: meta.nodeId,
      cluster_id: meta.clusterId,
      version: VERSION,
      data_dir: cfg.dataDir,
      http: `${cfg.httpAddr.host}:${server.port}`,
      kafka: `${cfg.kafkaAddr.host}:${kafka.port}`,
      kafka_security_protocol: security.protocol,
      cluster: `${cfg.clusterAddr.host}:${cluster.port}`,
      // off, mutual (--cluster-tls-ca), on (--cluster-tls-cert), auto (the Kafka certificate)
      cluster_tls: clusterTls === undefined
        ? "off"
        : clusterTls.mode === "verified"
        ? "on"
        : clusterTls.mode,
      ...(metricsServer ? { metrics: `${cfg.metricsAddr!.host}:${metricsServer.port}` } : {}),
      // What clients are told, and why: a wrong one shows up as clients that bootstrap, then hang.
      advertised_kafka: `${kafkaAddr.host}:${kafkaAddr.port}`,
      advertised_from: cfg.advertiseKafkaAddr ? "advertise-kafka-addr" : kafkaHost.from,
      partitions: partitions.partitions().length,
      flush: cfg.flush.kind === "always" ? "always" : `interval:${cfg.flush.ms}`,
      // "js" means the native CRC-32C addon could not be loaded (e.g. a noexec temp dir).
      crc32c: crc32cIsNative ? "native" : "js",
      start_ms: Math.round(performance.now() - started),
    });
    return broker;
  } catch (e) {
    await undo().catch(() => {});
    throw e;
  }
}

/** Paths the --metrics-addr listener serves. */
const METRICS_PATHS = new Set(["/metrics", "/healthz", "/readyz"]);

/**
 * --metrics-addr: /metrics (and the probes) on a listener of their own, without the HTTP token,
 * so Prometheus needs no secret; bind it to an internal interface. Everything else is a 404.
 */
function serveMetrics(
  addr: HostPort,
  app: { fetch: (req: Request) => Response | Promise<Response> },
  token: string | undefined,
): ReturnType<typeof Bun.serve> {
  // Through the app, with its token: on this listener, reaching it is what grants access.
  const headers = token ? { authorization: `Bearer ${token}` } : undefined;
  try {
    return Bun.serve({
      hostname: addr.host,
      port: addr.port,
      fetch: (req) => {
        const url = new URL(req.url);
        if (req.method !== "GET" || !METRICS_PATHS.has(url.pathname)) {
          return Response.json({
            error_code: 40400,
            message: "this listener serves only GET /metrics, /healthz and /readyz",
          }, { status: 404 });
        }
        return app.fetch(new Request(req.url, { method: "GET", headers }));
      },
    });
  } catch (e) {
    throw new StartupError(
      `cannot listen for metrics on ${addr.host}:${addr.port}: ${listenFailure(e)}`,
    );
  }
}

/** Static settings DescribeConfigs reports for the broker resource (read-only: they are flags). */
function brokerSettings(
  cfg: BrokerConfig,
  meta: MetadataStore,
  limits: ReturnType<typeof frontDoorLimits>,
): BrokerSetting[] {
  const row = (name: string, value: string, dflt: string, typeCode: number, doc: string) => ({
    name,
    value,
    defaultValue: dflt,
    typeCode,
    doc,
  });
  return [
    row("broker.id", String(cfg.nodeId ?? 0), "0", 3, "this broker's node id (--node-id)"),
    row(
      "auto.create.topics.enable",
      String(cfg.autoCreateTopics),
      "true",
      1,
      "whether Metadata creates unknown topics (--auto-create-topics)",
    ),
    row("num.partitions", String(cfg.numPartitions), "1", 3, "partitions of auto-created topics"),
    {
      name: "default.replication.factor",
      get value() {
        return String(meta.defaultReplicationFactor());
      },
      get defaultValue() {
        return String(meta.automaticReplicationFactor());
      },
      typeCode: 3,
      doc: "replication factor of topics created without one (default: min(3, live brokers))",
    },
    row(
      "group.initial.rebalance.delay.ms",
      String(cfg.groupInitialRebalanceDelayMs),
      "3000",
      3,
      "how long a new group waits for more members",
    ),
    row(
      "socket.request.max.bytes",
      String(Math.min(DEFAULT_LIMITS.maxRequestBytes, limits.queuedMaxRequestBytes)),
      String(DEFAULT_LIMITS.maxRequestBytes),
      3,
      "largest request frame accepted",
    ),
    row(
      "queued.max.request.bytes",
      String(limits.queuedMaxRequestBytes),
      String(DEFAULT_QUEUED_MAX_REQUEST_BYTES),
      5,
      "request bytes held in memory across all connections (--queued-max-request-bytes)",
    ),
    row(
      "max.connections",
      String(limits.maxConnections),
      String(DEFAULT_MAX_CONNECTIONS),
      3,
      "connections at once (--max-connections; lowered at start to leave descriptors free)",
    ),
    row(
      "max.connections.per.ip",
      String(limits.maxConnectionsPerIp),
      String(DEFAULT_MAX_CONNECTIONS_PER_IP),
      3,
      "connections at once from one address (--max-connections-per-ip)",
    ),
    row(
      "connections.max.idle.ms",
      String(limits.connectionsMaxIdleMs),
      String(DEFAULT_CONNECTIONS_MAX_IDLE_MS),
      5,
      "a connection without a request this long is closed (--connections-max-idle-ms)",
    ),
  ];
}
