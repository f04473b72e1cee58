// Runs every curl example of docs/http-api.md, in order, against a live broker: each must exit 0
// and no answer may be a 5xx or (except where the page says so) a 4xx.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";

let b: RunningBroker;
beforeAll(async () => {
  b = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
});
afterAll(() => b?.kill("SIGKILL"));

test("every curl example in docs/http-api.md works", () => {
  const md = readFileSync(join(import.meta.dir, "..", "..", "docs", "http-api.md"), "utf8");
  const blocks = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks.length).toBeGreaterThan(5);
  const host = b.httpUrl.replace("http://", "");
  // One shell, so variables set by one example are seen by the next; -w prints each status.
  const script = "set -e\n" + blocks.join("\n")
    .replaceAll("localhost:8080", host)
    .replaceAll("curl -s ", "curl -s -w ' HTTP%{http_code}\\n' ");
  const r = Bun.spawnSync(["bash", "-c", script], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  const out = r.stdout.toString();
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
  const statuses = [...out.matchAll(/HTTP(\d{3})/g)].map((m) => Number(m[1]));
  expect(statuses.length).toBeGreaterThan(30);
  // Streams cut by --max-time report 200 too; nothing may fail.
  expect(statuses.filter((s) => s >= 400)).toEqual([]);
}, 60_000);
