// Refusals built by the Kafka front door (src/kafka/authorize.ts), for the requests real clients
// send (the captured golden frames): with no ACLs every item is refused, and the answer must
// encode at the request's version and name each refused topic, partition and group back with an
// authorization error, as Kafka's answers do (a misnamed field would come back as a default).
import { expect, test } from "bun:test";
import { LiveAuthorizer } from "../../src/acl/live.ts";
import { asking, authorizeRequest } from "../../src/kafka/authorize.ts";
import { ADVERTISED } from "../../src/kafka/handlers/index.ts";
import {
  apiName,
  decodeRequest,
  decodeRequestFrame,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  type Struct,
} from "../../src/protocol/kafka/index.ts";
import { concatChunks } from "../../src/protocol/kafka/writer.ts";
import GOLDEN from "../protocol/kafka/golden/requests.json";

const noAcls = new LiveAuthorizer({ aclBindings: () => [], aclGeneration: () => 0 }, new Set());
const anonymous = (apiKey: number, version: number) =>
  asking(noAcls, undefined, "/127.0.0.1", apiKey, version);
const topics = { nameOf: () => "by-id", exists: () => true, autoCreate: false };
const AUTH_CODES = new Set([29, 30, 31, 53]);

/** Every value of the given fields anywhere in a decoded body. */
function valuesOf(s: unknown, fields: ReadonlySet<string>, out: unknown[] = []): unknown[] {
  if (Array.isArray(s)) { for (const x of s) valuesOf(x, fields, out); }
  else if (s !== null && typeof s === "object" && !(s instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(s)) {
      if (fields.has(k)) out.push(v);
      valuesOf(v, fields, out);
    }
  }
  return out;
}

const NAMES = new Set(["name", "topic", "groupId", "key"]);
const PARTITIONS = new Set(["partition", "partitionIndex", "index"]);

test("refusals of real clients' requests mirror their items with an authorization error", () => {
  let refused = 0;
  let perItem = 0;
  for (const f of GOLDEN as { apiKey: number; apiVersion: number; hex: string }[]) {
    const { body } = decodeRequestFrame(Buffer.from(f.hex, "hex"));
    const v = authorizeRequest(anonymous(f.apiKey, f.apiVersion), body, topics);
    if (v.kind !== "refuse") continue; // nothing named (all-topics Metadata) or no rule
    refused++;
    const where = `${apiName(f.apiKey)} v${f.apiVersion}`;
    let bytes: Uint8Array | string;
    try {
      bytes = concatChunks(encodeResponse(f.apiKey, f.apiVersion, v.answer));
    } catch (e) {
      bytes = String(e); // the connection would be closed instead of answered
    }
    expect({ where, encodes: typeof bytes === "string" ? bytes : true })
      .toEqual({ where, encodes: true });
    const answer = decodeResponse(f.apiKey, f.apiVersion, bytes as Uint8Array);
    const codes = valuesOf(answer, new Set(["errorCode"])).filter((c) => c !== 0);
    // DescribeLogDirs v0-2 have no field for an error: no directories is all Kafka says too.
    if (f.apiKey === 35 && f.apiVersion < 3) {
      expect(answer.results).toEqual([]);
      continue;
    }
    expect({ where, refused: codes.length > 0 && codes.every((c) => AUTH_CODES.has(c as number)) })
      .toEqual({ where, refused: true });
    // Refused per item (not by one top-level error): the topics, groups and partitions the
    // request lists come back in the answer's lists.
    if (typeof answer.errorCode === "number" && answer.errorCode !== 0) continue;
    perItem++;
    const listed = Object.values(body).filter(Array.isArray);
    // An item is a name or an object with one (a refused group's own topics are not items).
    const named = (lists: unknown[][]) =>
      lists.flat().map((i) =>
        typeof i === "string" ? i : Object.entries(i as Struct).find(([k]) => NAMES.has(k))?.[1]
      ).filter((n) => typeof n === "string" && n !== "");
    const back = named(Object.values(answer).filter(Array.isArray));
    for (const n of named(listed)) {
      expect({ where, n, back: back.includes(n) }).toEqual({ where, n, back: true });
    }
    const partitions = new Set(valuesOf(answer, PARTITIONS));
    for (const p of valuesOf(listed, PARTITIONS)) {
      expect({ where, p, back: partitions.has(p) }).toEqual({ where, p, back: true });
    }
  }
  expect(refused).toBeGreaterThan(400);
  expect(perItem).toBeGreaterThan(300);
});

test("refusals of the admin APIs no client frame was captured for, at every served version", () => {
  // Requests as an admin client would send them (left-out fields take the schema's defaults).
  const bodies: Record<number, Struct> = {
    29: { resourceTypeFilter: 1, operation: 1, permissionType: 1 },
    30: { creations: [{ resourceType: 2, resourceName: "t", principal: "User:x", host: "*" }] },
    31: { filters: [{ resourceTypeFilter: 2, resourceNameFilter: "t" }] },
    43: { electionType: 0, topicPartitions: [{ topic: "t", partitionId: [3] }], timeoutMs: 1 },
    45: { topics: [{ name: "t", partitions: [{ partitionIndex: 3, replicas: [1] }] }] },
    46: { topics: null },
    50: { users: null },
    51: { deletions: [{ name: "alice", mechanism: 1 }], upsertions: [] },
  };
  for (const [key, sent] of Object.entries(bodies)) {
    const apiKey = Number(key);
    const [min, max] = ADVERTISED.get(apiKey)!;
    for (let version = min; version <= max; version++) {
      const where = `${apiName(apiKey)} v${version}`;
      const body = decodeRequest(apiKey, version, encodeRequest(apiKey, version, sent));
      const v = authorizeRequest(anonymous(apiKey, version), body, topics);
      expect({ where, kind: v.kind }).toEqual({ where, kind: "refuse" });
      if (v.kind !== "refuse") continue;
      const bytes = concatChunks(encodeResponse(apiKey, version, v.answer));
      const codes = valuesOf(decodeResponse(apiKey, version, bytes), new Set(["errorCode"]));
      expect({
        where,
        codes: codes.filter((c) => c !== 0).length > 0 && codes.every((c) => c === 0 || c === 31),
      })
        .toEqual({ where, codes: true });
      // The items named (a partition to elect, a user) are answered one by one.
      const items = valuesOf(
        decodeResponse(apiKey, version, bytes),
        new Set(["partitionId", "user"]),
      );
      if (apiKey === 43) expect(items).toEqual([3]);
      if (apiKey === 51) expect(items).toEqual(["alice"]);
    }
  }
});
