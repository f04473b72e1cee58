// When giving up a damaged copy's quarantined records is refused (other replicas may hold them)
// and when it is the operator's call (src/core/repair.ts).
import { expect, test } from "bun:test";
import { lossRefusal } from "../../src/core/repair.ts";

test("a follower copy refetches; a leader with in-sync peers hands over; alone it may give up", () => {
  // Broker 2 follows broker 1: the copy refetches from 1.
  expect(lossRefusal({ nodeId: 2, leader: 1, replicas: [1, 2, 3], isr: [1, 2, 3] }, false))
    .toContain("broker 1 leads");
  // Broker 1 leads with 3 in sync: 3 may hold the records.
  expect(lossRefusal({ nodeId: 1, leader: 1, replicas: [1, 2, 3], isr: [1, 3] }, false))
    .toContain("brokers 3 are in sync");
  // The only copy (one replica, or the ISR shrank to the damaged leader; or no leader at all).
  expect(lossRefusal({ nodeId: 1, leader: 1, replicas: [1], isr: [1] }, false)).toBeUndefined();
  expect(lossRefusal({ nodeId: 1, leader: 1, replicas: [1, 2], isr: [1] }, false)).toBeUndefined();
  expect(lossRefusal({ nodeId: 2, leader: -1, replicas: [1, 2], isr: [2] }, false))
    .toBeUndefined();
  // force overrides.
  expect(lossRefusal({ nodeId: 2, leader: 1, replicas: [1, 2], isr: [1, 2] }, true))
    .toBeUndefined();
});
