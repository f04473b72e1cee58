// AlterConfigs (33) and IncrementalAlterConfigs (44) share one loop (shared/config-resources.ts):
// what each does to a topic's overrides, seen through DescribeConfigs on a real broker process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Struct } from "../../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../../helpers/broker-process.ts";
import { RawClient } from "../raw-client.ts";

const TOPIC = 2;
const [SET, DELETE, APPEND, SUBTRACT] = [0, 1, 2, 3];
let broker: RunningBroker;
let c: RawClient;

beforeAll(async () => {
  broker = await startBrokerProcess();
  c = await RawClient.connect(broker.kafkaPort);
  expect(await c.createTopics(["incr", "whole"])).toEqual([0, 0]);
});
afterAll(async () => {
  c?.close();
  broker.kill();
  await broker.exited;
});

/** The overrides of a topic (configs whose source is the topic itself). */
async function overrides(name: string): Promise<Record<string, string>> {
  const r = await c.call(32, 1, {
    resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: null }],
    includeSynonyms: false,
  });
  const configs = (r.results as { configs: Struct[] }[])[0].configs;
  return Object.fromEntries(
    configs.filter((x) => x.configSource === 1).map((x) => [x.name, x.value]),
  );
}

async function incremental(name: string, configs: Struct[], validateOnly = false) {
  const r = await c.call(44, 1, {
    resources: [{ resourceType: TOPIC, resourceName: name, configs }],
    validateOnly,
  });
  return (r.responses as Struct[]).map((x) => [x.resourceName, x.errorCode]);
}

async function alter(name: string, configs: Struct[], validateOnly = false) {
  const r = await c.call(33, 1, {
    resources: [{ resourceType: TOPIC, resourceName: name, configs }],
    validateOnly,
  });
  return (r.responses as Struct[]).map((x) => [x.resourceName, x.errorCode]);
}

test("IncrementalAlterConfigs: SET, DELETE and APPEND change only the keys named", async () => {
  expect(
    await incremental("incr", [
      { name: "retention.ms", configOperation: SET, value: "100000" },
      { name: "segment.ms", configOperation: SET, value: "200000" },
    ]),
  ).toEqual([["incr", 0]]);
  expect(await overrides("incr")).toEqual({ "retention.ms": "100000", "segment.ms": "200000" });
  expect(
    await incremental("incr", [
      { name: "retention.ms", configOperation: DELETE, value: null },
      { name: "cleanup.policy", configOperation: APPEND, value: "delete" },
    ]),
  ).toEqual([["incr", 0]]);
  expect(await overrides("incr")).toEqual({ "segment.ms": "200000", "cleanup.policy": "delete" });
});

test("IncrementalAlterConfigs refusals change nothing of the resource", async () => {
  const before = await overrides("incr");
  const refused = [
    // APPEND/SUBTRACT on a config that is not a list
    [{ name: "segment.ms", configOperation: SUBTRACT, value: "1" }, 40],
    // SUBTRACT of the list's one item leaves none (cleanup.policy needs one); APPEND of a
    // policy this broker does not have
    [{ name: "cleanup.policy", configOperation: SUBTRACT, value: "delete" }, 40],
    [{ name: "cleanup.policy", configOperation: APPEND, value: "compact" }, 40],
    // SET without a value, and an operation Kafka does not have
    [{ name: "retention.ms", configOperation: SET, value: null }, 42],
    [{ name: "retention.ms", configOperation: 7, value: "1" }, 42],
  ] as const;
  for (const [op, code] of refused) {
    expect(
      await incremental("incr", [
        { name: "retention.bytes", configOperation: SET, value: "1048576" },
        op,
      ]),
    ).toEqual([["incr", code]]);
  }
  expect(
    await incremental("incr", [{ name: "retention.ms", configOperation: SET, value: "5" }], true),
  )
    .toEqual([["incr", 0]]);
  expect(await incremental("nope", [{ name: "retention.ms", configOperation: SET, value: "5" }]))
    .toEqual([["nope", 3]]);
  expect(await overrides("incr")).toEqual(before);
});

test("AlterConfigs replaces the whole override set; validateOnly changes nothing", async () => {
  expect(
    await alter("whole", [
      { name: "retention.ms", value: "100000" },
      { name: "segment.ms", value: "200000" },
    ]),
  ).toEqual([["whole", 0]]);
  expect(await alter("whole", [{ name: "segment.ms", value: "300000" }])).toEqual([["whole", 0]]);
  expect(await overrides("whole")).toEqual({ "segment.ms": "300000" });
  expect(await alter("whole", [{ name: "retention.ms", value: "1" }], true)).toEqual([
    ["whole", 0],
  ]);
  expect(await alter("whole", [{ name: "retention.ms", value: "-7" }])).toEqual([["whole", 40]]);
  expect(await overrides("whole")).toEqual({ "segment.ms": "300000" });
});
