/** Schemas: topic/config administration, cluster description, SASL. */
import { defineApi } from "../schema.ts";

export const CREATE_TOPICS = defineApi({
  apiKey: 19,
  name: "CreateTopics",
  valid: "0-7",
  flexible: "5+",
  request: `
    Topics [] 0+ {
      Name string 0+
      NumPartitions int32 0+
      ReplicationFactor int16 0+
      Assignments [] 0+ {
        PartitionIndex int32 0+
        BrokerIds []int32 0+
      }
      Configs [] 0+ {
        Name string 0+
        Value string 0+ null=0+
      }
    }
    timeoutMs int32 0+ def=60000
    validateOnly bool 1+ def=false
  `,
  response: `
    ThrottleTimeMs int32 2+ ign
    Topics [] 0+ {
      Name string 0+
      TopicId uuid 7+ ign
      ErrorCode int16 0+
      ErrorMessage string 1+ null=0+ ign
      TopicConfigErrorCode int16 5+ tag=0@5+ ign
      NumPartitions int32 5+ def=-1 ign
      ReplicationFactor int16 5+ def=-1 ign
      Configs [] 5+ null=5+ ign {
        Name string 5+
        Value string 5+ null=5+
        ReadOnly bool 5+
        ConfigSource int8 5+ def=-1 ign
        IsSensitive bool 5+
      }
    }
  `,
});

export const DELETE_TOPICS = defineApi({
  apiKey: 20,
  name: "DeleteTopics",
  valid: "0-6",
  flexible: "4+",
  request: `
    Topics [] 6+ {
      Name string 6+ null=6+ def=null
      TopicId uuid 6+
    }
    TopicNames []string 0-5 ign
    TimeoutMs int32 0+
  `,
  response: `
    ThrottleTimeMs int32 1+ ign
    Responses [] 0+ {
      Name string 0+ null=6+
      TopicId uuid 6+ ign
      ErrorCode int16 0+
      ErrorMessage string 5+ null=5+ def=null ign
    }
  `,
});

export const DELETE_RECORDS = defineApi({
  apiKey: 21,
  name: "DeleteRecords",
  valid: "0-2",
  flexible: "2+",
  request: `
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        Offset int64 0+
      }
    }
    TimeoutMs int32 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    Topics [] 0+ {
      Name string 0+
      Partitions [] 0+ {
        PartitionIndex int32 0+
        LowWatermark int64 0+
        ErrorCode int16 0+
      }
    }
  `,
});

export const DESCRIBE_CONFIGS = defineApi({
  apiKey: 32,
  name: "DescribeConfigs",
  valid: "0-4",
  flexible: "4+",
  request: `
    Resources [] 0+ {
      ResourceType int8 0+
      ResourceName string 0+
      ConfigurationKeys []string 0+ null=0+
    }
    IncludeSynonyms bool 1+ def=false
    IncludeDocumentation bool 3+ def=false
  `,
  response: `
    ThrottleTimeMs int32 0+
    Results [] 0+ {
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
      ResourceType int8 0+
      ResourceName string 0+
      Configs [] 0+ {
        Name string 0+
        Value string 0+ null=0+
        ReadOnly bool 0+
        IsDefault bool 0
        ConfigSource int8 1+ def=-1 ign
        IsSensitive bool 0+
        Synonyms [] 1+ ign {
          Name string 1+
          Value string 1+ null=0+
          Source int8 1+
        }
        ConfigType int8 3+ def=0 ign
        Documentation string 3+ null=0+ ign
      }
    }
  `,
});

export const ALTER_CONFIGS = defineApi({
  apiKey: 33,
  name: "AlterConfigs",
  valid: "0-2",
  flexible: "2+",
  request: `
    Resources [] 0+ {
      ResourceType int8 0+
      ResourceName string 0+
      Configs [] 0+ {
        Name string 0+
        Value string 0+ null=0+
      }
    }
    ValidateOnly bool 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    Responses [] 0+ {
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
      ResourceType int8 0+
      ResourceName string 0+
    }
  `,
});

export const INCREMENTAL_ALTER_CONFIGS = defineApi({
  apiKey: 44,
  name: "IncrementalAlterConfigs",
  valid: "0-1",
  flexible: "1+",
  request: `
    Resources [] 0+ {
      ResourceType int8 0+
      ResourceName string 0+
      Configs [] 0+ {
        Name string 0+
        ConfigOperation int8 0+
        Value string 0+ null=0+
      }
    }
    ValidateOnly bool 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    Responses [] 0+ {
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
      ResourceType int8 0+
      ResourceName string 0+
    }
  `,
});

export const CREATE_PARTITIONS = defineApi({
  apiKey: 37,
  name: "CreatePartitions",
  valid: "0-3",
  flexible: "2+",
  request: `
    Topics [] 0+ {
      Name string 0+
      Count int32 0+
      Assignments [] 0+ null=0+ {
        BrokerIds []int32 0+
      }
    }
    TimeoutMs int32 0+
    ValidateOnly bool 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    Results [] 0+ {
      Name string 0+
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+ def=null
    }
  `,
});

export const ELECT_LEADERS = defineApi({
  apiKey: 43,
  name: "ElectLeaders",
  valid: "0-2",
  flexible: "2+",
  request: `
    ElectionType int8 1+
    TopicPartitions [] 0+ null=0+ {
      Topic string 0+
      PartitionId []int32 0+
    }
    TimeoutMs int32 0+
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 1+
    ReplicaElectionResults [] 0+ {
      Topic string 0+
      PartitionResult [] 0+ {
        PartitionId int32 0+
        ErrorCode int16 0+
        ErrorMessage string 0+ null=0+
      }
    }
  `,
});

export const DESCRIBE_CLUSTER = defineApi({
  apiKey: 60,
  name: "DescribeCluster",
  valid: "0-1",
  flexible: "0+",
  request: `
    IncludeClusterAuthorizedOperations bool 0+
    EndpointType int8 1+ def=1
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+ def=null
    EndpointType int8 1+ def=1
    ClusterId string 0+
    ControllerId int32 0+ def=-1
    Brokers [] 0+ {
      BrokerId int32 0+
      Host string 0+
      Port int32 0+
      Rack string 0+ null=0+ def=null
    }
    ClusterAuthorizedOperations int32 0+ def=-2147483648
  `,
});

export const SASL_HANDSHAKE = defineApi({
  apiKey: 17,
  name: "SaslHandshake",
  valid: "0-1",
  flexible: "none",
  request: `
    Mechanism string 0+
  `,
  response: `
    ErrorCode int16 0+
    Mechanisms []string 0+
  `,
});

export const SASL_AUTHENTICATE = defineApi({
  apiKey: 36,
  name: "SaslAuthenticate",
  valid: "0-2",
  flexible: "2+",
  request: `
    AuthBytes bytes 0+
  `,
  response: `
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+
    AuthBytes bytes 0+
    SessionLifetimeMs int64 1+ def=0 ign
  `,
});

export const DESCRIBE_USER_SCRAM_CREDENTIALS = defineApi({
  apiKey: 50,
  name: "DescribeUserScramCredentials",
  valid: "0",
  flexible: "0+",
  request: `
    Users [] 0+ null=0+ {
      Name string 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 0+
    ErrorMessage string 0+ null=0+
    Results [] 0+ {
      User string 0+
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
      CredentialInfos [] 0+ {
        Mechanism int8 0+
        Iterations int32 0+
      }
    }
  `,
});

export const ALTER_USER_SCRAM_CREDENTIALS = defineApi({
  apiKey: 51,
  name: "AlterUserScramCredentials",
  valid: "0",
  flexible: "0+",
  request: `
    Deletions [] 0+ {
      Name string 0+
      Mechanism int8 0+
    }
    Upsertions [] 0+ {
      Name string 0+
      Mechanism int8 0+
      Iterations int32 0+
      Salt bytes 0+
      SaltedPassword bytes 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    Results [] 0+ {
      User string 0+
      ErrorCode int16 0+
      ErrorMessage string 0+ null=0+
    }
  `,
});
