// The cluster service of one broker: the IO shell that runs the Raft metadata quorum and SWIM
// gossip on the cluster port. It learns or creates the cluster identity (bootstrap or --join)
// and its join token, gives MetadataStore a RaftMetadataLog, promotes learners while the quorum
// is short of voters, sends the few requests a non-leader cannot serve (add-learner, broker
// registration, forwarded metadata writes, node removal) to the leader, and reports members and
// quorum for `GET /cluster`. Every peer proves the join token (handshake.ts); requests are
// served by what the connection proved: a node id acts only for itself.
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join as pathJoin } from "node:path";
import type { Logger } from "../log.ts";
import { ensureIdentity, IdentityError, isValidClusterId } from "../meta/index.ts";
import { META_PROPERTIES, parseMetaProperties } from "../meta/identity.ts";
import type { LogEntry, MetadataLog, MetaDb } from "../meta/index.ts";
import { MetaError } from "../meta/errors.ts";
import { ErrorCode, type ErrorCodeName } from "../protocol/kafka/error-codes.ts";
import { type MetadataRecord, parseRecord } from "../meta/records.ts";
import { SqliteMetadataStateMachine } from "./metadata-state-machine.ts";
import { RaftStorageError, SqliteRaftStorage } from "./raft-storage-sqlite.ts";
import {
  ClusterKey,
  generateToken,
  readTokenFile,
  TOKEN_FILE,
  TokenFileError,
  writeTokenFile,
} from "./auth.ts";
import { emptyState } from "./raft/bootstrap.ts";
import { nextMembershipChange, type VoterTarget } from "./raft/controller.ts";
import { RaftError, RaftMetadataLog } from "./raft/metadata-log.ts";
import { RaftNode } from "./raft/node.ts";
import type { RaftTransport } from "./raft/storage.ts";
import {
  DEFAULT_OPTIONS as RAFT_DEFAULTS,
  NONE,
  type PersistedState,
  type RaftOptions,
  type Role,
} from "./raft/types.ts";
import { decodeSwim, encodeSwim } from "./swim/codec.ts";
import type { SwimConfig } from "./swim/config.ts";
import { SwimNode } from "./swim/node.ts";
import type { MemberAddrs, MemberState, SwimOutput } from "./swim/types.ts";
import {
  AuthError,
  type CallAnswer,
  ClusterNet,
  clusterRequest,
  type RequestFrom,
  splitAddr,
  TlsMismatchError,
} from "./transport.ts";
import { PeerLink } from "./peer-link.ts";
import type { ClusterTls } from "./tls.ts";

/**
 * Redirects a leader-only request follows: joiner → seed → leader, or → stale leader → new
 * leader. The requester itself goes to the leader it is pointed at, so the leader sees the
 * requester's own proven node id (a member never speaks for another).
 */
const MAX_HOPS = 2;
/** Metadata writes a broker that is not the leader passes on to it (topic, user and ACL admin). */
const FORWARDED_RECORDS: ReadonlySet<string> = new Set([
  "TopicCreated",
  "TopicDeleted",
  "PartitionsCreated",
  "TopicConfigChanged",
  "UserScramCredentialSet",
  "UserScramCredentialDeleted",
  "AclCreated",
  "AclDeleted",
]);
/** How long a forwarded write waits to be applied here after the leader committed it. */
const FORWARD_APPLY_TIMEOUT_MS = 10_000;

/** What a partition's leader tells other brokers about it. */
export interface PartitionStats {
  partition: number;
  logStartOffset: number;
  highWatermark: number;
  sizeBytes: number;
  /** The leader's log end (absent in answers of brokers from before replica views). */
  logEndOffset?: number;
  /** The leader's view of each follower (absent as above; empty for a single replica). */
  followers?: FollowerPosition[];
}

/** One follower as its partition's leader sees it. */
export interface FollowerPosition {
  id: number;
  /** The follower's log end from its last fetch, -1 when it has not fetched from this leader. */
  logEnd: number;
  /** Milliseconds since it last had everything the leader had (0 while it does). */
  caughtUpAgoMs: number;
}

/** One group as GET /groups lists it. */
export interface GroupRow {
  group_id: string;
  state: string;
  protocol_type: string;
  members: number;
}

function isGroupRow(v: unknown): v is GroupRow {
  const o = v as Record<string, unknown> | null;
  return o !== null && typeof o === "object" && typeof o.group_id === "string" &&
    typeof o.state === "string" && typeof o.protocol_type === "string" &&
    Number.isSafeInteger(o.members);
}

function isFollowerPosition(v: unknown): v is FollowerPosition {
  const o = v as Record<string, unknown> | null;
  return o !== null && typeof o === "object" &&
    ["id", "logEnd", "caughtUpAgoMs"].every((k) => Number.isSafeInteger(o[k]));
}

function isPartitionStats(v: unknown): v is PartitionStats {
  const o = v as Record<string, unknown> | null;
  return o !== null && typeof o === "object" &&
    ["partition", "logStartOffset", "highWatermark", "sizeBytes"].every((k) =>
      Number.isSafeInteger(o[k])
    ) &&
    (o.logEndOffset === undefined || Number.isSafeInteger(o.logEndOffset)) &&
    (o.followers === undefined ||
      (Array.isArray(o.followers) && o.followers.length <= 1000 &&
        o.followers.every(isFollowerPosition)));
}

export class ClusterError extends Error {
  override readonly name = "ClusterError";
  readonly userFacing = true;
}

/** One line for a joiner without the token. */
export const NO_JOIN_TOKEN = "--join needs the cluster's join token: give --join-token TOKEN, " +
  "BROKER_JOIN_TOKEN or join-token in the config file (print it on a member with " +
  "`broker cluster join-token --data-dir DIR`)";

export interface ClusterServiceOptions {
  dataDir: string;
  listen: { host: string; port: number };
  /** Host other brokers reach this one on (default: the listen host, or hostname()). */
  advertiseHost?: string;
  join?: { host: string; port: number };
  nodeId?: number;
  voters: VoterTarget;
  log: Logger;
  raft?: Partial<Omit<RaftOptions, "id">>;
  swim?: Partial<SwimConfig>;
  /** How long a fresh joiner keeps trying its seed (default 30 s). */
  joinTimeoutMs?: number;
  /**
   * The cluster's join token (--join-token). A joiner needs it; a bootstrap broker uses it for a
   * new cluster instead of generating one. Either way it is kept in the data dir.
   */
  joinToken?: string;
  /** --cluster-tls-*: the cluster port speaks TLS only, in and out (tls.ts). */
  tls?: ClusterTls;
}

export interface MemberStatus {
  id: number;
  addresses: MemberAddrs;
  state: MemberState;
  incarnation: number;
}

export interface QuorumStatus {
  voters: number[];
  learners: number[];
  /** -1 while no leader is known. */
  leader: number;
  term: number;
  commitIndex: number;
  appliedIndex: number;
  role: Role;
}

export interface ClusterStatus {
  clusterId: string;
  nodeId: number;
  address: string;
  members: MemberStatus[];
  quorum: QuorumStatus;
}

const RPC_TIMEOUT_MS = 3000;
const MAX_ADDR = 255;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const now = () => performance.now();

function isNodeId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= 0x7fffffff;
}

function validAddr(v: unknown): v is string {
  return typeof v === "string" && v.length <= MAX_ADDR && splitAddr(v) !== undefined;
}

function formatAddr(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function recordedIdentity(dataDir: string): { clusterId: string; nodeId: number } | undefined {
  const p = pathJoin(dataDir, META_PROPERTIES);
  if (!existsSync(p)) return undefined;
  return parseMetaProperties(readFileSync(p, "utf8"), p);
}

export class ClusterService {
  readonly clusterId: string;
  readonly nodeId: number;
  /** This broker's cluster address as others reach it. */
  readonly address: string;
  readonly #o: ClusterServiceOptions;
  readonly #net: ClusterNet;
  readonly #storage: SqliteRaftStorage;
  readonly #log: Logger;
  readonly #joining: boolean;
  readonly #seed: string | undefined;
  /** Last known cluster address of each node (hello frames, gossip, join requests). */
  readonly #peers = new Map<number, string>();
  /** Ids handed to joiners recently, so two joiners asking here get different ones. */
  readonly #reserved = new Set<number>();
  #db: MetaDb | undefined;
  #metadataChanged: ((record: MetadataRecord | null) => void) | undefined;
  #statsProvider: ((topic: string, partitions: number[]) => PartitionStats[]) | undefined;
  #groupsProvider: (() => GroupRow[]) | undefined;
  #raft: RaftMetadataLog | undefined;
  #raftHandler: ((m: unknown) => void) | undefined;
  #swim: SwimNode | undefined;
  #swimTimer: ReturnType<typeof setTimeout> | undefined;
  #promoting = false;
  readonly #callHandlers = new Map<
    string,
    (from: number, body: unknown, tail: Uint8Array) => Promise<CallAnswer>
  >();
  readonly #peerClosed: ((id: number) => void)[] = [];
  #authWarnedAt = -Infinity;
  #tlsMismatchWarnedAt = -Infinity;
  #beforeRegister: ((nodeId: number, body: Record<string, unknown>) => Promise<void>) | undefined;
  #savedIncarnation = 0;
  #lastRole = "";
  #closed = false;

  private constructor(
    o: ClusterServiceOptions,
    net: ClusterNet,
    ids: { clusterId: string; nodeId: number; address: string; joining: boolean },
    key: ClusterKey,
  ) {
    this.#o = o;
    this.#net = net;
    this.#log = o.log;
    this.clusterId = ids.clusterId;
    this.nodeId = ids.nodeId;
    this.address = ids.address;
    this.#joining = ids.joining;
    this.#seed = o.join ? formatAddr(o.join.host, o.join.port) : undefined;
    this.#storage = new SqliteRaftStorage(o.dataDir);
    try {
      const saved = JSON.parse(this.#storage.getKv("peers") ?? "{}") as Record<string, unknown>;
      for (const [k, v] of Object.entries(saved)) {
        if (isNodeId(Number(k)) && validAddr(v)) this.#peers.set(Number(k), v);
      }
    } catch { /* a damaged hint table only costs a slower reconnect */ }
    this.#peers.set(this.nodeId, this.address);
    net.setIdentity({ clusterId: this.clusterId, nodeId: this.nodeId, addr: this.address }, key);
    net.setHandlers({
      onRaft: (m) => this.#raftHandler?.(m),
      onPeer: (id, addr) => this.#learnPeer(id, addr),
      onSwim: (bytes, from, sender) => this.#onSwim(bytes, from, sender),
      onRequest: (method, body, from) => this.#onRequest(method, body, from),
      onAuthFailure: (what) => {
        // At most one line per 10 s: a stranger knocking should not flood the log.
        if (now() - this.#authWarnedAt < 10_000) return;
        this.#authWarnedAt = now();
        this.#log.warn("cluster authentication failed", { detail: what.slice(0, 300) });
      },
      onTlsMismatch: (what) => {
        // The cluster cannot form or heal like this: an error, once per 10 s.
        if (now() - this.#tlsMismatchWarnedAt < 10_000) return;
        this.#tlsMismatchWarnedAt = now();
        this.#log.error(`cluster TLS mismatch: ${what}`, {});
      },
      onCall: (from, method, body, tail) => {
        const h = this.#callHandlers.get(method);
        if (h === undefined || this.#closed) {
          return Promise.reject(new Error(`unknown call ${method.slice(0, 40)}`));
        }
        return h(from, body, tail);
      },
      onPeerClosed: (id) => {
        this.#raft?.hintPeerGone(id);
        for (const fn of this.#peerClosed) fn(id);
      },
    });
  }

  /**
   * Binds the cluster port and settles this broker's identity: a bootstrap broker records (or
   * reuses) its own cluster id; a joiner asks its seed for the cluster id (and a node id when
   * none is given or recorded) and refuses a data dir of another cluster.
   */
  static async start(o: ClusterServiceOptions): Promise<ClusterService> {
    let net: ClusterNet;
    try {
      net = await ClusterNet.bind(o.listen.host, o.listen.port, o.tls);
    } catch (e) {
      throw new ClusterError(
        `cannot listen for cluster traffic on ${formatAddr(o.listen.host, o.listen.port)}: ${
          (e as Error).message
        }`,
      );
    }
    try {
      const wildcard = o.listen.host === "0.0.0.0" || o.listen.host === "::";
      const host = o.advertiseHost ?? (wildcard ? hostname() : o.listen.host);
      const address = formatAddr(host, net.port);
      const recorded = recordedIdentity(o.dataDir);
      const stored = readTokenFile(o.dataDir);
      if (o.joinToken !== undefined && stored !== undefined && o.joinToken !== stored) {
        throw new ClusterError(
          `the join token given differs from the one this data dir holds ` +
            `(${pathJoin(o.dataDir, TOKEN_FILE)}); give that one, or none`,
        );
      }
      if (o.join === undefined) {
        const id = ensureIdentity(o.dataDir, { nodeId: o.nodeId });
        let token = o.joinToken ?? stored;
        if (token === undefined) {
          token = generateToken();
          o.log.info("generated the cluster's join token", {
            file: pathJoin(o.dataDir, TOKEN_FILE),
            print: "broker cluster join-token --data-dir DIR",
          });
        }
        if (stored === undefined) writeTokenFile(o.dataDir, token);
        return new ClusterService(
          o,
          net,
          { ...id, address, joining: false },
          new ClusterKey(token),
        );
      }
      const token = o.joinToken ?? stored;
      if (token === undefined) throw new ClusterError(NO_JOIN_TOKEN);
      const key = new ClusterKey(token);
      const seed = formatAddr(o.join.host, o.join.port);
      const nodeId = o.nodeId ?? recorded?.nodeId;
      const answer = await ClusterService.#handshake(key, seed, nodeId, address, {
        timeoutMs: recorded ? 5000 : (o.joinTimeoutMs ?? 30_000),
        tls: o.tls,
      });
      if (answer === undefined) {
        if (recorded === undefined) throw new ClusterError(`cannot join through ${seed}`);
        // A restart whose seed is gone: the recorded identity and Raft state are enough.
        o.log.warn("join seed did not answer; rejoining with the recorded identity", { seed });
      } else if (recorded !== undefined && recorded.clusterId !== answer.clusterId) {
        throw new ClusterError(
          `data dir ${o.dataDir} belongs to cluster ${recorded.clusterId}, but ${seed} is a ` +
            `member of cluster ${answer.clusterId}; use an empty --data-dir to join it`,
        );
      }
      const clusterId = answer?.clusterId ?? recorded!.clusterId;
      const id = ensureIdentity(o.dataDir, {
        nodeId: nodeId ?? answer?.nodeId,
        expectedClusterId: clusterId,
      });
      // The token the seed accepted (or, on a restart whose seed is gone, the one given).
      if (stored === undefined) writeTokenFile(o.dataDir, token);
      const svc = new ClusterService(o, net, { ...id, address, joining: true }, key);
      for (const [pid, addr] of answer?.peers ?? []) svc.#learnPeer(pid, addr);
      return svc;
    } catch (e) {
      net.close();
      if (
        e instanceof IdentityError || e instanceof RaftStorageError || e instanceof TokenFileError
      ) {
        throw new ClusterError(e.message);
      }
      throw e;
    }
  }

  static async #handshake(
    key: ClusterKey,
    seed: string,
    nodeId: number | undefined,
    addr: string,
    { timeoutMs, tls }: { timeoutMs: number; tls: ClusterTls | undefined },
  ): Promise<{ clusterId: string; nodeId: number; peers: [number, string][] } | undefined> {
    const deadline = now() + timeoutMs;
    for (;;) {
      try {
        // The join proves the token only: the node id is not ours until the seed agrees.
        const r = await clusterRequest(
          seed,
          "join",
          { nodeId: nodeId ?? null, addr },
          RPC_TIMEOUT_MS,
          {
            key,
            clusterId: null,
            nodeId: null,
            addr: null,
            session: "request",
            tls,
          },
        );
        const o = r as Record<string, unknown>;
        if (!isValidClusterId(o?.clusterId) || !isNodeId(o.nodeId) || !Array.isArray(o.peers)) {
          throw new ClusterError(`${seed} gave a malformed join answer`);
        }
        const peers = (o.peers as unknown[]).filter((p): p is [number, string] =>
          Array.isArray(p) && isNodeId(p[0]) && validAddr(p[1])
        );
        return { clusterId: o.clusterId, nodeId: o.nodeId, peers };
      } catch (e) {
        if (e instanceof ClusterError) throw e;
        if (e instanceof TlsMismatchError) {
          throw new ClusterError(
            `cannot join through ${seed}: ${e.message.replace(/^join to \S+: /, "")}`,
          );
        }
        if (e instanceof AuthError) {
          throw new ClusterError(
            `cannot join through ${seed}: ${
              e.message.replace(/^join to \S+: /, "")
            } (is --join-token that cluster's token? print it on a member with ` +
              "`broker cluster join-token --data-dir DIR`)",
          );
        }
        if (now() > deadline) return undefined;
        await sleep(300);
      }
    }
  }

  get port(): number {
    return this.#net.port;
  }

  /**
   * Whether gossip counts the broker out (dead or left). Placement skips such brokers, so a new
   * topic gets no partitions on a broker that is down; unknown ids (gossip not caught up) count in.
   */
  memberDown(nodeId: number): boolean {
    if (nodeId === this.nodeId) return false;
    const state = this.#swim?.member(nodeId)?.state;
    return state === "dead" || state === "left";
  }

  /** Serves other brokers' questions about the partitions this one leads (offsets, size). */
  onPartitionStats(fn: (topic: string, partitions: number[]) => PartitionStats[]): void {
    this.#statsProvider = fn;
  }

  /**
   * Offsets and size of partitions led by `nodeId` (this broker or, over the cluster port,
   * another): for views that list a whole topic or group. Empty when it does not answer in 1 s.
   */
  async partitionStats(nodeId: number, topic: string, partitions: number[]) {
    if (nodeId === this.nodeId) return this.#statsProvider?.(topic, partitions) ?? [];
    const addr = this.#peerAddr(nodeId);
    if (addr === undefined || partitions.length === 0) return [];
    try {
      const r = await this.#net.request(
        addr,
        "partitionStats",
        { topic, partitions },
        1000,
        nodeId,
      );
      return Array.isArray(r) ? (r as unknown[]).filter(isPartitionStats) : [];
    } catch {
      return [];
    }
  }

  /** Serves other brokers' question: the groups this broker coordinates. */
  onGroupList(fn: () => GroupRow[]): void {
    this.#groupsProvider = fn;
  }

  /** The groups `nodeId` coordinates (this broker, or asked over the cluster port; [] after 1 s). */
  async groupList(nodeId: number): Promise<GroupRow[]> {
    if (nodeId === this.nodeId) return this.#groupsProvider?.() ?? [];
    const addr = this.#peerAddr(nodeId);
    if (addr === undefined) return [];
    try {
      const r = await this.#net.request(addr, "groupList", {}, 1000, nodeId);
      return Array.isArray(r) ? (r as unknown[]).filter(isGroupRow) : [];
    } catch {
      return [];
    }
  }

  /**
   * The controller's step before a registration is appended (fence the old incarnation), given
   * the register call's body (unvalidated: what the broker says of its logs).
   */
  onBeforeRegister(fn: (nodeId: number, body: Record<string, unknown>) => Promise<void>): void {
    this.#beforeRegister = fn;
  }

  /** Serve calls of `method` from identified peers (replica fetches, controller sessions). */
  handleCall(
    method: string,
    fn: (from: number, body: unknown, tail: Uint8Array) => Promise<CallAnswer>,
  ): void {
    this.#callHandlers.set(method, fn);
  }

  /** Called when a connection from a peer closes (a hint for the controller's sessions). */
  onPeerClosed(fn: (id: number) => void): void {
    this.#peerClosed.push(fn);
  }

  /** A dedicated identified connection to `nodeId` (undefined while its address is unknown). */
  link(nodeId: number): PeerLink | undefined {
    const addr = this.#peerAddr(nodeId);
    if (addr === undefined) return undefined;
    return new PeerLink(addr, () => this.#closed ? undefined : this.#net.clientAuth(nodeId));
  }

  /** The current cluster address of `nodeId`, if known. */
  peerAddress(nodeId: number): string | undefined {
    return this.#peerAddr(nodeId);
  }

  /** Voters and learners of the metadata quorum (1: a lone broker). */
  /** Whether `id` holds a connection to this broker now (see ClusterNet.peerConnected). */
  peerConnected(id: number): boolean {
    return this.#net.peerConnected(id);
  }

  /** The metadata quorum's base election timeout (Raft `electionMs`), as this broker runs it. */
  get electionMs(): number {
    return this.#o.raft?.electionMs ?? RAFT_DEFAULTS.electionMs;
  }

  quorumSize(): number {
    const c = this.#raft?.node.config;
    return c === undefined ? 0 : c.voters.length + c.learners.length;
  }

  /**
   * Whether this broker still leads the metadata quorum, confirmed by a majority now (a Raft
   * read-index round), not just remembered: a controller paused past an election believes it
   * leads until it hears otherwise. False when the round fails or takes over `timeoutMs`.
   */
  async confirmController(timeoutMs: number): Promise<boolean> {
    const raft = this.#raft;
    if (raft === undefined || !this.isController()) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      const ok = await Promise.race([raft.readBarrier().then(() => true, () => false), expired]);
      return ok && this.isController();
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether this broker leads the metadata quorum (and so runs the controller). */
  isController(): boolean {
    return this.#raft?.node.role === "leader";
  }

  /** The Raft term, which names a controller's reign (sessions start afresh with each). */
  controllerTerm(): number {
    return this.#raft?.node.term ?? 0;
  }

  /** Metadata entries applied here. */
  appliedIndex(): number {
    return this.#raft?.appliedIndex() ?? 0;
  }

  /** The commit index this broker knows of (a broker is caught up when it applied this). */
  commitIndex(): number {
    return this.#raft?.node.commit ?? 0;
  }

  /** Controller only: append a record and resolve once committed and applied here. */
  async appendAsController(r: MetadataRecord): Promise<number> {
    const raft = this.#raft;
    if (raft === undefined || raft.node.role !== "leader") {
      throw new MetaError("NOT_CONTROLLER", `broker ${this.nodeId} is not the controller`);
    }
    return await raft.append(r);
  }

  /** The metadata quorum's leader (the controller Kafka clients are told), or -1 if unknown. */
  controllerId(): number {
    return this.#raft?.node.leader ?? NONE;
  }

  /**
   * Call `fn` whenever committed metadata changed the tables here (any broker's writes), with the
   * record, or null when a snapshot replaced the tables.
   */
  onMetadataChanged(fn: (record: MetadataRecord | null) => void): void {
    this.#metadataChanged = fn;
  }

  /**
   * `fn` frees space when a metadata write finds the disk full (the broker's space reserve);
   * true if it did, and the write is retried at once.
   */
  onDiskFull(fn: () => boolean): void {
    this.#diskFull = fn;
  }

  #diskFull: () => boolean = () => false;

  /** The `log` option of MetadataStore.open: the Raft log over this broker's meta.db. */
  metadataLog(db: MetaDb): MetadataLog {
    this.#db = db;
    const sm = new SqliteMetadataStateMachine(db, (r) => this.#metadataChanged?.(r));
    let state: PersistedState;
    if (!this.#storage.isEmpty()) {
      state = this.#storage.load();
      // The tables behind the log's snapshot (meta.db rebuilt after it was lost or damaged):
      // start them from the snapshot; the entries after it are applied again as committed.
      if (state.snapshot !== undefined && sm.appliedIndex() < state.snapshot.meta.index) {
        sm.restore(state.snapshot);
      }
    } else if (this.#joining) state = emptyState();
    else {
      // Bootstrap a one-voter quorum from whatever the tables hold (a data dir written by the
      // local log keeps its history: the snapshot sits at its applied index).
      const index = Math.max(1, sm.appliedIndex());
      const term = Math.max(1, sm.appliedTerm());
      const snapshot = {
        meta: { index, term, config: { voters: [this.nodeId], learners: [] } },
        data: sm.snapshot(),
      };
      state = { hardState: { term, vote: NONE, commit: index }, snapshot, entries: [] };
      void this.#storage.save(state.hardState, [], snapshot, true);
      if (sm.appliedIndex() < index) sm.restore(snapshot);
    }
    const node = new RaftNode(
      { ...this.#o.raft, id: this.nodeId },
      state,
      { next: Math.random },
      now(),
      { appliedIndex: sm.appliedIndex() },
    );
    const transport: RaftTransport = {
      send: (m) => {
        const a = this.#peerAddr(m.to);
        if (a !== undefined) this.#net.sendRaft(a, m);
      },
      onMessage: (h) => {
        this.#raftHandler = h;
      },
      close: () => {},
    };
    const raft = new RaftMetadataLog(node, this.#storage, transport, sm);
    this.#raft = raft;
    raft.onReady = () => this.#afterReady();
    raft.onDiskFull = () => this.#diskFull();
    const cfg = node.config;
    if (cfg.voters.length === 1 && cfg.voters[0] === this.nodeId) raft.campaignNow();
    if (this.#joining) void this.#becomeMember();
    return {
      append: (r: MetadataRecord) => this.#appendRecord(r),
      appliedIndex: () => raft.appliedIndex(),
      read: (from: number, max: number): LogEntry[] => raft.read(from, max),
      close: () => raft.close(),
    };
  }

  /**
   * A metadata write: appended here when this broker leads the quorum, else passed to the leader,
   * which appends it (its apply checks that the record still fits), and awaited until applied
   * here, so the caller reads its own write. So topics can be created, deleted and changed
   * through any broker, over HTTP and Kafka (auto-create included).
   */
  async #appendRecord(r: MetadataRecord): Promise<number> {
    const raft = this.#raft!;
    if (raft.node.role === "leader" || !FORWARDED_RECORDS.has(r.type)) {
      return await raft.append(r).catch((e) => Promise.reject(this.#explain(e)));
    }
    let res: unknown;
    try {
      res = await this.#forward("appendRecord", { record: r });
    } catch (e) {
      // No leader known, or it did not answer: the caller gets NOT_CONTROLLER, naming the leader.
      throw this.#explain(new RaftError("not_leader", e instanceof Error ? e.message : String(e)));
    }
    const refused = (res as { refused?: { codeName?: unknown; message?: unknown } } | null)
      ?.refused;
    if (refused !== undefined) {
      const name = String(refused.codeName) as ErrorCodeName;
      throw new MetaError(
        Object.hasOwn(ErrorCode, name) ? name : "UNKNOWN_SERVER_ERROR",
        String(refused.message),
      );
    }
    if (typeof res !== "number" || !Number.isSafeInteger(res) || res <= 0) {
      throw new MetaError("UNKNOWN_SERVER_ERROR", "bad answer from the metadata leader");
    }
    const until = now() + FORWARD_APPLY_TIMEOUT_MS;
    while (raft.appliedIndex() < res) {
      if (now() > until || this.#closed) {
        throw new MetaError(
          "UNKNOWN_SERVER_ERROR",
          `the metadata leader committed entry ${res}, but this broker has not applied it yet`,
        );
      }
      await sleep(5);
    }
    return res;
  }

  /**
   * Registers this broker in the metadata (through the leader when this broker is not it) and
   * starts gossip with its addresses. Resolves once the registration is applied here.
   */
  async registerBroker(reg: {
    nodeId: number;
    host: string;
    kafkaPort: number;
    httpPort: number;
    rack?: string | null;
    /**
     * Single-replica partitions held here whose logs did not reopen clean ("topicId:partition"),
     * null when not known: the controller keeps this broker leading the others (controller-service
     * beforeRegister). Absent: none kept.
     */
    uncleanLogs?: string[] | null;
  }, timeoutMs = 30_000): Promise<void> {
    this.#startGossip({
      cluster: this.address,
      kafka: formatAddr(reg.host, reg.kafkaPort),
      http: formatAddr(reg.host, reg.httpPort),
    });
    const body = { ...reg, rack: reg.rack ?? null, clusterPort: this.port };
    const deadline = now() + timeoutMs;
    let last: unknown;
    while (now() < deadline && !this.#closed) {
      try {
        const index = await this.#forward("register", body);
        if (typeof index !== "number" || !Number.isSafeInteger(index)) throw new Error("bad index");
        while (this.#raft!.appliedIndex() < (index as number) && now() < deadline) await sleep(20);
        if (this.#raft!.appliedIndex() >= (index as number)) return;
      } catch (e) {
        last = e;
        await sleep(200);
      }
    }
    throw new ClusterError(
      `could not register with the metadata quorum in ${timeoutMs} ms: ${
        last instanceof Error ? last.message : "timed out"
      }`,
    );
  }

  /**
   * Appends a ProducerIdsAllocated record through the metadata leader (here, or forwarded) and
   * resolves with its log index once committed: the block of producer ids this broker may hand out.
   */
  async allocateProducerIdBlock(): Promise<number> {
    const index = await this.#forward("allocateProducerIds", { nodeId: this.nodeId });
    if (typeof index !== "number" || !Number.isSafeInteger(index) || index <= 0) {
      throw new Error("bad producer id block from the metadata leader");
    }
    return index;
  }

  /**
   * Removes a broker (a dead one, unless `force`) from the metadata quorum, through the leader:
   * `broker cluster remove-node`. Resolves with the quorum after the change.
   */
  async removeNode(
    nodeId: number,
    force = false,
  ): Promise<{ nodeId: number; removed: boolean; voters: number[]; learners: number[] }> {
    const r = await this.#forward("removeNode", { nodeId, force }) as Record<string, unknown>;
    const ids = (v: unknown) => Array.isArray(v) && v.every(isNodeId) ? v as number[] : undefined;
    const voters = ids(r?.voters);
    const learners = ids(r?.learners);
    if (
      r?.nodeId !== nodeId || typeof r.removed !== "boolean" || voters === undefined ||
      learners === undefined
    ) throw new Error("bad answer from the metadata leader");
    return { nodeId, removed: r.removed, voters, learners };
  }

  status(): ClusterStatus {
    const node = this.#raft?.node;
    const members: MemberStatus[] = [];
    if (this.#swim) {
      for (const m of [this.#swim.self(), ...this.#swim.members()]) {
        members.push({
          id: m.id,
          addresses: m.addrs,
          state: m.state,
          incarnation: m.incarnation,
        });
      }
    } else {
      members.push({
        id: this.nodeId,
        addresses: { cluster: this.address, kafka: "", http: "" },
        state: "alive",
        incarnation: 0,
      });
    }
    members.sort((a, b) => a.id - b.id);
    const cfg = node?.config ?? { voters: [], learners: [] };
    return {
      clusterId: this.clusterId,
      nodeId: this.nodeId,
      address: this.address,
      members,
      quorum: {
        voters: [...cfg.voters],
        learners: [...cfg.learners],
        leader: node?.leader ?? NONE,
        term: node?.term ?? 0,
        commitIndex: node?.commit ?? 0,
        appliedIndex: this.#raft?.appliedIndex() ?? 0,
        role: node?.role ?? "follower",
      },
    };
  }

  /** Graceful part of shutdown, before the metadata closes: hand over leadership, leave gossip. */
  async leave(): Promise<void> {
    const raft = this.#raft;
    if (raft && raft.node.role === "leader" && raft.node.config.voters.length > 1) {
      await this.#handOff();
    }
    if (this.#swim && !this.#closed) {
      this.#swimOutput(this.#swim.leave(now()));
      await sleep(50);
    }
  }

  /** Leader only: hands Raft leadership to another voter; true once this one no longer leads. */
  async #handOff(): Promise<boolean> {
    const raft = this.#raft!;
    if (!raft.transferLeadership()) return false;
    const until = now() + raft.node.opts.electionMs;
    while (raft.node.role === "leader" && now() < until) await sleep(20);
    return raft.node.role !== "leader";
  }

  /** Closes the port and raft.db (after MetadataStore.close closed the Raft log). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#swimTimer);
    this.#raft?.close();
    this.#net.close();
    this.#storage.close();
  }

  // ---- internals -----------------------------------------------------------------------

  #explain(e: unknown): unknown {
    if (!(e instanceof RaftError)) return e;
    if (e.reason !== "not_leader" && e.reason !== "transferring") return e;
    const leader = this.#raft?.node.leader ?? NONE;
    if (leader === NONE || leader === this.nodeId) {
      return new MetaError(
        "NOT_CONTROLLER",
        `broker ${this.nodeId} is not the metadata leader and no leader is elected right now; retry shortly`,
      );
    }
    const http = this.#swim?.member(leader)?.addrs.http;
    return new MetaError(
      "NOT_CONTROLLER",
      `broker ${this.nodeId} is not the metadata leader; send metadata writes to the leader, ` +
        `broker ${leader}${http ? ` (http ${http})` : ""} at cluster address ${
          this.#peerAddr(leader) ?? "unknown"
        }`,
    );
  }

  #learnPeer(id: number, addr: string): void {
    if (!isNodeId(id) || !validAddr(addr) || id === this.nodeId) return;
    if (this.#peers.get(id) === addr) return;
    this.#peers.set(id, addr);
    if (this.#closed) return;
    try {
      this.#storage.setKv("peers", JSON.stringify(Object.fromEntries(this.#peers)));
    } catch { /* a hint only */ }
  }

  #peerAddr(id: number): string | undefined {
    const a = this.#peers.get(id);
    if (a !== undefined) return a;
    const b = this.#db?.$client.query(
      "SELECT host, cluster_port AS port FROM brokers WHERE node_id = ?",
    ).get(id) as { host: string; port: number } | null | undefined;
    return b && b.port > 0 ? formatAddr(b.host, b.port) : undefined;
  }

  /** Leader-side policy after every Ready: promote caught-up learners; log role changes. */
  #afterReady(): void {
    const node = this.#raft!.node;
    const role = `${node.role}/${node.term}/${node.leader}`;
    if (role !== this.#lastRole) {
      this.#lastRole = role;
      this.#log.info("raft role", { role: node.role, term: node.term, leader: node.leader });
    }
    if (node.role !== "leader" || this.#promoting) return;
    const ch = nextMembershipChange({
      config: node.config,
      caughtUp: node.caughtUpLearners(),
      voters: this.#o.voters,
    });
    if (ch === undefined) return;
    this.#promoting = true;
    this.#raft!.changeMembership(ch).then(
      () => this.#log.info("quorum changed", { op: ch.op, node: ch.node }),
      () => {/* conf_pending or lost leadership: the next Ready tries again */},
    ).finally(() => this.#promoting = false);
  }

  /** A joiner asks (through its seed, which forwards) to be added as a learner, until it is. */
  async #becomeMember(): Promise<void> {
    while (!this.#closed) {
      try {
        await this.#forward("addLearner", { nodeId: this.nodeId, addr: this.address });
        return;
      } catch (e) {
        this.#log.debug("add-learner retry", { error: e });
        await sleep(500);
      }
    }
  }

  /**
   * Runs a leader-only request here when leader, else at the leader (or, while none is known
   * here, at the seed). A member that is not the leader answers with a redirect to the leader it
   * knows, and this broker asks there itself, at most MAX_HOPS times: a joiner's seed that is a
   * follower points at its leader, and a stale leader at the new one; seeds that name each other
   * cannot pass a request around for ever. The leader so always sees this broker's own proven
   * node id, never a forwarder's.
   */
  async #forward(method: string, body: unknown): Promise<unknown> {
    const node = this.#raft?.node;
    if (node?.role === "leader") return await this.#leaderRequest(method, body);
    const leader = node?.leader ?? NONE;
    let to = leader !== NONE ? this.#peerAddr(leader) : this.#seed;
    let expect: number | undefined = leader !== NONE ? leader : undefined;
    for (let hops = 0;; hops++) {
      if (to === undefined || to === this.address) throw new Error("no metadata leader known yet");
      const r = await this.#net.request(to, method, body, RPC_TIMEOUT_MS, expect);
      const redirect = (r as { redirect?: { leader?: unknown; addr?: unknown } } | null)?.redirect;
      if (redirect === undefined || redirect === null || typeof redirect !== "object") return r;
      if (hops + 1 > MAX_HOPS) throw new Error("not the leader");
      if (!isNodeId(redirect.leader) || !validAddr(redirect.addr)) {
        throw new Error("bad redirect from a member");
      }
      if (redirect.leader === this.nodeId) throw new Error("no metadata leader known yet");
      to = redirect.addr;
      expect = redirect.leader;
    }
  }

  async #leaderRequest(method: string, body: unknown): Promise<unknown> {
    const raft = this.#raft!;
    const b = body as Record<string, unknown>;
    if (method === "addLearner") {
      if (!isNodeId(b.nodeId) || !validAddr(b.addr)) throw new Error("bad addLearner request");
      this.#learnPeer(b.nodeId, b.addr);
      const c = raft.node.config;
      if (c.voters.includes(b.nodeId) || c.learners.includes(b.nodeId)) return { member: true };
      await raft.changeMembership({ op: "addLearner", node: b.nodeId });
      this.#log.info("learner added", { node: b.nodeId, addr: b.addr });
      return { member: true };
    }
    if (method === "appendRecord") {
      const rec = parseRecord(b.record);
      if (!FORWARDED_RECORDS.has(rec.type)) throw new Error(`${rec.type} is not forwarded`);
      try {
        return await raft.append(rec);
      } catch (e) {
        // The record does not fit (e.g. the topic exists by now): the caller gets the typed error.
        if (e instanceof MetaError) {
          return { refused: { codeName: e.codeName, message: e.message } };
        }
        throw e;
      }
    }
    if (method === "allocateProducerIds") {
      return await raft.append(parseRecord({ type: "ProducerIdsAllocated", nodeId: b.nodeId }));
    }
    if (method === "removeNode") return await this.#removeMember(b.nodeId, b.force === true);
    // register: the record is validated like any record from the network.
    if (isNodeId(b.nodeId)) await this.#beforeRegister?.(b.nodeId, b);
    const rec = parseRecord({
      // With a controller a broker registers fenced, to be unfenced once caught up; a bare
      // metadata quorum (tests of the Raft layer) has nobody to unfence it.
      fenced: this.#beforeRegister !== undefined,
      type: "BrokerRegistered",
      nodeId: b.nodeId,
      host: b.host,
      kafkaPort: b.kafkaPort,
      httpPort: b.httpPort,
      clusterPort: b.clusterPort,
      rack: b.rack ?? null,
      timestamp: Date.now(),
    });
    return await raft.append(rec);
  }

  /**
   * A request from the cluster port. `from.nodeId` is what the connection proved: null for a
   * joiner or an operator's tool (the token only), else a member, which acts only for itself.
   */
  async #onRequest(method: string, body: unknown, from: RequestFrom): Promise<unknown> {
    if (this.#closed) throw new Error("shutting down");
    const b = (body !== null && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const member = () => {
      if (from.nodeId === null) throw new Error(`${method} needs a member's connection`);
      return from.nodeId;
    };
    switch (method) {
      case "join": {
        // Token only (a newcomer): it is given an id, but sets no address; its own connections
        // (after it proves that id) tell its address.
        if (!validAddr(b.addr)) throw new Error("join: bad addr");
        let id = b.nodeId;
        if (id === null || id === undefined) id = this.#freeNodeId();
        if (!isNodeId(id)) throw new Error("join: bad nodeId");
        return { clusterId: this.clusterId, nodeId: id, peers: [...this.#peers] };
      }
      case "addLearner":
      case "allocateProducerIds":
      case "register": {
        // A broker asks these for itself only: the node id in the body is the proven one.
        if (b.nodeId !== member()) {
          throw new Error(`${method}: broker ${from.nodeId} cannot ask it for broker ${b.nodeId}`);
        }
        return await this.#leaderOnly(method, b);
      }
      case "appendRecord":
      case "removeNode":
        member();
        return await this.#leaderOnly(method, b);
      case "status":
        return this.status();
      case "groupList":
        member();
        return this.#groupsProvider?.() ?? [];
      case "partitionStats": {
        member();
        const ps = b.partitions;
        if (
          typeof b.topic !== "string" || b.topic.length > 249 || !Array.isArray(ps) ||
          ps.length > 100_000 || !ps.every((p) => Number.isSafeInteger(p) && p >= 0)
        ) throw new Error("bad partitionStats request");
        return this.#statsProvider?.(b.topic, ps as number[]) ?? [];
      }
      case "linearizableRead": {
        // For operators and tests: a read-index barrier, reported with the role that served it.
        if (this.#raft === undefined) throw new Error("not started");
        const index = await this.#raft.readBarrier();
        const n = this.#raft.node;
        return { index, role: n.role, term: n.term, leader: n.leader };
      }
      default:
        throw new Error(`unknown request ${JSON.stringify(method.slice(0, 40))}`);
    }
  }

  /** Served by the leader; a member that is not points the requester at the leader it knows. */
  async #leaderOnly(method: string, b: Record<string, unknown>): Promise<unknown> {
    const raft = this.#raft;
    if (raft === undefined) throw new Error("not started");
    if (raft.node.role === "leader") return await this.#leaderRequest(method, b);
    const leader = raft.node.leader;
    const addr = leader === NONE ? undefined : this.#peerAddr(leader);
    if (addr === undefined) throw new Error("no metadata leader known yet");
    return { redirect: { leader, addr } };
  }

  /**
   * Removes `id` from the metadata quorum (a dead voter or learner), here as the leader.
   * Refused for the leader itself and, unless `force`, for a broker that holds a connection to
   * this one now (it is alive: stop it first).
   */
  async #removeMember(id: unknown, force: boolean): Promise<unknown> {
    const raft = this.#raft!;
    if (!isNodeId(id)) throw new Error("removeNode: bad nodeId");
    const isMember = () => {
      const c = raft.node.config;
      return c.voters.includes(id) || c.learners.includes(id);
    };
    const quorum = (removed: boolean) => {
      const c = raft.node.config;
      return { nodeId: id, removed, voters: [...c.voters], learners: [...c.learners] };
    };
    // Idempotent: a broker that is not (or no longer) a member is simply reported so.
    if (!isMember()) return quorum(false);
    if (id === this.nodeId) {
      // Forced (a decommission of a live broker): leadership goes to another voter first, which
      // then removes this one; unforced, the operator is told how.
      if (force && raft.node.config.voters.length > 1 && await this.#handOff()) {
        return await this.#forward("removeNode", { nodeId: id, force });
      }
      throw new Error(
        `broker ${id} leads the metadata quorum and cannot remove itself; stop it (leadership ` +
          "moves to another voter) and ask again, or force the removal (leadership is handed " +
          "to another voter first)",
      );
    }
    if (!force && this.#net.peerConnected(id)) {
      throw new Error(
        `broker ${id} is alive (it holds a connection to the metadata leader); stop it first, ` +
          "or force the removal",
      );
    }
    // A membership change may be pending (a promotion): retry for a few seconds.
    const until = now() + 5000;
    for (;;) {
      try {
        await raft.changeMembership({ op: "remove", node: id });
        break;
      } catch (e) {
        if (!(e instanceof RaftError) || e.reason !== "conf_pending" || now() > until) throw e;
        if (!isMember()) break;
        await sleep(50);
      }
    }
    this.#log.info("member removed from the quorum", { node: id, forced: force });
    return quorum(true);
  }

  /**
   * A free node id for a joiner without --node-id: one above the highest id this member
   * knows of (quorum, gossip, registered brokers, ids handed out before).
   */
  #freeNodeId(): number {
    let max = this.nodeId;
    const cfg = this.#raft?.node.config;
    for (const id of [...(cfg?.voters ?? []), ...(cfg?.learners ?? [])]) max = Math.max(max, id);
    for (const id of this.#peers.keys()) max = Math.max(max, id);
    for (const id of this.#reserved) max = Math.max(max, id);
    for (const m of this.#swim?.members() ?? []) max = Math.max(max, m.id);
    const rows = this.#db?.$client.query("SELECT max(node_id) AS m FROM brokers").get() as
      | { m: number | null }
      | undefined;
    max = Math.max(max, rows?.m ?? 0);
    this.#reserved.add(max + 1);
    return max + 1;
  }

  #startGossip(addrs: MemberAddrs): void {
    if (this.#swim || this.#closed) return;
    const inc = (Number(this.#storage.getKv("swim.incarnation") ?? "0") || 0) + 1;
    this.#storage.setKv("swim.incarnation", String(inc));
    this.#savedIncarnation = inc;
    this.#swim = new SwimNode({
      id: this.nodeId,
      addrs,
      rng: { next: Math.random },
      config: this.#o.swim,
      incarnation: inc,
      nowMs: now(),
    });
    // Any member will do as a seed: the --join one, else the peers this data dir knew.
    const seeds = new Set<string>();
    if (this.#seed) seeds.add(this.#seed);
    for (const [id, a] of this.#peers) if (id !== this.nodeId) seeds.add(a);
    this.#swimOutput(seeds.size > 0 ? this.#swim.join([...seeds], now()) : this.#swim.tick(now()));
  }

  #onSwim(bytes: Uint8Array, fromAddr: string, sender: number): void {
    if (this.#swim === undefined || this.#closed) return;
    let msg;
    try {
      msg = decodeSwim(bytes);
    } catch {
      return; // hostile or garbled: gossip tolerates loss
    }
    // The envelope's MAC covers its sender: a member speaks only for itself.
    if (msg.from !== sender) return;
    this.#swimOutput(this.#swim.receive(msg, now(), validAddr(fromAddr) ? fromAddr : undefined));
  }

  #swimOutput(out: SwimOutput): void {
    const swim = this.#swim;
    if (swim === undefined || this.#closed) return;
    for (const o of out.send) {
      try {
        this.#net.sendSwim(o.to, encodeSwim(o.msg));
      } catch { /* an unencodable message is a bug in the core; skip it, gossip repeats */ }
    }
    for (const ev of out.events) {
      const m = ev.member;
      if (ev.type === "alive" || ev.type === "address-changed") {
        this.#learnPeer(m.id, m.addrs.cluster);
      }
      this.#log.info(`member ${ev.type}`, { member: m.id, incarnation: m.incarnation });
    }
    if (swim.incarnation > this.#savedIncarnation) {
      this.#savedIncarnation = swim.incarnation;
      this.#storage.setKv("swim.incarnation", String(swim.incarnation));
    }
    clearTimeout(this.#swimTimer);
    const wait = Math.min(1000, Math.max(0, swim.nextDeadline() - now()));
    this.#swimTimer = setTimeout(() => this.#swimOutput(swim.tick(now())), wait);
  }
}
