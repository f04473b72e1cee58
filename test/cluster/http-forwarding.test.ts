// HTTP on any broker (3 real processes): produce, single-partition and whole-topic reads, stored
// batches (GET …/batches), a live tail and the group member flow through brokers that lead none
// of the partitions involved (or do not coordinate the group), forwarded to the leaders over the
// cluster port; and 503 while a partition has no leader.
import { beforeAll, describe, expect, test } from "bun:test";
import { offsetsPartitionFor } from "../../src/groups/index.ts";
import { PeerLink } from "../../src/cluster/peer-link.ts";
import { ClusterKey } from "../../src/cluster/auth.ts";
import { type RunningBroker, TEST_JOIN_TOKEN } from "../helpers/broker-process.ts";
import { BrokerSet, waitFor } from "../helpers/processes.ts";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";

const brokers = new BrokerSet("SIGKILL");
const start = (id: number, join?: string) => brokers.voter(id, join, "forward-");

interface Res {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

async function call(b: RunningBroker, method: string, path: string, body?: unknown): Promise<Res> {
  const r = await fetch(`${b.httpUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

interface PartitionView {
  partition: number;
  leader: number;
  isr: number[];
}

async function leaders(b: RunningBroker, topic: string): Promise<PartitionView[]> {
  const r = await call(b, "GET", `/topics/${topic}`);
  expect(r.status).toBe(200);
  return r.body.partitions;
}

/** A topic whose every partition has a leader and (RF > 1) a full ISR, seen by every broker. */
async function createTopic(bs: RunningBroker[], name: string, partitions: number, rf: number) {
  const r = await call(bs[0], "POST", "/topics", {
    name,
    partitions,
    replication_factor: rf,
  });
  expect(r.status).toBe(201);
  return await waitFor(`${name} led and in sync everywhere`, 15_000, async () => {
    for (const b of bs) {
      const ps = await leaders(b, name);
      if (ps.length !== partitions || ps.some((p) => p.leader < 0 || p.isr.length < rf)) {
        return undefined;
      }
    }
    return await leaders(bs[0], name);
  });
}

let bs: RunningBroker[] = [];

beforeAll(async () => {
  const b0 = await start(0);
  const [b1, b2] = await Promise.all([start(1, b0.clusterAddr), start(2, b0.clusterAddr)]);
  bs = [b0, b1, b2];
  // Every broker registered and unfenced (it can lead what it is given).
  await waitFor("three live brokers", 30_000, async () => {
    const c = await call(b2, "GET", "/cluster");
    const brokers = c.body.brokers as { fenced?: boolean }[] | undefined;
    return brokers?.length === 3 && brokers.every((x) => !x.fenced) ? true : undefined;
  });
}, 60_000);

describe("HTTP on any broker", () => {
  test("produce via any broker to partitions led elsewhere (RF 1 and RF 3)", async () => {
    for (const [topic, rf] of [["rf1", 1], ["rf3", 3]] as const) {
      const parts = await createTopic(bs, topic, 3, rf);
      expect(new Set(parts.map((p) => p.leader)).size).toBe(3); // one partition led by each
      for (const p of parts) {
        for (const [i, b] of bs.entries()) {
          // Explicit partition, led by another broker for two of the three.
          const r = await call(b, "POST", `/topics/${topic}/records?partition=${p.partition}`, {
            key: `k${i}`,
            value: { via: i, to: p.partition },
          });
          expect(r.status).toBe(200);
          expect(r.body.offsets[0].partition).toBe(p.partition);
          expect(r.body.offsets[0].offset).toBe(i);
        }
      }
      // Keyed records spanning every leader in one request, through one broker: split per leader.
      const keyed = Array.from({ length: 30 }, (_, i) => ({ key: `key-${i}`, value: i }));
      const r = await call(bs[1], "POST", `/topics/${topic}/records`, keyed);
      expect(r.status).toBe(200);
      const used = new Set((r.body.offsets as { partition: number }[]).map((o) => o.partition));
      expect(used.size).toBe(3);
      // Confluent v2 to one partition led elsewhere.
      const other = parts.find((p) => p.leader !== 2)!;
      const v2 = await fetch(`${bs[2].httpUrl}/topics/${topic}/partitions/${other.partition}`, {
        method: "POST",
        headers: { "content-type": "application/vnd.kafka.json.v2+json" },
        body: JSON.stringify({ records: [{ value: { v2: true } }] }),
      });
      expect(v2.status).toBe(200);
      // Every record is at its partition's leader: 3 + keyed + v2.
      const total = (await Promise.all(
        parts.map(async (p) => {
          const q = await call(
            bs[p.leader],
            "GET",
            `/topics/${topic}/partitions/${p.partition}/records?limit=1000`,
          );
          expect(q.status).toBe(200);
          return q.body.records.length as number;
        }),
      )).reduce((a, b) => a + b, 0);
      expect(total).toBe(9 + 30 + 1);
      // replica=local reads a broker's own copy (a follower's, for checking replicas) instead.
      const p0 = parts[0];
      const follower = bs.find((_b, i) => i !== p0.leader)!;
      const own = await waitFor("the follower's copy", 10_000, async () => {
        const q = await call(
          follower,
          "GET",
          `/topics/${topic}/partitions/${p0.partition}/records?replica=local&limit=1000`,
        );
        return rf === 1 || q.body.records?.length >= 3 ? q : undefined;
      });
      expect(own.status).toBe(rf === 1 ? 404 : 200);
    }
  }, 60_000);

  test(
    "stored batches (GET …/batches) via every broker, leader or not: the same records, paged by X-Next-Offset; empty at the high watermark, 416 past it",
    async () => {
      const parts = await createTopic(bs, "raw", 3, 1);
      const N = 120;
      const want = (p: number) =>
        Array.from({ length: N }, (_, i) => `p${p}-${i}-${"v".repeat(60)}`);
      for (const p of parts) {
        // Several appends, so several stored batches.
        for (let from = 0; from < N; from += 30) {
          const values = want(p.partition).slice(from, from + 30).map((value) => ({ value }));
          const r = await call(
            bs[p.leader],
            "POST",
            `/topics/raw/records?partition=${p.partition}`,
            values,
          );
          expect(r.status).toBe(200);
        }
      }
      const dec = new TextDecoder();
      for (const p of parts) {
        for (const [i, b] of bs.entries()) {
          const url = (offset: number, maxBytes = 2048) =>
            `${b.httpUrl}/topics/raw/partitions/${p.partition}/batches?offset=${offset}&max_bytes=${maxBytes}`;
          // From an offset inside a batch, in pages of about 2 KiB, until the high watermark.
          const got: string[] = [];
          let offset = 7;
          let pages = 0;
          for (; offset < N && pages < 100; pages++) {
            const r = await fetch(url(offset), { signal: AbortSignal.timeout(20_000) });
            expect(r.status).toBe(200);
            expect(r.headers.get("content-type")).toBe("application/vnd.kafka.record-batch");
            expect(r.headers.get("x-high-watermark")).toBe(String(N));
            expect(r.headers.get("x-log-start-offset")).toBe("0");
            const batches = decodeRecordBatches(new Uint8Array(await r.arrayBuffer()));
            expect(batches.length).toBeGreaterThan(0);
            for (const x of batches) {
              for (const rec of x.records ?? []) {
                if (rec.offset >= offset) got.push(dec.decode(rec.value!));
              }
            }
            const next = Number(r.headers.get("x-next-offset"));
            expect(next).toBe(
              batches.at(-1)!.header.baseOffset + batches.at(-1)!.header.lastOffsetDelta + 1,
            );
            offset = next;
          }
          expect({ broker: i, leader: p.leader, values: got }).toEqual({
            broker: i,
            leader: p.leader,
            values: want(p.partition).slice(7),
          });
          expect(pages).toBeGreaterThan(1);
          const atEnd = await fetch(url(N));
          expect(atEnd.status).toBe(200);
          expect((await atEnd.arrayBuffer()).byteLength).toBe(0);
          expect(atEnd.headers.get("x-next-offset")).toBe(String(N));
          const past = await call(
            b,
            "GET",
            `/topics/raw/partitions/${p.partition}/batches?offset=${N + 1}`,
          );
          expect(past.status).toBe(416);
          expect(past.body).toMatchObject({
            error_code: 41601,
            high_watermark: N,
            log_start_offset: 0,
          });
        }
      }
      // A partition that does not exist is 404 everywhere (not passed on).
      const none = await call(bs[0], "GET", "/topics/raw/partitions/9/batches?offset=0");
      expect(none.status).toBe(404);
    },
    60_000,
  );

  test(
    "a partition and a whole topic read via a broker that leads none of it; NDJSON and SSE tails there receive later records",
    async () => {
      const parts = await createTopic(bs, "two", 2, 1);
      const ledBy = new Set(parts.map((p) => p.leader));
      const outsider = bs.find((_b, i) => !ledBy.has(i))!;
      const producer = bs.find((_b, i) => ledBy.has(i))!;
      for (const p of parts) {
        const r = await call(producer, "POST", `/topics/two/records?partition=${p.partition}`, [
          { value: `a${p.partition}` },
          { value: `b${p.partition}` },
        ]);
        expect(r.status).toBe(200);
      }
      // One partition, from an offset, from a time, and a 416 out of range: as on its leader.
      const one = await call(outsider, "GET", "/topics/two/partitions/1/records?offset=1");
      expect(one.status).toBe(200);
      expect(one.body.records.map((r: { value: string }) => r.value)).toEqual(["b1"]);
      expect(one.body.next_offset).toBe(2);
      expect(one.body.high_watermark).toBe(2);
      const byTime = await call(outsider, "GET", "/topics/two/partitions/0/records?timestamp=0");
      expect(byTime.body.records.length).toBe(2);
      const oor = await call(outsider, "GET", "/topics/two/partitions/0/records?offset=99");
      expect(oor.status).toBe(416);
      expect(oor.body.high_watermark).toBe(2);
      // The whole topic.
      const whole = await call(outsider, "GET", "/topics/two/records?from=earliest");
      expect(whole.status).toBe(200);
      expect(whole.body.records.map((r: { value: string }) => r.value).sort()).toEqual([
        "a0",
        "a1",
        "b0",
        "b1",
      ]);
      expect(whole.body.next_offsets).toEqual({ "0": 2, "1": 2 });

      // A long-poll on the outsider, woken by an append at the leader.
      const t0 = performance.now();
      const poll = call(
        outsider,
        "GET",
        "/topics/two/partitions/0/records?offset=2&max_wait_ms=10000",
      );
      await Bun.sleep(300);
      expect(
        (await call(producer, "POST", "/topics/two/records?partition=0", { value: "c0" })).status,
      )
        .toBe(200);
      const woke = await poll;
      expect(woke.body.records.map((r: { value: string }) => r.value)).toEqual(["c0"]);
      expect(performance.now() - t0).toBeLessThan(5000);

      // Live tails on the outsider (from latest), then records produced via every broker.
      const ac = new AbortController();
      const open = async (accept: string) => {
        const res = await fetch(`${outsider.httpUrl}/topics/two/records?follow=true`, {
          headers: { accept },
          signal: ac.signal,
        });
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        let text = "";
        const dec = new TextDecoder();
        return {
          until: async (pred: (t: string) => boolean, ms: number) => {
            const end = performance.now() + ms;
            while (!pred(text)) {
              if (performance.now() > end) throw new Error(`tail got only: ${text}`);
              const { value, done } = await Promise.race([
                reader.read(),
                Bun.sleep(Math.max(1, end - performance.now())).then(() => ({
                  value: undefined,
                  done: false,
                })),
              ]);
              if (done) break;
              if (value) text += dec.decode(value, { stream: true });
            }
            return text;
          },
        };
      };
      const sse = await open("text/event-stream");
      const nd = await open("application/x-ndjson");
      await Bun.sleep(500); // both streams are parked in their waits
      for (const [i, b] of bs.entries()) {
        for (const p of parts) {
          const r = await call(b, "POST", `/topics/two/records?partition=${p.partition}`, {
            value: `live-${i}-${p.partition}`,
          });
          expect(r.status).toBe(200);
        }
      }
      const want = bs.flatMap((_b, i) => parts.map((p) => `live-${i}-${p.partition}`));
      const has = (t: string) => want.every((w) => t.includes(`"value":"${w}"`));
      const sseText = await sse.until(has, 10_000);
      const ndText = await nd.until(has, 10_000);
      ac.abort();
      // SSE ids name each record's partition:offset (resumable), NDJSON one record a line.
      expect(sseText).toMatch(/id: [01]:3(,[01]:\d+)?\nevent: record\n/);
      expect(sseText).not.toContain("c0"); // from latest: nothing from before the stream
      const lines = ndText.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
      expect(lines.length).toBe(want.length);
      expect(lines.every((l) => l.topic === "two")).toBe(true);
    },
    60_000,
  );

  test("the HTTP group member flow via a broker that does not coordinate the group", async () => {
    // Once three brokers are live, __consumer_offsets gets three replicas and its leaders are
    // spread (coordinators move): wait for that, then pick brokers that do not coordinate.
    const offsets = await waitFor("__consumer_offsets settled", 30_000, async () => {
      const ps = await leaders(bs[0], "__consumer_offsets");
      return ps.every((p) => p.isr.length === 3 && p.leader >= 0) ? ps : undefined;
    });
    const group = "forwarded-group";
    // The group's coordinator leads its __consumer_offsets partition; ask through the others.
    const coordinator = offsets[offsetsPartitionFor(group, offsets.length)].leader;
    const [via, other] = bs.filter((_b, i) => i !== coordinator);
    const r0 = await call(via, "POST", `/groups/${group}/members`, {
      topics: ["rf1"],
      session_timeout_ms: 30_000,
    });
    expect(r0.status).toBe(200);
    const { member_id, generation_id } = r0.body;
    expect(r0.body.assignment).toEqual([{ topic: "rf1", partitions: [0, 1, 2] }]);
    // The fetch reads the three partitions at their three leaders.
    const f = await call(
      via,
      "GET",
      `/groups/${group}/records?member_id=${member_id}&generation_id=${generation_id}&limit=1000&format=text`,
    );
    expect(f.status).toBe(200);
    expect(f.body.records.length).toBe(40);
    expect(new Set(f.body.records.map((r: { partition: number }) => r.partition)).size).toBe(3);
    const commit = await call(via, "POST", `/groups/${group}/offsets`, {
      member_id,
      generation_id,
      cursor: f.body.cursor,
    });
    expect(commit.status).toBe(200);
    const hb = await call(
      via,
      "POST",
      `/groups/${group}/members/${member_id}/heartbeat?generation_id=${generation_id}`,
    );
    expect(hb.status).toBe(200);
    // A long-poll fetch through the non-coordinator wakes on a record produced via a third broker.
    const poll = call(
      via,
      "GET",
      `/groups/${group}/records?member_id=${member_id}&generation_id=${generation_id}&max_wait_ms=10000`,
    );
    await Bun.sleep(300);
    expect(
      (await call(bs[2], "POST", "/topics/rf1/records", { key: "late", value: "late" })).status,
    )
      .toBe(200);
    const late = await poll;
    expect(late.status).toBe(200);
    expect(late.body.records.map((r: { value: string }) => r.value)).toEqual(["late"]);
    // Describe (with lag) on any broker; a stale generation is the coordinator's 409.
    const d = await call(other, "GET", `/groups/${group}`);
    expect(d.status).toBe(200);
    expect(d.body.members.length).toBe(1);
    expect(d.body.lag).toBe(1);
    const stale = await call(
      via,
      "GET",
      `/groups/${group}/records?member_id=${member_id}&generation_id=${generation_id + 7}`,
    );
    expect(stale.status).toBe(409);
    expect(stale.body.kafka_error_code).toBe(22);
    const leave = await fetch(`${via.httpUrl}/groups/${group}/members/${member_id}`, {
      method: "DELETE",
    });
    expect(leave.status).toBe(204);
    const reset = await call(via, "POST", `/groups/${group}/offsets/reset`, {
      to: "earliest",
      dry_run: true,
    });
    expect(reset.status).toBe(200);
    expect(reset.body.offsets.length).toBe(3);
    expect(reset.body.offsets.every((o: { offset: number }) => o.offset === 0)).toBe(true);
  }, 60_000);

  test(
    "the cluster port checks forwarded calls: shapes, names, bounds, callers, batches",
    async () => {
      const c = await call(bs[0], "GET", "/cluster");
      const rf1 = await leaders(bs[0], "rf1");
      const target = bs[rf1[0].leader];
      const asId = (rf1[0].leader + 1) % 3;
      // A process that holds the join token speaks as the node id it proves.
      const key = new ClusterKey(TEST_JOIN_TOKEN);
      const link = (nodeId: number, addr: string) =>
        new PeerLink(target.clusterAddr, () => ({
          key,
          clusterId: c.body.cluster_id,
          nodeId,
          addr,
          session: "peer",
        }));
      const peer = link(asId, bs[asId].clusterAddr);
      const refused = (p: Promise<unknown>) => p.then(() => "answered", (e: Error) => e.message);
      const part = {
        topic: "rf1",
        partition: rf1[0].partition,
        from: 0,
        limit: 10,
        maxBytes: 4096,
      };
      const read = (body: unknown) => peer.call("partitionRead", body, 5000);
      expect(await refused(read({ parts: "all", waitMs: 0, maxBytes: 1 }))).toContain("bad");
      expect(await refused(read({ parts: [], waitMs: 0, maxBytes: 1 }))).toContain("bad");
      expect(await refused(read({ parts: [part], waitMs: 1e9, maxBytes: 1 }))).toContain("bad");
      expect(await refused(read({ parts: [part], waitMs: 0, maxBytes: 2 ** 40 }))).toContain("bad");
      for (
        const bad of [
          { ...part, topic: "../../etc" },
          { ...part, topic: "x".repeat(250) },
          { ...part, partition: -1 },
          { ...part, partition: 1.5 },
          { ...part, from: "yesterday" },
          { ...part, from: -3 },
          { ...part, limit: 0 },
          { ...part, maxBytes: 1 << 30 },
        ]
      ) expect(await refused(read({ parts: [bad], waitMs: 0, maxBytes: 4096 }))).toContain("bad");
      // A well-formed read answers, with the bytes in the tail.
      const ok = await read({ parts: [part], waitMs: 0, maxBytes: 4096 });
      const res = (ok.body as { results: { bytes: number; error?: unknown }[] }).results[0];
      expect(res.error).toBeUndefined();
      expect(res.bytes).toBeGreaterThan(0);
      expect(ok.tail.length).toBe(res.bytes);
      // Appends: garbage is refused by the log; internal topics are not writable this way.
      const append = (body: unknown, tail: Uint8Array) =>
        peer.call("partitionAppend", body, 5000, [tail]);
      const garbage = await append(
        { topic: "rf1", partition: rf1[0].partition, acks: 1 },
        crypto.getRandomValues(new Uint8Array(200)),
      );
      expect((garbage.body as { error?: { code: number } }).error?.code).toBeGreaterThan(0);
      const internal = await append(
        { topic: "__consumer_offsets", partition: 0, acks: 1 },
        new Uint8Array(100),
      );
      expect((internal.body as { error?: { code: number } }).error?.code).toBe(3);
      expect(await refused(append({ topic: "rf1", partition: 0, acks: 2 }, new Uint8Array(100))))
        .toContain("bad");
      // Group requests: only group paths, only known methods.
      const group = (body: unknown) => peer.call("groupHttp", body, 5000);
      expect(
        await refused(group({ rid: "1", method: "GET", path: "/topics/rf1", headers: {} })),
      ).toContain("bad");
      expect(
        await refused(group({ rid: "1", method: "PUT", path: "/groups/g", headers: {} })),
      ).toContain("bad");
      // A node id that is not a registered broker is served nothing.
      const stranger = link(99, "127.0.0.1:9");
      expect(
        await refused(
          stranger.call("partitionRead", { parts: [part], waitMs: 0, maxBytes: 1 }, 5000),
        ),
      )
        .toContain("not registered");
      peer.close();
      stranger.close();
      // The broker serves on.
      const after = await call(bs[0], "POST", `/topics/rf1/records?partition=${rf1[0].partition}`, {
        value: "still",
      });
      expect(after.status).toBe(200);
    },
    30_000,
  );

  test(
    "leader unknown: 503; an RF 3 partition fails over and is written via any broker again",
    async () => {
      const rf1 = await leaders(bs[0], "rf1");
      const rf3 = await leaders(bs[0], "rf3");
      // Stop a broker, if there is one, that coordinates no group.
      const offsets = await leaders(bs[0], "__consumer_offsets");
      const victimId = [2, 1, 0].find((id) => !offsets.some((p) => p.leader === id)) ?? 2;
      const victim = bs[victimId];
      const asker = bs.find((b) => b !== victim)!;
      const lost = rf1.find((p) => p.leader === victimId)!;
      const moved = rf3.find((p) => p.leader === victimId)!;
      victim.kill("SIGKILL");
      await victim.exited;
      // Until it is fenced its partitions are unreachable (503), then leaderless (503, 50306).
      const r = await waitFor("a 503 naming no leader", 20_000, async () => {
        const r = await call(asker, "POST", `/topics/rf1/records?partition=${lost.partition}`, {
          value: "x",
        });
        expect(r.status).toBe(503);
        return r.body.error_code === 50306 ? r : undefined;
      });
      expect(r.body.kafka_error_code).toBe(6);
      expect(r.body.message).toContain("no leader");
      const read = await call(asker, "GET", `/topics/rf1/partitions/${lost.partition}/records`);
      expect(read.status).toBe(503);
      const whole = await call(asker, "GET", "/topics/rf1/records?from=earliest");
      expect(whole.status).toBe(503);
      const raw = await call(
        asker,
        "GET",
        `/topics/rf1/partitions/${lost.partition}/batches?offset=0`,
      );
      expect(raw.status).toBe(503);
      expect(raw.body.error_code).toBe(50306);
      // The RF 3 partition has a new leader: writable and readable via both survivors.
      await waitFor("the RF 3 partition written after failover", 20_000, async () => {
        for (const b of bs.filter((x) => x !== victim)) {
          const w = await call(b, "POST", `/topics/rf3/records?partition=${moved.partition}`, {
            value: "after",
          });
          if (w.status !== 200) return undefined;
        }
        return true;
      });
      for (const b of bs.filter((x) => x !== victim)) {
        const q = await call(
          b,
          "GET",
          `/topics/rf3/partitions/${moved.partition}/records?limit=1000`,
        );
        expect(q.status).toBe(200);
        expect(q.body.records.filter((x: { value: string }) => x.value === "after").length).toBe(2);
      }
      // Its stored batches too, from the new leader, whichever survivor is asked.
      for (const b of bs.filter((x) => x !== victim)) {
        const res = await fetch(
          `${b.httpUrl}/topics/rf3/partitions/${moved.partition}/batches?offset=0&max_bytes=1048576`,
        );
        expect(res.status).toBe(200);
        const values = decodeRecordBatches(new Uint8Array(await res.arrayBuffer()))
          .flatMap((x) => x.records ?? []).map((rec) => new TextDecoder().decode(rec.value!));
        expect(values.filter((v) => v === "after").length).toBe(2);
      }
    },
    60_000,
  );
});
