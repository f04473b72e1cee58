// Damaged acknowledged data on disk, as recovery meets it after a kill -9: one flipped byte in the
// middle of a partition's segment 0, and the recovery checkpoint gone (as when it was still at 0).
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
