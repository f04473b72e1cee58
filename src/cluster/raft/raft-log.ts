// The in-memory Raft log of one node: the last snapshot, the entries after it, what is
// persisted, and the configuration history (a configuration takes effect when its entry is
// appended, and is undone when that entry is truncated away).
import { applyConfChange, copyConfig } from "./config.ts";
import type { Config, Entry, Snapshot } from "./types.ts";

export class RaftLog {
  snapshot: Snapshot | undefined;
  snapIndex = 0;
  snapTerm = 0;
  /** entries[i].index === snapIndex + 1 + i */
  entries: Entry[] = [];
  /** Lowest index written in memory but not yet handed to the shell to persist. */
  unstableFrom = 1;
  /** Config in force at snapIndex. */
  #baseConfig: Config;
  /** Configs set by conf entries after snapIndex, in index order. */
  #confs: { index: number; config: Config }[] = [];

  constructor(base: Config, snapshot?: Snapshot, entries: Entry[] = []) {
    this.#baseConfig = copyConfig(base);
    if (snapshot !== undefined) {
      this.snapshot = snapshot;
      this.snapIndex = snapshot.meta.index;
      this.snapTerm = snapshot.meta.term;
      this.#baseConfig = copyConfig(snapshot.meta.config);
    }
    this.#appendRaw(entries);
    this.unstableFrom = this.lastIndex() + 1;
  }

  lastIndex(): number {
    return this.snapIndex + this.entries.length;
  }

  lastTerm(): number {
    return this.entries.length === 0 ? this.snapTerm : this.entries[this.entries.length - 1].term;
  }

  /** Term at index, or undefined when compacted away or beyond the end. */
  term(index: number): number | undefined {
    if (index === this.snapIndex) return this.snapTerm;
    if (index < this.snapIndex || index > this.lastIndex()) return undefined;
    return this.entries[index - this.snapIndex - 1].term;
  }

  entry(index: number): Entry | undefined {
    if (index <= this.snapIndex || index > this.lastIndex()) return undefined;
    return this.entries[index - this.snapIndex - 1];
  }

  /** Entries with lo <= index < hi (clamped to what is held). */
  slice(lo: number, hi: number): Entry[] {
    const a = Math.max(lo, this.snapIndex + 1) - this.snapIndex - 1;
    const b = Math.min(hi, this.lastIndex() + 1) - this.snapIndex - 1;
    return a < b ? this.entries.slice(a, b) : [];
  }

  /** True when a log ending at (lastIndex, lastTerm) is at least as up to date as this one. */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const t = this.lastTerm();
    return lastTerm > t || (lastTerm === t && lastIndex >= this.lastIndex());
  }

  config(): Config {
    return this.#confs.length === 0 ? this.#baseConfig : this.#confs[this.#confs.length - 1].config;
  }

  /** Config in force at index (index >= snapIndex). */
  configAt(index: number): Config {
    let c = this.#baseConfig;
    for (const x of this.#confs) {
      if (x.index > index) break;
      c = x.config;
    }
    return c;
  }

  /** Index of the last conf entry in the log, or 0. */
  lastConfIndex(): number {
    return this.#confs.length === 0 ? 0 : this.#confs[this.#confs.length - 1].index;
  }

  /** Leader append at the end. */
  append(e: Entry): void {
    this.#appendRaw([e]);
  }

  /**
   * Follower append after (prevIndex, prevTerm). Returns the last index known to match the
   * leader, or undefined when prev does not match. Conflicting entries are truncated away.
   */
  maybeAppend(prevIndex: number, prevTerm: number, ents: Entry[]): number | undefined {
    if (this.term(prevIndex) !== prevTerm) return undefined;
    let i = 0;
    // Skip entries already held (duplicates, reordered retransmits); entries at or below the
    // snapshot are committed and therefore match.
    for (; i < ents.length; i++) {
      const e = ents[i];
      if (e.index <= this.snapIndex) continue;
      const t = this.term(e.index);
      if (t === undefined) break;
      if (t !== e.term) {
        this.truncateFrom(e.index);
        break;
      }
    }
    if (i < ents.length) this.#appendRaw(ents.slice(i));
    return prevIndex + ents.length;
  }

  /** Drops entries with index >= from. */
  truncateFrom(from: number): void {
    if (from <= this.snapIndex) throw new Error(`cannot truncate committed entries at ${from}`);
    this.entries.length = from - this.snapIndex - 1;
    while (this.#confs.length > 0 && this.#confs[this.#confs.length - 1].index >= from) {
      this.#confs.pop();
    }
    if (this.unstableFrom > from) this.unstableFrom = from;
  }

  /** Replaces the whole log by a snapshot (install from the leader). */
  restore(s: Snapshot): void {
    this.snapshot = s;
    this.snapIndex = s.meta.index;
    this.snapTerm = s.meta.term;
    this.entries = [];
    this.#baseConfig = copyConfig(s.meta.config);
    this.#confs = [];
    this.unstableFrom = s.meta.index + 1;
  }

  /** Discards entries <= s.meta.index, which the snapshot s now covers. */
  compact(s: Snapshot): void {
    const i = s.meta.index;
    if (i <= this.snapIndex || i > this.lastIndex()) return;
    if (this.term(i) !== s.meta.term) return;
    this.#baseConfig = this.configAt(i);
    this.entries = this.entries.slice(i - this.snapIndex);
    this.#confs = this.#confs.filter((x) => x.index > i);
    this.snapshot = s;
    this.snapIndex = i;
    this.snapTerm = s.meta.term;
    if (this.unstableFrom <= i) this.unstableFrom = i + 1;
  }

  /** Entries not yet handed out for persisting; marks them handed out. */
  takeUnstable(): Entry[] {
    const out = this.slice(this.unstableFrom, Infinity);
    this.unstableFrom = this.lastIndex() + 1;
    return out;
  }

  #appendRaw(ents: Entry[]): void {
    for (const e of ents) {
      if (e.index !== this.lastIndex() + 1) {
        throw new Error(`log gap: appending ${e.index} after ${this.lastIndex()}`);
      }
      this.entries.push(e);
      if (e.kind === "conf") {
        this.#confs.push({ index: e.index, config: applyConfChange(this.config(), e.change) });
      }
    }
  }
}
