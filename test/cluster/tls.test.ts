// The cluster port over mutual TLS (--cluster-tls-cert/-key/-ca), on three real processes: the
// cluster forms, replicates (every follower's own copy read back), passes HTTP produce on to
// leaders and fails over with every broker-to-broker connection on TLS; and a peer that does not
// speak TLS, or presents a certificate of another CA or none, is refused before anything it sends
// is read, even holding the join token (metadata compared before and after).
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import { ClusterTls } from "../../src/cluster/tls.ts";
import { clusterRequest, FrameKind, jsonFrame } from "../../src/cluster/transport.ts";
import { type RunningBroker, tempDir, TEST_JOIN_TOKEN } from "../helpers/broker-process.ts";
import { clusterTlsArgs, makeTestCerts, type TestCerts } from "../helpers/certs.ts";
import { plainHelloAnswer } from "../helpers/cluster-probe.ts";
import { BrokerSet, voterArgs, waitFor } from "../helpers/processes.ts";
import { api } from "../helpers/http.ts";

const brokers = new BrokerSet("SIGKILL");
let certs: TestCerts;
const bs: RunningBroker[] = [];

const call = (b: RunningBroker, method: string, path: string, body?: unknown) =>
  api(b.httpUrl, method, path, body).then((r) => ({ status: r.status, body: r.json }));

interface PartitionView {
  partition: number;
  leader: number;
  isr: number[];
}

const partitions = async (b: RunningBroker, t: string): Promise<PartitionView[]> =>
  (await call(b, "GET", `/topics/${t}`)).body?.partitions ?? [];

const pemOf = (f: string) => readFileSync(f, "utf8");

beforeAll(async () => {
  certs = await makeTestCerts();
  const tls = clusterTlsArgs(certs);
  const start = (id: number, join?: string) =>
    brokers.start({
      dataDir: tempDir("cluster-tls-"),
      args: [...voterArgs(id, join, 2000), ...tls],
      timeoutMs: 30_000,
    });
  bs.push(await start(0));
  bs.push(...await Promise.all([start(1, bs[0].clusterAddr), start(2, bs[0].clusterAddr)]));
  expect(bs[0].logs.join("\n")).toContain('"cluster_tls":"mutual"');
}, 90_000);

describe("a cluster whose port speaks mutual TLS", () => {
  test("replicates, forwards HTTP produce to leaders and fails over", async () => {
    const r = await call(bs[0], "POST", "/topics", {
      name: "tls-rf3",
      partitions: 3,
      replication_factor: 3,
      configs: { "min.insync.replicas": "2" },
    });
    expect(r.status).toBe(201);
    const parts = await waitFor("tls-rf3 led and in sync everywhere", 20_000, async () => {
      for (const b of bs) {
        const ps = await partitions(b, "tls-rf3");
        if (ps.length !== 3 || ps.some((p) => p.leader < 0 || p.isr.length < 3)) return undefined;
      }
      return await partitions(bs[0], "tls-rf3");
    });
    // Every broker writes to every partition: two of three are led elsewhere (passed on).
    for (const p of parts) {
      for (const [i, b] of bs.entries()) {
        const w = await call(b, "POST", `/topics/tls-rf3/records?partition=${p.partition}`, {
          value: { via: i },
        });
        expect(w.status).toBe(200);
      }
    }
    // Each follower's own copy holds the 3 records (replica fetches over TLS).
    for (const p of parts) {
      for (const b of bs) {
        await waitFor(`broker's copy of tls-rf3-${p.partition}`, 10_000, async () => {
          const q = await call(
            b,
            "GET",
            `/topics/tls-rf3/partitions/${p.partition}/records?replica=local&limit=100`,
          );
          return q.body?.records?.length === 3 ? true : undefined;
        });
      }
    }
    // Kill the leader of partition 0; the survivors elect another (Raft, sessions over TLS).
    const victim = parts[0].leader;
    bs[victim].kill("SIGKILL");
    await bs[victim].exited;
    const alive = bs.filter((_b, i) => i !== victim);
    const after = await waitFor("a new leader of tls-rf3-0", 30_000, async () => {
      const ps = await partitions(alive[0], "tls-rf3");
      const p0 = ps.find((p) => p.partition === 0);
      return p0 !== undefined && p0.leader >= 0 && p0.leader !== victim ? ps : undefined;
    });
    const w = await waitFor("an acknowledged write after the failover", 20_000, async () => {
      const x = await call(alive[0], "POST", "/topics/tls-rf3/records?partition=0", {
        value: "after",
      });
      return x.status === 200 ? x : undefined;
    });
    // Nothing acknowledged before the kill is lost, and the new write is where it was acked (a
    // try refused during the election may have been appended too: offsets past 3 are allowed).
    const acked = w.body.offsets[0].offset as number;
    expect(acked).toBeGreaterThanOrEqual(3);
    const leader0 = bs[after.find((p) => p.partition === 0)!.leader];
    const all = await call(leader0, "GET", "/topics/tls-rf3/partitions/0/records?limit=100");
    const values = new Map(
      (all.body.records as { offset: number; value: unknown }[]).map((x) => [x.offset, x.value]),
    );
    expect([0, 1, 2].map((o) => values.get(o))).toEqual([{ via: 0 }, { via: 1 }, { via: 2 }]);
    expect(values.get(acked)).toBe("after");
  }, 120_000);

  test("plain peers, peers of another CA and peers without a certificate are refused", async () => {
    const target = bs.find((b) => b.proc.exitCode === null && b.proc.signalCode === null)!;
    // What the attempts could change: topics, and members with their addresses and states.
    const metadata = async () =>
      JSON.stringify([
        (await call(target, "GET", "/topics")).body,
        ((await call(target, "GET", "/cluster")).body?.brokers as Record<string, unknown>[])
          .map(({ heartbeat_age_ms: _, ...b }) => b),
      ]);
    const before = await metadata();
    const ca = pemOf(certs.caCert);
    const good = new ClusterTls({
      cert: pemOf(certs.peerCert),
      key: pemOf(certs.peerKey),
      ca,
    });
    // The control: a peer with the CA's certificate and the token is served.
    const status = await clusterRequest(target.clusterAddr, "status", {}, 5000, {
      token: TEST_JOIN_TOKEN,
      tls: good,
    }) as { clusterId: string };
    expect(typeof status.clusterId).toBe("string");
    // Holding the token is not enough without TLS, or with a certificate of another CA.
    const rogue = new ClusterTls({
      cert: pemOf(certs.roguePeerCert),
      key: pemOf(certs.roguePeerKey),
      ca,
    });
    for (const tls of [undefined, rogue]) {
      for (const method of ["status", "appendRecord", "register"]) {
        await expect(
          clusterRequest(target.clusterAddr, method, { nodeId: 7, addr: "127.0.0.1:1" }, 7000, {
            token: TEST_JOIN_TOKEN,
            tls,
          }),
        ).rejects.toThrow();
      }
    }
    // A plain hello gets no challenge back (nothing of the cluster handshake), only a close.
    const [host, port] = target.clusterAddr.split(":");
    const plainBytes = (await plainHelloAnswer(target.clusterAddr)).toString("latin1");
    expect(plainBytes).not.toContain("nonce");
    // A TLS client without a certificate: the handshake fails, nothing is served.
    const noCert = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host, port: Number(port), ca });
      s.on("secureConnect", () => s.write(jsonFrame(FrameKind.hello, { nonce: "B".repeat(32) })));
      let got = "";
      s.on("data", (d) => (got += d.toString("latin1")));
      s.on("error", (e) => resolve(`error: ${e.message} ${got}`));
      s.on("close", () => resolve(got));
      setTimeout(() => s.destroy(), 8000);
    });
    expect(noCert).not.toContain("nonce");
    // The other way round: a broker with TLS refuses a server that is not of its CA.
    const otherCa = new ClusterTls({
      cert: pemOf(certs.peerCert),
      key: pemOf(certs.peerKey),
      ca: pemOf(certs.roguePeerCert),
    });
    await expect(
      clusterRequest(target.clusterAddr, "status", {}, 5000, {
        token: TEST_JOIN_TOKEN,
        tls: otherCa,
      }),
    ).rejects.toThrow();
    expect(await metadata()).toBe(before);
    expect(target.logs.join("\n")).toContain("cluster authentication failed");
  }, 120_000);
});
