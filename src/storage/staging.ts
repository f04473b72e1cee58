// One reusable staging buffer per store: appends are synchronous (validate, rewrite, pwrite),
// so the buffer is free again when append returns. Fresh large allocations are ~50x slower.
export class StagingPool {
  private buf = new Uint8Array(1 << 20);
  take(n: number): Uint8Array {
    if (n > this.buf.length) {
      let cap = this.buf.length;
      while (cap < n) cap *= 2;
      this.buf = new Uint8Array(cap);
    }
    return this.buf.subarray(0, n);
  }
}
