// Broker addresses and topic ids as the wire carries them (Metadata, DescribeCluster,
// FindCoordinator, CreateTopics, DeleteTopics).
import type { KafkaContext } from "../../context.ts";

/** Topic ids are stored as UUID strings; the wire wants 32 hex digits. */
export const wireUuid = (id: string) => id.replaceAll("-", "");

/** The live brokers, this one first with the address the client reached it on. */
export function brokersOf(ctx: KafkaContext) {
  // This broker always answers with the address the client can reach it on.
  const self = ctx.advertised();
  const out: { nodeId: number; host: string; port: number; rack: string | null }[] = [
    { nodeId: ctx.meta.nodeId, host: self.host, port: self.port, rack: null },
  ];
  for (const b of ctx.meta.listBrokers()) {
    if (b.nodeId === ctx.meta.nodeId || b.fenced) continue;
    out.push({ nodeId: b.nodeId, host: b.host, port: b.kafkaPort, rack: b.rack ?? null });
  }
  return out;
}
