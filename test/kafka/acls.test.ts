// The ACL admin APIs (CreateAcls 30, DescribeAcls 29, DeleteAcls 31) through an unmodified client
// (kafkajs's admin, which speaks v1 with pattern types) against a broker process, and the
// handlers' per-entry validation on bodies a client would not send.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  Kafka,
  logLevel,
  ResourcePatternTypes,
} from "kafkajs";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { MetadataStore } from "../../src/meta/index.ts";
import { createAcls } from "../../src/kafka/handlers/create-acls.ts";
import { describeAcls } from "../../src/kafka/handlers/describe-acls.ts";
import { deleteAcls } from "../../src/kafka/handlers/delete-acls.ts";
import type { KafkaContext, RequestContext } from "../../src/kafka/context.ts";
import { tempDir } from "../meta/helpers.ts";

let broker: RunningBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startBrokerProcess();
  kafka = new Kafka({
    brokers: [`127.0.0.1:${broker.kafkaPort}`],
    clientId: "acls-test",
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100 },
  });
});
afterAll(async () => {
  broker?.kill();
  await broker?.exited;
});

const readOrders = {
  resourceType: AclResourceTypes.TOPIC,
  resourceName: "orders",
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal: "User:alice",
  host: "*",
  operation: AclOperationTypes.READ,
  permissionType: AclPermissionTypes.ALLOW,
};
const writePrefix = {
  ...readOrders,
  resourceName: "ord",
  resourcePatternType: ResourcePatternTypes.PREFIXED,
  operation: AclOperationTypes.WRITE,
  host: "10.0.0.1",
};
const denyGroup = {
  ...readOrders,
  resourceType: AclResourceTypes.GROUP,
  resourceName: "g1",
  principal: "User:bob",
  permissionType: AclPermissionTypes.DENY,
};
const anyFilter = {
  resourceType: AclResourceTypes.ANY,
  resourcePatternType: ResourcePatternTypes.ANY,
  operation: AclOperationTypes.ANY,
  permissionType: AclPermissionTypes.ANY,
};

describe("ACL admin through kafkajs", () => {
  test("create, describe with filters (MATCH included), delete", async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createAcls({ acl: [readOrders, writePrefix, denyGroup, readOrders] });
      const all = await admin.describeAcls(anyFilter);
      expect(all.resources.map((r) => [r.resourceType, r.resourceName, r.resourcePatternType]))
        .toEqual([
          [AclResourceTypes.TOPIC, "ord", ResourcePatternTypes.PREFIXED],
          [AclResourceTypes.TOPIC, "orders", ResourcePatternTypes.LITERAL],
          [AclResourceTypes.GROUP, "g1", ResourcePatternTypes.LITERAL],
        ]);
      expect(all.resources[0].acls).toEqual([
        {
          principal: "User:alice",
          host: "10.0.0.1",
          operation: AclOperationTypes.WRITE,
          permissionType: AclPermissionTypes.ALLOW,
        },
      ]);
      // MATCH: every binding that applies to the topic "orders" (its literal and its prefix).
      const match = await admin.describeAcls({
        ...anyFilter,
        resourceType: AclResourceTypes.TOPIC,
        resourceName: "orders",
        resourcePatternType: ResourcePatternTypes.MATCH,
      });
      expect(match.resources.map((r) => r.resourceName)).toEqual(["ord", "orders"]);
      const bob = await admin.describeAcls({ ...anyFilter, principal: "User:bob" });
      expect(bob.resources.map((r) => r.resourceName)).toEqual(["g1"]);

      const del = await admin.deleteAcls({
        filters: [
          { ...anyFilter, resourceType: AclResourceTypes.GROUP },
          { ...anyFilter, principal: "User:nobody" },
        ],
      });
      expect(del.filterResponses.map((f) => f.errorCode)).toEqual([0, 0]);
      expect(del.filterResponses[0].matchingAcls).toMatchObject([
        { resourceName: "g1", principal: "User:bob", permissionType: AclPermissionTypes.DENY },
      ]);
      expect(del.filterResponses[1].matchingAcls).toEqual([]);
      const left = await admin.describeAcls(anyFilter);
      expect(left.resources.map((r) => r.resourceName)).toEqual(["ord", "orders"]);
    } finally {
      await admin.disconnect();
    }
  });
});

describe("ACL handlers on bodies clients would not send", () => {
  test("invalid creations and filters answer INVALID_REQUEST alone", async () => {
    const t = tempDir();
    const meta = MetadataStore.open(t.dir);
    try {
      const ctx = { meta } as unknown as KafkaContext;
      const req = (body: Record<string, unknown>) => ({ body }) as unknown as RequestContext;
      const ok = {
        resourceType: 2,
        resourceName: "t",
        resourcePatternType: 3,
        principal: "User:a",
        host: "*",
        operation: 3,
        permissionType: 3,
      };
      const created = await createAcls(
        ctx,
        req({
          creations: [
            ok,
            { ...ok, resourceType: 1 }, // ANY is a filter value, not a resource
            { ...ok, resourcePatternType: 2 }, // MATCH likewise
            { ...ok, operation: 99 },
            { ...ok, principal: "alice" },
            { ...ok, resourceType: 4, resourceName: "my-cluster" },
          ],
        }) as never,
      );
      expect(created.results.map((r) => r.errorCode)).toEqual([0, 42, 42, 42, 42, 42]);
      expect(meta.aclBindings().length).toBe(1);

      const filter = {
        resourceTypeFilter: 1,
        resourceNameFilter: null,
        patternTypeFilter: 1,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      };
      const bad = describeAcls(ctx, req({ ...filter, operation: 0 }) as never);
      expect(bad.errorCode).toBe(42);
      expect(describeAcls(ctx, req(filter) as never).resources.length).toBe(1);
      const del = await deleteAcls(
        ctx,
        req({ filters: [{ ...filter, permissionType: 0 }, filter] }) as never,
      );
      expect(del.filterResults.map((f) => [f.errorCode, f.matchingAcls.length])).toEqual([
        [42, 0],
        [0, 1],
      ]);
      expect(meta.aclBindings()).toEqual([]);
    } finally {
      await meta.close();
      t.cleanup();
    }
  });
});
