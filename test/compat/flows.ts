// The flows every client of the compatibility suite goes through (issue 4): 10 000 keyed records
// with headers at acks=1 and acks=all across several 1 MiB segment rolls, then a retention
// deletion; a group of three on six partitions with members leaving and joining; commit, stop
// and resume; the admin API.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RunningBroker } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import {
  checkRecord,
  type Client,
  createTopic,
  type Member,
  type MemberEvent,
  startCompatBroker,
  topicInfo,
  until,
} from "./harness.ts";

const N = 10_000;
const SIZE = 300;

export function clientFlows(make: (bootstrap: string) => Client): void {
  let broker: RunningBroker;
  let client: Client;
  beforeAll(async () => {
    const b = await startCompatBroker();
    broker = b.broker;
    client = make(b.bootstrap);
  });
  afterAll(async () => {
    broker.kill();
    await broker.exited;
  });

  test(
    "10 000 keyed records with headers, acks=1 and acks=all, rolls and a retention deletion",
    async () => {
      const topic = "flow";
      await createTopic(broker, topic, 1);
      await client.produce({ topic, count: N, acks: "1", prefix: "a1", size: SIZE, partition: 0 });
      await client.produce({
        topic,
        count: N,
        acks: "all",
        idempotent: client.idempotent,
        prefix: "aa",
        size: SIZE,
        partition: 0,
      });
      // Offsets 0..N-1 hold the acks=1 records, N..2N-1 the acks=all ones, in order.
      const expectAt = (o: number) => (o < N ? ["a1", o] : ["aa", o - N]) as [string, number];
      const all = await client.consume(topic, 2 * N);
      expect(all.length).toBe(2 * N);
      all.sort((x, y) => x.o - y.o);
      all.forEach((r, i) => {
        expect(r.o).toBe(i);
        checkRecord(r, ...expectAt(r.o), SIZE, client.name);
      });
      const size = 2 * N * SIZE;
      expect(size).toBeGreaterThan(5 * 1024 * 1024); // several 1 MiB segment rolls

      // Retention: shrink retention.bytes; the broker's retention pass (every second) deletes
      // whole segments from the front. What remains must be exactly the suffix from the new
      // log start, and a consumer from the beginning must see all of it.
      const patched = await api(broker.httpUrl, "PATCH", `/topics/${topic}/configs`, {
        "retention.bytes": String(2 * 1024 * 1024),
      });
      expect(patched.status).toBe(200);
      let start = 0;
      await until(
        async () => {
          start = (await topicInfo(broker, topic)).partitions[0].log_start_offset;
          return start > 0;
        },
        15_000,
        "a retention deletion",
      );
      const rest = await client.consume(topic, 2 * N - start);
      expect(rest.length).toBe(2 * N - start);
      rest.sort((x, y) => x.o - y.o);
      rest.forEach((r, i) => {
        expect(r.o).toBe(start + i);
        checkRecord(r, ...expectAt(r.o), SIZE, client.name);
      });
    },
    150_000,
  );

  test(
    "a group of 3 on 6 partitions; one leaves, another joins; nothing reprocessed after its commit",
    async () => {
      const topic = "grp";
      const group = `grp-${client.name}`;
      await createTopic(broker, topic, 6);
      const total = 6000;
      const members: Member[] = [];
      const left: Member[] = [];
      const add = () => members.push(client.member(topic, group));
      add();
      add();
      add();
      const processed = () => {
        const keys = new Set<string>();
        for (const m of [...members, ...left]) {
          for (const e of m.events) if (e.ev === "rec") keys.add(e.k!);
        }
        return keys.size;
      };
      const produce = (from: number) =>
        client.produce({ topic, count: 2000, acks: "1", prefix: `g${from}`, size: 100 });
      await produce(0);
      await until(() => processed() >= 1000, 60_000, "the first records processed");
      const leaving = members.shift()!;
      await leaving.stop(); // LeaveGroup mid-stream
      left.push(leaving);
      await produce(2000);
      add();
      await produce(4000);
      const state = () =>
        [...left, ...members].map((m) =>
          `${m.events.filter((e) => e.ev === "rec").length} recs, last ${
            JSON.stringify(m.events.filter((e) => e.ev !== "rec" && e.ev !== "commit").slice(-3))
          }`
        ).join("; ");
      await until(
        () => processed() >= total,
        90_000,
        () => `all ${total} records processed (${processed()}; members: ${state()})`,
      );
      // The group's committed offsets reach the end of every partition before members stop.
      if (client.reportsCommits) {
        await until(
          async () => {
            const g = await api(broker.httpUrl, "GET", `/groups/${group}`);
            return g.status === 200 && g.json.lag === 0 && g.json.offsets.length === 6;
          },
          30_000,
          "committed offsets at the end",
        );
      }
      for (const m of members) await m.stop();
      left.push(...members);
      expect(processed()).toBe(total);

      const events: (MemberEvent & { m: number })[] = left.flatMap((m, i) =>
        m.events.map((e) => ({ ...e, m: i }))
      );
      expect(events.filter((e) => e.ev === "commit-failed").length).toBeLessThan(50);
      if (client.reportsCommits) {
        // Merge by time: a record processed below an offset already committed for its
        // partition was processed twice after its commit.
        events.sort((a, b) => (a.t ?? 0) - (b.t ?? 0));
        const committed = new Map<number, { o: number; m: number }>();
        const late: string[] = [];
        for (const e of events) {
          const c = committed.get(e.p!);
          if (e.ev === "commit" && e.o! > (c?.o ?? 0)) committed.set(e.p!, { o: e.o!, m: e.m });
          if (e.ev === "rec" && c && e.o! < c.o) {
            late.push(`${e.p}@${e.o} by member ${e.m} after member ${c.m} committed ${c.o}`);
          }
        }
        expect(late).toEqual([]);
      } else {
        // kcat commits in the background: its commits are not visible, only duplicates are.
        const recs = events.filter((e) => e.ev === "rec").length;
        expect(recs - total).toBeLessThan(total / 4);
      }
      const final = await api(broker.httpUrl, "GET", `/groups/${group}`);
      expect(final.json.lag).toBe(0);
    },
    240_000,
  );

  test("commit, stop, resume from the committed offset", async () => {
    const topic = "resume";
    const group = `resume-${client.name}`;
    await createTopic(broker, topic, 1);
    await client.produce({ topic, count: 30, acks: "all", prefix: "r", size: 50, partition: 0 });
    const first = client.member(topic, group, 10);
    await first.exited;
    await first.stop();
    const firstRecs = first.events.filter((e) => e.ev === "rec").map((e) => e.o);
    expect(firstRecs).toEqual(Array.from({ length: 10 }, (_, i) => i));
    const second = client.member(topic, group, 20);
    await second.exited;
    await second.stop();
    const secondRecs = second.events.filter((e) => e.ev === "rec").map((e) => e.o);
    expect(secondRecs).toEqual(Array.from({ length: 20 }, (_, i) => 10 + i));
  }, 90_000);

  test("create, list, describe and delete a topic through the admin API", async () => {
    if (!client.admin) {
      // kcat has no admin API: it can only list and describe, through metadata.
      const md = Bun.spawnSync([
        "kcat",
        "-b",
        `127.0.0.1:${broker.kafkaPort}`,
        "-L",
        "-t",
        "flow",
        "-J",
      ]);
      const j = JSON.parse(md.stdout.toString());
      expect(j.topics[0].topic).toBe("flow");
      expect(j.topics[0].partitions.length).toBe(1);
      return;
    }
    const r = await client.admin(`adm-${client.name}`);
    expect(r).toEqual({
      created: true,
      listed: true,
      partitions: 3,
      "retention.ms": "3600000",
      deleted: true,
    });
  }, 60_000);
}
