// Topics, produce, read, live tail, cluster, metrics and auth against a real broker process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
});
afterAll(() => b?.kill("SIGKILL"));

describe("topics", () => {
  test("create, list, describe, alter configs, add partitions, delete", async () => {
    const c = await api(b.httpUrl, "POST", "/topics", {
      name: "t1",
      partitions: 2,
      replication_factor: 1,
      configs: { "retention.ms": "3600000" },
    });
    expect(c.status).toBe(201);
    expect(c.json.partitions).toHaveLength(2);
    expect((await api(b.httpUrl, "POST", "/topics", { name: "t1" })).status).toBe(409);
    expect((await api(b.httpUrl, "POST", "/topics", { name: "bad name!" })).status).toBe(422);
    const bad = await api(b.httpUrl, "POST", "/topics", { name: "t9", configs: { "nope.x": "1" } });
    expect(bad.status).toBe(422);
    const list = await api(b.httpUrl, "GET", "/topics");
    expect(list.json.map((t: { name: string }) => t.name)).toContain("t1");
    const d = await api(b.httpUrl, "GET", "/topics/t1");
    expect(d.json.partitions[0]).toMatchObject({
      leader: 0,
      replicas: [0],
      isr: [0],
      log_start_offset: 0,
      high_watermark: 0,
      size_bytes: 0,
    });
    const a = await api(b.httpUrl, "PATCH", "/topics/t1/configs", {
      "retention.ms": "7200000",
      "segment.ms": null,
    });
    expect(a.status).toBe(200);
    expect(a.json.configs["retention.ms"]).toBe("7200000");
    const p = await api(b.httpUrl, "POST", "/topics/t1/partitions", { count: 4 });
    expect(p.json.partitions).toHaveLength(4);
    expect((await api(b.httpUrl, "DELETE", "/topics/t1")).status).toBe(204);
    expect((await api(b.httpUrl, "GET", "/topics/t1")).status).toBe(404);
  });
});

describe("produce and read", () => {
  test("every body form; murmur2 keys; partition and offset per record", async () => {
    await api(b.httpUrl, "POST", "/topics", { name: "p", partitions: 3 });
    const one = await api(b.httpUrl, "POST", "/topics/p/records", { key: "k", value: { a: 1 } });
    expect(one.status).toBe(200);
    const kp = one.json.offsets[0].partition;
    const arr = await api(b.httpUrl, "POST", "/topics/p/records", [
      { key: "k", value: "x", headers: { h: "v" } },
      { value: "y", partition: 2, timestamp: "2024-01-01T00:00:00Z" },
    ]);
    expect(arr.json.offsets[0].partition).toBe(kp); // same key, same partition
    expect(arr.json.offsets[1].partition).toBe(2);
    const env = await api(b.httpUrl, "POST", "/topics/p/records", { records: [{ value: 1 }] });
    expect(env.json.offsets).toHaveLength(1);
    const nd = await api(
      b.httpUrl,
      "POST",
      "/topics/p/records",
      '{"value":"n1"}\n{"value":"n2"}\n',
      {
        "content-type": "application/x-ndjson",
      },
    );
    expect(nd.json.offsets).toHaveLength(2);
    const txt = await api(b.httpUrl, "POST", "/topics/p/records?partition=0", "l1\nl2\nl3\n", {
      "content-type": "text/plain",
    });
    expect(txt.json.offsets).toHaveLength(3);
    const bin = await fetch(`${b.httpUrl}/topics/p/records?key=bin&acks=1`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: new Uint8Array([0, 255, 1]),
    });
    const bj = (await bin.json()) as { offsets: { partition: number; offset: number }[] };
    const rec = await api(
      b.httpUrl,
      "GET",
      `/topics/p/partitions/${bj.offsets[0].partition}/records?offset=${
        bj.offsets[0].offset
      }&limit=1&format=base64`,
    );
    expect(rec.json.records[0].value).toBe(Buffer.from([0, 255, 1]).toString("base64"));
    const b64 = await api(b.httpUrl, "POST", "/topics/p/records?format=base64&acks=0", {
      value: "aGk=",
      partition: 1,
    });
    expect(b64.json.offsets[0].offset).toBeNull();
    const all = [0, 1, 2].map((p) => readAll(b.httpUrl, "p", p));
    const got = (await Promise.all(all)).flat();
    expect(got.map((r) => r.value)).toContain("hi");
    expect(got.find((r) => r.value === "x").headers).toEqual([{ key: "h", value: "v" }]);
  });

  test("Confluent REST v2 produce (json and binary) in v2 shapes", async () => {
    await api(b.httpUrl, "POST", "/topics", { name: "v2", partitions: 2 });
    const r = await api(b.httpUrl, "POST", "/topics/v2", {
      records: [{ key: "a", value: { x: 1 }, partition: 0 }, { value: [1, 2], partition: 1 }],
    }, { "content-type": "application/vnd.kafka.json.v2+json" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ key_schema_id: null, value_schema_id: null });
    expect(r.json.offsets[1]).toEqual({ partition: 1, offset: 0, error_code: null, error: null });
    const bin = await api(b.httpUrl, "POST", "/topics/v2/partitions/0", {
      records: [{ value: Buffer.from("raw").toString("base64") }],
    }, { "content-type": "application/vnd.kafka.binary.v2+json" });
    expect(bin.json.offsets[0].partition).toBe(0);
    const read = await readAll(b.httpUrl, "v2", 0);
    expect(read.map((x) => x.value)).toEqual(['{"x":1}', "raw"]);
    expect(read[0].key).toBe('"a"'); // v2 json keys are JSON-serialized
  });

  test("read by timestamp, latest, limit and max_bytes; long-poll wakes within 1 s", async () => {
    await api(b.httpUrl, "POST", "/topics", { name: "r", partitions: 1 });
    const t0 = Date.now();
    await api(b.httpUrl, "POST", "/topics/r/records", [{ value: "old", timestamp: t0 - 60_000 }]);
    await api(b.httpUrl, "POST", "/topics/r/records", [
      { value: "a", timestamp: t0 },
      { value: "b", timestamp: t0 + 1 },
      { value: "c", timestamp: t0 + 2 },
    ]);
    const byTime = await api(b.httpUrl, "GET", `/topics/r/partitions/0/records?timestamp=${t0}`);
    expect(byTime.json.records.map((r: { value: string }) => r.value)).toEqual(["a", "b", "c"]);
    // A time after every record starts at the high watermark: nothing yet.
    const after = `/topics/r/partitions/0/records?timestamp=${t0 + 60_000}`;
    const none = await api(b.httpUrl, "GET", after);
    expect(none.json.records).toHaveLength(0);
    expect(none.json.next_offset).toBe(4);
    const lim = await api(b.httpUrl, "GET", "/topics/r/partitions/0/records?limit=2");
    expect(lim.json.records).toHaveLength(2);
    expect(lim.json.next_offset).toBe(2);
    const latest = await api(b.httpUrl, "GET", "/topics/r/partitions/0/records?offset=latest");
    expect(latest.json.records).toHaveLength(0);
    expect(latest.json.next_offset).toBe(4);
    const bytes = await api(b.httpUrl, "GET", "/topics/r/partitions/0/records?max_bytes=1");
    expect(bytes.json.records.length).toBeGreaterThanOrEqual(1); // at least one batch
    expect(bytes.json.records.length).toBeLessThan(4);
    const above = await api(b.httpUrl, "GET", "/topics/r/partitions/0/records?offset=99");
    expect(above.status).toBe(416);
    expect(above.json.log_start_offset).toBe(0);

    const started = Date.now();
    const wait = api(b.httpUrl, "GET", "/topics/r/partitions/0/records?offset=4&max_wait_ms=30000");
    await Bun.sleep(300);
    const appendAt = Date.now();
    await api(b.httpUrl, "POST", "/topics/r/records", { value: "late" });
    const w = await wait;
    expect(w.json.records[0].value).toBe("late");
    expect(Date.now() - appendAt).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

async function readStream(res: Response, until: (text: string) => boolean, ms = 5000) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (!until(text) && Date.now() < deadline) {
    const r = await Promise.race([
      reader.read(),
      Bun.sleep(deadline - Date.now()).then(() => null),
    ]);
    if (!r || r.done) break;
    text += dec.decode(r.value);
  }
  await reader.cancel().catch(() => {});
  return text;
}

describe("live tail", () => {
  test("SSE across partitions, heartbeats, resume with Last-Event-ID; NDJSON", async () => {
    await api(b.httpUrl, "POST", "/topics", { name: "tail", partitions: 2 });
    await api(b.httpUrl, "POST", "/topics/tail/records", [
      { value: "a", partition: 0 },
      { value: "b", partition: 1 },
    ]);
    const ctl = new AbortController();
    const res = await fetch(`${b.httpUrl}/topics/tail/records?from=earliest&heartbeat_ms=200`, {
      headers: { accept: "text/event-stream" },
      signal: ctl.signal,
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    setTimeout(
      () => api(b.httpUrl, "POST", "/topics/tail/records", { value: "c", partition: 1 }),
      500,
    );
    const text = await readStream(res, (t) => t.includes('"c"') && t.includes("heartbeat"));
    ctl.abort();
    expect(text).toContain("heartbeat");
    const events = text.split("\n\n").filter((e) => e.includes("event: record"));
    expect(events).toHaveLength(3);
    const ids = events.map((e) => /^id: (.*)$/m.exec(e)![1]);
    expect(ids[0].split(",")[0]).toMatch(/^\d:0$/);
    // Resume after the first event: the other two follow, nothing repeats.
    const ctl2 = new AbortController();
    const res2 = await fetch(`${b.httpUrl}/topics/tail/records?from=earliest`, {
      headers: { accept: "text/event-stream", "last-event-id": ids[0] },
      signal: ctl2.signal,
    });
    const text2 = await readStream(
      res2,
      (t) => (t.match(/event: record/g) ?? []).length >= 2,
      2000,
    );
    ctl2.abort();
    const values = [...text2.matchAll(/"value":"(\w)"/g)].map((m) => m[1]).sort();
    const first = JSON.parse(/^data: (.*)$/m.exec(events[0])![1]).value;
    expect(values).toEqual(["a", "b", "c"].filter((v) => v !== first));

    const ctl3 = new AbortController();
    const nd = await fetch(
      `${b.httpUrl}/topics/tail/records?from=earliest&follow=true&format=text`,
      {
        headers: { accept: "application/x-ndjson" },
        signal: ctl3.signal,
      },
    );
    const lines = await readStream(nd, (t) => t.trim().split("\n").length >= 3, 2000);
    ctl3.abort();
    expect(lines.trim().split("\n").map((l) => JSON.parse(l).value).sort()).toEqual([
      "a",
      "b",
      "c",
    ]);
  });
});

describe("from=latest", () => {
  test(
    "starts every partition at its end; a partition added while following starts at 0",
    async () => {
      await api(b.httpUrl, "POST", "/topics", { name: "lat", partitions: 3 });
      await api(b.httpUrl, "POST", "/topics/lat/records", [
        { value: "old0", partition: 0 },
        { value: "old1", partition: 1 },
        { value: "old2", partition: 2 },
      ]);
      // A one-shot read from latest has nothing to return, and points every partition at its end.
      const once = await api(b.httpUrl, "GET", "/topics/lat/records?from=latest");
      expect(once.status).toBe(200);
      expect(once.json.records).toEqual([]);
      expect(once.json.next_offsets).toEqual({ "0": 1, "1": 1, "2": 1 });
      // Following from latest (the default): only what is written afterwards.
      const ctl = new AbortController();
      const res = await fetch(`${b.httpUrl}/topics/lat/records?heartbeat_ms=200`, {
        headers: { accept: "text/event-stream" },
        signal: ctl.signal,
      });
      setTimeout(async () => {
        await api(b.httpUrl, "POST", "/topics/lat/records", { value: "new2", partition: 2 });
        await api(b.httpUrl, "POST", "/topics/lat/partitions", { count: 4 });
        await api(b.httpUrl, "POST", "/topics/lat/records", { value: "new3", partition: 3 });
      }, 300);
      const text = await readStream(res, (t) => t.includes('"new3"'), 5000);
      ctl.abort();
      const values = [...text.matchAll(/"value":"(\w+)"/g)].map((m) => m[1]);
      expect(values).toEqual(["new2", "new3"]);
    },
    15_000,
  );
});

describe("cluster, docs, metrics", () => {
  test("/cluster, /readyz, /openapi.json, /docs, /metrics", async () => {
    const c = await api(b.httpUrl, "GET", "/cluster");
    expect(c.json.cluster_id).toBeString();
    expect(c.json.controller).toBe(0);
    expect(c.json.brokers[0].node_id).toBe(0);
    expect((await api(b.httpUrl, "GET", "/readyz")).status).toBe(200);
    const doc = await api(b.httpUrl, "GET", "/openapi.json");
    for (const p of ["/topics", "/topics/{topic}/records", "/groups/{group}/members", "/metrics"]) {
      expect(doc.json.paths[p]).toBeDefined();
    }
    const html = await api(b.httpUrl, "GET", "/docs");
    expect(html.text).toContain("/topics/{topic}/partitions/{partition}/records");
    expect(html.text).not.toContain("<script");
    await api(b.httpUrl, "POST", "/topics", { name: "m", partitions: 1 });
    await api(b.httpUrl, "POST", "/topics/m/records", { value: "12345" });
    await api(b.httpUrl, "GET", "/topics/m/partitions/0/records");
    const m = (await api(b.httpUrl, "GET", "/metrics")).text;
    expect(m).toContain('broker_topic_records_in_total{topic="m"} 1');
    expect(m).toContain('broker_topic_bytes_in_total{topic="m"} 5');
    expect(m).toContain('broker_topic_records_out_total{topic="m"} 1');
    expect(m).toContain('broker_partition_high_watermark{topic="m",partition="0"} 1');
    expect(m).toContain('broker_topic_partitions{topic="m"} 1');
    expect(m).toMatch(
      /broker_http_request_duration_seconds_bucket\{method="POST",route="\/topics\/:topic\/records",le="\+Inf"\} \d+/,
    );
  });
});

describe("access", () => {
  test(
    "--http-token guards every route but /healthz; warning without a token beyond loopback",
    async () => {
      const s = await startBrokerProcess({ env: { BROKER_HTTP_TOKEN: "s3cret" } });
      try {
        expect((await api(s.httpUrl, "GET", "/healthz")).status).toBe(200);
        const no = await api(s.httpUrl, "GET", "/topics");
        expect(no.status).toBe(401);
        expect(no.json.error_code).toBe(40100);
        expect(
          (await api(s.httpUrl, "GET", "/topics", undefined, { authorization: "Bearer nope" }))
            .status,
        )
          .toBe(401);
        const ok = await api(s.httpUrl, "GET", "/metrics", undefined, {
          authorization: "Bearer s3cret",
        });
        expect(ok.status).toBe(200);
        expect(s.logs.some((l) => l.includes("without a token"))).toBe(false);
      } finally {
        s.kill("SIGKILL");
      }
      const open = await startBrokerProcess({ args: ["--http-addr", "0.0.0.0:0"] });
      try {
        expect(open.logs.some((l) => l.includes("beyond loopback without a token"))).toBe(true);
      } finally {
        open.kill("SIGKILL");
      }
    },
    30_000,
  );
});
