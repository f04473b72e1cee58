// Every status of the error list, against real broker processes: each answer is JSON
// {"error_code", "message"} with the right status. 401 is covered in api.test.ts, 507 (disk
// full) in test/integration/broker.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clusterRequest } from "../../src/cluster/transport.ts";
import type { ClusterStatus } from "../../src/cluster/node.ts";
import { statusForKafkaCode } from "../../src/http/errors.ts";
import {
  type RunningBroker,
  startBrokerProcess,
  tempDir,
  TEST_AUTH,
} from "../helpers/broker-process.ts";

const started: RunningBroker[] = [];
let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess();
  started.push(b);
});
afterAll(() => {
  for (const x of started) x.kill("SIGKILL");
});

async function call(
  base: string,
  method: string,
  path: string,
  body?: string,
  type = "application/json",
) {
  const res = await fetch(base + path, {
    method,
    body,
    headers: body === undefined ? {} : { "content-type": type },
  });
  const json = (await res.json()) as { error_code?: number; message?: string };
  return { status: res.status, json };
}

function expectError(r: { status: number; json: { error_code?: number; message?: string } }) {
  expect(typeof r.json.error_code).toBe("number");
  expect(Math.floor(r.json.error_code! / 100)).toBe(r.status);
  expect(typeof r.json.message).toBe("string");
  expect(r.json.message!.length).toBeGreaterThan(5);
}

describe("error statuses", () => {
  test("400, 404 (topic, partition, group), 409, 415, 422", async () => {
    const u = b.httpUrl;
    const created = await call(u, "POST", "/topics", JSON.stringify({ name: "e1", partitions: 2 }));
    expect(created.status).toBe(201);
    const cases: [number, Promise<Awaited<ReturnType<typeof call>>>][] = [
      [400, call(u, "POST", "/topics", "{not json")],
      [400, call(u, "POST", "/topics/e1/records", "{not json")],
      [400, call(u, "POST", "/topics/e1/records?acks=2", '{"value":1}')],
      [400, call(u, "POST", "/topics/e1/records", '{"value":1,"bogus":2}')],
      [400, call(u, "GET", "/topics/e1/partitions/0/records?limit=abc")],
      [404, call(u, "GET", "/topics/nope")],
      [404, call(u, "POST", "/topics/nope/records", '{"value":1}')],
      [404, call(u, "GET", "/topics/e1/partitions/7/records")],
      [404, call(u, "POST", "/topics/e1/records", '{"value":1,"partition":99}')],
      [404, call(u, "POST", "/topics/e1/records?partition=9", '{"value":1}')],
      [400, call(u, "POST", "/topics/e1/records?partition=one", '{"value":1}')],
      [404, call(u, "POST", "/topics/e1/partitions/9", '{"records":[{"value":1}]}')],
      [404, call(u, "GET", "/groups/nope")],
      [409, call(u, "POST", "/topics", JSON.stringify({ name: "e1", partitions: 1 }))],
      [415, call(u, "POST", "/topics/e1/records", "<a/>", "text/xml")],
      [415, call(u, "POST", "/topics", "x", "text/plain")],
      [422, call(u, "POST", "/topics", JSON.stringify({ name: "bad name!", partitions: 1 }))],
      [422, call(u, "POST", "/topics", JSON.stringify({ name: "", partitions: 1 }))],
      [422, call(u, "POST", "/topics", JSON.stringify({ name: "a".repeat(250), partitions: 1 }))],
      [
        422,
        call(u, "POST", "/topics", JSON.stringify({ name: "e2", configs: { "no.such": "1" } })),
      ],
      [422, call(u, "PATCH", "/topics/e1/configs", JSON.stringify({ "retention.ms": "soon" }))],
    ];
    // ?partition= places every record, keyed or not.
    const placed = await call(
      u,
      "POST",
      "/topics/e1/records?partition=1",
      '[{"key":"a","value":1},{"value":2}]',
    );
    expect(placed.status).toBe(200);
    expect(
      (placed.json as unknown as { offsets: { partition: number }[] }).offsets.map((o) =>
        o.partition
      ),
    ).toEqual([1, 1]);
    for (const [want, p] of cases) {
      const r = await p;
      expect([want, r.json]).toEqual([r.status, r.json]);
      expectError(r);
    }
  });

  test("405 with Allow for a known path and another method; 404 for unknown paths", async () => {
    const u = b.httpUrl;
    const put = await fetch(u + "/topics/e1/records", { method: "PUT", body: "{}" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST");
    const body = (await put.json()) as { error_code: number; message: string };
    expect(body.error_code).toBe(40500);
    expect(body.message).toContain("use GET or POST");
    const del = await call(u, "DELETE", "/healthz");
    expect(del.status).toBe(405);
    expectError(del);
    const unknown = await call(u, "GET", "/no/such/path");
    expect(unknown.status).toBe(404);
    expectError(unknown);
    const deeper = await call(u, "POST", "/topics/e1/partitions/0/records/5");
    expect(deeper.status).toBe(404);
  });

  test("a read of a missing topic or partition says which, with the same words as elsewhere", async () => {
    const u = b.httpUrl;
    const topic = await call(u, "GET", "/topics/nope/partitions/0/records");
    expect(topic.status).toBe(404);
    expect(topic.json.error_code).toBe(40403);
    expect(topic.json.message).toBe("Topic 'nope' does not exist.");
    expect((await call(u, "GET", "/topics/nope")).json.message).toBe(topic.json.message);
    expect((await call(u, "DELETE", "/topics/nope")).json.message).toBe(topic.json.message);
    const part = await call(u, "GET", "/topics/e1/partitions/7/records");
    expect(part.status).toBe(404);
    expect(part.json.error_code).toBe(40402);
    expect(part.json.message).toBe("partition 7 does not exist (topic e1 has 2)");
  });

  test("413 over max.message.bytes, also when requests share a batch", async () => {
    const u = b.httpUrl;
    const made = await call(
      u,
      "POST",
      "/topics",
      JSON.stringify({ name: "small", partitions: 1, configs: { "max.message.bytes": "2000" } }),
    );
    expect(made.status).toBe(201);
    const big = JSON.stringify({ value: "x".repeat(3000) });
    const one = await call(u, "POST", "/topics/small/records?acks=1", big);
    expect(one.status).toBe(413);
    expectError(one);
    // Concurrent requests are appended together: the oversized one alone is refused.
    const small = JSON.stringify({ value: "y".repeat(100) });
    const rs = await Promise.all(
      [small, big, small, small, big, small].map((body) =>
        call(u, "POST", "/topics/small/records?acks=1", body)
      ),
    );
    expect(rs.map((r) => r.status)).toEqual([200, 413, 200, 200, 413, 200]);
    const offsets = rs.filter((r) => r.status === 200).map((r) =>
      (r.json as unknown as { offsets: { offset: number }[] }).offsets[0].offset
    );
    expect(new Set(offsets).size).toBe(4);
    const read = await fetch(`${u}/topics/small/partitions/0/records?offset=0&format=text`);
    const got = (await read.json()) as { records: { offset: number; value: string }[] };
    expect(got.records.map((r) => r.offset).sort()).toEqual(offsets.sort());
    expect(got.records.every((r) => r.value === "y".repeat(100))).toBe(true);
  });

  test("a request larger than max.message.bytes is split into batches that fit", async () => {
    const u = b.httpUrl;
    const made = await call(
      u,
      "POST",
      "/topics",
      JSON.stringify({ name: "split", partitions: 1, configs: { "max.message.bytes": "2000" } }),
    );
    expect(made.status).toBe(201);
    const body = JSON.stringify(
      Array.from({ length: 50 }, (_, i) => ({ value: `${i}:`.padEnd(100, "z") })),
    );
    const r = await call(u, "POST", "/topics/split/records?acks=1", body);
    expect(r.status).toBe(200);
    const offsets = (r.json as unknown as { offsets: { offset: number }[] }).offsets;
    expect(offsets.map((o) => o.offset)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const read = await fetch(`${u}/topics/split/partitions/0/records?offset=0&format=text`);
    const got = (await read.json()) as { records: { value: string }[] };
    expect(got.records.map((x) => x.value.split(":")[0])).toEqual(
      Array.from({ length: 50 }, (_, i) => String(i)),
    );
    // 2 MB of text lines on a default topic (1 MiB max.message.bytes): one request, accepted.
    const lines = Array.from({ length: 1000 }, () => "x".repeat(2000)).join("\n");
    const t = await call(u, "POST", "/topics", JSON.stringify({ name: "bulk", partitions: 1 }));
    expect(t.status).toBe(201);
    const res = await fetch(`${u}/topics/bulk/records`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: lines,
    });
    expect(res.status).toBe(200);
    const hw = await fetch(`${u}/topics/bulk`).then((x) => x.json()) as {
      partitions: { high_watermark: number }[];
    };
    expect(hw.partitions[0].high_watermark).toBe(1000);
  });

  test("Kafka error codes behind the statuses (503 for not-controller and not-ready causes)", () => {
    expect(statusForKafkaCode(41)).toBe(503); // NOT_CONTROLLER
    expect(statusForKafkaCode(8)).toBe(503); // BROKER_NOT_AVAILABLE
    expect(statusForKafkaCode(10)).toBe(413); // MESSAGE_TOO_LARGE
    expect(statusForKafkaCode(56)).toBe(507); // KAFKA_STORAGE_ERROR: disk full
    expect(statusForKafkaCode(40)).toBe(422); // INVALID_CONFIG
    expect(statusForKafkaCode(36)).toBe(409); // TOPIC_ALREADY_EXISTS
  });
});

async function status(x: RunningBroker): Promise<ClusterStatus | undefined> {
  try {
    return await clusterRequest(x.clusterAddr, "status", {}, 1000, TEST_AUTH) as ClusterStatus;
  } catch {
    return undefined;
  }
}

test(
  "a metadata write on a follower goes through the leader; with no leader it answers 503 naming it",
  async () => {
    // One voter: the second broker joins as a learner and follows broker 0.
    const args = (id: number) => ["--node-id", String(id), "--voters", "1"];
    const b0 = await startBrokerProcess({
      dataDir: tempDir("errors-"),
      args: args(0),
      timeoutMs: 30_000,
    });
    started.push(b0);
    const b1 = await startBrokerProcess({
      dataDir: tempDir("errors-"),
      args: [...args(1), "--join", b0.clusterAddr],
      timeoutMs: 30_000,
    });
    started.push(b1);
    let leader = -1;
    for (let i = 0; i < 400 && leader < 0; i++) {
      if (i > 0) await Bun.sleep(50);
      const [s0, s1] = await Promise.all([status(b0), status(b1)]);
      if (s0 && s1 && s0.quorum.leader >= 0 && s0.quorum.leader === s1.quorum.leader) {
        leader = s0.quorum.leader;
      }
    }
    expect(leader).toBeGreaterThanOrEqual(0);
    const follower = leader === 0 ? b1 : b0;
    const ok = await call(
      follower.httpUrl,
      "POST",
      "/topics",
      JSON.stringify({ name: "f0", partitions: 1 }),
    );
    expect(ok.status).toBe(201);
    // Applied on the follower before it answered: its own reads see the write at once.
    expect((await call(follower.httpUrl, "GET", "/topics/f0")).status).toBe(200);
    // The only voter gone: nobody can commit, and the follower says whom it would need.
    (leader === 0 ? b0 : b1).kill("SIGKILL");
    const r = await call(
      follower.httpUrl,
      "POST",
      "/topics",
      JSON.stringify({ name: "f1", partitions: 1 }),
    );
    expect(r.status).toBe(503);
    expectError(r);
    expect(r.json.message).toContain(`broker ${leader}`);
    expect((r.json as { kafka_error_code?: number }).kafka_error_code).toBe(41);
  },
  60_000,
);
