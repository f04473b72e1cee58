// A taken Kafka or HTTP port stops the broker before it writes anything into its data dir, so a
// first start that fails this way leaves no half-initialised cluster identity behind.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runBrokerCommand, tempDir } from "../helpers/broker-process.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("start-up with a listen port already taken", () => {
  for (const what of ["Kafka", "HTTP"] as const) {
    test(`${what} port in use: one clear line, nothing written but the lock`, () => {
      const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      try {
        const root = tempDir();
        dirs.push(root);
        const dataDir = join(root, "data");
        const taken = `127.0.0.1:${holder.port}`;
        const r = runBrokerCommand([
          "--data-dir",
          dataDir,
          "--kafka-addr",
          what === "Kafka" ? taken : "127.0.0.1:0",
          "--http-addr",
          what === "HTTP" ? taken : "127.0.0.1:0",
          "--cluster-addr",
          "127.0.0.1:0",
        ]);
        expect(r.code).toBe(1);
        const lines = r.stderr.trim().split("\n");
        expect(lines.at(-1)).toBe(
          `broker: cannot listen for ${what} on ${taken}: Failed to listen at 127.0.0.1 (is the port in use?)`,
        );
        // No meta.db, no cluster id, no Raft state: only the lock taken before the probe.
        expect(readdirSync(dataDir).filter((f) => f !== ".lock")).toEqual([]);
      } finally {
        holder.stop(true);
      }
    });
  }
});
