// kafka_exporter's series come from exactly one broker each (partition series from the leader,
// group series from the coordinator, cluster-wide ones from the controller), and a group's lag on
// a partition led elsewhere uses that leader's high watermark, learnt in the background.
import { expect, test } from "bun:test";
import type { Broker } from "../../src/broker.ts";
import type { GaugeFamily } from "../../src/core/metrics.ts";
import { exporterFamilies, RemoteEnds } from "../../src/http/kafka-exporter.ts";

/** Broker 1 of 2. Topic t: p0 led here, p1 led by 2 (not held here), p2 led by 2 (followed here). */
function fakeBroker(controller: number) {
  const asked: [number, string, number[]][] = [];
  const held = [
    { topic: "t", partition: 0, hw: 10, start: 2 },
    { topic: "t", partition: 2, hw: 7, start: 0 },
  ].map((p) => ({
    topic: p.topic,
    partition: p.partition,
    highWatermark: () => p.hw,
    log: { logStartOffset: () => p.start },
  }));
  const has = (t: string, p: number) => held.some((s) => s.topic === t && s.partition === p);
  const broker = {
    nodeId: 1,
    cluster: {
      controllerId: () => controller,
      partitionStats: (leader: number, topic: string, ps: number[]) => {
        asked.push([leader, topic, ps]);
        return Promise.resolve(ps.map((partition) => ({ partition, highWatermark: 9 })));
      },
    },
    meta: {
      listBrokers: () => [{ nodeId: 1 }, { nodeId: 2 }],
      listTopics: () => [{
        name: "t",
        partitions: [
          { partition: 0, leader: 1, replicas: [1, 2], isr: [1, 2] },
          { partition: 1, leader: 2, replicas: [2, 1], isr: [2] },
          { partition: 2, leader: 2, replicas: [1, 2], isr: [2, 1] },
        ],
      }],
    },
    partitions: {
      partitions: () => held,
      has,
      highWatermark: (t: string, p: number) =>
        held.find((s) => s.topic === t && s.partition === p)!
          .highWatermark(),
      leaderOf: (_t: string, p: number) => (p === 0 ? 1 : 2),
    },
    groups: {
      coordinator: {
        listGroups: () => [{ groupId: "g" }],
        describeGroup: () => ({ members: [{}, {}] }),
        fetchOffsets: () => ({
          topics: [{
            name: "t",
            partitions: [
              { partition: 0, offset: 3, metadata: "" },
              { partition: 1, offset: 5, metadata: "" },
            ],
          }],
        }),
      },
    },
  };
  return { broker: broker as unknown as Broker, asked };
}

const series = (fams: GaugeFamily[], name: string) =>
  fams.find((f) => f.name === name)!.samples.map((s) => [s.labels, s.value]);

test("partition series from the leader only; cluster-wide ones only from the controller", () => {
  const { broker } = fakeBroker(2);
  const fams = exporterFamilies(broker, new RemoteEnds(broker));
  expect(series(fams, "kafka_topic_partition_current_offset")).toEqual([
    [{ topic: "t", partition: "0" }, 10],
  ]);
  expect(series(fams, "kafka_topic_partition_oldest_offset")).toEqual([
    [{ topic: "t", partition: "0" }, 2],
  ]);
  expect(series(fams, "kafka_brokers")).toEqual([]);
  expect(series(fams, "kafka_topic_partitions")).toEqual([]);

  const { broker: ctl } = fakeBroker(1);
  const all = exporterFamilies(ctl, new RemoteEnds(ctl));
  expect(series(all, "kafka_brokers")).toEqual([[{}, 2]]);
  expect(series(all, "kafka_topic_partitions")).toEqual([[{ topic: "t" }, 3]]);
});

test("group lag: local partitions now, partitions led elsewhere once their leader answered", async () => {
  let now = 0;
  const { broker, asked } = fakeBroker(2);
  const remote = new RemoteEnds(broker, () => now);
  const g = (p: number) => ({ consumergroup: "g", topic: "t", partition: String(p) });
  const first = exporterFamilies(broker, remote);
  expect(series(first, "kafka_consumergroup_current_offset")).toEqual([[g(0), 3], [g(1), 5]]);
  expect(series(first, "kafka_consumergroup_lag")).toEqual([[g(0), 7]]);
  expect(series(first, "kafka_consumergroup_members")).toEqual([[{ consumergroup: "g" }, 2]]);
  expect(asked).toEqual([[2, "t", [1]]]);
  await Bun.sleep(0);
  const second = exporterFamilies(broker, remote);
  expect(series(second, "kafka_consumergroup_lag")).toEqual([[g(0), 7], [g(1), 4]]);
  // Not asked again before REMOTE_ENDS_MAX_AGE_MS has passed.
  expect(asked.length).toBe(1);
  now += 5000;
  exporterFamilies(broker, remote);
  expect(asked.length).toBe(2);
});
