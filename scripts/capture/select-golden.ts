/**
 * Picks golden request frames from capture logs (see capture-all.sh) and merges them into
 * test/protocol/kafka/golden/requests.json. Frames are the clients' raw bytes (after the size
 * prefix); nothing here re-encodes them. Frames already checked in are kept as they are (so a
 * partial capture run, e.g. CLIENTS=platformatic, adds without churning other clients' frames);
 * new ones are added for (client, apiKey, apiVersion) keys the file lacks, up to PER_KEY
 * distinct frames each. --replace rebuilds the file from the logs alone. --api K (repeatable)
 * merges only frames of those API keys.
 *
 * sarama's frames come from the Go compatibility driver, not the fake broker: its recording
 * dialer writes the same log lines with --capture FILE (label "sarama"), e.g.
 *   driver sarama-group --bootstrap 127.0.0.1:9092 --topic go-cap --group go-cap \
 *     --partitions 2 --count 200 --retention0 --capture /tmp/kafka-capture/sarama.jsonl
 * against a running broker (build the driver as test/compat/go.test.ts does).
 *
 *   bun scripts/capture/select-golden.ts /tmp/kafka-capture [--replace] [--api 8]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const replace = args.includes("--replace");
const apis = new Set(args.flatMap((a, i) => (args[i - 1] === "--api" ? [Number(a)] : [])));
const dir = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--api") ??
  "/tmp/kafka-capture";
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
interface Frame {
  client: string;
  apiKey: number;
  apiVersion: number;
  hex: string;
}

const existing: Frame[] = !replace && existsSync(OUT)
  ? JSON.parse(readFileSync(OUT, "utf8")) as Frame[]
  : [];
const keyOf = (client: string, apiKey: number, apiVersion: number) =>
  `${client}/${apiKey}/${apiVersion}`;
const kept = new Set(existing.map((f) => keyOf(f.client, f.apiKey, f.apiVersion)));

const picked = new Map<string, Frame[]>();
for (const f of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
  for (const raw of readFileSync(join(dir, f), "utf8").split("\n")) {
    if (!raw) continue;
    const l = JSON.parse(raw) as Line;
    if (l.error || l.apiKey === undefined || l.apiVersion === undefined) continue;
    if (apis.size > 0 && !apis.has(l.apiKey)) continue;
    if (l.hex.length / 2 > MAX_FRAME_BYTES) continue;
    const key = keyOf(l.label, l.apiKey, l.apiVersion);
    if (kept.has(key)) continue;
    const list = picked.get(key) ?? [];
    if (list.length >= PER_KEY || list.some((x) => x.hex === l.hex)) continue;
    list.push({ client: l.label, apiKey: l.apiKey, apiVersion: l.apiVersion, hex: l.hex });
    picked.set(key, list);
  }
}
const added = [...picked.values()].flat();
// Stable sort: frames already in the file keep their relative order.
const all = [...existing, ...added].sort((a, b) =>
  a.apiKey - b.apiKey || a.apiVersion - b.apiVersion || a.client.localeCompare(b.client)
);
writeFileSync(OUT, JSON.stringify(all, null, 2) + "\n");
console.log(`kept ${existing.length}, added ${added.length}: ${all.length} frames in ${OUT}`);
