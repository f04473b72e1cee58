// The API → (operation, resource) table: every served API has a rule, rules read the resources
// real clients name (decoded from captured client frames), and the decisions follow Kafka's.
import { describe, expect, test } from "bun:test";
import { ADVERTISED } from "../../src/kafka/handlers/index.ts";
import { apiName, decodeRequestFrame } from "../../src/protocol/kafka/index.ts";
import {
  AclOperation as Op,
  AclPermission as Perm,
  Authorizer,
  PatternType,
  ResourceType as RT,
} from "../../src/acl/authorizer.ts";
import { aclHost, API_RULES, deniedNeeds } from "../../src/acl/kafka-rules.ts";
import GOLDEN from "../protocol/kafka/golden/requests.json";

const alice = { principal: "User:alice", host: "127.0.0.1" };
const allow = (type: RT, name: string, operation: Op, pattern: 3 | 4 = PatternType.LITERAL) => ({
  resourceType: type,
  resourceName: name,
  patternType: pattern,
  principal: "User:alice",
  host: "*",
  operation,
  permission: Perm.ALLOW,
} as const);

test("every served API has a rule", () => {
  const missing = [...ADVERTISED.keys()].filter((k) => !API_RULES.has(k)).map(apiName);
  expect(missing).toEqual([]);
  // An API without a rule is refused whole, never let through.
  expect(deniedNeeds(new Authorizer(), alice, 999, {}).length).toBe(1);
});

test("rules name the topics and groups in real clients' requests", () => {
  // APIs whose requests name topics or groups: with no ACLs, each such frame is denied something.
  const naming = new Set([0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 19, 20, 21, 23, 37, 42]);
  const open = new Authorizer();
  let checked = 0;
  for (const f of GOLDEN as { apiKey: number; apiVersion: number; hex: string }[]) {
    if (!naming.has(f.apiKey)) continue;
    const { body } = decodeRequestFrame(Buffer.from(f.hex, "hex"));
    const denied = deniedNeeds(open, alice, f.apiKey, body);
    const empty = f.apiKey === 1 && (body.topics as unknown[]).length === 0; // a session fetch
    if (empty) continue;
    expect({ api: apiName(f.apiKey), v: f.apiVersion, denied: denied.length > 0 }).toEqual({
      api: apiName(f.apiKey),
      v: f.apiVersion,
      denied: true,
    });
    for (const n of denied) for (const c of n.anyOf) expect(typeof c.name).toBe("string");
    checked++;
  }
  expect(checked).toBeGreaterThan(100);
});

describe("decisions", () => {
  test("produce needs WRITE per topic, reported per topic", () => {
    const a = new Authorizer([allow(RT.TOPIC, "ok", Op.WRITE)]);
    const body = { transactionalId: null, topicData: [{ name: "ok" }, { name: "no" }] };
    expect(deniedNeeds(a, alice, 0, body).map((n) => n.item)).toEqual(["no"]);
  });

  test("fetch READ, metadata DESCRIBE (implied by READ), all-topics metadata asks nothing", () => {
    const a = new Authorizer([allow(RT.TOPIC, "t", Op.READ, PatternType.PREFIXED)]);
    expect(deniedNeeds(a, alice, 1, { replicaId: -1, topics: [{ topic: "t1" }] })).toEqual([]);
    expect(
      deniedNeeds(a, alice, 3, { topics: [{ name: "t2" }, { name: "x" }] })
        .map((n) => n.item),
    ).toEqual(["x"]);
    expect(deniedNeeds(a, alice, 3, { topics: null })).toEqual([]);
    // A follower's fetch is the cluster's own traffic: CLUSTER_ACTION.
    expect(deniedNeeds(a, alice, 1, { replicaId: 2, topics: [{ topic: "t1" }] }).length).toBe(1);
  });

  test("create topics: CREATE on the cluster or on the topic", () => {
    const body = { topics: [{ name: "a" }, { name: "b" }] };
    expect(
      deniedNeeds(new Authorizer([allow(RT.TOPIC, "a", Op.CREATE)]), alice, 19, body)
        .map((n) => n.item),
    ).toEqual(["b"]);
    expect(
      deniedNeeds(new Authorizer([allow(RT.CLUSTER, "kafka-cluster", Op.CREATE)]), alice, 19, body),
    )
      .toEqual([]);
  });

  test("idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic", () => {
    const body = { transactionalId: null };
    expect(deniedNeeds(new Authorizer(), alice, 22, body).length).toBe(1);
    expect(deniedNeeds(new Authorizer([allow(RT.TOPIC, "x", Op.WRITE)]), alice, 22, body))
      .toEqual([]);
    expect(
      deniedNeeds(
        new Authorizer([allow(RT.CLUSTER, "kafka-cluster", Op.IDEMPOTENT_WRITE)]),
        alice,
        22,
        body,
      ),
    ).toEqual([]);
    expect(deniedNeeds(new Authorizer(), alice, 22, { transactionalId: "tx" })[0].anyOf[0])
      .toMatchObject({ op: Op.WRITE, type: RT.TRANSACTIONAL_ID, name: "tx" });
  });

  test("groups, configs, ACL and cluster APIs; super users pass; ApiVersions is open", () => {
    const a = new Authorizer([allow(RT.GROUP, "g", Op.READ)], new Set(["User:root"]));
    expect(deniedNeeds(a, alice, 11, { groupId: "g" })).toEqual([]);
    expect(deniedNeeds(a, alice, 42, { groupsNames: ["g"] }).length).toBe(1); // DELETE needed
    expect(
      deniedNeeds(a, alice, 32, { resources: [{ resourceType: 2, resourceName: "t" }] })
        .length,
    ).toBe(1);
    for (const k of [29, 30, 31, 43, 45, 51]) expect(deniedNeeds(a, alice, k, {}).length).toBe(1);
    const root = { principal: "User:root", host: "10.1.1.1" };
    for (const k of [29, 30, 31, 43, 45, 51]) expect(deniedNeeds(a, root, k, {})).toEqual([]);
    expect(deniedNeeds(a, alice, 18, {})).toEqual([]);
    expect(aclHost("/127.0.0.1")).toBe("127.0.0.1");
  });
});
