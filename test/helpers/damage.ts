// Damaged acknowledged data on disk, as recovery meets it after a kill -9: one flipped byte in the
// middle of a partition's segment 0, and the recovery checkpoint gone (as when it was still at 0).
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { api } from "./http.ts";

/**
 * A topic of one partition with small segments (4 KiB) holding 200 acknowledged records (40 acks=all
 * requests of 5), so segment 0 is followed by several others; the log end (200).
 */
export async function writeSegments(base: string, topic: string): Promise<number> {
  const created = await api(base, "POST", "/topics", {
    name: topic,
    partitions: 1,
    configs: { "segment.bytes": "4096" },
  });
  if (created.status !== 201) throw new Error(`create ${topic}: ${created.status} ${created.text}`);
  for (let i = 0; i < 40; i++) {
    const records = Array.from(
      { length: 5 },
      (_, k) => ({ value: `r${i}-${k}-${"x".repeat(150)}` }),
    );
    const r = await api(base, "POST", `/topics/${topic}/records?acks=all`, records);
    if (r.status !== 200) throw new Error(`produce to ${topic}: ${r.status} ${r.text}`);
  }
  return 200;
}

/** Damages the middle batch of segment 0 in partition directory `dir`; that batch's base offset. */
export function damageSegment0(dir: string): number {
  const segs = readdirSync(dir).filter((f) => f.endsWith(".log")).sort();
  if (segs.length < 2) throw new Error(`${dir}: write more (one segment is not enough to tell)`);
  const p = join(dir, segs[0]);
  const bytes = new Uint8Array(readFileSync(p));
  const v = new DataView(bytes.buffer);
  const batches: { pos: number; base: number; size: number }[] = [];
  for (let pos = 0; pos + 12 <= bytes.length && v.getInt32(pos + 8) > 0;) {
    batches.push({ pos, base: Number(v.getBigInt64(pos)), size: 12 + v.getInt32(pos + 8) });
    pos += batches.at(-1)!.size;
  }
  const hit = batches[Math.floor(batches.length / 2)];
  bytes[hit.pos + hit.size - 30] ^= 0x20;
  writeFileSync(p, bytes);
  rmSync(join(dir, "recovery-checkpoint.json"));
  return hit.base;
}
