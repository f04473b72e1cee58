// One client connection: splits the byte stream into request frames, hands each to the
// dispatcher at once (clients pipeline), and writes the responses back strictly in request
// order even when handlers finish out of order. Memory is bounded four ways: a frame larger
// than socket.request.max.bytes (or, before the connection's first parsed request, larger than
// a small pre-authentication limit) is refused from its size prefix alone; a connection with too
// many requests or bytes outstanding is not read until it drains; every frame takes its bytes
// from the listener's request budget (queued.max.request.bytes) before its body is buffered, and
// produce frames also from the produce budget; a connection whose next frame does not fit stops
// reading until bytes are released.
import type { Socket } from "bun";
import type { ByteBudget } from "./budget.ts";
import { FramePool } from "./frame-pool.ts";
import { ANONYMOUS, type Principal } from "./principal.ts";

export interface ConnectionLimits {
  /** socket.request.max.bytes (Kafka default 100 MiB). */
  maxRequestBytes: number;
  /** Requests read but not yet answered on the wire (Kafka queued.max.requests is 500). */
  maxQueuedRequests: number;
  /** Request bytes held for requests not yet answered. */
  maxQueuedBytes: number;
  /**
   * The largest frame read before the connection's first successfully parsed request (there is
   * no authentication yet: a client that has not spoken the protocol is not trusted with big
   * buffers). Undefined: no such limit.
   */
  maxUnauthenticatedRequestBytes?: number;
}

/**
 * What a dispatcher answers for one frame: the response chunks, nothing (acks=0), or close.
 * With `release`, the chunks view lent buffers: it is called once they have been written.
 * With `close`, the connection is closed once the chunks are written (a failed SASL exchange).
 */
export type FrameOutcome =
  | Uint8Array[]
  | { chunks: Uint8Array[]; release?: () => void; close?: boolean }
  | null
  | "close";

function releaseOf(o: FrameOutcome): (() => void) | null {
  return o !== null && typeof o === "object" && !Array.isArray(o) ? o.release ?? null : null;
}

export interface FrameDispatcher {
  dispatch(frame: Uint8Array, conn: KafkaConnection): Promise<FrameOutcome>;
  /** The connection is gone (its waiting group requests can be dropped). */
  closed(conn: KafkaConnection): void;
}

interface Slot {
  done: boolean;
  outcome: FrameOutcome;
  requestBytes: number;
  /** A pooled frame to give back once the response is settled. */
  pooled: Uint8Array | null;
}

const PRODUCE = 0;
/** Frames above this size (not pooled) are allocated once this many of their bytes arrived. */
const DEFER_ALLOC_BYTES = 1024 * 1024;
/** Responses below this size are coalesced into one write. */
const COALESCE_BYTES = 64 * 1024;

export class KafkaConnection {
  readonly remoteHost: string;
  readonly remotePort: number;
  /**
   * Unparsed input. During `onData` its last entry may be a view of Bun's receive buffer;
   * whatever is left of it is copied before `onData` returns.
   */
  readonly #stash: Uint8Array[] = [];
  #stashBytes = 0;
  /** The size of the frame whose body is being collected; 0 between frames. */
  #frameSize = 0;
  /**
   * Its buffer; null while a large frame's first bytes are awaited (see DEFER_ALLOC_BYTES).
   */
  #frame: Uint8Array | null = null;
  #frameFill = 0;
  #frameBudget = 0;
  /** Bytes of the request budget the frame being collected holds. */
  #frameRequestBudget = 0;
  #framePooled = false;
  /** Set by the dispatcher once a request of this connection parsed. */
  #proven = false;
  /** The listener requires authentication (SASL) and it has not happened yet. */
  #mustAuthenticate = false;
  #principal: Principal = ANONYMOUS;
  /** When the connection last completed a request or wrote (performance.now()). */
  #lastActive = performance.now();
  readonly #slots: Slot[] = [];
  #queuedBytes = 0;
  /** Bytes to write, and the release of lent buffers due once the bytes before it are out. */
  readonly #out: (Uint8Array | (() => void))[] = [];
  #paused = false;
  #waitingBudget: (() => void) | null = null;
  /** The budget `#waitingBudget` waits on. */
  #waitingOn: ByteBudget | null = null;
  #closing = false;
  /** A response that ends the connection was queued: later ones are never written. */
  #lastAnswered = false;
  #closed = false;

  constructor(
    readonly socket: Socket<unknown>,
    readonly limits: ConnectionLimits,
    readonly budget: ByteBudget,
    readonly dispatcher: FrameDispatcher,
    /** fields.reason: request_too_large, unauthenticated_request_too_large or handler_failed. */
    readonly onError: (msg: string, fields: Record<string, unknown>) => void,
    readonly pool: FramePool = new FramePool(0),
    /** Bytes of every frame held in memory, across the listener (queued.max.request.bytes). */
    readonly requestBudget: ByteBudget | null = null,
  ) {
    this.remoteHost = socket.remoteAddress ?? "unknown";
    this.remotePort = (socket as unknown as { remotePort?: number }).remotePort ?? 0;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The dispatcher parsed a request of this connection: bigger frames may follow (unless the
   * connection has yet to authenticate: then only once it has).
   */
  requestParsed(): void {
    if (!this.#mustAuthenticate) this.#proven = true;
  }

  /**
   * The listener requires SASL: frames stay within maxUnauthenticatedRequestBytes, and the
   * dispatcher serves nothing but the authentication exchange, until `authenticated`.
   */
  requireAuthentication(): void {
    this.#mustAuthenticate = true;
    this.#proven = false;
  }

  get mustAuthenticate(): boolean {
    return this.#mustAuthenticate;
  }

  /** Who the connection acts as (an authoriser's input); User:ANONYMOUS until authenticated. */
  get principal(): Principal {
    return this.#principal;
  }

  /** Authenticated (SASL), or identified by the listener (a TLS client certificate). */
  authenticated(principal: Principal): void {
    this.#principal = principal;
    this.#mustAuthenticate = false;
    this.#proven = true;
  }

  get proven(): boolean {
    return this.#proven;
  }

  /** Whether the connection waits for request-budget bytes (it is not read meanwhile). */
  get waitingForMemory(): boolean {
    return this.#waitingBudget !== null;
  }

  /**
   * How long (ms) the connection has had no request in flight and neither completed a request
   * nor written anything; 0 while a request is being handled.
   */
  idleFor(now = performance.now()): number {
    return this.#slots.length > 0 ? 0 : now - this.#lastActive;
  }

  /** Close at once, dropping unwritten output (idle or over a limit). */
  terminate(): void {
    if (this.#closed) return;
    this.#abort();
  }

  /**
   * Bytes arrived. Bun may reuse its buffer after the callback, so the chunk is parsed in place
   * (frame bodies are copied straight into their frame) and only an unparsed rest is copied.
   */
  onData(chunk: Uint8Array): void {
    if (this.#closed || this.#closing) return;
    this.#stash.push(chunk);
    this.#stashBytes += chunk.length;
    this.#pump();
    const n = this.#stash.length;
    if (n > 0 && this.#stash[n - 1].buffer === chunk.buffer) {
      this.#stash[n - 1] = this.#stash[n - 1].slice();
    }
  }

  onDrain(): void {
    this.#lastActive = performance.now();
    this.#flush();
  }

  onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#waitingBudget) this.#waitingOn?.cancel(this.#waitingBudget);
    this.#waitingBudget = null;
    this.#waitingOn = null;
    if (this.#frameBudget > 0) this.budget.release(this.#frameBudget);
    this.#frameBudget = 0;
    if (this.#frameRequestBudget > 0) this.requestBudget?.release(this.#frameRequestBudget);
    this.#frameRequestBudget = 0;
    if (this.#frame && this.#framePooled) this.pool.give(this.#frame);
    else if (this.#frame && this.#frame.length > DEFER_ALLOC_BYTES) {
      // Nothing else has seen this half-read frame: its memory goes back now, not at the next
      // garbage collection (connections cut mid-frame one after another piled up hundreds of
      // MiB of dead buffers).
      (this.#frame.buffer as ArrayBuffer).transfer(0);
    }
    this.#frame = null;
    this.#frameSize = 0;
    this.#stash.length = 0;
    for (const o of this.#out) if (typeof o === "function") o();
    this.#out.length = 0;
    for (const slot of this.#slots) {
      if (slot.done) releaseOf(slot.outcome)?.();
    }
    this.dispatcher.closed(this);
  }

  /** Close after the responses already due are written. */
  close(): void {
    if (this.#closed) return;
    this.#closing = true;
    if (this.#out.length === 0) this.socket.end();
  }

  #take(n: number): Uint8Array {
    // Copy n bytes off the front of the stash (n <= stashBytes).
    const first = this.#stash[0];
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.#stash.shift();
      else this.#stash[0] = first.subarray(n);
      this.#stashBytes -= n;
      return out;
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = this.#stash[0];
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (k === c.length) this.#stash.shift();
      else this.#stash[0] = c.subarray(k);
    }
    this.#stashBytes -= n;
    return out;
  }

  /** Move up to `n` stashed bytes into `dst` at `at`, chunk by chunk; returns the count. */
  #drainInto(dst: Uint8Array, at: number, n: number): number {
    let moved = 0;
    while (moved < n && this.#stash.length > 0) {
      const c = this.#stash[0];
      const k = Math.min(c.length, n - moved);
      dst.set(k === c.length ? c : c.subarray(0, k), at + moved);
      moved += k;
      if (k === c.length) this.#stash.shift();
      else this.#stash[0] = c.subarray(k);
    }
    this.#stashBytes -= moved;
    return moved;
  }

  #peek(n: number): Uint8Array {
    const first = this.#stash[0];
    if (first.length >= n) return first.subarray(0, n);
    const out = new Uint8Array(n);
    let at = 0;
    for (const c of this.#stash) {
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (at === n) break;
    }
    return out;
  }

  #overLimits(): boolean {
    return this.#slots.length >= this.limits.maxQueuedRequests ||
      this.#queuedBytes >= this.limits.maxQueuedBytes;
  }

  /** Parse as many frames as the stash, the limits and the budget allow. */
  #pump(): void {
    while (!this.#closed && !this.#closing) {
      if (this.#frameSize > 0) {
        if (this.#stashBytes === 0) break;
        if (this.#frame === null) {
          if (this.#stashBytes < Math.min(this.#frameSize, DEFER_ALLOC_BYTES)) break;
          this.#frame = new Uint8Array(this.#frameSize);
        }
        const need = this.#frame.length - this.#frameFill;
        this.#frameFill += this.#drainInto(this.#frame, this.#frameFill, need);
        if (this.#frameFill < this.#frame.length) break;
        const frame = this.#frame;
        const budget = this.#frameBudget;
        const requestBudget = this.#frameRequestBudget;
        const pooled = this.#framePooled;
        this.#frame = null;
        this.#frameSize = 0;
        this.#frameBudget = 0;
        this.#frameRequestBudget = 0;
        this.#start(frame, budget, requestBudget, pooled);
        continue;
      }
      if (this.#overLimits() || this.#waitingBudget) break;
      if (this.#stashBytes < 4) break;
      const p = this.#peek(4);
      const size = ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) | 0;
      // Refused from the size prefix alone: the body is never buffered. A frame larger than the
      // whole request budget could never be read.
      const max = Math.min(this.limits.maxRequestBytes, this.requestBudget?.limit ?? Infinity);
      const preAuth = this.#proven
        ? Infinity
        : this.limits.maxUnauthenticatedRequestBytes ?? Infinity;
      if (size < 8 || size > max || size > preAuth) {
        const early = size >= 8 && size <= max;
        this.onError(
          early
            ? "refusing a request frame larger than allowed before a first valid request; closing the connection"
            : "refusing a request frame; closing the connection",
          {
            reason: early ? "unauthenticated_request_too_large" : "request_too_large",
            size,
            max: early ? preAuth : max,
            remote: this.remoteHost,
          },
        );
        this.#abort();
        return;
      }
      if (this.#stashBytes < 6) break;
      const head = this.#peek(6);
      const apiKey = (head[4] << 8) | head[5];
      let budget = 0;
      if (apiKey === PRODUCE) {
        if (!this.budget.tryAcquire(size)) {
          this.#waitFor(this.budget);
          break;
        }
        budget = size;
      }
      let requestBudget = 0;
      if (this.requestBudget) {
        if (!this.requestBudget.tryAcquire(size)) {
          if (budget > 0) this.budget.release(budget);
          this.#waitFor(this.requestBudget);
          break;
        }
        requestBudget = size;
      }
      this.#take(4);
      // Only produce frames are pooled: other requests' decoded bodies may keep views of their
      // frame (group metadata, for one) after the response.
      const pooled = apiKey === PRODUCE && FramePool.pooled(size);
      // A large frame that is not pooled gets its buffer once its first MiB is here: a client
      // that announces a big frame and sends nothing more costs no memory (a fresh buffer is
      // only reserved, but one reused by the allocator is zeroed, so resident, at once).
      this.#frame = pooled
        ? this.pool.take(size)
        : size <= DEFER_ALLOC_BYTES
        ? new Uint8Array(size)
        : null;
      this.#frameSize = size;
      this.#framePooled = pooled;
      this.#frameFill = 0;
      this.#frameBudget = budget;
      this.#frameRequestBudget = requestBudget;
    }
    this.#applyBackpressure();
  }

  /** Stop reading until `budget` releases bytes, then try the next frame again. */
  #waitFor(budget: ByteBudget): void {
    const wake = () => {
      this.#waitingBudget = null;
      this.#waitingOn = null;
      this.#pump();
    };
    this.#waitingBudget = wake;
    this.#waitingOn = budget;
    budget.onRelease(wake);
  }

  #applyBackpressure(): void {
    if (this.#closed) return;
    // Stop reading while the stash holds a frame's worth we cannot take yet.
    const hold = this.#waitingBudget !== null || this.#overLimits();
    if (hold && !this.#paused) {
      this.socket.pause();
      this.#paused = true;
    } else if (!hold && this.#paused) {
      this.#paused = false;
      this.socket.resume();
    }
  }

  #start(frame: Uint8Array, budget: number, requestBudget: number, pooled: boolean): void {
    this.#lastActive = performance.now();
    const slot: Slot = {
      done: false,
      outcome: null,
      requestBytes: frame.length,
      pooled: pooled ? frame : null,
    };
    this.#slots.push(slot);
    this.#queuedBytes += frame.length;
    let p: Promise<FrameOutcome>;
    try {
      p = this.dispatcher.dispatch(frame, this);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (outcome) => this.#finish(slot, outcome, budget, requestBudget),
      (e) => {
        this.onError("request handler failed; closing the connection", {
          reason: "handler_failed",
          error: e,
          remote: this.remoteHost,
        });
        this.#finish(slot, "close", budget, requestBudget);
      },
    );
  }

  #finish(slot: Slot, outcome: FrameOutcome, budget: number, requestBudget: number): void {
    if (budget > 0) this.budget.release(budget);
    if (requestBudget > 0) this.requestBudget?.release(requestBudget);
    if (slot.pooled) this.pool.give(slot.pooled);
    slot.pooled = null;
    if (this.#closed) {
      releaseOf(outcome)?.();
      return;
    }
    slot.done = true;
    slot.outcome = outcome;
    this.#flush();
  }

  /** Write finished responses from the head of the queue, stopping at the first unfinished one. */
  #flush(): void {
    if (this.#closed) return;
    if (!this.#writeOut()) return;
    while (!this.#lastAnswered && this.#slots.length > 0 && this.#slots[0].done) {
      const slot = this.#slots.shift()!;
      this.#queuedBytes -= slot.requestBytes;
      this.#lastActive = performance.now();
      if (slot.outcome === "close") {
        this.#closing = true;
        this.#lastAnswered = true;
        break;
      }
      if (slot.outcome === null) continue;
      if (Array.isArray(slot.outcome)) this.#enqueue(slot.outcome);
      else {
        this.#enqueue(slot.outcome.chunks);
        if (slot.outcome.release) this.#out.push(slot.outcome.release);
        if (slot.outcome.close) {
          // Answered, then closed: nothing after this request is served.
          this.#closing = true;
          this.#lastAnswered = true;
          this.#writeOut();
          break;
        }
      }
      if (!this.#writeOut()) break;
    }
    if (this.#closing && this.#out.length === 0) {
      this.socket.end();
      return;
    }
    if (!this.#closing) this.#pump();
  }

  #enqueue(chunks: Uint8Array[]): void {
    let total = 0;
    for (const c of chunks) total += c.length;
    if (total <= COALESCE_BYTES && chunks.length > 1) {
      const one = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        one.set(c, at);
        at += c.length;
      }
      this.#out.push(one);
    } else {
      for (const c of chunks) if (c.length > 0) this.#out.push(c);
    }
  }

  /** Write queued output; false when the socket is full (resumed from `drain`). */
  #writeOut(): boolean {
    while (this.#out.length > 0) {
      const c = this.#out[0];
      if (typeof c === "function") {
        this.#out.shift();
        c();
        continue;
      }
      // Bun returns -1 when nothing could be written right now; `drain` resumes us, and a
      // socket that really died reports `close`.
      const n = Math.max(0, this.socket.write(c));
      if (n < c.length) {
        this.#out[0] = c.subarray(n);
        return false;
      }
      this.#out.shift();
    }
    return true;
  }

  #abort(): void {
    this.#closing = true;
    for (const o of this.#out) if (typeof o === "function") o();
    this.#out.length = 0;
    this.socket.end();
  }
}
