// `broker topic repair` on a real broker: acknowledged data damaged in segment 0 and quarantined at
// restart (as in damage.test.ts); the command lists the damaged copy and the choices; a decision on
// a partition without damage is refused; --accept-loss records the decision (writes stay refused
// until the restart that applies it); after the restart the log continues after the quarantined
// offsets: records before the damage are still served, a new record gets the offset after the gap
// (never a quarantined one), and the damage is gone from /readyz.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import {
  runBrokerCommand,
  type RunningBroker,
  startBrokerProcess,
} from "../helpers/broker-process.ts";
import { damageSegment0, writeSegments } from "../helpers/damage.ts";
import { api } from "../helpers/http.ts";

const started: RunningBroker[] = [];
afterAll(() => {
  for (const b of started) b.kill("SIGKILL");
});

test("topic repair: list the damage, refuse what is not damaged, give the records up", async () => {
  const a = await startBrokerProcess();
  started.push(a);
  const end = await writeSegments(a.httpUrl, "dmg");
  expect((await api(a.httpUrl, "POST", "/topics", { name: "fine", partitions: 1 })).status).toBe(
    201,
  );
  a.kill("SIGKILL");
  await a.exited;
  const from = damageSegment0(join(a.dataDir, "logs", "dmg-0"));

  const b = await startBrokerProcess({ dataDir: a.dataDir });
  started.push(b);
  const server = ["--server", b.httpUrl.replace("http://", "")];
  // The listing names the copy, the offsets and the choices.
  const list = runBrokerCommand(["topic", "repair", "dmg", ...server]);
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(new RegExp(`0 +0 +0 +quarantined +${from}-${end - 1}`));
  expect(list.stdout).toContain("--accept-loss");
  expect(runBrokerCommand(["topic", "repair", "fine", ...server]).stdout).toContain(
    "no damaged copy of fine",
  );
  // Nothing to decide on an undamaged partition; --accept-loss needs a partition.
  const fine = await api(b.httpUrl, "POST", "/topics/fine/partitions/0/repair", {
    accept_loss: true,
  });
  expect([fine.status, fine.json.error_code]).toEqual([409, 40900]);
  expect(runBrokerCommand(["topic", "repair", "dmg", "--accept-loss", ...server]).code).toBe(2);

  const decided = runBrokerCommand([
    "topic",
    "repair",
    "dmg",
    "--partition",
    "0",
    "--accept-loss",
    ...server,
  ]);
  expect(decided.code).toBe(0);
  expect(decided.stdout).toContain(`offsets ${from}-${end - 1} of dmg-0 are given up`);
  // Recorded, not yet applied: writes are still refused (no quarantined offset is reused).
  const early = await api(b.httpUrl, "POST", "/topics/dmg/records?acks=all", { value: "early" });
  expect(early.json.kafka_error_code).toBe(56);
  // Deciding again gives the same answer.
  const again = await api(b.httpUrl, "POST", "/topics/dmg/partitions/0/repair", {
    accept_loss: true,
  });
  expect(again.json).toMatchObject({ lost_from_offset: from, lost_to_offset: end });

  b.kill("SIGTERM");
  await b.exited;
  const c = await startBrokerProcess({ dataDir: a.dataDir });
  started.push(c);
  const ready = await api(c.httpUrl, "GET", "/readyz");
  expect(ready.json.damaged_partitions ?? []).toEqual([]);
  const w = await api(c.httpUrl, "POST", "/topics/dmg/records?acks=all", { value: "after" });
  expect(w.status).toBe(200);
  expect((w.json.offsets as { offset: number }[])[0].offset).toBe(end);
  const read = await api(c.httpUrl, "GET", "/topics/dmg/partitions/0/records?offset=0&limit=1000");
  const offsets = (read.json.records as { offset: number }[]).map((r) => r.offset);
  expect(offsets[0]).toBe(0);
  expect(offsets.filter((o) => o >= from && o < end)).toEqual([]);
  expect(offsets.at(-1)).toBe(end);
  expect(offsets.filter((o) => o < from).length).toBe(from);
}, 120_000);
