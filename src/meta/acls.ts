// ACL bindings as metadata records, so every broker of the cluster enforces the same ACLs through
// the replicated log: the records' shape, their apply into the acls table, the reads, the part of
// a snapshot they take, and a generation number that tells an in-memory Authorizer when to reload.
// The decision itself is src/acl/authorizer.ts (pure).
import { asc } from "drizzle-orm";
import { and, eq } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { type AclBinding, validateBinding } from "../acl/authorizer.ts";
import { MetaError } from "./errors.ts";
import { imageRows } from "./image-rows.ts";
import * as s from "./schema.ts";

/**
 * AclDeleted names one exact binding: the broker that takes a DeleteAcls resolves its filters
 * against the state it validated under the store's lock, so apply never evaluates a filter.
 */
export type AclRecord =
  | ({ type: "AclCreated" } & AclBinding)
  | ({ type: "AclDeleted" } & AclBinding);

export const ACL_RECORD_TYPES: ReadonlySet<string> = new Set(["AclCreated", "AclDeleted"]);

/** Kafka has no bound; a name or principal this long is an attack, not an ACL. */
const MAX_ACL_STRING = 1024;

type Conn = BaseSQLiteDatabase<"sync", void, typeof s>;

const bad = (why: string) => new MetaError("INVALID_REQUEST", `malformed metadata record: ${why}`);

let generation = 0;

/**
 * Bumped on every ACL apply and snapshot restore (committed or rolled back: a reload then reads
 * the committed table, which is right either way). Per process, so brokers sharing a process
 * only reload more often than needed.
 */
export function aclGeneration(): number {
  return generation;
}

function int8(o: Record<string, unknown>, k: string): number {
  const v = o[k];
  if (typeof v !== "number" || !Number.isInteger(v) || v < -128 || v > 127) {
    throw bad(`${k} must be an int8`);
  }
  return v;
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== "string" || v.length > MAX_ACL_STRING) {
    throw bad(`${k} must be a string of at most ${MAX_ACL_STRING} characters`);
  }
  return v;
}

/** Validates a binding from storage, a snapshot or the network (hostile input). */
export function parseAclBinding(o: Record<string, unknown>): AclBinding {
  const b = {
    resourceType: int8(o, "resourceType"),
    resourceName: str(o, "resourceName"),
    patternType: int8(o, "patternType"),
    principal: str(o, "principal"),
    host: str(o, "host"),
    operation: int8(o, "operation"),
    permission: int8(o, "permission"),
  } as AclBinding;
  const why = validateBinding(b);
  if (why !== null) throw bad(why);
  return b;
}

export function parseAclRecord(o: Record<string, unknown>): AclRecord {
  if (o.type !== "AclCreated" && o.type !== "AclDeleted") throw bad("not an ACL record");
  return { type: o.type, ...parseAclBinding(o) };
}

function keyOf(b: AclBinding) {
  return and(
    eq(s.acls.resourceType, b.resourceType),
    eq(s.acls.resourceName, b.resourceName),
    eq(s.acls.patternType, b.patternType),
    eq(s.acls.principal, b.principal),
    eq(s.acls.host, b.host),
    eq(s.acls.operation, b.operation),
    eq(s.acls.permission, b.permission),
  );
}

/** Both are idempotent: a create of an existing binding and a delete of a gone one change nothing. */
export function applyAclRecord(db: Conn, r: AclRecord): void {
  generation++;
  const { type, ...b } = r;
  if (type === "AclDeleted") {
    db.delete(s.acls).where(keyOf(b)).run();
    return;
  }
  db.insert(s.acls).values(b).onConflictDoNothing().run();
}

export function listAclBindings(db: Conn): AclBinding[] {
  return db.select().from(s.acls).orderBy(
    asc(s.acls.resourceType),
    asc(s.acls.resourceName),
    asc(s.acls.patternType),
    asc(s.acls.principal),
    asc(s.acls.host),
    asc(s.acls.operation),
    asc(s.acls.permission),
  ).all() as AclBinding[];
}

export function aclExists(db: Conn, b: AclBinding): boolean {
  return db.select({ t: s.acls.resourceType }).from(s.acls).where(keyOf(b)).get() !== undefined;
}

// ---- snapshots --------------------------------------------------------------------------------

/** Validates the ACLs of a snapshot image (absent in images from before ACLs existed). */
export function parseAclImage(v: unknown): AclBinding[] {
  return imageRows(v, { list: "acls", row: "ACL" }, parseAclBinding);
}

export function restoreAcls(db: Conn, rows: readonly AclBinding[]): void {
  generation++;
  db.delete(s.acls).run();
  for (const r of rows) db.insert(s.acls).values(r).onConflictDoNothing().run();
}
