// HTTP members in consumer groups against a real broker process: join, fetch with a cursor,
// commit, stale generations, describe with lag, reset, delete, and a restart mid-membership.
import { afterAll, describe, expect, test } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

const running: RunningBroker[] = [];
async function start(dataDir?: string) {
  const b = await startBrokerProcess({
    dataDir,
    args: ["--group-initial-rebalance-delay-ms", "0"],
  });
  running.push(b);
  return b;
}
afterAll(() => {
  for (const b of running) b.kill("SIGKILL");
});

const fetchPath = (g: string, m: { member_id: string; generation_id: number }, extra = "") =>
  `/groups/${g}/records?member_id=${m.member_id}&generation_id=${m.generation_id}&format=text${extra}`;

describe("consumer groups over HTTP", () => {
  test(
    "join, fetch, commit, stale generation refused, describe, leave, reset, delete",
    async () => {
      const b = await start();
      await api(b.httpUrl, "POST", "/topics", { name: "orders", partitions: 2 });
      await api(b.httpUrl, "POST", "/topics/orders/records", [
        { value: "a", partition: 0 },
        { value: "b", partition: 1 },
        { value: "c", partition: 1 },
      ]);
      const j = await api(b.httpUrl, "POST", "/groups/g/members", { topics: ["orders"] });
      expect(j.status).toBe(200);
      expect(j.json.assignment).toEqual([{ topic: "orders", partitions: [0, 1] }]);
      const m1 = j.json;
      const f1 = await api(b.httpUrl, "GET", fetchPath("g", m1, "&limit=2"));
      expect(f1.json.records).toHaveLength(2);
      const f2 = await api(b.httpUrl, "GET", fetchPath("g", m1, `&cursor=${f1.json.cursor}`));
      expect(f2.json.records).toHaveLength(1); // the cursor carries on past uncommitted records
      const c = await api(b.httpUrl, "POST", "/groups/g/offsets", {
        member_id: m1.member_id,
        generation_id: m1.generation_id,
        cursor: f2.json.cursor,
      });
      expect(c.status).toBe(200);
      // A second member: the group rebalances; the first member's generation is now stale.
      const j2p = api(b.httpUrl, "POST", "/groups/g/members", { topics: ["orders"] });
      await Bun.sleep(200);
      const stale = await api(b.httpUrl, "GET", fetchPath("g", m1));
      expect(stale.status).toBe(409);
      const rj = await api(b.httpUrl, "POST", "/groups/g/members", {
        topics: ["orders"],
        member_id: m1.member_id,
      });
      const j2 = await j2p;
      expect(rj.status).toBe(200);
      expect(j2.status).toBe(200);
      expect(rj.json.generation_id).toBe(j2.json.generation_id);
      const parts = [...rj.json.assignment, ...j2.json.assignment].flatMap((a) => a.partitions)
        .sort();
      expect(parts).toEqual([0, 1]);
      const old = await api(b.httpUrl, "POST", "/groups/g/offsets", {
        member_id: m1.member_id,
        generation_id: m1.generation_id,
        offsets: [{ topic: "orders", partition: 0, offset: 0 }],
      });
      expect(old.status).toBe(409);
      expect(old.json.kafka_error_code).toBe(22);
      expect(old.json.message).toContain("join again");
      await api(b.httpUrl, "POST", "/topics/orders/records", { value: "d", partition: 0 });
      const d = await api(b.httpUrl, "GET", "/groups/g");
      expect(d.json.state).toBe("Stable");
      expect(d.json.members).toHaveLength(2);
      const p0 = d.json.offsets.find((o: { partition: number }) => o.partition === 0);
      expect(p0).toMatchObject({ committed_offset: 1, end_offset: 2, lag: 1 });
      // Reset is refused while members are active.
      expect((await api(b.httpUrl, "POST", "/groups/g/offsets/reset", { to: "earliest" })).status)
        .toBe(409);
      expect((await api(b.httpUrl, "DELETE", "/groups/g")).status).toBe(409);
      expect((await api(b.httpUrl, "DELETE", `/groups/g/members/${rj.json.member_id}`)).status)
        .toBe(204);
      expect((await api(b.httpUrl, "DELETE", `/groups/g/members/${j2.json.member_id}`)).status)
        .toBe(204);
      const r = await api(b.httpUrl, "POST", "/groups/g/offsets/reset", { to: "earliest" });
      expect(r.status).toBe(200);
      expect(
        (await api(b.httpUrl, "GET", "/groups/g")).json.offsets.map((
          o: { committed_offset: number },
        ) => o.committed_offset),
      ).toEqual([0, 0]);
      const ex = await api(b.httpUrl, "POST", "/groups/g/offsets/reset", {
        to: "offsets",
        offsets: [{ topic: "orders", partition: 1, offset: 2 }],
      });
      expect(ex.status).toBe(200);
      // Past the log end (or before its start): clamped, as Kafka's reset tool does.
      const far = await api(b.httpUrl, "POST", "/groups/g/offsets/reset", {
        to: "offsets",
        offsets: [{ topic: "orders", partition: 0, offset: 99_999 }],
        dry_run: true,
      });
      expect(far.json.offsets.map((o: { offset: number }) => o.offset)).toEqual([2]);
      const ts = await api(b.httpUrl, "POST", "/groups/g/offsets/reset", {
        to: "timestamp",
        timestamp: Date.now() + 3_600_000,
        topics: ["orders"],
      });
      expect(ts.json.offsets.map((o: { offset: number }) => o.offset)).toEqual([2, 2]);
      expect((await api(b.httpUrl, "GET", "/groups")).json[0].group_id).toBe("g");
      expect((await api(b.httpUrl, "DELETE", "/groups/g")).status).toBe(204);
      expect((await api(b.httpUrl, "GET", "/groups/g")).status).toBe(404);
      // Errors say what to change.
      const gone = await api(b.httpUrl, "DELETE", "/groups/g");
      expect(gone.status).toBe(404);
      expect(gone.json.message).toContain("no such group");
      const short = await api(b.httpUrl, "POST", "/groups/s/members", {
        topics: ["orders"],
        session_timeout_ms: 5000,
      });
      expect(short.status).toBe(400);
      expect(short.json.message).toContain("group.min.session.timeout.ms");
    },
    30_000,
  );

  test(
    "long-poll fetch wakes on append; the broker restarts and the member carries on",
    async () => {
      const b = await start();
      await api(b.httpUrl, "POST", "/topics", { name: "t", partitions: 1 });
      const m = (await api(b.httpUrl, "POST", "/groups/r/members", { topics: ["t"] })).json;
      const wait = api(b.httpUrl, "GET", fetchPath("r", m, "&max_wait_ms=30000"));
      await Bun.sleep(300);
      const at = Date.now();
      await api(b.httpUrl, "POST", "/topics/t/records", { value: "one" });
      const w = await wait;
      expect(w.json.records.map((r: { value: string }) => r.value)).toEqual(["one"]);
      expect(Date.now() - at).toBeLessThan(1000);
      await api(b.httpUrl, "POST", "/groups/r/offsets", {
        member_id: m.member_id,
        generation_id: m.generation_id,
        cursor: w.json.cursor,
      });
      await api(b.httpUrl, "POST", "/topics/t/records", { value: "two" });
      b.kill("SIGTERM");
      expect(await b.exited).toBe(0);
      const b2 = await start(b.dataDir);
      const f = await api(b2.httpUrl, "GET", fetchPath("r", m));
      expect(f.status).toBe(200);
      expect(f.json.records.map((r: { value: string }) => r.value)).toEqual(["two"]);
    },
    30_000,
  );
});
