// The plan `broker cluster rebalance|decommission` prints: what moves, what it copies, and
// replicas and leaders per broker before and after; and their usage errors.
import { expect, test } from "bun:test";
import { renderPlan, summarize } from "../../src/cli/rebalance.ts";
import { runBrokerCommand } from "../helpers/broker-process.ts";

test("summarize: moves (reorders too), bytes the new replicas copy, loads per broker", () => {
  const current = [
    { topic: "t", partition: 0, replicas: [1, 2] },
    { topic: "t", partition: 1, replicas: [2, 3] },
    { topic: "t", partition: 2, replicas: [3, 1] },
  ];
  const proposed = [
    { topic: "t", partition: 0, replicas: [1, 2] },
    { topic: "t", partition: 1, replicas: [4, 3] },
    { topic: "t", partition: 2, replicas: [1, 3] },
  ];
  const now = new Map([
    ["t\u00000", { leader: 1, sizeBytes: 100 }],
    ["t\u00001", { leader: 2, sizeBytes: 5000 }],
    ["t\u00002", { leader: 1, sizeBytes: 70 }],
  ]);
  const s = summarize(current, proposed, now, [1, 2, 3, 4]);
  expect(s.moves).toEqual([
    { topic: "t", partition: 1, from: [2, 3], to: [4, 3], copyBytes: 5000 },
    { topic: "t", partition: 2, from: [3, 1], to: [1, 3], copyBytes: 0 },
  ]);
  expect(s.copyBytes).toBe(5000);
  expect(s.brokers).toEqual([
    { broker: 1, replicas: 2, replicasAfter: 2, leaders: 2, leadersAfter: 2 },
    { broker: 2, replicas: 2, replicasAfter: 1, leaders: 1, leadersAfter: 0 },
    { broker: 3, replicas: 2, replicasAfter: 2, leaders: 0, leadersAfter: 0 },
    { broker: 4, replicas: 0, replicasAfter: 1, leaders: 0, leadersAfter: 1 },
  ]);
  const text = renderPlan(s);
  expect(text).toContain("2 partition(s) move, copying about 4.9 KiB");
  expect(text).toMatch(/t-1\s+\[2,3\]\s+\[4,3\]\s+4\.9 KiB/);
  expect(text).toMatch(/t-2\s+\[3,1\]\s+\[1,3\]\s+-/);
  expect(text).toMatch(/\n4\s+0\s+1\s+0\s+1\n/);
  expect(renderPlan(summarize(current, current, now, [1, 2, 3]))).toContain(
    "No partition needs to move.",
  );
});

test("--help and usage errors", () => {
  const h = runBrokerCommand(["cluster", "decommission", "--help"]);
  expect(h.code).toBe(0);
  expect(h.stdout).toContain("Usage: broker cluster decommission NODE_ID");
  expect(h.stdout).toContain("--dry-run");
  const r = runBrokerCommand(["cluster", "rebalance", "--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("--broker-list IDS");
  expect(runBrokerCommand(["cluster", "decommission"]).stderr).toContain("missing node id");
  const bad = runBrokerCommand(["cluster", "decommission", "x"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("must be an integer");
  const list = runBrokerCommand(["cluster", "rebalance", "--broker-list", "1,,2"]);
  expect(list.code).toBe(2);
  expect(list.stderr).toContain("--broker-list must be broker ids");
});
