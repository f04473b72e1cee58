// KafkaConnection framing against a fake socket: chunks are reused by the "kernel" right after
// onData (as Bun does), frames span chunks, and pooled produce frames go back to the pool only
// once their response is settled.
import { describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { ByteBudget } from "../../src/kafka/budget.ts";
import {
  type FrameDispatcher,
  type FrameOutcome,
  KafkaConnection,
} from "../../src/kafka/connection.ts";
import { FramePool } from "../../src/kafka/frame-pool.ts";

function fakeSocket() {
  const written: Uint8Array[] = [];
  const sock = {
    remoteAddress: "127.0.0.1",
    write(b: Uint8Array) {
      written.push(b.slice());
      return b.length;
    },
    end() {},
    pause() {},
    resume() {},
  };
  return { sock: sock as unknown as Socket<unknown>, written };
}

/** A request frame: size prefix, api key, version, then `body` bytes. */
function frame(apiKey: number, bodyLen: number, fill: number): Uint8Array {
  const f = new Uint8Array(4 + 4 + bodyLen);
  new DataView(f.buffer).setInt32(0, 4 + bodyLen);
  new DataView(f.buffer).setInt16(4, apiKey);
  f.fill(fill, 8);
  return f;
}

class RecordingDispatcher implements FrameDispatcher {
  readonly seen: Uint8Array[] = [];
  readonly pending: (() => void)[] = [];
  dispatch(f: Uint8Array): Promise<FrameOutcome> {
    // Checked at once: the bytes must be whole and intact when the handler starts.
    this.seen.push(f.slice());
    return new Promise((resolve) => this.pending.push(() => resolve([new Uint8Array([1])])));
  }
  closed(): void {}
}

/** Feed `bytes` in chunks of `n` through one reused buffer, like a socket's receive buffer. */
function feed(conn: KafkaConnection, bytes: Uint8Array, n: number): void {
  const rx = new Uint8Array(n);
  for (let at = 0; at < bytes.length; at += n) {
    const k = Math.min(n, bytes.length - at);
    rx.set(bytes.subarray(at, at + k));
    conn.onData(rx.subarray(0, k));
    rx.fill(0xee); // the receive buffer is reused after the callback
  }
}

describe("KafkaConnection framing", () => {
  const limits = { maxRequestBytes: 1 << 26, maxQueuedRequests: 500, maxQueuedBytes: 1 << 28 };

  test("frames split across reused receive buffers arrive intact", () => {
    const { sock } = fakeSocket();
    const d = new RecordingDispatcher();
    const pool = new FramePool(1 << 24);
    const conn = new KafkaConnection(sock, limits, new ByteBudget(1 << 28), d, () => {}, pool);
    const frames = [
      frame(3, 10, 1),
      frame(0, 40_000, 2),
      frame(0, 5, 3),
      frame(0, 100_000, 4),
      frame(1, 70_000, 5),
    ];
    const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const f of frames) {
      all.set(f, at);
      at += f.length;
    }
    for (const chunk of [1, 3, 7, 4096, 65536, 1 << 20]) {
      d.seen.length = 0;
      feed(conn, all, chunk);
      expect(d.seen.length).toBe(frames.length);
      for (let i = 0; i < frames.length; i++) expect(d.seen[i]).toEqual(frames[i].subarray(4));
    }
  });

  test("a pooled produce frame is reused only after its response settles", async () => {
    const { sock, written } = fakeSocket();
    const d = new RecordingDispatcher();
    const pool = new FramePool(1 << 24);
    const conn = new KafkaConnection(sock, limits, new ByteBudget(1 << 28), d, () => {}, pool);
    feed(conn, frame(0, 50_000, 7), 8192);
    feed(conn, frame(0, 50_000, 8), 8192);
    // Both in flight: two distinct buffers, nothing returned yet.
    expect(pool.stats()).toEqual({ retainedBytes: 0, lentBytes: 0, hits: 0, misses: 2 });
    d.pending.shift()!();
    await Bun.sleep(0);
    expect(pool.stats().retainedBytes).toBe(65536);
    feed(conn, frame(0, 60_000, 9), 8192);
    expect(pool.stats().hits).toBe(1);
    expect(d.seen[2]).toEqual(frame(0, 60_000, 9).subarray(4));
    // The second frame (still in flight) was not overwritten by the third.
    expect(d.seen[1]).toEqual(frame(0, 50_000, 8).subarray(4));
    for (const p of d.pending.splice(0)) p();
    await Bun.sleep(0);
    expect(written.length).toBe(3);
    // Non-produce frames never come from the pool.
    feed(conn, frame(11, 50_000, 1), 8192);
    expect(pool.stats().misses).toBe(2);
  });

  test("lent response buffers are released only once their bytes are written", async () => {
    let room = 0; // bytes the socket accepts before it is "full"
    const written: number[] = [];
    const sock = {
      remoteAddress: "127.0.0.1",
      write(b: Uint8Array) {
        const n = Math.min(room, b.length);
        room -= n;
        if (n > 0) written.push(n);
        return n;
      },
      end() {},
      pause() {},
      resume() {},
    } as unknown as Socket<unknown>;
    let released = 0;
    const big = new Uint8Array(100_000);
    const d: FrameDispatcher = {
      dispatch: () => Promise.resolve({ chunks: [big], release: () => released++ }),
      closed() {},
    };
    const conn = new KafkaConnection(sock, limits, new ByteBudget(1 << 28), d, () => {});
    feed(conn, frame(1, 10, 1), 64);
    await Bun.sleep(0);
    expect(released).toBe(0); // nothing written yet
    room = 60_000;
    conn.onDrain();
    expect(released).toBe(0); // part written
    room = 40_000;
    conn.onDrain();
    expect(released).toBe(1);
    expect(written.reduce((a, b) => a + b, 0)).toBe(100_000);
    // Pending at close: released by the close, and a response finishing after it too.
    room = 0;
    feed(conn, frame(1, 10, 1), 64);
    await Bun.sleep(0);
    let late: (o: FrameOutcome) => void = () => {};
    d.dispatch = () => new Promise((r) => (late = r));
    feed(conn, frame(1, 10, 1), 64);
    conn.onClose();
    expect(released).toBe(2);
    late({ chunks: [big], release: () => released++ });
    await Bun.sleep(0);
    expect(released).toBe(3);
  });

  test("the pool keeps at most its byte cap and never hands out a buffer twice", () => {
    const pool = new FramePool(100_000);
    const a = pool.take(40_000);
    const b = pool.take(40_000);
    expect(a.buffer).not.toBe(b.buffer);
    expect(a.length).toBe(40_000);
    pool.give(a);
    pool.give(b); // over the cap: dropped
    expect(pool.stats().retainedBytes).toBe(65536);
    const c = pool.take(33_000);
    expect(c.buffer).toBe(a.buffer);
    const d = pool.take(33_000);
    expect(d.buffer).not.toBe(a.buffer);
    expect(FramePool.pooled(1000)).toBe(false);
    // Lending is capped; what comes back frees room again.
    const lender = new FramePool(1 << 20, 3 * 65536);
    const l1 = lender.tryTake(40_000)!;
    const l2 = lender.tryTake(60_000)!;
    expect(lender.tryTake(70_000)).toBeNull(); // a 128 KiB class would pass the cap
    const l3 = lender.tryTake(50_000)!;
    expect(lender.stats().lentBytes).toBe(3 * 65536);
    expect(lender.tryTake(33_000)).toBeNull();
    lender.give(l2);
    expect(lender.stats().lentBytes).toBe(2 * 65536);
    expect(lender.tryTake(33_000)).not.toBeNull();
    lender.give(l1);
    lender.give(l3);
    lender.give(l1); // a second give of the same buffer changes nothing
    expect(lender.stats().lentBytes).toBe(65536);
    const x = lender.take(40_000);
    const y = lender.take(40_000);
    expect(x.buffer).not.toBe(y.buffer);
    expect(FramePool.pooled(1 << 20)).toBe(true);
    expect(FramePool.pooled(64 << 20)).toBe(false);
  });
});
