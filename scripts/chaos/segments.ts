// Reads the producer fields of the record batches in a partition's segment files (Kafka's batch
// format v2, stored as produced), so the checker can tell a broker's duplicate (one producer
// session, one epoch) from a client's (librdkafka re-sends in-flight records after it bumps its
// epoch: a new session the broker cannot match to the old one).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BatchInfo } from "./history.ts";

/** Batch v2 header: baseOffset 8, length 4, leader epoch 4, magic 1, crc 4, attributes 2, ... */
const HEADER = 61;

export function parseBatches(p: number, buf: Uint8Array): BatchInfo[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: BatchInfo[] = [];
  let pos = 0;
  while (pos + HEADER <= buf.length) {
    const len = dv.getInt32(pos + 8);
    // The end: zeros written ahead of the log's end, or a torn tail.
    if (len < HEADER - 12 || pos + 12 + len > buf.length || dv.getInt8(pos + 16) !== 2) break;
    const base = Number(dv.getBigInt64(pos));
    out.push({
      p,
      base,
      last: base + dv.getInt32(pos + 23),
      pid: Number(dv.getBigInt64(pos + 43)),
      epoch: dv.getInt16(pos + 51),
      seq: dv.getInt32(pos + 53),
    });
    pos += 12 + len;
  }
  return out;
}

/** Every batch of `topic`-`p` in a broker's data directory, in offset order. */
export function readBatches(dataDir: string, topic: string, p: number): BatchInfo[] {
  const dir = join(dataDir, "logs", `${topic}-${p}`);
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /^\d{20}\.log$/.test(f)).sort();
  } catch {
    return [];
  }
  return files.flatMap((f) => parseBatches(p, new Uint8Array(readFileSync(join(dir, f)))));
}
