// The cluster port's adapters: frame codec limits, hostile input on the TCP and UDP sockets,
// and the SQLite Raft storage across a reopen.
import { afterAll, expect, test } from "bun:test";
import { createSocket } from "node:dgram";
import { createConnection } from "node:net";
import { SqliteRaftStorage } from "../../src/cluster/raft-storage-sqlite.ts";
import { ClusterKey, ReplayWindow } from "../../src/cluster/auth.ts";
import {
  ClusterNet,
  clusterRequest,
  encodeFrame,
  FrameDecoder,
  FrameError,
  FrameKind,
  jsonFrame,
  unwrapSwim,
  wrapSwim,
} from "../../src/cluster/transport.ts";
import { tempDir } from "../helpers/broker-process.ts";

const nets: ClusterNet[] = [];
afterAll(() => nets.forEach((n) => n.close()));
const TOKEN = "adapters-test-token-0123456789abcdefghijklmnop";
const key = new ClusterKey(TOKEN);
const auth = { token: TOKEN };

test("FrameDecoder: frames split anywhere reassemble; bad length, version or kind throw", () => {
  const f1 = jsonFrame(FrameKind.raft, { a: 1 });
  const f2 = encodeFrame(FrameKind.swim, new Uint8Array(5000).fill(7));
  const both = new Uint8Array([...f1, ...f2]);
  const d = new FrameDecoder();
  const got = [];
  for (let i = 0; i < both.length; i += 333) got.push(...d.push(both.subarray(i, i + 333)));
  expect(got.map((f) => f.kind)).toEqual([FrameKind.raft, FrameKind.swim]);
  expect(got[1].payload.length).toBe(5000);
  const small = new FrameDecoder(100);
  expect(() => small.push(new Uint8Array([0, 0, 1, 0, 1, 2]))).toThrow(FrameError);
  const badVersion = encodeFrame(FrameKind.raft, new Uint8Array(1));
  badVersion[4] = 9;
  expect(() => new FrameDecoder().push(badVersion)).toThrow(FrameError);
  const badKind = encodeFrame(FrameKind.raft, new Uint8Array(1));
  badKind[5] = 200;
  expect(() => new FrameDecoder().push(badKind)).toThrow(FrameError);
});

test("gossip envelope round-trips, carries a MAC and rejects truncation", () => {
  const w = wrapSwim(
    key,
    "X5QWGSrLTYK_8d9B5kAJwQ",
    "127.0.0.1:9093",
    7,
    123456,
    new Uint8Array([1, 2, 3]),
  );
  const u = unwrapSwim(w)!;
  expect(u.clusterId).toBe("X5QWGSrLTYK_8d9B5kAJwQ");
  expect(u.fromAddr).toBe("127.0.0.1:9093");
  expect(u.sender).toBe(7);
  expect(u.counter).toBe(123456);
  expect([...u.swim]).toEqual([1, 2, 3]);
  expect(key.checkSwimMac(u.signed, u.mac)).toBe(true);
  expect(new ClusterKey("another-token-0123456789abcdefghijklmnopq").checkSwimMac(u.signed, u.mac))
    .toBe(false);
  expect(unwrapSwim(w.subarray(0, 10))).toBeUndefined();
  expect(unwrapSwim(new Uint8Array([2, 0, 0]))).toBeUndefined();
});

test("replay window: each counter once per sender, reordering within 5 s, nothing older", () => {
  const w = new ReplayWindow();
  const t = 1_700_000_000_000_000;
  expect(w.accept(1, t)).toBe(true);
  expect(w.accept(1, t)).toBe(false); // replay
  expect(w.accept(2, t)).toBe(true); // another sender's counters are its own
  expect(w.accept(1, t + 3_000_000)).toBe(true);
  expect(w.accept(1, t + 1_000_000)).toBe(true); // late, but within the window
  expect(w.accept(1, t + 1_000_000)).toBe(false);
  expect(w.accept(1, t + 9_000_000)).toBe(true);
  expect(w.accept(1, t + 3_500_000)).toBe(false); // more than 5 s below the newest
});

test("ClusterNet: hostile bytes never reach the handlers or crash; requests still work", async () => {
  const net = await ClusterNet.bind("127.0.0.1", 0);
  nets.push(net);
  const raft: unknown[] = [];
  const swim: unknown[] = [];
  net.setIdentity({
    clusterId: "X5QWGSrLTYK_8d9B5kAJwQ",
    nodeId: 1,
    addr: `127.0.0.1:${net.port}`,
  }, key);
  net.setHandlers({
    onRaft: (m) => raft.push(m),
    onPeer: () => {},
    onSwim: (b) => swim.push(b),
    onRequest: (method, body) =>
      method === "echo" ? Promise.resolve(body) : Promise.reject(new Error("no such method")),
  });
  const send = (bytes: Uint8Array) =>
    new Promise<void>((resolve) => {
      const s = createConnection({ host: "127.0.0.1", port: net.port }, () => {
        s.write(bytes);
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
      s.on("error", () => resolve());
    });
  // Garbage, a huge length, a raft frame without a handshake, a hello of another cluster, an
  // old-style hello (no handshake) followed by raft frames: none reaches the handlers.
  await send(new Uint8Array(64).map((_, i) => (i * 37) & 255));
  await send(new Uint8Array([0xff, 0xff, 0xff, 0xff, 1, 2]));
  await send(jsonFrame(FrameKind.raft, { type: "hb", from: 2, to: 1 }));
  await send(
    new Uint8Array([
      ...jsonFrame(FrameKind.hello, {
        clusterId: "AAAAAAAAAAAAAAAAAAAAAA",
        nodeId: 2,
        addr: "h:1",
      }),
      ...jsonFrame(FrameKind.raft, { type: "hb", from: 2, to: 1 }),
    ]),
  );
  await send(
    new Uint8Array([
      ...jsonFrame(FrameKind.hello, {
        clusterId: "X5QWGSrLTYK_8d9B5kAJwQ",
        nodeId: 2,
        addr: "h:1",
      }),
      ...jsonFrame(FrameKind.raft, { type: "hb", from: 3, to: 1 }),
      ...jsonFrame(FrameKind.raft, { type: "hb", from: 2, to: 1 }),
    ]),
  );
  // UDP: garbage, another cluster's gossip and a wrong key's are dropped; ours gets through
  // once (the same datagram again is a replay).
  const udp = createSocket("udp4");
  const dgram = (b: Uint8Array) => udp.send(b, net.port, "127.0.0.1");
  const other = new ClusterKey("another-token-0123456789abcdefghijklmnopq");
  dgram(new Uint8Array([1, 2, 3, 4]));
  dgram(wrapSwim(key, "AAAAAAAAAAAAAAAAAAAAAA", "h:1", 2, 1, new Uint8Array([9])));
  dgram(wrapSwim(other, "X5QWGSrLTYK_8d9B5kAJwQ", "h:1", 2, 1, new Uint8Array([9])));
  const good = wrapSwim(key, "X5QWGSrLTYK_8d9B5kAJwQ", "h:1", 2, 1, new Uint8Array([9]));
  dgram(good);
  await Bun.sleep(50);
  dgram(good);
  await Bun.sleep(100);
  udp.close();
  expect(raft).toEqual([]);
  expect(swim.length).toBe(1);
  expect(await clusterRequest(`127.0.0.1:${net.port}`, "echo", { x: 1 }, 1000, auth)).toEqual({
    x: 1,
  });
  await expect(clusterRequest(`127.0.0.1:${net.port}`, "nope", {}, 1000, auth)).rejects.toThrow(
    "no such method",
  );
  await expect(
    clusterRequest(`127.0.0.1:${net.port}`, "echo", {}, 1000, {
      token: "wrong-token-0123456789abcdefghijklmnopqrstu",
    }),
  ).rejects.toThrow("cluster authentication failed");
});

test("SqliteRaftStorage: hard state, entries and snapshots survive a reopen", async () => {
  const dir = tempDir("raftdb-");
  const st = new SqliteRaftStorage(dir);
  expect(st.isEmpty()).toBe(true);
  await st.save(
    { term: 3, vote: 2, commit: 2 },
    [
      { index: 1, term: 1, kind: "noop" },
      { index: 2, term: 3, kind: "normal", data: "a" },
      { index: 3, term: 3, kind: "conf", change: { op: "addLearner", node: 4 } },
    ],
    undefined,
    true,
  );
  // A conflicting suffix replaces everything from its first index on.
  await st.save(undefined, [{ index: 3, term: 4, kind: "normal", data: "b" }], undefined, true);
  st.setKv("k", "v");
  st.close();
  const again = new SqliteRaftStorage(dir);
  const p = again.load();
  expect(p.hardState).toEqual({ term: 3, vote: 2, commit: 2 });
  expect(p.entries.map((e) => [e.index, e.term])).toEqual([[1, 1], [2, 3], [3, 4]]);
  await again.saveSnapshot({
    meta: { index: 2, term: 3, config: { voters: [1], learners: [] } },
    data: "img",
  });
  const q = again.load();
  expect(q.snapshot?.meta.index).toBe(2);
  expect(q.entries.map((e) => e.index)).toEqual([3]);
  expect(again.getKv("k")).toBe("v");
  again.close();
});

test("ClusterNet: a call handler that throws at once answers an error; the process lives on", async () => {
  const net = await ClusterNet.bind("127.0.0.1", 0);
  nets.push(net);
  const clusterId = "X5QWGSrLTYK_8d9B5kAJwQ";
  net.setIdentity({ clusterId, nodeId: 1, addr: `127.0.0.1:${net.port}` }, key);
  net.setHandlers({
    onRaft: () => {},
    onPeer: () => {},
    onSwim: () => {},
    onRequest: () => {
      throw new Error("thrown, not rejected");
    },
    onCall: (_from, method) => {
      if (method === "boom") throw new Error("thrown, not rejected");
      return Promise.resolve({ body: { from: _from } });
    },
  });
  const { PeerLink } = await import("../../src/cluster/peer-link.ts");
  const link = new PeerLink(`127.0.0.1:${net.port}`, () => ({
    key,
    clusterId,
    nodeId: 7,
    addr: "127.0.0.1:1",
    session: "peer",
  }));
  await expect(link.call("boom", {}, 2000)).rejects.toThrow("thrown, not rejected");
  // The caller is the handshake's node id, and the connection still serves.
  expect((await link.call("ok", {}, 2000)).body).toEqual({ from: 7 });
  link.close();
  const { clusterRequest } = await import("../../src/cluster/transport.ts");
  await expect(clusterRequest(`127.0.0.1:${net.port}`, "x", {}, 2000, auth)).rejects.toThrow(
    "thrown, not rejected",
  );
});
