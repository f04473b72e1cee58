// DescribeConfigs of the broker resource with synonyms: a setting given at start is a static
// broker config with Kafka's default listed under it, as Kafka orders them; one left alone is
// the default only.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Struct } from "../../src/protocol/kafka/index.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { RawClient } from "./raw-client.ts";

const BROKER = 4;
const STATIC_BROKER_CONFIG = 4;
const DEFAULT_CONFIG = 5;
let broker: RunningBroker;
let c: RawClient;

beforeAll(async () => {
  broker = await startBrokerProcess({
    args: ["--num-partitions", "3", "--topic-default", "retention.ms=1000"],
  });
  c = await RawClient.connect(broker.kafkaPort);
});
afterAll(async () => {
  c?.close();
  broker.kill();
  await broker.exited;
});

async function describe(keys: string[]) {
  const r = await c.call(32, 1, {
    resources: [{ resourceType: BROKER, resourceName: "0", configurationKeys: keys }],
    includeSynonyms: true,
  });
  const configs = (r.results as { configs: Struct[] }[])[0].configs;
  return Object.fromEntries(configs.map((x) => [
    x.name,
    [x.value, x.configSource, (x.synonyms as Struct[]).map((s) => [s.value, s.source])],
  ]));
}

test("static settings list the default under them; defaults stand alone", async () => {
  expect(
    await describe(["num.partitions", "default.replication.factor", "log.retention.ms"]),
  ).toEqual({
    "num.partitions": ["3", STATIC_BROKER_CONFIG, [["3", STATIC_BROKER_CONFIG], [
      "1",
      DEFAULT_CONFIG,
    ]]],
    "default.replication.factor": ["1", DEFAULT_CONFIG, [["1", DEFAULT_CONFIG]]],
    "log.retention.ms": ["1000", STATIC_BROKER_CONFIG, [["1000", STATIC_BROKER_CONFIG], [
      "604800000",
      DEFAULT_CONFIG,
    ]]],
  });
});
