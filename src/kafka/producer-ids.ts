// Producer ids for InitProducerId. Ids must never be reused, also across restarts and crashes:
// ids are handed out from blocks, and a block's end is made durable (write, fsync, rename)
// before any id of it is given to a client, so after kill -9 the next block starts above
// every id ever issued. One broker owns the file; a cluster will allocate blocks through
// the metadata log instead.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";

export const PRODUCER_ID_FILE = "producer-ids";
/** Ids per durable block: one fsync per 1000 producers. */
export const PRODUCER_ID_BLOCK = 1000;
/** Java's producer id is an i64; stay within what a JS number holds exactly. */
const MAX_ID = Number.MAX_SAFE_INTEGER - PRODUCER_ID_BLOCK;

export class ProducerIdAllocator {
  #next: number;
  #blockEnd: number;

  constructor(readonly dataDir: string) {
    const reserved = readReserved(join(dataDir, PRODUCER_ID_FILE));
    this.#next = reserved;
    this.#blockEnd = reserved;
  }

  /** A fresh producer id, never returned before by this data dir. */
  allocate(): number {
    if (this.#next >= this.#blockEnd) this.#reserve(this.#next + PRODUCER_ID_BLOCK);
    return this.#next++;
  }

  #reserve(end: number): void {
    if (end > MAX_ID) throw new Error("producer ids exhausted");
    const path = join(this.dataDir, PRODUCER_ID_FILE);
    const tmp = `${path}.tmp`;
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, `${end}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    const dir = openSync(this.dataDir, "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.#blockEnd = end;
  }
}

function readReserved(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw e;
  }
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${path} is corrupt (${JSON.stringify(text.slice(0, 40))})`);
  }
  return n;
}
