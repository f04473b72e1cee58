// Partition reassignment (KIP-455): AlterPartitionReassignments (45) v0-1 (v1: KIP-860's
// AllowReplicationFactorChange) and ListPartitionReassignments (46) v0; flexible from the start.
import { defineApi } from "../schema.ts";

export const ALTER_PARTITION_REASSIGNMENTS = defineApi({
  apiKey: 45,
  name: "AlterPartitionReassignments",
  valid: "0-1",
  flexible: "0+",
  request: `
    TimeoutMs int32 0+ def=60000
    AllowReplicationFactorChange bool 1+ def=true
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        Replicas []int32 0+ null=0+ def=null
      }
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    AllowReplicationFactorChange bool 1+ def=true ign
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+
    Responses [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        ErrorCode int16 0+
        ErrorMessage string 0+ null=0+
      }
    }
  `,
});

export const LIST_PARTITION_REASSIGNMENTS = defineApi({
  apiKey: 46,
  name: "ListPartitionReassignments",
  valid: "0",
  flexible: "0+",
  request: `
    TimeoutMs int32 0+ def=60000
    Topics [] 0+ null=0+ def=null {
      Name string 0+
      PartitionIndexes []int32 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        Replicas []int32 0+
        AddingReplicas []int32 0+
        RemovingReplicas []int32 0+
      }
    }
  `,
});
