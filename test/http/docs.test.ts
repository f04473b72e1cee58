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
  // Every curl of the page, counted: a shell function makes each one print its status on stderr
  // (also the ones piped into head, whose stdout is cut).
  const invocations = blocks.join("\n").match(/\bcurl\s/g)?.length ?? 0;
  expect(invocations).toBeGreaterThan(30);
  const script = "set -e\n" +
    'curl() { command curl -w "%{stderr}HTTP%{http_code}\\n" "$@"; }\n' +
    blocks.join("\n").replaceAll("localhost:8080", host);
  const r = Bun.spawnSync(["bash", "-c", script], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  const err = r.stderr.toString().split("\n").filter((l) => l !== "");
  expect(err.filter((l) => !/^HTTP\d{3}$/.test(l))).toEqual([]);
  expect(r.exitCode).toBe(0);
  const statuses = err.map((l) => Number(l.slice(4)));
  // Each example ran once, and none failed (streams cut by --max-time report 200 too), but for the
  // ones whose line says which 4xx they get on this broker ("# 409 here: ...").
  expect(statuses).toHaveLength(invocations);
  const said = blocks.join("\n").split("\n").flatMap((l) =>
    (l.match(/\bcurl\s/g) ?? []).map(() => /# (4\d\d) here\b/.exec(l)?.[1])
  );
  expect(statuses.filter((s, i) => (s < 200 || s >= 400) && String(s) !== said[i])).toEqual([]);
}, 60_000);

test("the page has a curl example for every route of /openapi.json", async () => {
  const md = readFileSync(join(import.meta.dir, "..", "..", "docs", "http-api.md"), "utf8");
  const lines = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].split("\n"))
    .filter((l) => /\bcurl\s/.test(l));
  // Method and path of each example: -X, else POST with a body, else GET.
  const examples = lines.map((l) => {
    const method = /-X\s+([A-Z]+)/.exec(l)?.[1] ??
      (/\s(-d|--data-binary)\s/.test(l) ? "POST" : "GET");
    const path = /localhost:8080(\/[^\s'"?]*)/.exec(l)?.[1] ?? "";
    return { method, path };
  });
  const doc = (await (await fetch(`${b.httpUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const missing: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const re = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    for (const method of Object.keys(ops).map((m) => m.toUpperCase())) {
      if (!examples.some((e) => e.method === method && re.test(e.path))) {
        missing.push(`${method} ${path}`);
      }
    }
  }
  expect(missing).toEqual([]);
});
