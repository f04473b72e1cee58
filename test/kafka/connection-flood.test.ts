// Issue 17's descriptor proof on a real broker: 25,000 connection attempts at the Kafka port of a
// broker limited to 4,096 descriptors (before the limits, ~20k idle sockets used up every
// descriptor and /healthz, produce and the recovery checkpoint failed with EMFILE). The broker
// keeps what --max-connections (lowered to fit the descriptors) allows, closes the rest at once,
// and meanwhile answers /healthz, takes an acks=all produce and writes its recovery checkpoint.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { brokerCommand } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import { BrokerSet, metric, waitFor } from "../helpers/processes.ts";

const brokers = new BrokerSet("SIGKILL");
const ATTEMPTS = 25_000;
const WAVE = 1000;

/** One connection attempt: resolves once connected (kept while the broker keeps it) or failed. */
function attempt(port: number, from: string, held: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port, localAddress: from });
    held.add(s);
    const drop = () => {
      held.delete(s);
      s.destroy();
      resolve();
    };
    s.once("connect", () => resolve());
    s.once("error", drop);
    s.once("close", drop);
    s.once("end", drop);
  });
}

test(
  `${ATTEMPTS} connection attempts leave /healthz, produce and checkpoints working`,
  async () => {
    const b = await brokers.start({
      command: ["prlimit", "--nofile=4096:4096", ...brokerCommand()],
    });
    const limits = JSON.parse(b.logs.find((l) => l.includes('"Kafka listener limits"'))!);
    expect(limits.open_file_limit).toBe(4096);
    const max = limits.max_connections as number;
    expect(max).toBeLessThanOrEqual(3072);
    expect((await api(b.httpUrl, "POST", "/topics", { name: "flood", partitions: 1 })).status).toBe(
      201,
    );
    const held = new Set<Socket>();
    try {
      let health = 0;
      for (let i = 0; i < ATTEMPTS; i += WAVE) {
        // From 25 addresses: each stays under max.connections.per.ip, so max.connections is reached.
        await Promise.all(
          Array.from(
            { length: WAVE },
            (_, k) => attempt(b.kafkaPort, `127.0.0.${2 + (k % 25)}`, held),
          ),
        );
        if ((i / WAVE) % 5 === 4) {
          const h = await fetch(`${b.httpUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
          expect(h.status).toBe(200);
          health++;
        }
      }
      expect(health).toBe(ATTEMPTS / WAVE / 5);
      // The broker holds what it allows; the others were closed at once (counted as refused).
      const open = await waitFor("the broker's connection count to settle", 20_000, async () => {
        const n = await metric(b, 'broker_connections{listener="kafka"}');
        return n <= max ? n : undefined;
      });
      console.log(
        `connection flood: ${ATTEMPTS} attempts, ${open} held by the broker (max ${max}), ` +
          `${held.size} still open here`,
      );
      expect(open).toBe(max);
      const refused = await metric(
        b,
        'broker_connections_refused_total{listener="kafka",limit="max_connections"}',
      );
      expect(refused).toBeGreaterThanOrEqual(ATTEMPTS - max - WAVE);
      // While those are held: a produce with acks=all, and its recovery checkpoint written.
      const w = await api(b.httpUrl, "POST", "/topics/flood/records?acks=all", [
        { value: "a" },
        { value: "b" },
      ]);
      expect(w.status).toBe(200);
      const cp = join(b.dataDir, "logs", "flood-0", "recovery-checkpoint.json");
      await waitFor("a recovery checkpoint covering the produce", 15_000, () =>
        Promise.resolve(
          existsSync(cp) && JSON.parse(readFileSync(cp, "utf8")).recoveryPoint >= 2
            ? true
            : undefined,
        ));
      expect(b.logs.some((l) => l.includes("EMFILE"))).toBe(false);
    } finally {
      for (const s of held) s.destroy();
    }
  },
  240_000,
);
