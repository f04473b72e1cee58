/**
 * Capture harness: a throwaway single-node fake Kafka broker that logs every request frame a
 * real client sends, raw, as hex (one JSON line per frame). It answers just enough for clients
 * to walk through produce, consume, group and admin flows. What gets checked in as golden data
 * is the CLIENT's request bytes; the answers here are only a means to get them sent.
 *
 *   bun scripts/capture/fake-broker.ts --port 19092 --log out.jsonl --label kcat --cap 4
 *
 * --cap N lowers every advertised max version to min(max, N) so clients negotiate older
 * versions; --cap-api key=N overrides for one API (repeatable).
 */
import { appendFileSync } from "node:fs";
import { ADVERTISED } from "../../src/kafka/handlers/index.ts";
import {
  ApiKey,
  concatChunks,
  decodeRequestFrame,
  encodeApiVersionsUnsupported,
  encodeResponseFrame,
  type Struct,
  UnsupportedApiError,
} from "../../src/protocol/kafka/index.ts";

const args = process.argv.slice(2);
function arg(name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
}
const PORT = Number(arg("--port", "19092"));
const LOG = arg("--log", "/tmp/capture.jsonl");
const LABEL = arg("--label", "client");
const CAP = Number(arg("--cap", "99"));
const apiCaps = new Map<number, number>();
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--cap-api") {
    const [k, n] = args[i + 1].split("=").map(Number);
    apiCaps.set(k, n);
  }
}

function advertised(): { apiKey: number; minVersion: number; maxVersion: number }[] {
  const out = [];
  for (const [apiKey, [min, max]] of ADVERTISED) {
    const cap = Math.min(max, apiCaps.get(apiKey) ?? CAP);
    // Advertise from 0 so capped runs still overlap the clients' ranges.
    out.push({ apiKey, minVersion: Math.min(min, 0), maxVersion: Math.max(cap, 0) });
  }
  // SASL is not in the listener's table, but the harness answers it so clients send it.
  for (const [apiKey, max] of [[ApiKey.SaslHandshake, 1], [ApiKey.SaslAuthenticate, 2]]) {
    if (ADVERTISED.has(apiKey)) continue;
    out.push({ apiKey, minVersion: 0, maxVersion: Math.min(max, apiCaps.get(apiKey) ?? CAP) });
  }
  return out;
}

// ------------------------------------------------------------------ tiny in-memory state

interface Batch {
  base: number;
  bytes: Uint8Array;
}
const topics = new Map<string, { id: string; parts: Batch[][] }>();
const offsets = new Map<string, number>();
const groups = new Map<
  string,
  {
    gen: number;
    members: Map<string, Uint8Array>;
    protocol: string;
    assignments: Map<string, Uint8Array>;
  }
>();
let nextMember = 1;

function topicId(name: string): string {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return (h.toString(16).padStart(8, "0") + "0123456789abcdef0123456789abcdef").slice(0, 32);
}
function ensureTopic(name: string, parts = 1) {
  let t = topics.get(name);
  if (!t) {
    t = { id: topicId(name), parts: Array.from({ length: parts }, () => []) };
    topics.set(name, t);
  }
  return t;
}
function logEnd(p: Batch[]): number {
  if (p.length === 0) return 0;
  const last = p[p.length - 1];
  return last.base + batchCount(last.bytes);
}
function batchCount(b: Uint8Array): number {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return b.length >= 27 && b[16] === 2 ? dv.getInt32(23) + 1 : 1;
}
function append(p: Batch[], records: Uint8Array): number {
  const first = logEnd(p);
  let at = 0;
  while (at + 12 <= records.length) {
    const dv = new DataView(records.buffer, records.byteOffset + at);
    const len = 12 + dv.getInt32(8);
    if (len <= 12 || at + len > records.length) break;
    const copy = records.slice(at, at + len);
    const base = logEnd(p);
    new DataView(copy.buffer).setBigInt64(0, BigInt(base));
    p.push({ base, bytes: copy });
    at += len;
  }
  return first;
}

// ------------------------------------------------------------------ answers

const HOST = "127.0.0.1";

function metadata(v: number, body: Struct): Struct {
  const req = body.topics as Struct[] | null;
  const auto = v < 4 || body.allowAutoTopicCreation === true;
  let names: string[];
  if (req === null || (v === 0 && req.length === 0)) names = [...topics.keys()];
  else names = req.map((t) => t.name as string);
  if (auto) { for (const n of names) ensureTopic(n); }
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: 1, host: HOST, port: PORT, rack: null }],
    clusterId: "capture-cluster",
    controllerId: 1,
    topics: names.map((n) => {
      const t = topics.get(n);
      return {
        errorCode: t ? 0 : 3,
        name: n,
        topicId: t ? t.id : "00000000000000000000000000000000",
        isInternal: false,
        partitions: (t?.parts ?? []).map((_, i) => ({
          errorCode: 0,
          partitionIndex: i,
          leaderId: 1,
          leaderEpoch: 0,
          replicaNodes: [1],
          isrNodes: [1],
          offlineReplicas: [],
        })),
        topicAuthorizedOperations: v >= 8 ? -2147483648 : -2147483648,
      };
    }),
  };
}

function answer(apiKey: number, v: number, body: Struct): Struct | null {
  switch (apiKey) {
    case ApiKey.ApiVersions:
      return { errorCode: 0, apiKeys: advertised(), throttleTimeMs: 0 };
    case ApiKey.Metadata:
      return metadata(v, body);
    case ApiKey.Produce: {
      if (body.acks === 0) return null;
      return {
        responses: (body.topicData as Struct[]).map((t) => ({
          name: t.name,
          partitionResponses: (t.partitionData as Struct[]).map((p) => {
            const topic = ensureTopic(t.name as string);
            const part = topic.parts[p.index as number];
            const base = part && p.records ? append(part, p.records as Uint8Array) : -1;
            return {
              index: p.index,
              errorCode: part ? 0 : 3,
              baseOffset: base,
              logAppendTimeMs: -1,
              logStartOffset: 0,
            };
          }),
        })),
        throttleTimeMs: 0,
      };
    }
    case ApiKey.Fetch:
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: (body.topics as Struct[]).map((t) => ({
          topic: t.topic,
          partitions: (t.partitions as Struct[]).map((p) => {
            const part = topics.get(t.topic as string)?.parts[p.partition as number];
            const from = p.fetchOffset as number;
            const batches = (part ?? []).filter((b) => b.base + batchCount(b.bytes) > from);
            const hw = part ? logEnd(part) : -1;
            return {
              partitionIndex: p.partition,
              errorCode: part ? 0 : 3,
              highWatermark: hw,
              lastStableOffset: hw,
              logStartOffset: 0,
              abortedTransactions: v >= 4 ? [] : [],
              preferredReadReplica: -1,
              records: concatChunks(batches.map((b) => b.bytes)),
            };
          }),
        })),
      };
    case ApiKey.ListOffsets:
      return {
        throttleTimeMs: 0,
        topics: (body.topics as Struct[]).map((t) => ({
          name: t.name,
          partitions: (t.partitions as Struct[]).map((p) => {
            const part = ensureTopic(t.name as string).parts[p.partitionIndex as number] ?? [];
            const off = (p.timestamp as number) === -2 ? 0 : logEnd(part);
            return v === 0
              ? { partitionIndex: p.partitionIndex, errorCode: 0, oldStyleOffsets: [off] }
              : {
                partitionIndex: p.partitionIndex,
                errorCode: 0,
                timestamp: -1,
                offset: off,
                leaderEpoch: 0,
              };
          }),
        })),
      };
    case ApiKey.FindCoordinator:
      if (v >= 4) {
        return {
          throttleTimeMs: 0,
          coordinators: (body.coordinatorKeys as string[]).map((k) => ({
            key: k,
            nodeId: 1,
            host: HOST,
            port: PORT,
            errorCode: 0,
            errorMessage: null,
          })),
        };
      }
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        nodeId: 1,
        host: HOST,
        port: PORT,
      };
    case ApiKey.JoinGroup: {
      const gid = body.groupId as string;
      let g = groups.get(gid);
      if (!g) {
        groups.set(gid, g = { gen: 0, members: new Map(), protocol: "", assignments: new Map() });
      }
      let member = body.memberId as string;
      if (member === "") {
        member = `member-${nextMember++}`;
        if (v >= 4) {
          return {
            throttleTimeMs: 0,
            errorCode: 79,
            generationId: -1,
            protocolName: v >= 7 ? null : "",
            leader: "",
            memberId: member,
            members: [],
          };
        }
      }
      const protos = body.protocols as Struct[];
      g.members.clear();
      g.members.set(member, protos[0].metadata as Uint8Array);
      g.protocol = protos[0].name as string;
      g.gen++;
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: g.gen,
        protocolType: "consumer",
        protocolName: g.protocol,
        leader: member,
        skipAssignment: false,
        memberId: member,
        members: [...g.members].map(([m, md]) => ({
          memberId: m,
          groupInstanceId: null,
          metadata: md,
        })),
      };
    }
    case ApiKey.SyncGroup: {
      const g = groups.get(body.groupId as string);
      for (const a of body.assignments as Struct[]) {
        g?.assignments.set(a.memberId as string, a.assignment as Uint8Array);
      }
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        protocolType: v >= 5 ? "consumer" : null,
        protocolName: v >= 5 ? g?.protocol ?? null : null,
        assignment: g?.assignments.get(body.memberId as string) ?? new Uint8Array(0),
      };
    }
    case ApiKey.Heartbeat:
      return { throttleTimeMs: 0, errorCode: 0 };
    case ApiKey.LeaveGroup:
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        members: v >= 3
          ? (body.members as Struct[]).map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            errorCode: 0,
          }))
          : [],
      };
    case ApiKey.OffsetCommit:
      return {
        throttleTimeMs: 0,
        topics: (body.topics as Struct[]).map((t) => ({
          name: t.name,
          partitions: (t.partitions as Struct[]).map((p) => {
            offsets.set(
              `${body.groupId}/${t.name}/${p.partitionIndex}`,
              p.committedOffset as number,
            );
            return { partitionIndex: p.partitionIndex, errorCode: 0 };
          }),
        })),
      };
    case ApiKey.OffsetFetch: {
      const one = (gid: string, ts: Struct[] | null) =>
        (ts ?? []).map((t) => ({
          name: t.name,
          partitions: (t.partitionIndexes as number[]).map((p) => ({
            partitionIndex: p,
            committedOffset: offsets.get(`${gid}/${t.name}/${p}`) ?? -1,
            committedLeaderEpoch: -1,
            metadata: "",
            errorCode: 0,
          })),
        }));
      if (v >= 8) {
        return {
          throttleTimeMs: 0,
          groups: (body.groups as Struct[]).map((g) => ({
            groupId: g.groupId,
            topics: one(g.groupId as string, g.topics as Struct[] | null),
            errorCode: 0,
          })),
        };
      }
      return {
        throttleTimeMs: 0,
        topics: one(body.groupId as string, body.topics as Struct[] | null),
        errorCode: 0,
      };
    }
    case ApiKey.InitProducerId:
      return { throttleTimeMs: 0, errorCode: 0, producerId: 4000, producerEpoch: 0 };
    case ApiKey.CreateTopics:
      return {
        throttleTimeMs: 0,
        topics: (body.topics as Struct[]).map((t) => {
          const n = (t.numPartitions as number) > 0 ? (t.numPartitions as number) : 1;
          const tt = ensureTopic(t.name as string, n);
          return {
            name: t.name,
            topicId: tt.id,
            errorCode: 0,
            errorMessage: null,
            numPartitions: n,
            replicationFactor: 1,
            configs: [],
          };
        }),
      };
    case ApiKey.DeleteTopics: {
      const names = v >= 6
        ? (body.topics as Struct[]).map((t) => t.name as string)
        : (body.topicNames as string[]);
      return {
        throttleTimeMs: 0,
        responses: names.map((n) => {
          const had = topics.delete(n);
          return { name: n, topicId: topicId(n), errorCode: had ? 0 : 3, errorMessage: null };
        }),
      };
    }
    case ApiKey.DeleteRecords:
      return {
        throttleTimeMs: 0,
        topics: (body.topics as Struct[]).map((t) => ({
          name: t.name,
          partitions: (t.partitions as Struct[]).map((p) => ({
            partitionIndex: p.partitionIndex,
            lowWatermark: Math.max(0, p.offset as number),
            errorCode: 0,
          })),
        })),
      };
    case ApiKey.CreatePartitions:
      return {
        throttleTimeMs: 0,
        results: (body.topics as Struct[]).map((t) => {
          const tt = ensureTopic(t.name as string);
          while (tt.parts.length < (t.count as number)) tt.parts.push([]);
          return { name: t.name, errorCode: 0, errorMessage: null };
        }),
      };
    case ApiKey.DescribeConfigs:
      return {
        throttleTimeMs: 0,
        results: (body.resources as Struct[]).map((r) => ({
          errorCode: 0,
          errorMessage: null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: [{
            name: "cleanup.policy",
            value: "delete",
            readOnly: false,
            isDefault: v === 0,
            configSource: v >= 1 ? 5 : -1,
            isSensitive: false,
            synonyms: [],
            configType: v >= 3 ? 2 : 0,
            documentation: null,
          }],
        })),
      };
    case ApiKey.AlterConfigs:
    case ApiKey.IncrementalAlterConfigs:
      return {
        throttleTimeMs: 0,
        responses: (body.resources as Struct[]).map((r) => ({
          errorCode: 0,
          errorMessage: null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
        })),
      };
    case ApiKey.ListGroups:
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        groups: [...groups.keys()].map((g) => ({
          groupId: g,
          protocolType: "consumer",
          groupState: "Stable",
          groupType: "classic",
        })),
      };
    case ApiKey.DescribeGroups:
      return {
        throttleTimeMs: 0,
        groups: (body.groups as string[]).map((gid) => {
          const g = groups.get(gid);
          return {
            errorCode: 0,
            groupId: gid,
            groupState: g ? "Stable" : "Dead",
            protocolType: g ? "consumer" : "",
            protocolData: g?.protocol ?? "",
            members: [...(g?.members ?? [])].map(([m, md]) => ({
              memberId: m,
              groupInstanceId: null,
              clientId: "c",
              clientHost: "/127.0.0.1",
              memberMetadata: md,
              memberAssignment: g?.assignments.get(m) ?? new Uint8Array(0),
            })),
            authorizedOperations: -2147483648,
          };
        }),
      };
    case ApiKey.DeleteGroups:
      return {
        throttleTimeMs: 0,
        results: (body.groupsNames as string[]).map((g) => ({
          groupId: g,
          errorCode: groups.delete(g) ? 0 : 69,
        })),
      };
    case ApiKey.SaslHandshake:
      return { errorCode: 0, mechanisms: ["PLAIN"] };
    case ApiKey.SaslAuthenticate:
      return {
        errorCode: 0,
        errorMessage: null,
        authBytes: new Uint8Array(0),
        sessionLifetimeMs: 0,
      };
    case ApiKey.OffsetForLeaderEpoch:
      return {
        throttleTimeMs: 0,
        topics: (body.topics as Struct[]).map((t) => ({
          topic: t.topic,
          partitions: (t.partitions as Struct[]).map((p) => ({
            errorCode: 0,
            partition: p.partition,
            leaderEpoch: 0,
            endOffset: 0,
          })),
        })),
      };
    case ApiKey.DescribeCluster:
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        endpointType: 1,
        clusterId: "capture-cluster",
        controllerId: 1,
        brokers: [{ brokerId: 1, host: HOST, port: PORT, rack: null }],
        clusterAuthorizedOperations: -2147483648,
      };
    case ApiKey.DescribeLogDirs:
      return { throttleTimeMs: 0, errorCode: 0, results: [] };
  }
  return null;
}

// ------------------------------------------------------------------ sockets

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

interface Conn {
  buf: Uint8Array;
  queue: Promise<void>;
  rawSasl: boolean;
}

Bun.listen<Conn>({
  hostname: HOST,
  port: PORT,
  socket: {
    open(s) {
      s.data = { buf: new Uint8Array(0), queue: Promise.resolve(), rawSasl: false };
    },
    data(s, chunk) {
      const c = s.data;
      const merged = new Uint8Array(c.buf.length + chunk.length);
      merged.set(c.buf);
      merged.set(chunk, c.buf.length);
      c.buf = merged;
      while (c.buf.length >= 4) {
        const n = new DataView(c.buf.buffer, c.buf.byteOffset).getInt32(0);
        if (c.buf.length < 4 + n) break;
        const frame = c.buf.slice(4, 4 + n);
        c.buf = c.buf.slice(4 + n);
        if (c.rawSasl) {
          // SaslHandshake v0: the next frame is a raw token; PLAIN success is an empty frame.
          c.rawSasl = false;
          c.queue = c.queue.then(() => void s.write(new Uint8Array(4)));
          continue;
        }
        handle(s, c, frame);
      }
    },
    error() {},
  },
});

function handle(s: { write(b: Uint8Array): number; end(): void }, c: Conn, frame: Uint8Array) {
  let req;
  try {
    req = decodeRequestFrame(frame);
  } catch (e) {
    if (e instanceof UnsupportedApiError && e.apiKey === ApiKey.ApiVersions && e.header) {
      appendFileSync(
        LOG,
        JSON.stringify({
          label: LABEL,
          cap: CAP,
          apiKey: e.apiKey,
          apiVersion: e.apiVersion,
          hex: hex(frame),
        }) + "\n",
      );
      const out = concatChunks(
        encodeApiVersionsUnsupported(e.header.correlationId, 0, Math.min(4, CAP)),
      );
      c.queue = c.queue.then(() => void s.write(out));
      return;
    }
    console.error(
      `[${LABEL}] undecodable frame: ${(e as Error).message} ${hex(frame.subarray(0, 64))}`,
    );
    appendFileSync(
      LOG,
      JSON.stringify({ label: LABEL, cap: CAP, error: (e as Error).message, hex: hex(frame) }) +
        "\n",
    );
    s.end();
    return;
  }
  const { header, body } = req;
  if (header.apiKey === ApiKey.ApiVersions && header.apiVersion > Math.min(4, CAP)) {
    // Above our (capped) range: the §1.5 fallback, so clients downgrade and send older versions.
    appendFileSync(
      LOG,
      JSON.stringify({
        label: LABEL,
        cap: CAP,
        apiKey: 18,
        apiVersion: header.apiVersion,
        clientId: header.clientId,
        hex: hex(frame),
      }) + "\n",
    );
    const out = concatChunks(
      encodeApiVersionsUnsupported(header.correlationId, 0, Math.min(4, CAP)),
    );
    c.queue = c.queue.then(() => void s.write(out));
    return;
  }
  appendFileSync(
    LOG,
    JSON.stringify({
      label: LABEL,
      cap: CAP,
      apiKey: header.apiKey,
      apiVersion: header.apiVersion,
      clientId: header.clientId,
      hex: hex(frame),
    }) + "\n",
  );
  if (header.apiKey === ApiKey.SaslHandshake && header.apiVersion === 0) c.rawSasl = true;
  let resp: Struct | null;
  try {
    resp = answer(header.apiKey, header.apiVersion, body);
  } catch (e) {
    console.error(
      `[${LABEL}] handler failed for ${header.apiKey} v${header.apiVersion}: ${
        (e as Error).message
      }`,
    );
    s.end();
    return;
  }
  if (resp === null) return;
  const delay = header.apiKey === ApiKey.Fetch ? Math.min(200, body.maxWaitMs as number) : 0;
  let out: Uint8Array;
  try {
    out = concatChunks(
      encodeResponseFrame(header.apiKey, header.apiVersion, header.correlationId, resp),
    );
  } catch (e) {
    console.error(
      `[${LABEL}] encode failed for ${header.apiKey} v${header.apiVersion}: ${
        (e as Error).message
      }`,
    );
    s.end();
    return;
  }
  c.queue = c.queue.then(async () => {
    if (delay > 0) await Bun.sleep(delay);
    s.write(out);
  });
}

console.log(`fake broker on ${HOST}:${PORT} (cap ${CAP}) logging to ${LOG}`);
