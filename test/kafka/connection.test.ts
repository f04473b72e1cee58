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

describe("KafkaConnection request budget (queued.max.request.bytes)", () => {
  const limits = {
    maxRequestBytes: 1 << 26,
    maxQueuedRequests: 500,
    maxQueuedBytes: 1 << 28,
    maxUnauthenticatedRequestBytes: 1 << 20,
  };

  function pausable() {
    const state = { paused: false, ended: false };
    const sock = {
      remoteAddress: "127.0.0.1",
      write: (b: Uint8Array) => b.length,
      end() {
        state.ended = true;
      },
      pause() {
        state.paused = true;
      },
      resume() {
        state.paused = false;
      },
    } as unknown as Socket<unknown>;
    return { sock, state };
  }

  /** A dispatcher that marks every frame parsed, as the real one does for valid requests. */
  class ProvingDispatcher extends RecordingDispatcher {
    override dispatch(f: Uint8Array, conn?: KafkaConnection): Promise<FrameOutcome> {
      conn?.requestParsed();
      return super.dispatch(f);
    }
  }

  test("a frame that does not fit waits unread until another connection releases bytes", async () => {
    const budget = new ByteBudget(300_000);
    const d = new ProvingDispatcher();
    const a = pausable();
    const b = pausable();
    const ca = new KafkaConnection(
      a.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      () => {},
      undefined,
      budget,
    );
    const cb = new KafkaConnection(
      b.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      () => {},
      undefined,
      budget,
    );
    for (const c of [ca, cb]) feed(c, frame(18, 10, 0), 64); // a first, small request each
    for (const p of d.pending.splice(0)) p();
    await Bun.sleep(0);
    feed(ca, frame(3, 200_000, 1), 8192);
    expect(budget.used).toBe(200_004);
    // b's frame does not fit beside a's: b is paused with only its size prefix read.
    cb.onData(frame(3, 200_000, 2).subarray(0, 8192));
    expect(b.state.paused).toBe(true);
    expect(cb.waitingForMemory).toBe(true);
    expect(budget.used).toBe(200_004);
    // a's request is answered: its bytes go back and b is read again.
    d.pending.shift()!();
    await Bun.sleep(0);
    expect(b.state.paused).toBe(false);
    expect(cb.waitingForMemory).toBe(false);
    feed(cb, frame(3, 200_000, 2).subarray(8192), 8192);
    expect(d.seen.at(-1)).toEqual(frame(3, 200_000, 2).subarray(4));
    expect(budget.used).toBe(200_004);
    d.pending.shift()!();
    await Bun.sleep(0);
    expect(budget.used).toBe(0);
  });

  test("frames larger than the whole budget, or big before a first request, are refused", () => {
    const refusals: unknown[] = [];
    const onError = (_m: string, f: Record<string, unknown>) => refusals.push(f.reason);
    const budget = new ByteBudget(4 << 20);
    const d = new ProvingDispatcher();
    const big = pausable();
    const c1 = new KafkaConnection(
      big.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      onError,
      undefined,
      budget,
    );
    c1.onData(frame(3, 2 << 20, 0).subarray(0, 16));
    expect(big.state.ended).toBe(true);
    const over = pausable();
    const c2 = new KafkaConnection(
      over.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      onError,
      undefined,
      budget,
    );
    feed(c2, frame(18, 10, 0), 64);
    expect(c2.proven).toBe(true);
    c2.onData(frame(3, 5 << 20, 0).subarray(0, 16));
    expect(over.state.ended).toBe(true);
    expect(refusals).toEqual(["unauthenticated_request_too_large", "request_too_large"]);
    expect(budget.used).toBe(14); // the first request, still in flight
  });

  test("a large frame's buffer waits for its first MiB; a connection cut before gives all back", async () => {
    const budget = new ByteBudget(256 << 20);
    const d = new ProvingDispatcher();
    const s = pausable();
    const c = new KafkaConnection(
      s.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      () => {},
      undefined,
      budget,
    );
    feed(c, frame(18, 10, 0), 64);
    d.pending.shift()!();
    await Bun.sleep(0);
    const f = frame(3, 40 << 20, 5);
    feed(c, f.subarray(0, 4096), 1024); // announced: the budget is taken, no buffer yet
    expect(budget.used).toBe((40 << 20) + 4);
    expect(c.idleFor(performance.now() + 1000)).toBeGreaterThan(900);
    c.onClose();
    expect(budget.used).toBe(0);
    // A whole one arrives intact through the deferred buffer.
    const s2 = pausable();
    const c2 = new KafkaConnection(
      s2.sock,
      limits,
      new ByteBudget(1 << 28),
      d,
      () => {},
      undefined,
      budget,
    );
    feed(c2, frame(18, 10, 0), 64);
    const g = frame(3, 3 << 20, 6);
    feed(c2, g, 65536);
    expect(d.seen.at(-1)).toEqual(g.subarray(4));
    expect(c2.idleFor()).toBe(0); // requests in flight
  });
});
