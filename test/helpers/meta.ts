// Metadata set-up shared by tests that run a PartitionManager without a broker process.
import type { MetadataStore } from "../../src/meta/index.ts";

/** Register this node as the one live broker, so topics can be placed on it. */
export function registerSelf(meta: MetadataStore): Promise<unknown> {
  return meta.registerBroker({
    nodeId: meta.nodeId,
    host: "127.0.0.1",
    kafkaPort: 9092,
    httpPort: 8080,
    clusterPort: 9093,
  });
}
