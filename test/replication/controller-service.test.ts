// What a restarted broker's register call may keep (src/replication/controller-service.ts): the
// list it sends is network input, so anything malformed keeps nothing.
import { describe, expect, test } from "bun:test";
import { keptLeaderships, MAX_UNCLEAN_LOGS } from "../../src/replication/controller-service.ts";
import type { PartitionView } from "../../src/replication/elections.ts";

const part = (partition: number, replicas: number[]): PartitionView => ({
  topicId: "AAAAAAAAAAAAAAAAAAAAAA",
  topic: "t",
  partition,
  leader: replicas[0],
  leaderEpoch: 3,
  partitionEpoch: 5,
  replicas,
  isr: replicas,
  unclean: false,
});

describe("keptLeaderships", () => {
  test("single-replica partitions of the broker, except those it lists as unclean", () => {
    const keep = keptLeaderships(1, { uncleanLogs: ["AAAAAAAAAAAAAAAAAAAAAA:2"] })!;
    expect(keep(part(0, [1]))).toBe(true);
    expect(keep(part(2, [1]))).toBe(false);
    expect(keep(part(0, [1, 2]))).toBe(false); // a follower may hold what a crash lost here
    expect(keep(part(0, [2]))).toBe(false);
  });

  test("absent, null, too long or malformed: nothing kept", () => {
    expect(keptLeaderships(1, {})).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: null })).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: "x:1" })).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: [7] })).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: ["no-partition"] })).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: ["a:1'; DROP"] })).toBeUndefined();
    const long = Array.from({ length: MAX_UNCLEAN_LOGS + 1 }, (_, i) => `t:${i}`);
    expect(keptLeaderships(1, { uncleanLogs: long })).toBeUndefined();
    expect(keptLeaderships(1, { uncleanLogs: long.slice(1) })).toBeDefined();
  });
});
