// A real broker killed with SIGKILL, a byte of acknowledged data flipped in segment 0 and the
// recovery checkpoint lost (as when it was still at 0): on restart the partition is quarantined,
// and /readyz, /metrics and GET /topics/{t} say so; produce is refused (offsets not reused) with
// a message naming paths relative to the data dir.
import { afterAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { damageSegment0, writeSegments } from "../helpers/damage.ts";

const started: RunningBroker[] = [];
afterAll(() => {
  for (const b of started) b.kill("SIGKILL");
});

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { "content-type": "application/json" },
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch { /* text */ }
  return { status: res.status, json: json as Record<string, unknown>, text };
}

test("a quarantined partition shows in /readyz, /metrics and GET /topics/{t}", async () => {
  const a = await startBrokerProcess();
  started.push(a);
  const end = await writeSegments(a.httpUrl, "dmg");
  a.kill("SIGKILL");
  await a.exited;
  const dir = join(a.dataDir, "logs", "dmg-0");
  expect(readdirSync(dir).filter((f) => f.endsWith(".log")).length).toBeGreaterThanOrEqual(5);
  const hit = { base: damageSegment0(dir) };

  const b = await startBrokerProcess({ dataDir: a.dataDir });
  started.push(b);
  const ready = await call(b.httpUrl, "GET", "/readyz");
  expect(ready.status).toBe(200);
  const damaged = (ready.json.damaged_partitions as Record<string, unknown>[])[0];
  expect(damaged).toMatchObject({
    topic: "dmg",
    partition: 0,
    state: "quarantined",
    from_offset: hit.base,
    to_offset: end,
  });
  expect(String((damaged.files as string[])[0])).toMatch(/^logs\/dmg-0\/quarantine\//);
  const metrics = await call(b.httpUrl, "GET", "/metrics");
  expect(metrics.text).toContain('broker_partition_damaged{topic="dmg",partition="0"} 1');
  expect(metrics.text).toContain(
    `broker_partition_quarantined_offsets{topic="dmg",partition="0"} ${end - hit.base}`,
  );
  const topic = await call(b.httpUrl, "GET", "/topics/dmg");
  const part = (topic.json.partitions as Record<string, unknown>[])[0];
  expect(part.damage).toMatchObject({ state: "quarantined", from_offset: hit.base });
  // Records before the damage are served; produce is refused rather than reusing offsets.
  const read = await call(b.httpUrl, "GET", "/topics/dmg/partitions/0/records?offset=0&limit=500");
  expect(read.status).toBe(200);
  const produced = await call(b.httpUrl, "POST", "/topics/dmg/records?acks=all", { value: "x" });
  expect(produced.status).toBe(500);
  expect(produced.json.kafka_error_code).toBe(56);
  expect(String(produced.json.message)).toContain(`offsets ${hit.base} to ${end - 1}`);
  expect(String(produced.json.message)).not.toContain(a.dataDir);
  expect(b.logs.some((l) => l.includes('"level":"error"') && l.includes("quarantined"))).toBe(
    true,
  );
}, 60_000);
