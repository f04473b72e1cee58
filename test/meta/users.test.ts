// Users' SCRAM credentials as metadata records: stored through the log, never a password,
// refused when malformed, carried by snapshots.
import { afterEach, describe, expect, test } from "bun:test";
import { MetadataStore, parseRecord, restoreTables, snapshotTables } from "../../src/meta/index.ts";
import { deriveCredential } from "../../src/kafka/sasl/scram.ts";
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

const salt = new Uint8Array(16).fill(3);

describe("SCRAM credentials in the metadata", () => {
  test("set, read, replace and delete through the log", async () => {
    const meta = open();
    const c256 = deriveCredential("SCRAM-SHA-256", "pw1", salt, 4096);
    const c512 = deriveCredential("SCRAM-SHA-512", "pw1", salt, 8192);
    await meta.setScramCredential("alice", c256);
    await meta.setScramCredential("alice", c512);
    expect(meta.scramCredential("alice", "SCRAM-SHA-256")).toEqual(c256);
    expect(meta.scramCredential("alice", "SCRAM-SHA-512")).toEqual(c512);
    expect(meta.scramCredential("bob", "SCRAM-SHA-256")).toBeUndefined();
    expect(meta.listScramCredentials()).toEqual([
      { user: "alice", mechanism: "SCRAM-SHA-256", iterations: 4096 },
      { user: "alice", mechanism: "SCRAM-SHA-512", iterations: 8192 },
    ]);
    const c2 = deriveCredential("SCRAM-SHA-256", "pw2", salt, 4096);
    await meta.setScramCredential("alice", c2);
    expect(meta.scramCredential("alice", "SCRAM-SHA-256")).toEqual(c2);
    await meta.deleteScramCredential("alice", "SCRAM-SHA-256");
    expect(meta.scramCredential("alice", "SCRAM-SHA-256")).toBeUndefined();
    await expect(meta.deleteScramCredential("alice", "SCRAM-SHA-256")).rejects.toMatchObject({
      codeName: "RESOURCE_NOT_FOUND",
    });
    // The log holds keys and salt, not the password.
    const log = meta.log.read(1, 100).map((e) => JSON.stringify(e.record)).join("\n");
    expect(log).toContain("UserScramCredentialSet");
    expect(log).not.toContain("pw1");
  });

  test("unacceptable credentials are refused before the log", async () => {
    const meta = open();
    const weak = deriveCredential("SCRAM-SHA-256", "pw", salt, 4096);
    await expect(meta.setScramCredential("a", { ...weak, iterations: 1000 })).rejects
      .toMatchObject({ codeName: "UNACCEPTABLE_CREDENTIAL" });
    await expect(meta.setScramCredential("", weak)).rejects.toMatchObject({
      codeName: "UNACCEPTABLE_CREDENTIAL",
    });
    await expect(meta.setScramCredential("a\0b", weak)).rejects.toMatchObject({
      codeName: "UNACCEPTABLE_CREDENTIAL",
    });
    expect(meta.listScramCredentials()).toEqual([]);
  });

  test("malformed records from the network are refused", () => {
    const good = {
      type: "UserScramCredentialSet",
      user: "alice",
      mechanism: "SCRAM-SHA-256",
      iterations: 4096,
      salt: "AAAA",
      storedKey: Buffer.alloc(32).toString("base64"),
      serverKey: Buffer.alloc(32).toString("base64"),
    };
    expect(parseRecord(good)).toEqual(good as never);
    for (
      const bad of [
        { ...good, mechanism: "SCRAM-SHA-1" },
        { ...good, iterations: 4095 },
        { ...good, iterations: 16385 },
        { ...good, storedKey: Buffer.alloc(64).toString("base64") },
        { ...good, serverKey: "not base64!" },
        { ...good, user: "" },
        { ...good, user: 7 },
        { ...good, password: "x", storedKey: undefined },
        { type: "UserScramCredentialDeleted", user: "alice", mechanism: "PLAIN" },
      ]
    ) {
      expect(() => parseRecord(bad)).toThrow(/malformed metadata record/);
    }
  });

  test("a snapshot carries the users; an image without users restores none", async () => {
    const a = open();
    await a.setScramCredential("alice", deriveCredential("SCRAM-SHA-512", "pw", salt, 4096));
    const image = snapshotTables(a.db);
    const b = open();
    restoreTables(b.db, image, 10, 1);
    expect(b.scramCredential("alice", "SCRAM-SHA-512")).toEqual(
      a.scramCredential("alice", "SCRAM-SHA-512"),
    );
    const old = JSON.parse(image);
    delete old.users;
    restoreTables(b.db, JSON.stringify(old), 11, 1);
    expect(b.listScramCredentials()).toEqual([]);
    const evil = JSON.parse(image);
    evil.users[0].iterations = 1;
    expect(() => restoreTables(b.db, JSON.stringify(evil), 12, 1)).toThrow();
  });
});
