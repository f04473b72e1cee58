/** Schemas: group coordination, offsets, producer ids. */
import { defineApi } from "../schema.ts";

export const OFFSET_COMMIT = defineApi({
  apiKey: 8,
  name: "OffsetCommit",
  valid: "0-9",
  flexible: "8+",
  request: `
    GroupId string 0+
    GenerationIdOrMemberEpoch int32 1+ def=-1 ign
    MemberId string 1+ ign
    GroupInstanceId string 7+ null=7+ def=null
    RetentionTimeMs int64 2-4 def=-1 ign
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        CommittedOffset int64 0+
        CommittedLeaderEpoch int32 6+ def=-1 ign
        CommitTimestamp int64 1 def=-1
        CommittedMetadata string 0+ null=0+
      }
    }
  `,
  response: `
    ThrottleTimeMs int32 3+ ign
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        ErrorCode int16 0+
      }
    }
  `,
});

export const OFFSET_FETCH = defineApi({
  apiKey: 9,
  name: "OffsetFetch",
  valid: "0-9",
  flexible: "6+",
  request: `
    GroupId string 0-7
    Topics [] 0-7 null=2-7 {
      Name string 0-7
      PartitionIndexes []int32 0-7
    }
    Groups [] 8+ {
      GroupId string 8+
      MemberId string 9+ null=9+ def=null ign
      MemberEpoch int32 9+ def=-1 ign
      Topics [] 8+ null=8+ {
        Name string 8+
        PartitionIndexes []int32 8+
      }
    }
    RequireStable bool 7+ def=false
  `,
  response: `
    ThrottleTimeMs int32 3+ ign
    Topics [] 0-7 {
      Name string 0-7
      Partitions [] 0-7 {
        PartitionIndex int32 0-7
        CommittedOffset int64 0-7
        CommittedLeaderEpoch int32 5-7 def=-1 ign
        Metadata string 0-7 null=0-7
        ErrorCode int16 0-7
      }
    }
    ErrorCode int16 2-7 def=0 ign
    Groups [] 8+ {
      GroupId string 8+
      Topics [] 8+ {
        Name string 8+
        Partitions [] 8+ {
          PartitionIndex int32 8+
          CommittedOffset int64 8+
          CommittedLeaderEpoch int32 8+ def=-1 ign
          Metadata string 8+ null=8+
          ErrorCode int16 8+
        }
      }
      ErrorCode int16 8+ def=0
    }
  `,
});

export const FIND_COORDINATOR = defineApi({
  apiKey: 10,
  name: "FindCoordinator",
  valid: "0-6",
  flexible: "3+",
  request: `
    Key string 0-3
    KeyType int8 1+ def=0
    CoordinatorKeys []string 4+
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 0-3
    ErrorMessage string 1-3 null=1-3 ign
    NodeId int32 0-3
    Host string 0-3
    Port int32 0-3
    Coordinators [] 4+ {
      Key string 4+
      NodeId int32 4+
      Host string 4+
      Port int32 4+
      ErrorCode int16 4+
      ErrorMessage string 4+ null=4+ ign
    }
  `,
});

export const JOIN_GROUP = defineApi({
  apiKey: 11,
  name: "JoinGroup",
  valid: "0-9",
  flexible: "6+",
  request: `
    GroupId string 0+
    SessionTimeoutMs int32 0+
    RebalanceTimeoutMs int32 1+ def=-1 ign
    MemberId string 0+
    GroupInstanceId string 5+ null=5+ def=null
    ProtocolType string 0+
    Protocols [] 0+ {
      Name string 0+
      Metadata bytes 0+
    }
    Reason string 8+ null=8+ def=null ign
  `,
  response: `
    ThrottleTimeMs int32 2+ ign
    ErrorCode int16 0+
    GenerationId int32 0+ def=-1
    ProtocolType string 7+ null=7+ def=null ign
    ProtocolName string 0+ null=7+
    Leader string 0+
    SkipAssignment bool 9+ def=false
    MemberId string 0+
    Members [] 0+ {
      MemberId string 0+
      GroupInstanceId string 5+ null=5+ def=null ign
      Metadata bytes 0+
    }
  `,
});

export const HEARTBEAT = defineApi({
  apiKey: 12,
  name: "Heartbeat",
  valid: "0-4",
  flexible: "4+",
  request: `
    GroupId string 0+
    GenerationId int32 0+
    MemberId string 0+
    GroupInstanceId string 3+ null=3+ def=null
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 0+
  `,
});

export const LEAVE_GROUP = defineApi({
  apiKey: 13,
  name: "LeaveGroup",
  valid: "0-5",
  flexible: "4+",
  request: `
    GroupId string 0+
    MemberId string 0-2
    Members [] 3+ {
      MemberId string 3+
      GroupInstanceId string 3+ null=3+ def=null
      Reason string 5+ null=5+ def=null ign
    }
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 0+
    Members [] 3+ {
      MemberId string 3+
      GroupInstanceId string 3+ null=3+
      ErrorCode int16 3+
    }
  `,
});

export const SYNC_GROUP = defineApi({
  apiKey: 14,
  name: "SyncGroup",
  valid: "0-5",
  flexible: "4+",
  request: `
    GroupId string 0+
    GenerationId int32 0+
    MemberId string 0+
    GroupInstanceId string 3+ null=3+ def=null
    ProtocolType string 5+ null=5+ def=null ign
    ProtocolName string 5+ null=5+ def=null ign
    Assignments [] 0+ {
      MemberId string 0+
      Assignment bytes 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 0+
    ProtocolType string 5+ null=5+ def=null ign
    ProtocolName string 5+ null=5+ def=null ign
    Assignment bytes 0+
  `,
});

export const DESCRIBE_GROUPS = defineApi({
  apiKey: 15,
  name: "DescribeGroups",
  valid: "0-5",
  flexible: "5+",
  request: `
    Groups []string 0+
    IncludeAuthorizedOperations bool 3+
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    Groups [] 0+ {
      ErrorCode int16 0+
      GroupId string 0+
      GroupState string 0+
      ProtocolType string 0+
      ProtocolData string 0+
      Members [] 0+ {
        MemberId string 0+
        GroupInstanceId string 4+ null=4+ def=null ign
        ClientId string 0+
        ClientHost string 0+
        MemberMetadata bytes 0+
        MemberAssignment bytes 0+
      }
      AuthorizedOperations int32 3+ def=-2147483648
    }
  `,
});

export const LIST_GROUPS = defineApi({
  apiKey: 16,
  name: "ListGroups",
  valid: "0-5",
  flexible: "3+",
  request: `
    StatesFilter []string 4+
    TypesFilter []string 5+
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 0+
    Groups [] 0+ {
      GroupId string 0+
      ProtocolType string 0+
      GroupState string 4+ ign
      GroupType string 5+ ign
    }
  `,
});

export const DELETE_GROUPS = defineApi({
  apiKey: 42,
  name: "DeleteGroups",
  valid: "0-2",
  flexible: "2+",
  request: `
    GroupsNames []string 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    Results [] 0+ {
      GroupId string 0+
      ErrorCode int16 0+
    }
  `,
});

export const INIT_PRODUCER_ID = defineApi({
  apiKey: 22,
  name: "InitProducerId",
  valid: "0-5",
  flexible: "2+",
  request: `
    TransactionalId string 0+ null=0+
    TransactionTimeoutMs int32 0+
    ProducerId int64 3+ def=-1
    ProducerEpoch int16 3+ def=-1
  `,
  response: `
    ThrottleTimeMs int32 0+ ign
    ErrorCode int16 0+
    ProducerId int64 0+ def=-1
    ProducerEpoch int16 0+
  `,
});
