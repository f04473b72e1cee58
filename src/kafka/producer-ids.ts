// Producer ids for InitProducerId. An id must never be handed out twice, by any broker of the
// cluster, also across restarts and crashes, or two producers would share sequence state in a
// partition (one's batches taken for the other's retries: acknowledged and dropped). Ids come
// in blocks of PRODUCER_ID_BLOCK through the metadata log: a broker appends a
// ProducerIdsAllocated record (through the Raft leader) and owns ids [index × block, index ×
// block + block), where index is the record's committed log index, unique in the cluster. The
// record is committed on a quorum before any id of it is given out; a restart takes a new block
// (the rest of the old one is skipped, as Kafka does).
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Where versions before the metadata-log blocks kept their highest reserved id (read only). */
export const PRODUCER_ID_FILE = "producer-ids";
/** Ids per block: one metadata record per 1000 producers a broker initialises. */
export const PRODUCER_ID_BLOCK = 1000;
/** Java's producer id is an i64; stay within what a JS number holds exactly. */
const MAX_ID = Number.MAX_SAFE_INTEGER - PRODUCER_ID_BLOCK;
/** Blocks below the legacy file's floor are skipped; past this many something is wrong. */
const MAX_SKIPPED_BLOCKS = 100_000;

/** Appends a ProducerIdsAllocated record and resolves with its committed log index. */
export type BlockRequester = () => Promise<number>;

export class ProducerIdAllocator {
  #next = 0;
  #end = 0;
  #pending: Promise<void> | null = null;
  /** Ids below this may have been issued from the legacy per-data-dir file. */
  readonly #floor: number;

  constructor(dataDir: string, private readonly requestBlock: BlockRequester) {
    this.#floor = readLegacyFloor(join(dataDir, PRODUCER_ID_FILE));
  }

  /**
   * A producer id no broker of the cluster has returned before. Rejects when no block can be had
   * (no metadata leader yet): the caller answers with a retriable error.
   */
  async allocate(): Promise<number> {
    for (let spins = 0; this.#next >= this.#end; spins++) {
      if (spins > 1000) throw new Error("producer id blocks are being used up faster than taken");
      // Concurrent InitProducerId requests share one block request.
      this.#pending ??= this.#refill().finally(() => (this.#pending = null));
      await this.#pending;
    }
    return this.#next++;
  }

  async #refill(): Promise<void> {
    for (let skipped = 0; skipped <= MAX_SKIPPED_BLOCKS; skipped++) {
      const index = await this.requestBlock();
      if (!Number.isSafeInteger(index) || index <= 0) throw new Error(`bad block index ${index}`);
      const start = index * PRODUCER_ID_BLOCK;
      if (start > MAX_ID) throw new Error("producer ids exhausted");
      if (start < this.#floor) continue;
      this.#next = start;
      this.#end = start + PRODUCER_ID_BLOCK;
      return;
    }
    throw new Error(`no producer id block above ${this.#floor} after ${MAX_SKIPPED_BLOCKS} tries`);
  }
}

function readLegacyFloor(path: string): number {
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
