// The committed form of a controller decision: every path that turns a PartitionChange into a
// metadata record (controller elections and ISR changes, ElectLeaders) goes through here, so a
// field added to the change (a new replica set for a reassignment) reaches the log from all of them.
import type { MetadataRecord } from "../meta/records.ts";
import type { PartitionChange } from "./elections.ts";

export function partitionChangeRecord(c: PartitionChange): MetadataRecord {
  const rec: MetadataRecord = {
    type: "PartitionChanged",
    topicId: c.topicId,
    partition: c.partition,
    partitionEpoch: c.partitionEpoch,
    reason: c.reason,
  };
  if (c.leader !== undefined) rec.leader = c.leader;
  if (c.leaderEpoch !== undefined) rec.leaderEpoch = c.leaderEpoch;
  if (c.isr !== undefined) rec.isr = c.isr;
  if (c.replicas !== undefined) rec.replicas = c.replicas;
  if (c.reassignment !== undefined) rec.reassignment = c.reassignment;
  return rec;
}
