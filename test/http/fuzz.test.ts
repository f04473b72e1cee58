// Seeded fuzzing of the HTTP routes: random and malformed bodies, headers and query strings.
// The broker keeps answering, never with a 5xx, always JSON errors, and stored records stay put.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api, readAll } from "../helpers/http.ts";

let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess();
  await api(b.httpUrl, "POST", "/topics", { name: "keep", partitions: 2 });
  await api(b.httpUrl, "POST", "/topics/keep/records", [{ key: "a", value: 1 }, { value: "x" }]);
});
afterAll(() => b?.kill("SIGKILL"));

/** mulberry32: a small seeded PRNG, so a failure replays. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATHS = [
  "/topics",
  "/topics/keep",
  "/topics/keep/records",
  "/topics/keep/configs",
  "/topics/keep/partitions",
  "/topics/keep/partitions/0/records",
  "/topics/keep/partitions/9/records",
  "/topics/nope/records",
  "/topics/%00/records",
  "/groups",
  "/groups/g",
  "/groups/g/members",
  "/groups/g/records",
  "/groups/g/offsets",
  "/groups/g/offsets/reset",
  "/groups/g/members/m/heartbeat",
  "/cluster",
  "/metrics",
  "/openapi.json",
];
const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"];
const TYPES = [
  "application/json",
  "application/x-ndjson",
  "text/plain",
  "application/octet-stream",
  "application/vnd.kafka.json.v2+json",
  "application/vnd.kafka.binary.v2+json",
  "text/xml",
  "multipart/form-data",
  "",
  "application/json; charset=utf-8",
];
const QUERIES = [
  "offset=-1",
  "offset=abc",
  "offset=99999999999999999999",
  "limit=0",
  "limit=1e9",
  "max_wait_ms=-5",
  "format=xml",
  "acks=2",
  "acks=all",
  "timestamp=notatime",
  "member_id=&generation_id=x",
  "cursor=%%%",
  "cursor=eyJhIjoxfQ",
  "from=whenever",
  "validate_only=true",
  "format=base64",
];
const BODIES = [
  "{",
  "[]",
  "null",
  "{}",
  '{"name": 5}',
  '{"name":"keep"}',
  '{"records": "x"}',
  '{"records":[{"value":"@@@"}]}',
  '{"value":"not base64!"}',
  '{"count": -1}',
  '{"topics": []}',
  '{"topics":["keep"],"session_timeout_ms":1}',
  '{"member_id":"m","generation_id":1,"offsets":[{"topic":"keep","partition":0,"offset":-1}]}',
  '{"to":"earliest","topics":["nope"]}',
  '{"retention.ms":{"a":1}}',
  '{"partition": 1.5, "value": 1}',
  '{"headers": 7}',
  "\u0000\u0001\u0002",
  '"just a string"',
];

function randomBody(r: () => number): string {
  const pick = r();
  if (pick < 0.6) return BODIES[Math.floor(r() * BODIES.length)];
  const n = Math.floor(r() * 200);
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(Math.floor(r() * 128));
  return s;
}

test(
  "10 000 seeded malformed requests: never a 5xx, always a JSON error, records unchanged",
  async () => {
    const r = rng(20240601);
    const before = [await readAll(b.httpUrl, "keep", 0), await readAll(b.httpUrl, "keep", 1)];
    let fiveXX: string[] = [];
    const N = 10_000;
    const CONCURRENCY = 32;
    let i = 0;
    const worker = async () => {
      while (i < N) {
        i++;
        let path = PATHS[Math.floor(r() * PATHS.length)];
        // Never let the fuzzer write to the topic whose records must stay unchanged.
        const method = METHODS[Math.floor(r() * METHODS.length)];
        if (path.startsWith("/topics/keep") && method !== "GET") {
          path = path.replace(
            "keep",
            "other",
          );
        }
        const q = r() < 0.7 ? "?" + QUERIES[Math.floor(r() * QUERIES.length)] : "";
        const type = TYPES[Math.floor(r() * TYPES.length)];
        const headers: Record<string, string> = {};
        if (type) headers["content-type"] = type;
        if (r() < 0.1) headers["last-event-id"] = "x:y";
        if (r() < 0.05) headers.authorization = "Bearer junk";
        const body = method === "GET" || method === "DELETE" ? undefined : randomBody(r);
        const res = await fetch(b.httpUrl + path + q, { method, headers, body });
        const text = await res.text();
        if (res.status >= 500) fiveXX.push(`${method} ${path}${q} ${type}: ${res.status} ${text}`);
        if (res.status >= 400) {
          const j = JSON.parse(text);
          expect(typeof j.error_code).toBe("number");
          expect(typeof j.message).toBe("string");
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(fiveXX.slice(0, 5)).toEqual([]);
    fiveXX = [];
    expect((await api(b.httpUrl, "GET", "/healthz")).status).toBe(200);
    const after = [await readAll(b.httpUrl, "keep", 0), await readAll(b.httpUrl, "keep", 1)];
    expect(after).toEqual(before);
  },
  120_000,
);

test("a 100 MB body is refused with a JSON 413; wrong content type 415", async () => {
  const big = new Uint8Array(100 * 1024 * 1024);
  const res = await fetch(`${b.httpUrl}/topics/keep/records`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: big,
  });
  expect(res.status).toBe(413);
  expect(((await res.json()) as { error_code: number }).error_code).toBe(41300);
  const t = await api(b.httpUrl, "POST", "/topics/keep/records", "<a/>", {
    "content-type": "text/xml",
  });
  expect(t.status).toBe(415);
  const over = await api(b.httpUrl, "POST", "/topics/keep/records?acks=1", {
    value: "x".repeat(2 * 1024 * 1024),
  });
  expect(over.status).toBe(413); // over max.message.bytes
}, 60_000);
