// DescribeLogDirs (KIP-113): the partitions each log directory holds and their sizes, which Kafka
// UIs (AKHQ, Kafdrop, Redpanda Console, kafka-log-dirs.sh) show as topic and broker sizes.
import { defineApi } from "../schema.ts";

export const DESCRIBE_LOG_DIRS = defineApi({
  apiKey: 35,
  name: "DescribeLogDirs",
  valid: "0-4",
  flexible: "2+",
  request: `
    Topics [] 0+ null=0+ {
      Topic string 0+
      Partitions []int32 0+
    }
  `,
  response: `
    ThrottleTimeMs int32 0+
    ErrorCode int16 3+
    Results [] 0+ {
      ErrorCode int16 0+
      LogDir string 0+
      Topics [] 0+ {
        Name string 0+
        Partitions [] 0+ {
          PartitionIndex int32 0+
          PartitionSize int64 0+
          OffsetLag int64 0+
          IsFutureKey bool 0+
        }
      }
      TotalBytes int64 4+ def=-1 ign
      UsableBytes int64 4+ def=-1 ign
    }
  `,
});
