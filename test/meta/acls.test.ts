// ACL bindings as metadata records: created and deleted through the log, refused when malformed,
// carried by snapshots, and an in-memory Authorizer that follows them.
import { afterEach, describe, expect, test } from "bun:test";
import { MetadataStore, parseRecord, restoreTables, snapshotTables } from "../../src/meta/index.ts";
import {
  type AclBinding,
  type AclFilter,
  AclOperation as Op,
  AclPermission as Perm,
  PatternType,
  ResourceType as RT,
} from "../../src/acl/authorizer.ts";
import { LiveAuthorizer } from "../../src/acl/live.ts";
import { tempDir } from "./helpers.ts";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(): MetadataStore {
  const t = tempDir();
  const meta = MetadataStore.open(t.dir);
  cleanups.push(t.cleanup, () => meta.close());
  return meta;
}

const bind = (o: Partial<AclBinding> = {}): AclBinding => ({
  resourceType: RT.TOPIC,
  resourceName: "orders",
  patternType: PatternType.LITERAL,
  principal: "User:alice",
  host: "*",
  operation: Op.READ,
  permission: Perm.ALLOW,
  ...o,
});
const ALL: AclFilter = {
  resourceType: RT.ANY,
  resourceName: null,
  patternType: PatternType.ANY,
  principal: null,
  host: null,
  operation: Op.ANY,
  permission: Perm.ANY,
};
const alice = { principal: "User:alice", host: "127.0.0.1" };

describe("ACLs in the metadata", () => {
  test("create (idempotent), list, delete by filter through the log", async () => {
    const meta = open();
    await meta.createAcls([bind(), bind({ operation: Op.WRITE }), bind()]);
    await meta.createAcls([bind()]);
    expect(meta.aclBindings()).toEqual([bind(), bind({ operation: Op.WRITE })]);
    const created = meta.log.read(1, 100).filter((e) => e.record.type === "AclCreated");
    expect(created.length).toBe(2);

    const gone = await meta.deleteAcls([
      { ...ALL, operation: Op.WRITE },
      { ...ALL, resourceType: RT.GROUP },
      { ...ALL, operation: Op.WRITE }, // the same binding twice: reported twice, deleted once
    ]);
    expect(gone).toEqual([[bind({ operation: Op.WRITE })], [], [bind({ operation: Op.WRITE })]]);
    expect(meta.aclBindings()).toEqual([bind()]);
    expect(meta.log.read(1, 100).filter((e) => e.record.type === "AclDeleted").length).toBe(1);
  });

  test("invalid bindings are refused before the log; malformed records are refused", async () => {
    const meta = open();
    const before = meta.log.appliedIndex();
    await expect(meta.createAcls([bind(), bind({ resourceType: RT.ANY })])).rejects
      .toMatchObject({ codeName: "INVALID_REQUEST" });
    await expect(meta.createAcls([bind({ principal: "alice" })])).rejects.toMatchObject({
      codeName: "INVALID_REQUEST",
    });
    expect(meta.log.appliedIndex()).toBe(before);
    expect(meta.aclBindings()).toEqual([]);
    const rec = { type: "AclCreated" as const, ...bind() };
    expect(parseRecord(JSON.stringify(rec))).toEqual(rec);
    for (
      const broken of [
        { ...rec, operation: 1000 },
        { ...rec, operation: Op.ANY },
        { ...rec, patternType: PatternType.MATCH },
        { ...rec, resourceName: 7 },
        { ...rec, host: "x".repeat(2000) },
        { ...rec, resourceType: RT.CLUSTER, resourceName: "other" },
      ]
    ) {
      expect(() => parseRecord(JSON.stringify(broken))).toThrow(/malformed metadata record/);
    }
  });

  test("snapshots carry ACLs; an image without them restores none", async () => {
    const a = open();
    await a.createAcls([bind(), bind({ patternType: PatternType.PREFIXED, resourceName: "o" })]);
    const image = snapshotTables(a.db);
    const b = open();
    await b.createAcls([bind({ principal: "User:mallory" })]);
    restoreTables(b.db, image, 10, 1);
    expect(b.aclBindings()).toEqual(a.aclBindings());
    const old = JSON.parse(image);
    delete old.acls;
    restoreTables(b.db, JSON.stringify(old), 11, 1);
    expect(b.aclBindings()).toEqual([]);
    const hostile = { ...JSON.parse(image), acls: [{ ...bind(), operation: 99 }] };
    expect(() => restoreTables(b.db, JSON.stringify(hostile), 12, 1)).toThrow();
  });

  test("the live authorizer follows applied records and restores", async () => {
    const meta = open();
    const live = new LiveAuthorizer(meta, new Set(["User:admin"]));
    expect(live.get().authorize(alice, Op.READ, RT.TOPIC, "orders").allowed).toBe(false);
    expect(
      live.get().authorize({ ...alice, principal: "User:admin" }, Op.DELETE, RT.TOPIC, "x")
        .allowed,
    ).toBe(true);
    await meta.createAcls([bind()]);
    expect(live.get().authorize(alice, Op.READ, RT.TOPIC, "orders").allowed).toBe(true);
    const same = live.get();
    expect(live.get()).toBe(same); // no change, no reload
    await meta.deleteAcls([ALL]);
    expect(live.get().authorize(alice, Op.READ, RT.TOPIC, "orders").allowed).toBe(false);
    const img = JSON.parse(snapshotTables(meta.db));
    restoreTables(meta.db, JSON.stringify({ ...img, acls: [bind()] }), 50, 1);
    expect(live.get().authorize(alice, Op.READ, RT.TOPIC, "orders").allowed).toBe(true);
  });
});
