// Users of the Kafka and HTTP listeners: their SCRAM credentials (salt, iterations, StoredKey,
// ServerKey; never a password) as metadata records, so every broker of the cluster holds the
// same users through the replicated log. The records' shape, their apply into scram_credentials,
// the reads, and the part of a metadata snapshot they take.
import { and, asc, eq } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { MetaError } from "./errors.ts";
import { imageRows } from "./image-rows.ts";
import * as s from "./schema.ts";

export const USER_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type UserMechanism = (typeof USER_MECHANISMS)[number];
/** Kafka's bounds on SCRAM iterations. */
export const MIN_SCRAM_ITERATIONS = 4096;
export const MAX_SCRAM_ITERATIONS = 16384;
export const MAX_USER_NAME_LENGTH = 255;

export type UserRecord =
  | {
    type: "UserScramCredentialSet";
    user: string;
    mechanism: UserMechanism;
    iterations: number;
    /** base64 */
    salt: string;
    /** base64 of StoredKey = H(HMAC(SaltedPassword, "Client Key")) */
    storedKey: string;
    /** base64 of ServerKey = HMAC(SaltedPassword, "Server Key") */
    serverKey: string;
  }
  | { type: "UserScramCredentialDeleted"; user: string; mechanism: UserMechanism };

export const USER_RECORD_TYPES: ReadonlySet<string> = new Set([
  "UserScramCredentialSet",
  "UserScramCredentialDeleted",
]);

/** A stored credential, bytes decoded (the shape SCRAM and password checks take). */
export interface StoredScramCredential {
  mechanism: UserMechanism;
  salt: Uint8Array;
  iterations: number;
  storedKey: Uint8Array;
  serverKey: Uint8Array;
}

export interface UserCredentialInfo {
  user: string;
  mechanism: UserMechanism;
  iterations: number;
}

type Conn = BaseSQLiteDatabase<"sync", void, typeof s>;

/** Why a user name cannot be used, or undefined. PLAIN separates fields with NUL. */
export function userNameProblem(name: string): string | undefined {
  if (name.length === 0) return "the user name is empty";
  if (name.length > MAX_USER_NAME_LENGTH) {
    return `the user name is longer than ${MAX_USER_NAME_LENGTH} characters`;
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) return "the user name contains control characters";
  return undefined;
}

export function isUserMechanism(m: unknown): m is UserMechanism {
  return typeof m === "string" && (USER_MECHANISMS as readonly string[]).includes(m);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const bad = (why: string) => new MetaError("INVALID_REQUEST", `malformed metadata record: ${why}`);

function b64Field(o: Record<string, unknown>, k: string, min: number, max: number): string {
  const v = o[k];
  if (typeof v !== "string" || v.length > 4 * Math.ceil(max / 3) || !BASE64.test(v)) {
    throw bad(`${k} must be base64`);
  }
  const n = Buffer.from(v, "base64").length;
  if (n < min || n > max) throw bad(`${k} must be ${min}..${max} bytes`);
  return v;
}

/** Validates a user record from storage or the network (hostile input). */
export function parseUserRecord(o: Record<string, unknown>): UserRecord {
  const user = o.user;
  if (typeof user !== "string") throw bad("user must be a string");
  const why = userNameProblem(user);
  if (why !== undefined) throw bad(why);
  if (!isUserMechanism(o.mechanism)) throw bad("mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512");
  const mechanism = o.mechanism;
  if (o.type === "UserScramCredentialDeleted") {
    return { type: "UserScramCredentialDeleted", user, mechanism };
  }
  if (o.type !== "UserScramCredentialSet") throw bad("not a user record");
  const it = o.iterations;
  if (
    typeof it !== "number" || !Number.isInteger(it) || it < MIN_SCRAM_ITERATIONS ||
    it > MAX_SCRAM_ITERATIONS
  ) {
    throw bad(`iterations must be ${MIN_SCRAM_ITERATIONS}..${MAX_SCRAM_ITERATIONS}`);
  }
  const keyLen = mechanism === "SCRAM-SHA-256" ? 32 : 64;
  return {
    type: "UserScramCredentialSet",
    user,
    mechanism,
    iterations: it,
    salt: b64Field(o, "salt", 1, 1024),
    storedKey: b64Field(o, "storedKey", keyLen, keyLen),
    serverKey: b64Field(o, "serverKey", keyLen, keyLen),
  };
}

/** The record that stores `cred` for `user`. */
export function credentialRecord(user: string, cred: StoredScramCredential): UserRecord {
  const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
  return parseUserRecord({
    type: "UserScramCredentialSet",
    user,
    mechanism: cred.mechanism,
    iterations: cred.iterations,
    salt: b64(cred.salt),
    storedKey: b64(cred.storedKey),
    serverKey: b64(cred.serverKey),
  });
}

export function applyUserRecord(db: Conn, r: UserRecord): void {
  const key = and(
    eq(s.scramCredentials.user, r.user),
    eq(s.scramCredentials.mechanism, r.mechanism),
  );
  if (r.type === "UserScramCredentialDeleted") {
    const gone = db.delete(s.scramCredentials).where(key).returning({ u: s.scramCredentials.user })
      .all();
    if (gone.length === 0) {
      throw new MetaError(
        "RESOURCE_NOT_FOUND",
        `Attempt to delete a user credential that does not exist: ${r.mechanism} of ${r.user}`,
      );
    }
    return;
  }
  const row = {
    iterations: r.iterations,
    salt: r.salt,
    storedKey: r.storedKey,
    serverKey: r.serverKey,
  };
  db.insert(s.scramCredentials).values({ user: r.user, mechanism: r.mechanism, ...row })
    .onConflictDoUpdate({
      target: [s.scramCredentials.user, s.scramCredentials.mechanism],
      set: row,
    }).run();
}

export function readScramCredential(
  db: Conn,
  user: string,
  mechanism: UserMechanism,
): StoredScramCredential | undefined {
  const row = db.select().from(s.scramCredentials).where(
    and(eq(s.scramCredentials.user, user), eq(s.scramCredentials.mechanism, mechanism)),
  ).get();
  if (row === undefined) return undefined;
  const bytes = (v: string) => new Uint8Array(Buffer.from(v, "base64"));
  return {
    mechanism,
    iterations: row.iterations,
    salt: bytes(row.salt),
    storedKey: bytes(row.storedKey),
    serverKey: bytes(row.serverKey),
  };
}

/** Every stored credential (mechanism and iterations only), by user name. */
export function listScramCredentials(db: Conn): UserCredentialInfo[] {
  return db.select({
    user: s.scramCredentials.user,
    mechanism: s.scramCredentials.mechanism,
    iterations: s.scramCredentials.iterations,
  }).from(s.scramCredentials).orderBy(
    asc(s.scramCredentials.user),
    asc(s.scramCredentials.mechanism),
  ).all().filter((r): r is UserCredentialInfo => isUserMechanism(r.mechanism));
}

// ---- snapshots --------------------------------------------------------------------------------

export type UserImageRow = typeof s.scramCredentials.$inferSelect;

export function snapshotUsers(db: Conn): UserImageRow[] {
  return db.select().from(s.scramCredentials).orderBy(
    asc(s.scramCredentials.user),
    asc(s.scramCredentials.mechanism),
  ).all();
}

/** Validates the users of a snapshot image (absent in images from before users existed). */
export function parseUserImage(v: unknown): UserImageRow[] {
  return imageRows(v, { list: "users", row: "user" }, (x) => {
    const r = parseUserRecord({ ...x, type: "UserScramCredentialSet" });
    if (r.type !== "UserScramCredentialSet") throw bad("not a credential");
    const { type: _, ...row } = r;
    return row;
  });
}

export function restoreUsers(db: Conn, rows: readonly UserImageRow[]): void {
  db.delete(s.scramCredentials).run();
  for (const r of rows) db.insert(s.scramCredentials).values(r).run();
}
