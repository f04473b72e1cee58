// The CLI against a cluster of three real brokers: a topic whose partitions are led by different
// brokers is produced, consumed, followed and read as a group through brokers that lead only
// some of them; a produce keeps going through the failover of a partition's leader.
import { expect, test } from "bun:test";
import { brokerCommand, type RunningBroker } from "../helpers/broker-process.ts";
import { BrokerSet, waitFor as waitForValue } from "../helpers/processes.ts";

const brokers = new BrokerSet("SIGKILL");
const start = (id: number, join?: string) => brokers.voter(id, join, "cli-cluster-");

/** The CLI against `server` (HOST:PORT, as operators type it). */
async function cli(server: RunningBroker | string, args: string[], stdin?: string) {
  const s = typeof server === "string" ? server : server.httpUrl.replace("http://", "");
  const p = Bun.spawn([...brokerCommand(), ...args, "--server", s], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill(9), 45_000);
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  clearTimeout(timer);
  return { code, out, err };
}

interface Desc {
  partitions: { partition: number; leader: number; isr: number[] }[];
}

const waitFor = <T>(what: string, ms: number, fn: () => Promise<T | undefined>) =>
  waitForValue(what, ms, fn, 200);

const lines = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `key${(from + i) % 50}:v${from + i}`).join("\n") + "\n";

test(
  "produce, consume, follow, group consume and describe through any broker; a leader's failover",
  async () => {
    const b0 = await start(0);
    const [b1, b2] = await Promise.all([start(1, b0.clusterAddr), start(2, b0.clusterAddr)]);
    const bs = [b0, b1, b2];
    const create = await waitFor("topic created", 20_000, async () => {
      const r = await cli(b0, [
        "topic",
        "create",
        "t3",
        "--partitions",
        "3",
        "--replication-factor",
        "3",
      ]);
      return r.code === 0 ? r : undefined;
    });
    expect(create.out).toContain("created topic t3");
    // Each broker leads one partition, with all three replicas in sync.
    const desc = await waitFor("leaders on three brokers", 20_000, async () => {
      const r = await cli(b2, ["topic", "describe", "t3", "--json"]);
      const d = JSON.parse(r.out) as Desc;
      const leaders = new Set(d.partitions.map((p) => p.leader));
      return leaders.size === 3 && d.partitions.every((p) => p.isr.length === 3) ? d : undefined;
    });
    expect(desc.partitions).toHaveLength(3);

    // Produced through broker 1: the partitions led by 0 and 2 are written there.
    const p = await cli(b1, ["produce", "t3", "-K", ":"], lines(0, 300));
    expect([p.code, p.err]).toEqual([0, "produced 300 record(s) to t3\n"]);
    const d2 = JSON.parse((await cli(b0, ["topic", "describe", "t3", "--json"])).out) as {
      partitions: { high_watermark: number }[];
    };
    expect(d2.partitions.every((x) => x.high_watermark > 0)).toBe(true);
    // At least once: a request retried while a leader was not ready yet may write a partition's
    // part twice. What is in the log is read exactly once below.
    const stored = d2.partitions.reduce((n, x) => n + x.high_watermark, 0);
    expect(stored).toBeGreaterThanOrEqual(300);

    // Read through broker 2, followed through broker 0, as a group member through broker 1.
    const c = await cli(b2, ["consume", "t3", "--format", "{key}={value}"]);
    expect(c.code).toBe(0);
    const read = c.out.trim().split("\n");
    expect(read).toHaveLength(stored);
    expect([...new Set(read)].sort()).toEqual(
      lines(0, 300).trim().split("\n").map((l) => l.replace(":", "=")).sort(),
    );
    const fromStart = ["--from", "earliest", "--count", `${stored}`];
    const f = await cli(b0, ["consume", "t3", "--follow", ...fromStart]);
    expect([f.code, f.out.trim().split("\n").length]).toEqual([0, stored]);
    const g = await cli(b1, ["consume", "t3", "--group", "g3"]);
    expect([g.code, g.out.trim().split("\n").length]).toEqual([0, stored]);
    const gd = await cli(b2, ["group", "describe", "g3"]);
    expect(gd.code).toBe(0);
    expect(gd.out).toContain("total lag 0");
    expect(gd.out.match(/^t3\s+\d/gm)).toHaveLength(3);

    // SIGKILL the leader of a partition (not broker 0, which the CLI talks to): the produce
    // waits out the election (503s retried) and writes everything.
    const victimId = desc.partitions.map((x) => x.leader).find((id) => id !== 0)!;
    bs[victimId].kill("SIGKILL");
    await bs[victimId].exited;
    const p2 = await cli(b0, ["produce", "t3", "-K", ":"], lines(300, 300));
    expect([p2.code, p2.err]).toEqual([0, "produced 300 record(s) to t3\n"]);
    // Read through the survivor that is not broker 0; a dead broker first in the list is skipped.
    const survivor = bs.find((_b, i) => i !== 0 && i !== victimId)!;
    const dead = bs[victimId].httpUrl.replace("http://", "");
    const c2 = await cli(`${dead},${survivor.httpUrl.replace("http://", "")}`, ["consume", "t3"]);
    expect(c2.code).toBe(0);
    // At least once: a batch retried after the leader died may be written twice.
    const got = new Set(c2.out.trim().split("\n"));
    for (let i = 0; i < 600; i++) expect(got.has(`v${i}`)).toBe(true);
  },
  120_000,
);
