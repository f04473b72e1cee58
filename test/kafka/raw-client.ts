// A minimal Kafka client over a raw socket, for tests that need exact frames: pipelining,
// hostile bytes, acks=0, versions real clients do not send.
import type { Socket } from "bun";
import {
  decodeResponseFrame,
  encodeRequestFrame,
  type Struct,
} from "../../src/protocol/kafka/index.ts";

export interface RawResponse {
  correlationId: number;
  frame: Uint8Array;
}

export class RawClient {
  #buf = new Uint8Array(0);
  readonly frames: RawResponse[] = [];
  #waiters: (() => void)[] = [];
  #nextId = 1;
  closed = false;
  lastError: unknown = null;

  private constructor(public socket: Socket<undefined>) {}

  /** `localAddress` binds the client's end (e.g. 127.0.0.2: another loopback address). */
  static async connect(port: number, localAddress?: string): Promise<RawClient> {
    const ref: { client?: RawClient } = {};
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      ...(localAddress ? { localAddress } : {}),
      socket: {
        data(_s, chunk) {
          ref.client?.onData(chunk);
        },
        close() {
          if (ref.client) {
            ref.client.closed = true;
            ref.client.wake();
          }
        },
        error(_s, err) {
          if (ref.client) {
            ref.client.lastError = err;
            ref.client.closed = true;
            ref.client.wake();
          }
        },
      },
    });
    ref.client = new RawClient(socket);
    return ref.client;
  }

  wake() {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  onData(chunk: Uint8Array) {
    const b = new Uint8Array(this.#buf.length + chunk.length);
    b.set(this.#buf);
    b.set(chunk, this.#buf.length);
    this.#buf = b;
    while (this.#buf.length >= 4) {
      const n = new DataView(this.#buf.buffer, this.#buf.byteOffset).getInt32(0);
      if (this.#buf.length < 4 + n) break;
      const frame = this.#buf.slice(4, 4 + n);
      this.#buf = this.#buf.slice(4 + n);
      const correlationId = new DataView(frame.buffer).getInt32(0);
      this.frames.push({ correlationId, frame });
    }
    this.wake();
  }

  /** Write bytes, waiting for the socket to take all of them. */
  async write(bytes: Uint8Array): Promise<void> {
    let at = 0;
    for (let i = 0; at < bytes.length && i < 100_000; i++) {
      if (this.closed) throw new Error("connection closed");
      const n = this.socket.write(bytes.subarray(at));
      at += Math.max(0, n);
      if (at < bytes.length) await Bun.sleep(1);
    }
  }

  /** Send a request; returns its correlation id. */
  async send(
    apiKey: number,
    apiVersion: number,
    body: Struct,
    correlationId?: number,
  ): Promise<number> {
    const id = correlationId ?? this.#nextId++;
    await this.write(
      encodeRequestFrame({ apiKey, apiVersion, correlationId: id, clientId: "raw" }, body),
    );
    return id;
  }

  /** Wait until `count` frames arrived or the connection closed (bounded by timeoutMs). */
  async waitFrames(count: number, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.frames.length < count && !this.closed) {
      const left = end - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${count} frames (have ${this.frames.length})`);
      }
      await Promise.race([new Promise<void>((r) => this.#waiters.push(r)), Bun.sleep(left)]);
    }
  }

  async waitClosed(timeoutMs = 5000): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < end) {
      await Promise.race([new Promise<void>((r) => this.#waiters.push(r)), Bun.sleep(50)]);
    }
    return this.closed;
  }

  /** Send and decode the response. */
  async call(
    apiKey: number,
    apiVersion: number,
    body: Struct,
    timeoutMs = 10_000,
  ): Promise<Struct> {
    const before = this.frames.length;
    const id = await this.send(apiKey, apiVersion, body);
    await this.waitFrames(before + 1, timeoutMs);
    const f = this.frames.find((x) => x.correlationId === id);
    if (!f) throw new Error(`no response to ${apiKey} v${apiVersion} (closed=${this.closed})`);
    this.frames.splice(this.frames.indexOf(f), 1);
    return decodeResponseFrame(apiKey, apiVersion, f.frame).body;
  }

  /** CreateTopics v4 of topics with `numPartitions` partitions of one replica: each name's code. */
  async createTopics(names: readonly string[], numPartitions = 1): Promise<number[]> {
    const r = await this.call(19, 4, {
      topics: names.map((name) => ({
        name,
        numPartitions,
        replicationFactor: 1,
        assignments: [],
        configs: [],
      })),
      timeoutMs: 5000,
      validateOnly: false,
    });
    return (r.topics as Struct[]).map((t) => t.errorCode as number);
  }

  close() {
    this.socket.end();
  }
}
