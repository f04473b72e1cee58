// A committed metadata record costs what it changes (issue 20): applied to the open logs, a
// topic's creation, config change or deletion, or one partition's leader/ISR change, touches that
// topic (or partition) only, never re-lists every topic. Counts the work rather than timing it.
import { afterEach, expect, test } from "bun:test";
import { MetadataStore } from "../../src/meta/index.ts";
import type { MetadataRecord } from "../../src/meta/index.ts";
import { SegmentLogStore } from "../../src/storage/index.ts";
import type { PartitionLog } from "../../src/storage/index.ts";
import { PartitionManager, reconcileScope } from "../../src/core/partition-manager.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../helpers/broker-process.ts";
import { registerSelf } from "../helpers/meta.ts";
import { FakeClock } from "../storage/helpers.ts";

const opened: PartitionManager[] = [];
afterEach(async () => {
  for (const pm of opened.splice(0)) {
    await pm.close();
    await pm.meta.close();
  }
});

const TOPICS = 12;
const PARTITIONS = 8;

async function setup() {
  const dataDir = tempDir();
  const clock = new FakeClock(Date.now());
  const meta = MetadataStore.open(dataDir, { now: () => clock.now() });
  const store = await SegmentLogStore.open({ dataDir, clock, checkpointIntervalMs: 0 });
  const pm = new PartitionManager(meta, store, meta.nodeId, createLogger("error"));
  opened.push(pm);
  await registerSelf(meta);
  for (let i = 0; i < TOPICS; i++) await pm.createTopic(`t${i}`, PARTITIONS, 1, {});
  // What each reconciliation does: metadata reads, logs opened, logs brought in line.
  const work = { listTopics: 0, topicReads: 0, rows: 0, opens: 0, updates: 0 };
  const listTopics = meta.listTopics.bind(meta);
  meta.listTopics = () => {
    work.listTopics++;
    return listTopics();
  };
  const getTopicById = meta.getTopicById.bind(meta);
  meta.getTopicById = (id, only) => {
    work.topicReads++;
    const t = getTopicById(id, only);
    work.rows += t?.partitions.length ?? 0;
    return t;
  };
  const openLog = store.openLog.bind(store);
  store.openLog = (spec) => {
    work.opens++;
    return openLog(spec);
  };
  for (const r of pm.partitions()) {
    const log = r.log as PartitionLog;
    const update = log.updateConfig.bind(log);
    log.updateConfig = (patch) => {
      work.updates++;
      update(patch);
    };
  }
  const reset = () =>
    Object.assign(work, { listTopics: 0, topicReads: 0, rows: 0, opens: 0, updates: 0 });
  return { meta, pm, work, reset };
}

test("each committed record reconciles only the topic or partition it names", async () => {
  const { meta, pm, work, reset } = await setup();
  expect(pm.partitions().length).toBe(TOPICS * PARTITIONS);

  // A topic created through another broker: its partitions open, nothing else is looked at.
  const t = await meta.createTopic("fresh", PARTITIONS, 1);
  reset();
  await pm.reconcile({ type: "TopicCreated", topicId: t.topicId, name: "fresh" } as MetadataRecord);
  expect(pm.partitions().length).toBe((TOPICS + 1) * PARTITIONS);
  expect(work).toEqual({
    listTopics: 0,
    topicReads: 1,
    rows: PARTITIONS,
    opens: PARTITIONS,
    updates: 0,
  });

  // A config change of one topic: that topic's logs only.
  const t3 = meta.getTopic("t3")!;
  await meta.alterTopicConfigs("t3", { "retention.ms": "60000" });
  reset();
  await pm.reconcile({ type: "TopicConfigChanged", topicId: t3.topicId, set: {}, delete: [] });
  expect(work).toEqual({
    listTopics: 0,
    topicReads: 1,
    rows: PARTITIONS,
    opens: 0,
    updates: PARTITIONS,
  });
  expect(pm.partition("t3", 0).log.config().retentionMs).toBe(60000);
  expect(pm.partition("t4", 0).log.config().retentionMs).not.toBe(60000);

  // One partition's ISR: that partition only (partition 0 is read too: the replication factor).
  const t5 = meta.getTopic("t5")!;
  await meta.alterPartition("t5", 3, { isr: [meta.nodeId] });
  reset();
  await pm.reconcile({ type: "PartitionChanged", topicId: t5.topicId, partition: 3 });
  expect(work).toEqual({ listTopics: 0, topicReads: 1, rows: 2, opens: 0, updates: 1 });

  // A deletion through another broker: that topic's logs go, the others stay.
  const t7 = meta.getTopic("t7")!;
  await meta.deleteTopic("t7");
  reset();
  await pm.reconcile({ type: "TopicDeleted", topicId: t7.topicId, name: "t7" });
  expect(work).toEqual({ listTopics: 0, topicReads: 1, rows: 0, opens: 0, updates: 0 });
  expect(pm.has("t7", 0)).toBe(false);
  expect(pm.has("t6", 0) && pm.has("t8", PARTITIONS - 1)).toBe(true);
  expect(pm.partitions().length).toBe(TOPICS * PARTITIONS);

  // Records about brokers change no partition; a snapshot (null) brings everything in line.
  reset();
  await pm.reconcile({ type: "BrokerFenced", nodeId: 5, fenced: true });
  expect(work).toEqual({ listTopics: 0, topicReads: 0, rows: 0, opens: 0, updates: 0 });
  await pm.reconcile(null);
  expect(work.listTopics).toBe(1);
});

test("the scope of each record type", () => {
  expect(reconcileScope({ type: "PartitionChanged", topicId: "x", partition: 2 })).toEqual({
    topicId: "x",
    partition: 2,
  });
  expect(reconcileScope({ type: "TopicConfigChanged", topicId: "x", set: {}, delete: [] }))
    .toEqual({ topicId: "x" });
  expect(reconcileScope({ type: "NoOp" })).toBeNull();
});
