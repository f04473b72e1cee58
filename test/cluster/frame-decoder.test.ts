// FrameDecoder on frames of every size split at random points: each payload comes out whole,
// in order, including frames handed out as views of the chunk or of the decoder's buffer.
import { expect, test } from "bun:test";
import { encodeFrame, FrameDecoder, FrameError, FrameKind } from "../../src/cluster/transport.ts";

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

test("FrameDecoder: random frame sizes and chunk boundaries reassemble exactly", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed);
    const payloads: Uint8Array[] = [];
    for (let i = 0; i < 60; i++) {
      const size = r() < 0.2 ? Math.floor(r() * 300_000) : Math.floor(r() * 3000);
      const p = new Uint8Array(size);
      for (let j = 0; j < size; j += 97) p[j] = (i * 31 + j) & 255;
      if (size > 0) p[size - 1] = i & 255;
      payloads.push(p);
    }
    const stream = new Uint8Array(payloads.reduce((a, p) => a + p.length + 6, 0));
    let at = 0;
    for (const p of payloads) {
      const f = encodeFrame(FrameKind.reply, p);
      stream.set(f, at);
      at += f.length;
    }
    const d = new FrameDecoder();
    let got = 0;
    const kept: Uint8Array[] = [];
    for (let pos = 0; pos < stream.length;) {
      const n = 1 + Math.floor(r() * (r() < 0.5 ? 10 : 200_000));
      // Each chunk a fresh copy, as a socket delivers them.
      const chunk = stream.slice(pos, pos + n);
      for (const f of d.push(chunk)) {
        expect(f.kind).toBe(FrameKind.reply);
        expect(f.payload).toEqual(payloads[got++]);
        // Given back, its buffer may carry a later frame; kept, it must stay as it is.
        if (r() < 0.7) d.recycle(f.payload);
        else kept.push(f.payload, payloads[got - 1]);
      }
      pos += n;
    }
    expect(got).toBe(payloads.length);
    for (let i = 0; i < kept.length; i += 2) expect(kept[i]).toEqual(kept[i + 1]);
  }
});

test("FrameDecoder: a bad length in a partial frame throws as soon as it is seen", () => {
  const d = new FrameDecoder(1000);
  const f = encodeFrame(FrameKind.raft, new Uint8Array(10));
  expect(d.push(f.subarray(0, 3))).toEqual([]);
  const bad = new Uint8Array([0, 0, 0x10, 0]);
  const d2 = new FrameDecoder(1000);
  d2.push(bad.subarray(0, 2));
  expect(() => d2.push(bad.subarray(2))).toThrow(FrameError);
});
