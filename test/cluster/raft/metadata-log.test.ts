import { expect, test } from "bun:test";
import { bootstrapState } from "../../../src/cluster/raft/bootstrap.ts";
import {
  type MetadataStateMachine,
  RaftError,
  RaftMetadataLog,
} from "../../../src/cluster/raft/metadata-log.ts";
import { RaftNode } from "../../../src/cluster/raft/node.ts";
import { MemoryStorage, type RaftTransport } from "../../../src/cluster/raft/storage.ts";
import type { Snapshot } from "../../../src/cluster/raft/types.ts";
import { Rng } from "../../../src/cluster/sim/rng.ts";
import { MetaError } from "../../../src/meta/errors.ts";
import type { MetadataRecord } from "../../../src/meta/records.ts";

class FakeSm implements MetadataStateMachine {
  applied = 0;
  records: MetadataRecord[] = [];
  apply(r: MetadataRecord, index: number): MetaError | undefined {
    this.applied = index;
    if (r.type === "BrokerFenced" && r.nodeId === 99) {
      return new MetaError("BROKER_NOT_AVAILABLE", "unknown broker 99");
    }
    this.records.push(r);
    return undefined;
  }
  appliedIndex(): number {
    return this.applied;
  }
  snapshot(): string {
    return JSON.stringify(this.records);
  }
  restore(s: Snapshot): void {
    this.records = JSON.parse(s.data || "[]");
    this.applied = s.meta.index;
  }
}

const transport: RaftTransport = { send: () => {}, onMessage: () => {}, close: () => {} };

/** A one-voter metadata log over `st` and `sm`, once its node has become the leader. */
async function oneVoter(
  st: MemoryStorage,
  sm: FakeSm,
  opts: { snapshotThreshold?: number } = {},
): Promise<{ node: RaftNode; log: RaftMetadataLog }> {
  const b = bootstrapState({ voters: [1], learners: [] }, "[]");
  st.hardState = b.hardState;
  st.snapshot = b.snapshot;
  sm.applied = 1;
  const node = new RaftNode(
    { id: 1, electionMs: 20, heartbeatMs: 5, ...opts },
    st.load(),
    new Rng(1),
    performance.now(),
    { appliedIndex: 1 },
  );
  const log = new RaftMetadataLog(node, st, transport, sm);
  for (let i = 0; i < 100 && node.role !== "leader"; i++) await Bun.sleep(5);
  expect(node.role).toBe("leader");
  return { node, log };
}

test("RaftMetadataLog: a one-voter quorum appends, applies, reads and refuses bad records", async () => {
  const st = new MemoryStorage();
  const sm = new FakeSm();
  const { node, log } = await oneVoter(st, sm, { snapshotThreshold: 3 });
  const i1 = await log.append({ type: "BrokerFenced", nodeId: 1, fenced: true });
  const i2 = await log.append({ type: "BrokerFenced", nodeId: 2, fenced: false });
  expect(i2).toBe(i1 + 1);
  expect(log.appliedIndex()).toBe(i2);
  expect(sm.records.filter((r) => r.type === "BrokerFenced").length).toBe(2);
  await expect(log.append({ type: "BrokerFenced", nodeId: 99, fenced: true })).rejects.toThrow(
    MetaError,
  );
  await expect(log.append({ type: "Bogus" } as never)).rejects.toThrow(MetaError);
  expect(await log.readBarrier()).toBeGreaterThanOrEqual(i2);
  // Entries still in the Raft log (older ones were compacted into snapshots).
  const tail = log.read(i2, 10);
  expect(tail.length).toBeGreaterThan(0);
  tail.forEach((e, k) => expect(e.index).toBe(tail[0].index + k));
  expect(tail[0].index).toBeGreaterThanOrEqual(i2);
  expect(tail.at(-1)!.index).toBeLessThanOrEqual(node.commit);
  expect(log.read(1, 0)).toEqual([]);
  // Snapshots were taken (threshold 3) and stored.
  expect(st.snapshot!.meta.index).toBeGreaterThan(1);
  log.close();
  await expect(log.append({ type: "NoOp" })).rejects.toThrow(RaftError);
});

test("a full disk: the metadata log frees the space reserve and the write commits", async () => {
  const full = () => Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  // Writes that find the disk full until the reserve is given back: the Raft log's, the tables'.
  let raftFull = false;
  let tablesFull = false;
  class FullStorage extends MemoryStorage {
    override save(...a: Parameters<MemoryStorage["save"]>): Promise<void> {
      return raftFull ? Promise.reject(full()) : super.save(...a);
    }
  }
  class FullSm extends FakeSm {
    override apply(r: MetadataRecord, index: number): MetaError | undefined {
      if (tablesFull) throw full();
      return super.apply(r, index);
    }
  }
  const st = new FullStorage();
  const sm = new FullSm();
  const { log } = await oneVoter(st, sm);
  let released = 0;
  log.onDiskFull = () => {
    if (!raftFull && !tablesFull) return false;
    raftFull = tablesFull = false;
    released++;
    return true;
  };
  // The entry's write fails; the reserve is released and the same write goes through at once
  // (without the hook the writer is refused and the log retries every 100 ms for ever).
  raftFull = true;
  expect(await log.append({ type: "BrokerFenced", nodeId: 1, fenced: true })).toBeGreaterThan(1);
  expect(released).toBe(1);
  // The tables' write fails after the entry was stored: applied once space is freed (without
  // the retry the metadata log stops for good).
  tablesFull = true;
  const i = await log.append({ type: "BrokerFenced", nodeId: 2, fenced: false });
  expect(released).toBe(2);
  expect(log.appliedIndex()).toBe(i);
  expect(sm.records.filter((r) => r.type === "BrokerFenced").length).toBe(2);
  log.close();
});
