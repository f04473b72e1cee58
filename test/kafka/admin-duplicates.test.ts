// A topic or config key named twice in one admin request is refused as Kafka's controller refuses
// it: INVALID_REQUEST, answered once per name, and nothing is done for that name (the others in
// the request are served). Before, DeleteTopics deleted the topic and IncrementalAlterConfigs
// applied the last SET.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Struct } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

const INVALID_REQUEST = 42;
const TOPIC = 2;
const ZERO_ID = "00000000000000000000000000000000";
let broker: RunningBroker;
let c: RawClient;

beforeAll(async () => {
  broker = await startBrokerProcess();
  c = await RawClient.connect(broker.kafkaPort);
});
afterAll(async () => {
  c?.close();
  broker.kill();
  await broker.exited;
});

const creatable = (name: string) => ({
  name,
  numPartitions: 1,
  replicationFactor: 1,
  assignments: [],
  configs: [],
});

async function create(...names: string[]) {
  const r = await c.call(19, 4, {
    topics: names.map(creatable),
    timeoutMs: 5000,
    validateOnly: false,
  });
  return (r.topics as Struct[]).map((t) => [t.name, t.errorCode, t.errorMessage]);
}

async function exists(name: string): Promise<boolean> {
  const r = await c.call(3, 4, { topics: [{ name }], allowAutoTopicCreation: false });
  return (r.topics as Struct[])[0].errorCode === 0;
}

async function configOf(name: string, key: string) {
  const r = await c.call(32, 1, {
    resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: [key] }],
    includeSynonyms: false,
  });
  const res = (r.results as { configs: Struct[] }[])[0];
  return res.configs[0]?.value;
}

test("CreateTopics: a name given twice is refused once and not created; the rest are", async () => {
  expect(await create("dup-c", "dup-ok", "dup-c")).toEqual([
    ["dup-c", INVALID_REQUEST, "Duplicate topic name."],
    ["dup-ok", 0, null],
  ]);
  expect(await exists("dup-c")).toBe(false);
  expect(await exists("dup-ok")).toBe(true);
});

test("DeleteTopics: a name given twice is refused once and the topic stays", async () => {
  expect(await create("dup-d", "dup-d2")).toEqual([["dup-d", 0, null], ["dup-d2", 0, null]]);
  const v4 = await c.call(20, 4, { topicNames: ["dup-d", "dup-d2", "dup-d"], timeoutMs: 5000 });
  expect((v4.responses as Struct[]).map((r) => [r.name, r.errorCode])).toEqual([
    ["dup-d", INVALID_REQUEST],
    ["dup-d2", 0],
  ]);
  expect(await exists("dup-d")).toBe(true);
  expect(await exists("dup-d2")).toBe(false);
  const v6 = await c.call(20, 6, {
    topics: [{ name: "dup-d", topicId: ZERO_ID }, { name: "dup-d", topicId: ZERO_ID }],
    timeoutMs: 5000,
  });
  expect((v6.responses as Struct[]).map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
    ["dup-d", INVALID_REQUEST, "Duplicate topic name."],
  ]);
  expect(await exists("dup-d")).toBe(true);
});

test("CreatePartitions: a name given twice is refused once and does not grow", async () => {
  await create("dup-p");
  const r = await c.call(37, 1, {
    topics: [{ name: "dup-p", count: 2, assignments: null }, {
      name: "dup-p",
      count: 3,
      assignments: null,
    }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  expect((r.results as Struct[]).map((x) => [x.name, x.errorCode])).toEqual([
    ["dup-p", INVALID_REQUEST],
  ]);
  const m = await c.call(3, 4, { topics: [{ name: "dup-p" }], allowAutoTopicCreation: false });
  expect(((m.topics as Struct[])[0].partitions as Struct[]).length).toBe(1);
});

test("AlterConfigs and IncrementalAlterConfigs: a key given twice changes nothing", async () => {
  await create("dup-k");
  const incr = await c.call(44, 0, {
    resources: [{
      resourceType: TOPIC,
      resourceName: "dup-k",
      configs: [
        { name: "retention.ms", configOperation: 0, value: "100000" },
        { name: "retention.ms", configOperation: 0, value: "200000" },
      ],
    }],
    validateOnly: false,
  });
  expect((incr.responses as Struct[]).map((r) => [r.errorCode, r.errorMessage])).toEqual([
    [INVALID_REQUEST, "Error due to duplicate config keys"],
  ]);
  const alter = await c.call(33, 1, {
    resources: [{
      resourceType: TOPIC,
      resourceName: "dup-k",
      configs: [{ name: "retention.ms", value: "1" }, { name: "retention.ms", value: "2" }],
    }],
    validateOnly: false,
  });
  expect((alter.responses as Struct[])[0].errorCode).toBe(INVALID_REQUEST);
  expect(await configOf("dup-k", "retention.ms")).toBe("604800000");
});
