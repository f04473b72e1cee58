// @platformatic/kafka side of the compatibility suite: the same operations and JSON-lines output
// as the Python drivers, so one set of checks serves every client. Run: bun platformatic_driver.ts OP ...
import { parseArgs } from "node:util";
import {
  Admin,
  type CompressionAlgorithmValue,
  Consumer,
  type Message,
  Producer,
  stringDeserializers,
  stringSerializers,
} from "@platformatic/kafka";

const { positionals, values: a } = parseArgs({
  allowPositionals: true,
  options: {
    bootstrap: { type: "string" },
    topic: { type: "string" },
    count: { type: "string", default: "0" },
    expect: { type: "string", default: "0" },
    acks: { type: "string", default: "1" },
    idempotent: { type: "boolean", default: false },
    codec: { type: "string", default: "none" },
    prefix: { type: "string", default: "r" },
    size: { type: "string", default: "200" },
    partition: { type: "string", default: "-1" },
    group: { type: "string", default: "" },
    max: { type: "string", default: "0" },
    timeout: { type: "string", default: "60" },
  },
});
const op = positionals[0];
const brokers = [String(a.bootstrap)];
const topic = String(a.topic);
const emit = (o: unknown) => process.stdout.write(JSON.stringify(o) + "\n");
const nowNs = () => Math.round((performance.timeOrigin + performance.now()) * 1e6);

export function recordValue(prefix: string, i: number, size: number): string {
  const head = `${prefix}-${i}|`;
  return head + "x".repeat(Math.max(0, size - head.length));
}

async function produce() {
  const count = Number(a.count);
  const size = Number(a.size);
  const producer = new Producer({
    clientId: "compat-platformatic",
    bootstrapBrokers: brokers,
    serializers: stringSerializers,
    idempotent: a.idempotent,
    acks: a.acks === "all" ? -1 : Number(a.acks),
    ...(a.codec === "none" ? {} : { compression: a.codec as CompressionAlgorithmValue }),
  });
  let produced = 0;
  const errors: string[] = [];
  const partition = Number(a.partition);
  for (let from = 0; from < count; from += 500) {
    const messages = [];
    for (let i = from; i < Math.min(count, from + 500); i++) {
      messages.push({
        topic,
        key: `${a.prefix}-${i}`,
        value: recordValue(String(a.prefix), i, size),
        headers: { i: String(i), src: "platformatic" },
        ...(partition >= 0 ? { partition } : {}),
      });
    }
    try {
      await producer.send({ messages });
      produced += messages.length;
    } catch (e) {
      errors.push(String(e));
    }
  }
  await producer.close();
  emit({ produced, errors: errors.slice(0, 5), unflushed: 0 });
}

function header(m: Message<string, string, string, string>): Record<string, string> {
  return Object.fromEntries(m.headers);
}

async function consume() {
  const expected = Number(a.expect);
  const consumer = new Consumer({
    clientId: "compat-platformatic",
    bootstrapBrokers: brokers,
    groupId: `compat-read-${process.pid}-${Date.now()}`,
    deserializers: stringDeserializers,
    maxWaitTime: 500,
  });
  const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
  let n = 0;
  const deadline = Date.now() + Number(a.timeout) * 1000;
  const timer = setInterval(() => {
    if (Date.now() > deadline) void stream.close();
  }, 200);
  for await (const m of stream) {
    emit({ p: m.partition, o: Number(m.offset), k: m.key, v: m.value, h: header(m) });
    if (++n >= expected) break;
  }
  clearInterval(timer);
  await stream.close();
  await consumer.close(true);
  emit({ done: n });
}

async function member() {
  const max = Number(a.max);
  const consumer = new Consumer({
    clientId: "compat-platformatic",
    bootstrapBrokers: brokers,
    groupId: String(a.group),
    deserializers: stringDeserializers,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    rebalanceTimeout: 6000,
    maxWaitTime: 200,
  });
  const stream = await consumer.consume({
    topics: [topic],
    mode: "committed",
    fallbackMode: "earliest",
    autocommit: false,
  });
  // The group's committed offset per partition, read from the broker at every join: a record
  // below it was committed by a previous owner. (This client can deliver records of a fetch
  // issued before a rebalance after it restored the committed positions; an application must
  // drop them.)
  const pending = new Map<number, Message<string, string, string, string>>();
  const floor = new Map<number, number>();
  let floorReady: Promise<void> = Promise.resolve();
  // Eager protocol: a member's partitions are revoked when a rebalance starts. This client keeps
  // its old assignment until the new SyncGroup answer, but a commit sent in that window already
  // carries the new generation, which the coordinator accepts (Kafka does not check ownership):
  // it could overwrite what the partition's new owner committed. So nothing is committed from
  // "rebalance" until "join". (Records keep being processed: the client keeps its fetch
  // positions for partitions it keeps, so dropping them here would lose them.)
  let rebalancing = false;
  consumer.on("consumer:group:rebalance", () => {
    rebalancing = true;
    pending.clear();
    emit({ ev: "rebalance", t: nowNs() });
  });
  consumer.on("consumer:group:join", (j) => {
    rebalancing = false;
    // Uncommitted progress on partitions of the previous generation is given up: committing
    // it now (in the new generation) could overwrite what their new owner already committed.
    pending.clear();
    const topics = (j.assignments ?? []).filter((x) => x.topic === topic);
    emit({ ev: "join", a: topics.flatMap((t) => t.partitions), t: nowNs() });
    floorReady = topics.length === 0 ? Promise.resolve() : consumer.listCommittedOffsets({ topics })
      .then((commits) => {
        floor.clear();
        const offs = commits.get(topic) ?? [];
        for (const t of topics) {
          for (const p of t.partitions) floor.set(p, Number(offs[p] ?? -1n));
        }
      }, () => {});
  });
  const owns = (m: Message<string, string, string, string>) =>
    consumer.assignments?.some((a) => a.topic === m.topic && a.partitions.includes(m.partition)) ??
      false;
  let processed = 0;
  let stopping = false;
  process.on("SIGTERM", () => {
    stopping = true;
    void stream.close();
  });
  // The last processed message per partition, committed in batches: one OffsetCommit per
  // record would wait for a log sync each time.
  let committing: Promise<void> = Promise.resolve();
  const commit = () => {
    committing = committing.then(async () => {
      const batch = [...pending.values()];
      pending.clear();
      for (const m of batch) {
        if (rebalancing || !owns(m)) continue;
        try {
          await m.commit();
          emit({ ev: "commit", p: m.partition, o: Number(m.offset) + 1, t: nowNs() });
        } catch (e) {
          emit({ ev: "commit-failed", error: String(e) });
        }
      }
    });
    return committing;
  };
  const timer = setInterval(() => void commit(), 100);
  for await (const m of stream) {
    if (stopping) break;
    // Records fetched before a rebalance may still arrive for partitions this member lost:
    // an application must drop them, their new owner resumes from the committed offset.
    if (!owns(m)) continue;
    await floorReady;
    if (Number(m.offset) < (floor.get(m.partition) ?? -1)) continue;
    emit({ ev: "rec", p: m.partition, o: Number(m.offset), k: m.key, t: nowNs() });
    processed++;
    pending.set(m.partition, m);
    if (max > 0 && processed >= max) break;
  }
  clearInterval(timer);
  await commit();
  await stream.close().catch(() => {});
  await consumer.close(true);
  emit({ ev: "left", processed });
}

async function admin() {
  const ad = new Admin({ clientId: "compat-platformatic", bootstrapBrokers: brokers });
  await ad.createTopics({
    topics: [topic],
    partitions: 3,
    replicas: 1,
    configs: [{ name: "retention.ms", value: "3600000" }],
  });
  const listed = (await ad.listTopics()).includes(topic);
  const md = await ad.metadata({ topics: [topic] });
  const parts = md.topics.get(topic)?.partitionsCount ?? 0;
  const desc = await ad.describeConfigs({ resources: [{ resourceType: 2, resourceName: topic }] });
  const retention = desc[0].configs.find((c) => c.name === "retention.ms")?.value;
  await ad.deleteTopics({ topics: [topic] });
  let deleted = false;
  for (let i = 0; i < 50 && !deleted; i++) {
    deleted = !(await ad.listTopics()).includes(topic);
    if (!deleted) await Bun.sleep(100);
  }
  await ad.close();
  emit({ created: true, listed, partitions: parts, "retention.ms": retention, deleted });
}

const ops: Record<string, () => Promise<void>> = { produce, consume, member, admin };
if (!ops[op]) throw new Error(`unknown op ${op}`);
await ops[op]();
process.exit(0);
