// kafka_exporter's series (danielqsj/kafka_exporter), so the Grafana dashboards and alerts built
// for it work against the broker's own /metrics: same names, same labels (consumergroup, topic,
// partition), same meaning. Written from its documented metric list, not its code.
//
// Scrape every broker: each series comes from exactly one of them, so sums over brokers never
// count anything twice. Partition series come from the partition's leader, group series from
// the group's coordinator, cluster-wide ones (kafka_brokers, kafka_topic_partitions) from the
// controller. kafka_exporter's *_sum series are not exported: a gauge ending in _sum breaks
// `promtool check metrics`; `sum by (consumergroup, topic) (kafka_consumergroup_lag)` is the same.
import type { Broker } from "../broker.ts";
import { type GaugeFamily, gaugeFamily as family } from "../core/metrics.ts";
import type { PartitionStats } from "../cluster/node.ts";
import { groupOffsets } from "./groups.ts";
import { remotePartitionStats } from "./render.ts";

/** A remote partition's end offset may be this old when a scrape shows its lag. */
export const REMOTE_ENDS_MAX_AGE_MS = 5000;

/**
 * High watermarks of partitions led by other brokers, for the lag of groups coordinated here.
 * Collectors run synchronously at scrape time, so a scrape uses what the previous refresh
 * learnt and starts the next one (at most one at a time, at most every few seconds): a lag shown
 * is at most one scrape interval (plus REMOTE_ENDS_MAX_AGE_MS) old.
 */
export class RemoteEnds {
  readonly ends = new Map<string, Map<number, PartitionStats>>();
  #at = -Infinity;
  #running = false;

  constructor(readonly broker: Broker, readonly now: () => number = Date.now) {}

  /** Ask for fresh ends of these partitions (topic -> partitions); answers land in `ends`. */
  want(missing: Map<string, Set<number>>): void {
    if (missing.size === 0 || this.#running || this.now() - this.#at < REMOTE_ENDS_MAX_AGE_MS) {
      return;
    }
    this.#running = true;
    this.#at = this.now();
    void Promise.all(
      [...missing].map(async ([topic, ps]) => {
        try {
          this.ends.set(topic, await remotePartitionStats(this.broker, topic, ps));
        } catch {
          // A leader that does not answer: its partitions keep their last value, or none.
        }
      }),
    ).finally(() => {
      this.#running = false;
    });
  }
}

export function exporterFamilies(broker: Broker, remote: RemoteEnds): GaugeFamily[] {
  const brokers = family("kafka_brokers", "Number of Brokers in the Kafka Cluster.");
  const partitions = family("kafka_topic_partitions", "Number of partitions for this Topic");
  const current = family(
    "kafka_topic_partition_current_offset",
    "Current Offset of a Broker at Topic/Partition",
  );
  const oldest = family(
    "kafka_topic_partition_oldest_offset",
    "Oldest Offset of a Broker at Topic/Partition",
  );
  const leader = family("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition");
  const replicas = family(
    "kafka_topic_partition_replicas",
    "Number of Replicas for this Topic/Partition",
  );
  const isr = family(
    "kafka_topic_partition_in_sync_replica",
    "Number of In-Sync Replicas for this Topic/Partition",
  );
  const preferred = family(
    "kafka_topic_partition_leader_is_preferred",
    "1 if Topic/Partition is using the Preferred Broker",
  );
  const under = family(
    "kafka_topic_partition_under_replicated_partition",
    "1 if Topic/Partition is under Replicated",
  );
  const groupOffset = family(
    "kafka_consumergroup_current_offset",
    "Current Offset of a ConsumerGroup at Topic/Partition",
  );
  const lag = family(
    "kafka_consumergroup_lag",
    "Current Approximate Lag of a ConsumerGroup at Topic/Partition",
  );
  const members = family("kafka_consumergroup_members", "Amount of members in a consumer group");

  const self = broker.nodeId;
  const controller = broker.cluster.controllerId() === self;
  if (controller) {
    brokers.samples.push({ labels: {}, value: broker.meta.listBrokers().length });
  }
  const held = new Map(
    broker.partitions.partitions().map((st) => [`${st.topic}\0${st.partition}`, st]),
  );
  for (const t of broker.meta.listTopics()) {
    if (controller) {
      partitions.samples.push({ labels: { topic: t.name }, value: t.partitions.length });
    }
    for (const p of t.partitions) {
      const st = held.get(`${t.name}\0${p.partition}`);
      if (p.leader !== self || st === undefined) continue;
      const labels = { topic: t.name, partition: String(p.partition) };
      current.samples.push({ labels, value: st.highWatermark() });
      oldest.samples.push({ labels, value: st.log.logStartOffset() });
      leader.samples.push({ labels, value: p.leader });
      replicas.samples.push({ labels, value: p.replicas.length });
      isr.samples.push({ labels, value: p.isr.length });
      preferred.samples.push({ labels, value: p.replicas[0] === p.leader ? 1 : 0 });
      under.samples.push({ labels, value: p.isr.length < p.replicas.length ? 1 : 0 });
    }
  }
  const missing = new Map<string, Set<number>>();
  for (const g of broker.groups.coordinator.listGroups()) {
    const consumergroup = g.groupId;
    members.samples.push({
      labels: { consumergroup },
      value: broker.groups.coordinator.describeGroup(g.groupId).members.length,
    });
    for (const o of groupOffsets(broker, g.groupId, [], remote.ends)) {
      if (o.committed_offset === null) continue;
      const labels = { consumergroup, topic: o.topic, partition: String(o.partition) };
      groupOffset.samples.push({ labels, value: o.committed_offset });
      if (o.lag !== null) lag.samples.push({ labels, value: o.lag });
      if (!broker.partitions.has(o.topic, o.partition)) {
        let s = missing.get(o.topic);
        if (!s) missing.set(o.topic, s = new Set());
        s.add(o.partition);
      }
    }
  }
  remote.want(missing);
  return [
    brokers,
    partitions,
    current,
    oldest,
    leader,
    replicas,
    isr,
    preferred,
    under,
    groupOffset,
    lag,
    members,
  ];
}
