import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IdentityError } from "../../src/meta/errors.ts";
import { ensureIdentity, isValidClusterId, newClusterId } from "../../src/meta/identity.ts";
import { MetadataStore } from "../../src/meta/store.ts";
import { tempDir } from "./helpers.ts";

describe("data dir identity", () => {
  test("cluster ids look like Kafka's: 22 chars of base64url, random", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const id = newClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(isValidClusterId(id)).toBe(true);
      expect(Buffer.from(id, "base64url").length).toBe(16);
      ids.add(id);
    }
    expect(ids.size).toBe(200);
    expect(isValidClusterId("short")).toBe(false);
  });

  test("created once on first start, then read back unchanged", () => {
    const t = tempDir();
    try {
      const dir = join(t.dir, "nested", "data");
      const a = ensureIdentity(dir);
      expect(a.created).toBe(true);
      expect(a.nodeId).toBe(0);
      const text = readFileSync(join(dir, "meta.properties"), "utf8");
      expect(text).toContain(`cluster.id=${a.clusterId}`);
      expect(text).toContain("node.id=0");
      const b = ensureIdentity(dir);
      expect(b).toEqual({ clusterId: a.clusterId, nodeId: 0, created: false });
      expect(ensureIdentity(dir, { nodeId: 0, expectedClusterId: a.clusterId }).created).toBe(
        false,
      );
    } finally {
      t.cleanup();
    }
  });

  test("the --node-id flag is recorded on first start", () => {
    const t = tempDir();
    try {
      expect(ensureIdentity(t.dir, { nodeId: 7 }).nodeId).toBe(7);
      expect(ensureIdentity(t.dir).nodeId).toBe(7);
    } finally {
      t.cleanup();
    }
  });

  test("a different node id is refused", () => {
    const t = tempDir();
    try {
      ensureIdentity(t.dir, { nodeId: 1 });
      expect(() => ensureIdentity(t.dir, { nodeId: 2 })).toThrow(IdentityError);
      expect(() => ensureIdentity(t.dir, { nodeId: 2 })).toThrow(/belongs to node 1/);
      expect(() => MetadataStore.open(t.dir, { nodeId: 2 })).toThrow(IdentityError);
    } finally {
      t.cleanup();
    }
  });

  test("data of another cluster is refused; a joining node records the expected cluster", () => {
    const t = tempDir();
    try {
      const mine = ensureIdentity(t.dir).clusterId;
      const other = newClusterId();
      expect(() => ensureIdentity(t.dir, { expectedClusterId: other })).toThrow(
        /belongs to cluster/,
      );
      const t2 = tempDir();
      try {
        expect(ensureIdentity(t2.dir, { expectedClusterId: mine, nodeId: 4 }).clusterId).toBe(mine);
      } finally {
        t2.cleanup();
      }
    } finally {
      t.cleanup();
    }
  });

  test("malformed or tampered files are refused with a clear error", () => {
    const t = tempDir();
    try {
      const p = join(t.dir, "meta.properties");
      for (
        const text of [
          "garbage",
          "version=1\nnode.id=0\n",
          "version=2\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=0",
          "version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=-1",
        ]
      ) {
        writeFileSync(p, text);
        expect(() => ensureIdentity(t.dir)).toThrow(IdentityError);
      }
      writeFileSync(p, "# comment\nversion=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=12\n");
      expect(ensureIdentity(t.dir)).toEqual({
        clusterId: "AAAAAAAAAAAAAAAAAAAAAA",
        nodeId: 12,
        created: false,
      });
    } finally {
      t.cleanup();
    }
  });

  test("the store records identity in SQLite too and refuses a db from another identity", async () => {
    const t = tempDir();
    try {
      const s = MetadataStore.open(t.dir, { nodeId: 3 });
      expect(s.nodeId).toBe(3);
      expect(isValidClusterId(s.clusterId)).toBe(true);
      const id = s.clusterId;
      await s.close();
      // meta.properties swapped for another cluster's: meta.db disagrees.
      writeFileSync(
        join(t.dir, "meta.properties"),
        `version=1\ncluster.id=${newClusterId()}\nnode.id=3\n`,
      );
      expect(() => MetadataStore.open(t.dir)).toThrow(/meta.db belongs to cluster/);
      writeFileSync(join(t.dir, "meta.properties"), `version=1\ncluster.id=${id}\nnode.id=3\n`);
      const again = MetadataStore.open(t.dir);
      expect(again.clusterId).toBe(id);
      await again.close();
    } finally {
      t.cleanup();
    }
  });

  test("invalid node ids and cluster ids in options are refused", () => {
    const t = tempDir();
    try {
      expect(() => ensureIdentity(t.dir, { nodeId: -1 })).toThrow(IdentityError);
      expect(() => ensureIdentity(t.dir, { nodeId: 1.5 })).toThrow(IdentityError);
      expect(() => ensureIdentity(t.dir, { expectedClusterId: "nope" })).toThrow(IdentityError);
    } finally {
      t.cleanup();
    }
  });
});
