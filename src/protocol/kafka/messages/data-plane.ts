/** Schemas: ApiVersions, Metadata, Produce, Fetch, ListOffsets, OffsetForLeaderEpoch. */
import { defineApi } from "../schema.ts";

export const API_VERSIONS = defineApi({
  apiKey: 18,
  name: "ApiVersions",
  valid: "0-4",
  flexible: "3+",
  request: `
    ClientSoftwareName string 3+ ign
    ClientSoftwareVersion string 3+ ign
  `,
  response: `
    ErrorCode int16 0+
    ApiKeys [] 0+ {
      ApiKey int16 0+
      MinVersion int16 0+
      MaxVersion int16 0+
    }
    ThrottleTimeMs int32 1+ ign
    SupportedFeatures [] 3+ tag=0@3+ ign {
      Name string 3+
      MinVersion int16 3+
      MaxVersion int16 3+
    }
    FinalizedFeaturesEpoch int64 3+ tag=1@3+ def=-1 ign
    FinalizedFeatures [] 3+ tag=2@3+ ign {
      Name string 3+
      MaxVersionLevel int16 3+
      MinVersionLevel int16 3+
    }
    ZkMigrationReady bool 3+ tag=3@3+ def=false ign
  `,
});

export const METADATA = defineApi({
  apiKey: 3,
  name: "Metadata",
  valid: "0-12",
  flexible: "9+",
  request: `
    Topics [] 0+ null=1+ {
      TopicId uuid 10+ ign
      Name string 0+ null=10+
    }
    AllowAutoTopicCreation bool 4+ def=true
    IncludeClusterAuthorizedOperations bool 8-10
    IncludeTopicAuthorizedOperations bool 8+
  `,
  response: `
    ThrottleTimeMs int32 3+ ign
    Brokers [] 0+ {
      NodeId int32 0+
      Host string 0+
      Port int32 0+
      Rack string 1+ null=1+ def=null ign
    }
    ClusterId string 2+ null=2+ def=null ign
    ControllerId int32 1+ def=-1 ign
    Topics [] 0+ {
      ErrorCode int16 0+
      Name string 0+ null=12+
      TopicId uuid 10+ ign
      IsInternal bool 1+ def=false ign
      Partitions [] 0+ {
        ErrorCode int16 0+
        PartitionIndex int32 0+
        LeaderId int32 0+
        LeaderEpoch int32 7+ def=-1 ign
        ReplicaNodes []int32 0+
        IsrNodes []int32 0+
        OfflineReplicas []int32 5+ ign
      }
      TopicAuthorizedOperations int32 8+ def=-2147483648
    }
    ClusterAuthorizedOperations int32 8-10 def=-2147483648
  `,
});

export const PRODUCE = defineApi({
  apiKey: 0,
  name: "Produce",
  valid: "0-11",
  flexible: "9+",
  request: `
    TransactionalId string 3+ null=3+ def=null
    Acks int16 0+
    TimeoutMs int32 0+
    TopicData [] 0+ {
      Name string 0+
      PartitionData [] 0+ {
        Index int32 0+
        Records records 0+ null=0+
      }
    }
  `,
  response: `
    Responses [] 0+ {
      Name string 0+
      PartitionResponses [] 0+ {
        Index int32 0+
        ErrorCode int16 0+
        BaseOffset int64 0+
        LogAppendTimeMs int64 2+ def=-1 ign
        LogStartOffset int64 5+ def=-1 ign
        RecordErrors [] 8+ ign {
          BatchIndex int32 8+
          BatchIndexErrorMessage string 8+ null=8+ def=null
        }
        ErrorMessage string 8+ null=8+ def=null ign
        CurrentLeader struct 10+ tag=0@10+ {
          LeaderId int32 10+ def=-1
          LeaderEpoch int32 10+ def=-1
        }
      }
    }
    ThrottleTimeMs int32 1+ def=0 ign
    NodeEndpoints [] 10+ tag=0@10+ {
      NodeId int32 10+
      Host string 10+
      Port int32 10+
      Rack string 10+ null=10+ def=null
    }
  `,
});

export const FETCH = defineApi({
  apiKey: 1,
  name: "Fetch",
  valid: "0-17",
  flexible: "12+",
  request: `
    ClusterId string 12+ null=12+ tag=0@12+ def=null ign
    ReplicaId int32 0-14 def=-1
    ReplicaState struct 15+ tag=1@15+ {
      ReplicaId int32 15+ def=-1
      ReplicaEpoch int64 15+ def=-1
    }
    MaxWaitMs int32 0+
    MinBytes int32 0+
    MaxBytes int32 3+ def=0x7fffffff ign
    IsolationLevel int8 4+ def=0 ign
    SessionId int32 7+ def=0 ign
    SessionEpoch int32 7+ def=-1 ign
    Topics [] 0+ {
      Topic string 0-12 ign
      TopicId uuid 13+ ign
      Partitions [] 0+ {
        Partition int32 0+
        CurrentLeaderEpoch int32 9+ def=-1 ign
        FetchOffset int64 0+
        LastFetchedEpoch int32 12+ def=-1
        LogStartOffset int64 5+ def=-1 ign
        PartitionMaxBytes int32 0+
        ReplicaDirectoryId uuid 17+ tag=0@17+ ign
      }
    }
    ForgottenTopicsData [] 7+ {
      Topic string 7-12 ign
      TopicId uuid 13+ ign
      Partitions []int32 7+
    }
    RackId string 11+ def= ign
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    ErrorCode int16 7+ ign
    SessionId int32 7+ def=0
    Responses [] 0+ {
      Topic string 0-12 ign
      TopicId uuid 13+ ign
      Partitions [] 0+ {
        PartitionIndex int32 0+
        ErrorCode int16 0+
        HighWatermark int64 0+
        LastStableOffset int64 4+ def=-1 ign
        LogStartOffset int64 5+ def=-1 ign
        DivergingEpoch struct 12+ tag=0@12+ {
          Epoch int32 12+ def=-1
          EndOffset int64 12+ def=-1
        }
        CurrentLeader struct 12+ tag=1@12+ {
          LeaderId int32 12+ def=-1
          LeaderEpoch int32 12+ def=-1
        }
        SnapshotId struct 12+ tag=2@12+ {
          EndOffset int64 0+ def=-1
          Epoch int32 0+ def=-1
        }
        AbortedTransactions [] 4+ null=4+ ign {
          ProducerId int64 4+
          FirstOffset int64 4+
        }
        PreferredReadReplica int32 11+ def=-1
        Records records 0+ null=0+
      }
    }
    NodeEndpoints [] 16+ tag=0@16+ {
      NodeId int32 16+
      Host string 16+
      Port int32 16+
      Rack string 16+ null=16+ def=null
    }
  `,
});

export const LIST_OFFSETS = defineApi({
  apiKey: 2,
  name: "ListOffsets",
  valid: "0-10",
  flexible: "6+",
  request: `
    ReplicaId int32 0+
    IsolationLevel int8 2+
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        CurrentLeaderEpoch int32 4+ def=-1 ign
        Timestamp int64 0+
        MaxNumOffsets int32 0 def=1
      }
    }
    TimeoutMs int32 10+ ign
  `,
  response: `
    ThrottleTimeMs int32 2+ ign
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        ErrorCode int16 0+
        OldStyleOffsets []int64 0
        Timestamp int64 1+ def=-1
        Offset int64 1+ def=-1
        LeaderEpoch int32 4+ def=-1 ign
      }
    }
  `,
});

export const OFFSET_FOR_LEADER_EPOCH = defineApi({
  apiKey: 23,
  name: "OffsetForLeaderEpoch",
  valid: "0-4",
  flexible: "4+",
  request: `
    ReplicaId int32 3+ def=-2 ign
    Topics [] 0+ {
      Topic string 0+
      Partitions [] 0+ {
        Partition int32 0+
        CurrentLeaderEpoch int32 2+ def=-1 ign
        LeaderEpoch int32 0+
      }
    }
  `,
  response: `
    ThrottleTimeMs int32 2+ ign
    Topics [] 0+ {
      Topic string 0+
      Partitions [] 0+ {
        ErrorCode int16 0+
        Partition int32 0+
        LeaderEpoch int32 1+ def=-1 ign
        EndOffset int64 0+ def=-1
      }
    }
  `,
});
