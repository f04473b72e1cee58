// The data dir's identity: which cluster it belongs to and which node wrote it, recorded in
// <dataDir>/meta.properties in Kafka's format so a broker never serves another node's or
// another cluster's data by mistake (a wrong --data-dir or --node-id is refused at start).
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { IdentityError } from "./errors.ts";

export interface Identity {
  clusterId: string;
  nodeId: number;
  /** True when this call created the file (first start of this data dir). */
  created: boolean;
}

export interface IdentityOptions {
  /** The --node-id flag; undefined = take the recorded one, or 0 on first start. */
  nodeId?: number;
  /** The cluster this broker must belong to (e.g. learned through --join). */
  expectedClusterId?: string;
}

export const META_PROPERTIES = "meta.properties";
const CLUSTER_ID = /^[A-Za-z0-9_-]{21}[AQgw]$/;

/** A new cluster id like Kafka's: a random UUID as 22 chars of unpadded base64url. */
export function newClusterId(): string {
  for (;;) {
    const hex = randomUUID().replaceAll("-", "");
    const id = Buffer.from(hex, "hex").toString("base64url");
    // Kafka avoids ids starting with '-' so they are never mistaken for a CLI flag.
    if (!id.startsWith("-")) return id;
  }
}

export function isValidClusterId(id: unknown): id is string {
  return typeof id === "string" && CLUSTER_ID.test(id);
}

function isValidNodeId(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 2147483647;
}

/** Parses meta.properties text; throws IdentityError on anything malformed. */
export function parseMetaProperties(
  text: string,
  where: string,
): { clusterId: string; nodeId: number } {
  const props = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const l = line.trim();
    if (l === "" || l.startsWith("#")) continue;
    const eq = l.indexOf("=");
    if (eq <= 0) {
      throw new IdentityError(`${where}: malformed line ${JSON.stringify(l.slice(0, 80))}`);
    }
    props.set(l.slice(0, eq).trim(), l.slice(eq + 1).trim());
  }
  const version = props.get("version");
  if (version !== "1") {
    throw new IdentityError(`${where}: unsupported version ${JSON.stringify(version)}`);
  }
  const clusterId = props.get("cluster.id");
  if (!isValidClusterId(clusterId)) {
    throw new IdentityError(`${where}: cluster.id is missing or malformed`);
  }
  const nodeRaw = props.get("node.id") ?? "";
  const nodeId = /^\d{1,10}$/.test(nodeRaw) ? Number(nodeRaw) : NaN;
  if (!isValidNodeId(nodeId)) throw new IdentityError(`${where}: node.id is missing or malformed`);
  return { clusterId, nodeId };
}

export function formatMetaProperties(clusterId: string, nodeId: number): string {
  return `#\n#Written by the broker on first start; do not edit.\ncluster.id=${clusterId}\n` +
    `node.id=${nodeId}\nversion=1\n`;
}

/**
 * Reads the data dir's identity, creating it on first start. Throws IdentityError when the
 * recorded node id differs from `opts.nodeId`, or the recorded cluster from
 * `opts.expectedClusterId`. Creation is exclusive (link(2) of a synced temp file), so two
 * processes starting on one empty dir agree on one identity.
 */
export function ensureIdentity(dataDir: string, opts: IdentityOptions = {}): Identity {
  if (opts.nodeId !== undefined && !isValidNodeId(opts.nodeId)) {
    throw new IdentityError(`node id must be an integer 0..2147483647, got ${opts.nodeId}`);
  }
  if (opts.expectedClusterId !== undefined && !isValidClusterId(opts.expectedClusterId)) {
    throw new IdentityError(`malformed cluster id ${JSON.stringify(opts.expectedClusterId)}`);
  }
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, META_PROPERTIES);
  let created = false;
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  if (text === undefined) {
    const clusterId = opts.expectedClusterId ?? newClusterId();
    const nodeId = opts.nodeId ?? 0;
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    const fd = openSync(tmp, "wx", 0o644);
    try {
      writeSync(fd, formatMetaProperties(clusterId, nodeId));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
      created = true;
      const dfd = openSync(dataDir, "r");
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
    text = readFileSync(path, "utf8");
  }
  const rec = parseMetaProperties(text, path);
  if (opts.nodeId !== undefined && opts.nodeId !== rec.nodeId) {
    throw new IdentityError(
      `data dir ${dataDir} belongs to node ${rec.nodeId}, but node id ${opts.nodeId} was given; ` +
        `use --node-id ${rec.nodeId} or another --data-dir`,
    );
  }
  if (opts.expectedClusterId !== undefined && opts.expectedClusterId !== rec.clusterId) {
    throw new IdentityError(
      `data dir ${dataDir} belongs to cluster ${rec.clusterId}, not to cluster ${opts.expectedClusterId}; ` +
        `use an empty --data-dir to join that cluster`,
    );
  }
  return { ...rec, created };
}
