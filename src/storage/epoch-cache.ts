// Leader epoch -> start offset, as Kafka's leader-epoch-checkpoint. Sans-IO.
import { crc32c } from "../protocol/crc32c.ts";
import type { EpochEndOffset } from "./types.ts";

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

export class LeaderEpochCache {
  entries: EpochEntry[] = [];

  latestEpoch(): number {
    return this.entries.length ? this.entries[this.entries.length - 1].epoch : -1;
  }

  /** Record that `epoch` starts at `startOffset`. Returns true when the cache changed. */
  assign(epoch: number, startOffset: number): boolean {
    if (epoch < 0) return false;
    const last = this.entries[this.entries.length - 1];
    if (last && epoch <= last.epoch) return false;
    this.entries.push({ epoch, startOffset });
    return true;
  }

  /** Like OffsetForLeaderEpoch: the end offset of the largest epoch <= `epoch`. */
  endOffsetFor(epoch: number, logEndOffset: number): EpochEndOffset {
    const n = this.entries.length;
    if (n === 0 || epoch < this.entries[0].epoch) return { leaderEpoch: -1, endOffset: -1 };
    const latest = this.entries[n - 1];
    if (epoch === latest.epoch) return { leaderEpoch: epoch, endOffset: logEndOffset };
    if (epoch > latest.epoch) return { leaderEpoch: -1, endOffset: -1 };
    let i = n - 1;
    while (i > 0 && this.entries[i].epoch > epoch) i--;
    return { leaderEpoch: this.entries[i].epoch, endOffset: this.entries[i + 1].startOffset };
  }

  /** Remove entries starting at or after `offset` (log truncated to `offset`). */
  truncateFromEnd(offset: number): void {
    this.entries = this.entries.filter((e) => e.startOffset < offset);
  }

  /** The log start moved: the first remaining epoch now starts there. */
  truncateFromStart(offset: number): void {
    let i = 0;
    while (i + 1 < this.entries.length && this.entries[i + 1].startOffset <= offset) i++;
    this.entries = this.entries.slice(i);
    if (this.entries.length && this.entries[0].startOffset < offset) {
      this.entries[0] = { epoch: this.entries[0].epoch, startOffset: offset };
    }
  }

  encode(): Uint8Array {
    const lines = ["0", String(this.entries.length)];
    for (const e of this.entries) lines.push(`${e.epoch} ${e.startOffset}`);
    const body = lines.join("\n") + "\n";
    // A checksum line: a damaged file must be rebuilt from batch headers, never trusted.
    return new TextEncoder().encode(
      body + crc32c(new TextEncoder().encode(body)).toString(16) + "\n",
    );
  }

  /** Parse; null when damaged (the caller rebuilds from batch headers). */
  static decode(bytes: Uint8Array): LeaderEpochCache | null {
    const text = new TextDecoder().decode(bytes);
    const cut = text.lastIndexOf("\n", text.length - 2);
    if (cut < 0 || !text.endsWith("\n")) return null;
    const body = text.slice(0, cut + 1);
    const crc = text.slice(cut + 1, text.length - 1);
    if (crc !== crc32c(new TextEncoder().encode(body)).toString(16)) return null;
    const lines = body.split("\n");
    if (lines[0] !== "0") return null;
    const n = Number(lines[1]);
    if (!Number.isSafeInteger(n) || n < 0 || lines.length < n + 2) return null;
    const c = new LeaderEpochCache();
    for (let i = 0; i < n; i++) {
      const m = /^(\d+) (\d+)$/.exec(lines[i + 2]);
      if (!m) return null;
      const epoch = Number(m[1]);
      const start = Number(m[2]);
      const last = c.entries[c.entries.length - 1];
      if (last && (epoch <= last.epoch || start < last.startOffset)) return null;
      c.entries.push({ epoch, startOffset: start });
    }
    return c;
  }
}
