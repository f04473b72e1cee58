// DescribeLogDirs: this broker's one log directory (<data-dir>/logs) with the size of every
// partition replica it holds, leaders and followers alike, so Kafka UIs show topic and broker
// sizes. Partitions asked for that are not held here are left out, as Kafka does.
import { statfsSync } from "node:fs";
import { resolve } from "node:path";
import {
  ApiKey,
  type DescribeLogDirsRequest,
  type DescribeLogDirsResponse,
} from "../../protocol/kafka/index.ts";
import type { KafkaContext, RequestContext } from "../context.ts";
import { defineHandler } from "../api.ts";
import type { PartitionState } from "../../core/partition-manager.ts";

/** Disk figures of the file system holding `dir` (v4), -1 where they cannot be read. */
export function diskBytes(dir: string | undefined): { total: number; usable: number } {
  if (dir === undefined) return { total: -1, usable: -1 };
  try {
    const s = statfsSync(dir);
    return { total: s.blocks * s.bsize, usable: s.bavail * s.bsize };
  } catch {
    return { total: -1, usable: -1 };
  }
}

/** The topics and partitions asked for (null: every one held here). */
function wanted(body: DescribeLogDirsRequest): Map<string, Set<number>> | null {
  if (body.topics === null) return null;
  const out = new Map<string, Set<number>>();
  for (const t of body.topics) {
    const set = out.get(t.topic) ?? new Set<number>();
    for (const p of t.partitions) set.add(p);
    out.set(t.topic, set);
  }
  return out;
}

export function describeLogDirs(
  ctx: KafkaContext,
  req: RequestContext<DescribeLogDirsRequest>,
): DescribeLogDirsResponse {
  const want = wanted(req.body);
  const byTopic = new Map<string, PartitionState[]>();
  for (const st of ctx.partitions.partitions()) {
    if (want !== null && !want.get(st.topic)?.has(st.partition)) continue;
    const list = byTopic.get(st.topic) ?? [];
    list.push(st);
    byTopic.set(st.topic, list);
  }
  // The segment store knows its directory; the in-memory store (tests) has none.
  const logsDir = (ctx.partitions.store as { logsDir?: string }).logsDir;
  const disk = diskBytes(logsDir);
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    results: [{
      errorCode: 0,
      logDir: logsDir === undefined ? "memory" : resolve(logsDir),
      topics: [...byTopic].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((
        [name, states],
      ) => ({
        name,
        partitions: states.sort((a, b) => a.partition - b.partition).map((st) => ({
          partitionIndex: st.partition,
          partitionSize: st.log.sizeBytes(),
          // Kafka's definition for a current (not future) log: how far its end is below the
          // high watermark, 0 on a leader.
          offsetLag: Math.max(0, st.highWatermark() - st.log.logEndOffset()),
          isFutureKey: false,
        })),
      })),
      totalBytes: disk.total,
      usableBytes: disk.usable,
    }],
  };
}

export default defineHandler({
  apiKey: ApiKey.DescribeLogDirs,
  versions: [0, 4],
  handle: describeLogDirs,
});
