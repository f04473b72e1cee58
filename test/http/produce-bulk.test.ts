// Bulk text produce as `broker produce` sends it, against a real broker: large text/plain bodies
// (the one-pass encoder for one partition, the record path for keys spread over partitions),
// summary=true answers, and reading it all back as stored batches (a body over 1 MiB is sent in
// pieces).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decodeRecordBatches } from "../../src/protocol/record-batch.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";

let b: RunningBroker;

beforeAll(async () => {
  b = await startBrokerProcess();
  for (const [name, partitions] of [["one", 1], ["three", 3]] as const) {
    const t = await api(b.httpUrl, "POST", "/topics", { name, partitions });
    expect(t.status).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  b?.kill();
  await b?.exited;
});

const lines = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `k${(from + i) % 7}:${"v".repeat(60)}-${from + i}`);

async function post(topic: string, body: string, query: string) {
  const r = await fetch(`${b.httpUrl}/topics/${topic}/records?${query}`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body,
  });
  return { status: r.status, json: await r.json() as Record<string, unknown> };
}

test("a large body to one partition: summary or per-record offsets, stored line by line", async () => {
  const first = lines(20_000);
  const a = await post("one", first.join("\n") + "\n", "summary=true");
  expect(a.status).toBe(200);
  expect(a.json).toEqual({
    records: 20_000,
    partitions: [{ partition: 0, base_offset: 0, records: 20_000 }],
  });
  // Without summary: an offset per record, contiguous after the first body.
  const second = lines(5_000, 20_000);
  const c = await post("one", second.join("\r\n"), "key_separator=:");
  expect(c.status).toBe(200);
  const offsets = c.json.offsets as { partition: number; offset: number }[];
  expect(offsets.length).toBe(5_000);
  expect(offsets.every((o, i) => o.partition === 0 && o.offset === 20_000 + i)).toBe(true);

  // Read back in one answer larger than a MiB: every line as it was sent, keys split.
  const r = await fetch(`${b.httpUrl}/topics/one/partitions/0/batches?offset=0&max_bytes=8388608`);
  expect(r.status).toBe(200);
  const buf = new Uint8Array(await r.arrayBuffer());
  expect(buf.length).toBeGreaterThan(1 << 20);
  const recs = decodeRecordBatches(buf).flatMap((x) => x.records!);
  expect(recs.length).toBe(25_000);
  const dec = new TextDecoder();
  expect(recs.slice(0, 20_000).every((x, i) => x.key === null && dec.decode(x.value!) === first[i]))
    .toBe(true);
  expect(
    recs.slice(20_000).every((x, i) => {
      const [k, v] = second[i].split(/:(.*)/s);
      return dec.decode(x.key!) === k && dec.decode(x.value!) === v;
    }),
  ).toBe(true);
});

test("keys over several partitions: summary counts each partition's share", async () => {
  const all = lines(12_000);
  const r = await post("three", all.join("\n"), "summary=true&key_separator=:");
  expect(r.status).toBe(200);
  const parts = r.json.partitions as { partition: number; base_offset: number; records: number }[];
  expect(r.json.records).toBe(12_000);
  expect(parts.reduce((n, p) => n + p.records, 0)).toBe(12_000);
  expect(parts.length).toBe(3);
  const t = await api(b.httpUrl, "GET", "/topics/three");
  const hw = (t.json as { partitions: { partition: number; high_watermark: number }[] }).partitions;
  for (const p of parts) {
    expect(p.base_offset).toBe(0);
    expect(hw.find((x) => x.partition === p.partition)?.high_watermark).toBe(p.records);
  }
  // A fixed key puts a large keyless body in one partition, by the key's hash.
  const k = await post("three", lines(4_000).join("\n"), "summary=true&key=same");
  const kp = k.json.partitions as { partition: number; records: number }[];
  expect(kp.length).toBe(1);
  expect(kp[0].records).toBe(4_000);
});

test("the one-pass path keeps the limits and acks=0's null offsets", async () => {
  const many = await post("one", "\n".repeat(300_000), "summary=true");
  expect(many.status).toBe(400);
  expect(String(many.json.message)).toMatch(/at most 100000 records/);
  const bad = await post("one", lines(4_000).join("\n"), "key=a&key_separator=:");
  expect(bad.status).toBe(400);
  const noAck = await post("one", lines(4_000).join("\n"), "summary=true&acks=0");
  expect(noAck.json).toEqual({
    records: 4_000,
    partitions: [{ partition: 0, base_offset: null, records: 4_000 }],
  });
}, 30_000);
