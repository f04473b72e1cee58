/**
 * Picks golden request frames from capture logs (see capture-all.sh) and writes
 * test/protocol/kafka/golden/requests.json. Frames are the clients' raw bytes (after the size
 * prefix); nothing here re-encodes them. Keeps up to PER_KEY distinct frames per
 * (client, apiKey, apiVersion).
 *
 *   bun scripts/capture/select-golden.ts /tmp/kafka-capture
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? "/tmp/kafka-capture";
const OUT = join(import.meta.dir, "../../test/protocol/kafka/golden/requests.json");
const PER_KEY = 2;
const MAX_FRAME_BYTES = 4096;

interface Line {
  label: string;
  apiKey?: number;
  apiVersion?: number;
  clientId?: string | null;
  hex: string;
  error?: string;
}

const picked = new Map<
  string,
  { client: string; apiKey: number; apiVersion: number; hex: string }[]
>();
for (const f of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
  for (const raw of readFileSync(join(dir, f), "utf8").split("\n")) {
    if (!raw) continue;
    const l = JSON.parse(raw) as Line;
    if (l.error || l.apiKey === undefined || l.apiVersion === undefined) continue;
    if (l.hex.length / 2 > MAX_FRAME_BYTES) continue;
    const key = `${l.label}/${l.apiKey}/${l.apiVersion}`;
    const list = picked.get(key) ?? [];
    if (list.length >= PER_KEY || list.some((x) => x.hex === l.hex)) continue;
    list.push({ client: l.label, apiKey: l.apiKey, apiVersion: l.apiVersion, hex: l.hex });
    picked.set(key, list);
  }
}
const all = [...picked.values()].flat().sort((a, b) =>
  a.apiKey - b.apiKey || a.apiVersion - b.apiVersion || a.client.localeCompare(b.client)
);
writeFileSync(OUT, JSON.stringify(all, null, 1) + "\n");
console.log(`wrote ${all.length} frames to ${OUT}`);
