// The clean-shutdown manifest: one file a clean stop writes, naming every log it left clean with
// what a start needs to serve it without reading its files (log start and end, latest epoch,
// size); and the journal of logs changed since, to which a log's name is appended (and synced)
// before its first change after a start is acknowledged. A start trusts the manifest's entries
// not in the journal and opens those logs lazily (lazy-log.ts): 10,000 partitions read one file,
// not 60,000. The rest open (and recover, after a crash) as before. A clean stop writes a new
// manifest, then empties the journal; a crash between the two only makes more logs open eagerly.
import * as path from "node:path";
import { crc32c } from "../protocol/crc32c.ts";
import type { FileHandle, FileIO } from "./file-io.ts";
import type { CleanState } from "./recovery.ts";

export const MANIFEST_FILE = "clean-logs.json";
export const JOURNAL_FILE = "clean-logs.changed";

export interface ManifestEntry extends CleanState {
  /** The log's directory name, `<topic>-<partition>`. */
  name: string;
  topic: string;
  partition: number;
  topicId: string;
  epoch: number;
  sizeBytes: number;
  segments: number;
}

const INTS = [
  "partition",
  "logStart",
  "logEnd",
  "activeBase",
  "activeSize",
  "sizeBytes",
  "segments",
] as const;

function validEntry(e: ManifestEntry): boolean {
  return typeof e === "object" && e !== null && typeof e.name === "string" &&
    typeof e.topic === "string" && typeof e.topicId === "string" &&
    e.name === `${e.topic}-${e.partition}` && Number.isSafeInteger(e.epoch) && e.epoch >= -1 &&
    INTS.every((k) => Number.isSafeInteger(e[k]) && e[k] >= 0) && e.logStart <= e.logEnd &&
    e.segments >= 1;
}

export function encodeManifest(entries: ManifestEntry[]): Uint8Array {
  const logs = JSON.stringify(entries);
  const sum = crc32c(new TextEncoder().encode(logs));
  return new TextEncoder().encode(`{"v":1,"sum":${sum},"logs":${logs}}`);
}

/** The entries, or null when the file is absent, damaged (its sum) or of another version. */
export function decodeManifest(b: Uint8Array | null): ManifestEntry[] | null {
  if (b === null) return null;
  try {
    const text = new TextDecoder().decode(b);
    const m = /^\{"v":1,"sum":(\d+),"logs":(.*)\}$/s.exec(text);
    if (m === null || crc32c(new TextEncoder().encode(m[2])) !== Number(m[1])) return null;
    const logs = JSON.parse(m[2]) as ManifestEntry[];
    return Array.isArray(logs) && logs.every(validEntry) ? logs : null;
  } catch {
    return null;
  }
}

/** Names in the journal (a torn last line too: trusting less is always safe). */
export function decodeJournal(b: Uint8Array | null): Set<string> {
  const out = new Set<string>();
  if (b === null) return out;
  for (const line of new TextDecoder().decode(b).split("\n")) if (line !== "") out.add(line);
  return out;
}

const RESOLVED = Promise.resolve();

/**
 * Appends names to the journal, each durable before its promise resolves; names asked for while
 * a write is in flight go together in the next (one fdatasync for many logs' first changes).
 */
export class ChangeJournal {
  readonly #noted: Set<string>;
  #queued: string[] = [];
  #next: Promise<void> | null = null;
  #chain: Promise<void> = RESOLVED;
  #handle: FileHandle | null = null;

  constructor(private readonly io: FileIO, private readonly file: string, noted: Set<string>) {
    this.#noted = noted;
  }

  /** Resolves once `name` is in the journal on disk. */
  note(name: string): Promise<void> {
    if (this.#noted.has(name)) return RESOLVED;
    this.#queued.push(name);
    if (this.#next === null) {
      this.#next = this.#chain.then(() => this.#write());
      this.#chain = this.#next.catch(() => {});
    }
    return this.#next;
  }

  async #write(): Promise<void> {
    const names = this.#queued.filter((n) => !this.#noted.has(n));
    this.#queued = [];
    this.#next = null;
    if (names.length === 0) return;
    const created = this.#handle === null && !this.io.exists(this.file);
    this.#handle ??= this.io.open(this.file, true);
    const h = this.#handle;
    h.pwrite(new TextEncoder().encode(names.join("\n") + "\n"), h.size());
    await h.fdatasync();
    if (created) await this.io.syncDir(path.dirname(this.file));
    for (const n of names) this.#noted.add(n);
  }

  /** After the writes in flight: closes the file (a clean stop empties it after the manifest). */
  async close(): Promise<void> {
    await this.#chain;
    this.#handle?.close();
    this.#handle = null;
  }
}
