// The Kafka front door feeds the same Prometheus registry as HTTP: per-API latency histograms,
// and records and bytes in and out per topic, whichever door the records came through.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { encodeRecordBatch } from "../../src/protocol/record-batch.ts";
import { type RunningBroker, startBrokerProcess } from "../helpers/broker-process.ts";
import { api } from "../helpers/http.ts";
import { RawClient } from "./raw-client.ts";

let broker: RunningBroker;
beforeAll(async () => {
  broker = await startBrokerProcess({ args: ["--group-initial-rebalance-delay-ms", "0"] });
});
afterAll(async () => {
  broker.kill();
  await broker.exited;
});

/** The value of one sample line `name{labels} value`, or 0 when absent. */
function sample(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

const te = new TextEncoder();

test("Kafka produce and fetch show in /metrics next to HTTP traffic", async () => {
  const c = await RawClient.connect(broker.kafkaPort);
  const topic = "metered";
  const created = await c.call(19, 4, {
    topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  // deno-lint-ignore no-explicit-any
  expect((created.topics as any)[0].errorCode).toBe(0);
  const batches = [3, 5].map((n) =>
    encodeRecordBatch({
      records: Array.from(
        { length: n },
        (_, i) => ({ key: te.encode(`k${i}`), value: te.encode("v") }),
      ),
      baseTimestamp: Date.now(),
    })
  );
  for (const records of batches) {
    const r = await c.call(0, 7, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    // deno-lint-ignore no-explicit-any
    expect((r.responses as any)[0].partitionResponses[0].errorCode).toBe(0);
  }
  const fetched = await c.call(1, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic,
      partitions: [{
        partition: 0,
        currentLeaderEpoch: -1,
        fetchOffset: 0,
        logStartOffset: -1,
        partitionMaxBytes: 1 << 20,
      }],
    }],
    forgottenTopicsData: [],
    rackId: "",
  });
  // deno-lint-ignore no-explicit-any
  const served = (fetched.responses as any)[0].partitions[0].records as Uint8Array;
  c.close();
  const batchBytes = batches[0].length + batches[1].length;
  expect(served.length).toBe(batchBytes);

  // Two records through the HTTP door, read back over HTTP too.
  expect(
    (await api(broker.httpUrl, "POST", `/topics/${topic}/records`, [{ value: "a" }, {
      value: "b",
    }])).status,
  )
    .toBe(200);
  const read = await api(
    broker.httpUrl,
    "GET",
    `/topics/${topic}/partitions/0/records?offset=8&limit=10`,
  );
  expect(read.json.records.length).toBe(2);

  const text = (await api(broker.httpUrl, "GET", "/metrics")).text;
  const t = `topic="${topic}"`;
  expect(sample(text, "broker_topic_records_in_total", t)).toBe(8 + 2);
  expect(sample(text, "broker_topic_records_out_total", t)).toBe(8 + 2);
  // Kafka counts batch bytes as they cross the wire; HTTP counts key and value bytes.
  expect(sample(text, "broker_topic_bytes_in_total", t)).toBe(batchBytes + 2);
  expect(sample(text, "broker_topic_bytes_out_total", t)).toBe(batchBytes + 2);
  const h = "broker_kafka_request_duration_seconds";
  expect(sample(text, `${h}_count`, 'api="Produce"')).toBe(2);
  expect(sample(text, `${h}_count`, 'api="Fetch"')).toBe(1);
  expect(sample(text, `${h}_count`, 'api="CreateTopics"')).toBe(1);
  expect(sample(text, `${h}_bucket`, 'api="Produce",le="+Inf"')).toBe(2);
  expect(sample(text, `${h}_sum`, 'api="Produce"')).toBeGreaterThan(0);
  // The HTTP side's histogram is labelled per route in the same exposition.
  expect(text).toMatch(/broker_http_request_duration_seconds_count\{[^}]*route="[^"]+"[^}]*\} \d+/);
});
