// Sparse offset index (relOffset -> position, 8 bytes/entry) and time index
// (maxTimestamp of every batch before relOffset -> relOffset, 12 bytes/entry). In memory while a
// segment is open; written whole to `.index` / `.timeindex` at roll and clean shutdown. Sans-IO.

export class OffsetIndex {
  rel = new Int32Array(64);
  pos = new Int32Array(64);
  length = 0;

  append(relOffset: number, position: number): void {
    if (this.length === this.rel.length) {
      const r = new Int32Array(this.length * 2);
      r.set(this.rel);
      const p = new Int32Array(this.length * 2);
      p.set(this.pos);
      this.rel = r;
      this.pos = p;
    }
    this.rel[this.length] = relOffset;
    this.pos[this.length] = position;
    this.length++;
  }

  /** Index of the last entry with rel <= relOffset, or -1. */
  floor(relOffset: number): number {
    let lo = 0;
    let hi = this.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rel[mid] <= relOffset) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  }

  /** Drop entries with position >= `position`. */
  truncateToPosition(position: number): void {
    while (this.length > 0 && this.pos[this.length - 1] >= position) this.length--;
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.length * 8);
    const v = new DataView(out.buffer);
    for (let i = 0; i < this.length; i++) {
      v.setInt32(i * 8, this.rel[i]);
      v.setInt32(i * 8 + 4, this.pos[i]);
    }
    return out;
  }

  /** Parse and sanity-check; null when inconsistent (caller rebuilds). */
  static decode(bytes: Uint8Array, segmentSize: number): OffsetIndex | null {
    if (bytes.length % 8 !== 0) return null;
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const idx = new OffsetIndex();
    for (let i = 0; i < bytes.length / 8; i++) {
      const r = v.getInt32(i * 8);
      const p = v.getInt32(i * 8 + 4);
      if (r <= 0 || p <= 0 || p >= segmentSize) return null;
      if (idx.length && (r <= idx.rel[idx.length - 1] || p <= idx.pos[idx.length - 1])) return null;
      idx.append(r, p);
    }
    return idx;
  }
}

export class TimeIndex {
  ts: number[] = [];
  rel: number[] = [];

  get length(): number {
    return this.ts.length;
  }

  append(maxTimestampBefore: number, relOffset: number): void {
    this.ts.push(maxTimestampBefore);
    this.rel.push(relOffset);
  }

  /** Index of the last entry with ts < t, or -1. */
  lastBelow(t: number): number {
    let lo = 0;
    let hi = this.ts.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ts[mid] < t) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  }

  truncateToRel(relOffset: number): void {
    while (this.rel.length > 0 && this.rel[this.rel.length - 1] >= relOffset) {
      this.rel.pop();
      this.ts.pop();
    }
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.ts.length * 12);
    const v = new DataView(out.buffer);
    for (let i = 0; i < this.ts.length; i++) {
      v.setBigInt64(i * 12, BigInt(this.ts[i]));
      v.setInt32(i * 12 + 8, this.rel[i]);
    }
    return out;
  }

  static decode(bytes: Uint8Array, offsetIndex: OffsetIndex): TimeIndex | null {
    if (bytes.length % 12 !== 0) return null;
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const t = new TimeIndex();
    for (let i = 0; i < bytes.length / 12; i++) {
      const ts = Number(v.getBigInt64(i * 12));
      const r = v.getInt32(i * 12 + 8);
      const n = t.ts.length;
      if (n && (ts <= t.ts[n - 1] || r <= t.rel[n - 1])) return null;
      // Every time entry sits on an offset-index entry.
      const k = offsetIndex.floor(r);
      if (k < 0 || offsetIndex.rel[k] !== r) return null;
      t.append(ts, r);
    }
    return t;
  }
}
