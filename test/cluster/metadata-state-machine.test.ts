// The metadata tables as a Raft state machine: a snapshot restores the same tables elsewhere;
// a malformed image (it comes from the network) changes nothing.
import { expect, test } from "bun:test";
import { SqliteMetadataStateMachine } from "../../src/cluster/metadata-state-machine.ts";
import { MetadataStore, MetaError } from "../../src/meta/index.ts";
import { tempDir } from "../helpers/broker-process.ts";

const BROKER = { nodeId: 0, host: "h", kafkaPort: 1, httpPort: 2, clusterPort: 3 };

test("snapshot of one store restores the same brokers, topics and partitions in another", async () => {
  const a = MetadataStore.open(tempDir("sm-a-"));
  await a.registerBroker(BROKER);
  await a.createTopic("orders", 3, 1, { "retention.ms": "1000" });
  const smA = new SqliteMetadataStateMachine(a.db);
  const image = smA.snapshot();
  const b = MetadataStore.open(tempDir("sm-b-"));
  const smB = new SqliteMetadataStateMachine(b.db);
  smB.restore({ meta: { index: 42, term: 7, config: { voters: [0], learners: [] } }, data: image });
  expect(smB.appliedIndex()).toBe(42);
  expect(smB.appliedTerm()).toBe(7);
  expect(b.listTopics()).toEqual(a.listTopics());
  expect(b.listBrokers()).toEqual(a.listBrokers());
  // Applying continues after the snapshot's index.
  expect(smB.apply({ type: "BrokerFenced", nodeId: 0, fenced: true }, 43, 7)).toBeUndefined();
  expect(b.listBrokers()[0].fenced).toBe(true);
  expect(smB.apply({ type: "BrokerFenced", nodeId: 9, fenced: true }, 44, 7)).toBeInstanceOf(
    MetaError,
  );
  expect(smB.appliedIndex()).toBe(44);
  for (
    const bad of [
      "nope",
      "{}",
      JSON.stringify({ v: 1, brokers: [{ nodeId: -1 }], topics: [], partitions: [] }),
      JSON.stringify({
        v: 1,
        brokers: [],
        topics: [],
        partitions: [{ topicId: "x", partition: 0 }],
      }),
    ]
  ) {
    const before = b.listTopics();
    expect(() =>
      smB.restore({ meta: { index: 50, term: 8, config: { voters: [], learners: [] } }, data: bad })
    )
      .toThrow(MetaError);
    expect(b.listTopics()).toEqual(before);
    expect(smB.appliedIndex()).toBe(44);
  }
  await a.close();
  await b.close();
});

test("a batch applies its records in one transaction and announces them after it commits", async () => {
  const a = MetadataStore.open(tempDir("sm-batch-"));
  await a.registerBroker(BROKER);
  const heard: string[] = [];
  const sm = new SqliteMetadataStateMachine(a.db, (r) => heard.push(r?.type ?? "snapshot"));
  const base = sm.appliedIndex();
  const errors: (MetaError | undefined)[] = [];
  sm.batch(() => {
    errors.push(sm.apply({ type: "BrokerFenced", nodeId: 0, fenced: true }, base + 1, 1));
    // Does not fit the state: consumes its index as a no-op, the rest of the batch still applies.
    errors.push(sm.apply({ type: "BrokerFenced", nodeId: 9, fenced: true }, base + 2, 1));
    errors.push(sm.apply({ type: "BrokerFenced", nodeId: 0, fenced: false }, base + 3, 1));
    // Nothing is announced while the transaction is open.
    expect(heard).toEqual([]);
    expect(a.db.$client.inTransaction).toBe(true);
  });
  expect(errors.map((e) => e === undefined)).toEqual([true, false, true]);
  expect(heard).toEqual(["BrokerFenced", "BrokerFenced"]);
  expect(sm.appliedIndex()).toBe(base + 3);
  expect(a.listBrokers()[0].fenced).toBe(false);
  // A batch that fails (not a record's own misfit) leaves nothing applied and announces nothing.
  heard.length = 0;
  expect(() =>
    sm.batch(() => {
      sm.apply({ type: "BrokerFenced", nodeId: 0, fenced: true }, base + 4, 1);
      throw new Error("storage failed");
    })
  ).toThrow("storage failed");
  expect(heard).toEqual([]);
  expect(sm.appliedIndex()).toBe(base + 3);
  expect(a.listBrokers()[0].fenced).toBe(false);
});
