// Turns one request frame into its response frame: decode the header and body with the
// generic codec, route to the API's handler, encode the answer with the request's version.
// Anything it cannot parse closes that connection (Kafka does the same), except ApiVersions
// above our range, which gets the UNSUPPORTED_VERSION fallback so clients can downgrade.
import {
  ApiKey,
  apiName,
  decodeRequestFrame,
  decodeRequestHeader,
  encodeApiVersionsUnsupported,
  encodeResponseFrame,
  ErrorCode,
  ProtocolDecodeError,
  UnsupportedApiError,
} from "../protocol/kafka/index.ts";
import type { FrameDispatcher, FrameOutcome, KafkaConnection } from "./connection.ts";
import type { KafkaApi } from "./api.ts";
import { CloseConnection, type KafkaContext, type LentBuffers } from "./context.ts";
import { FramePool } from "./frame-pool.ts";
import { API_TABLE } from "./handlers/index.ts";
import { WarnLimiter } from "../log.ts";
import { countResponseErrors } from "./error-metrics.ts";
import { asking, authorizeRequest, filterAnswer, type TopicLookup } from "./authorize.ts";
import { wireUuid } from "./handlers/shared/brokers.ts";

/** Per-API counters, for logs and the fuzz test's coverage report. */
export interface ApiStats {
  requests: number;
  errors: number;
}

export class Dispatcher implements FrameDispatcher {
  readonly stats = new Map<string, ApiStats>();

  /** A request that makes a handler throw can be sent in a loop: one warning per interval. */
  readonly #warnings: WarnLimiter;
  /** What ACL decisions need to know of the topics (src/kafka/authorize.ts). */
  readonly #topics: TopicLookup;

  constructor(
    readonly ctx: KafkaContext,
    readonly apis: ReadonlyMap<number, KafkaApi> = API_TABLE,
  ) {
    this.#warnings = new WarnLimiter(ctx.log);
    this.#topics = {
      nameOf: (id) => ctx.meta.listTopics().find((t) => wireUuid(t.topicId) === id)?.name,
      exists: (name) => ctx.meta.getTopic(name) !== undefined,
      autoCreate: ctx.autoCreateTopics,
    };
  }

  #count(apiKey: number, failed: boolean): void {
    const name = apiName(apiKey);
    let s = this.stats.get(name);
    if (!s) this.stats.set(name, s = { requests: 0, errors: 0 });
    s.requests++;
    if (failed) s.errors++;
  }

  /**
   * A request answered by closing the connection. Keys outside Kafka's range count as
   * "unknown": a client sending made-up keys must not create a metric series per key.
   */
  #failed(apiKey: number): void {
    const api = apiKey >= 0 && apiKey < 100 ? apiName(apiKey) : "unknown";
    this.ctx.metrics.kafkaFailed.inc({ api });
  }

  /** Handler time, long-polls included (Kafka's request latency does the same). */
  #observe(apiKey: number, t0: number): void {
    this.ctx.metrics.kafkaSeconds.observe(
      { api: apiName(apiKey) },
      (performance.now() - t0) / 1000,
    );
  }

  async dispatch(frame: Uint8Array, conn: KafkaConnection): Promise<FrameOutcome> {
    let decoded;
    try {
      const header = decodeRequestHeader(frame);
      const range = this.apis.get(header.apiKey)?.versions;
      if (header.apiKey === ApiKey.ApiVersions && range && header.apiVersion > range[1]) {
        // KIP-511: answer in v0 with our range so the client retries with a version we speak.
        conn.requestParsed();
        this.#count(header.apiKey, true);
        countResponseErrors(this.ctx.metrics.kafkaErrors, "ApiVersions", {
          errorCode: ErrorCode.UNSUPPORTED_VERSION,
        });
        return encodeApiVersionsUnsupported(header.correlationId, range[0], range[1]);
      }
      if (!range || header.apiVersion < range[0] || header.apiVersion > range[1]) {
        throw new UnsupportedApiError(header.apiKey, header.apiVersion, header);
      }
      decoded = decodeRequestFrame(frame);
    } catch (e) {
      if (!(e instanceof ProtocolDecodeError)) throw e;
      const key = frame.length >= 2 ? (frame[0] << 8 | frame[1]) << 16 >> 16 : -1;
      this.#count(key, true);
      this.#failed(key);
      this.ctx.log.debug("closing a connection after an unparseable request", {
        remote: `${conn.remoteHost}:${conn.remotePort}`,
        error: e.message,
      });
      return "close";
    }
    const { header, body } = decoded;
    const api = this.apis.get(header.apiKey);
    if (!api) {
      this.#count(header.apiKey, true);
      this.#failed(header.apiKey);
      return "close";
    }
    // Synchronously, before the connection reads its next frame: larger frames may follow.
    conn.requestParsed();
    const t0 = performance.now();
    const lent = new Lent(conn.pool);
    try {
      // In the first moments of a start the coordinator is still replaying its topic: group
      // requests wait for it (responses stay in request order) rather than fail.
      if (api.needsGroups) await this.ctx.groupsStarted;
      const clientHost = `/${conn.remoteHost}`;
      // --authorizer acl: what a request may not do is answered before its handler acts.
      const live = this.ctx.authorizer;
      const authz = live
        ? asking(live, conn.principal, clientHost, header.apiKey, header.apiVersion)
        : undefined;
      const verdict = authz ? authorizeRequest(authz, body, this.#topics) : undefined;
      let result = verdict?.kind === "refuse" ? verdict.answer : await api.handle(this.ctx, {
        header,
        body: verdict?.kind === "split" ? verdict.body : body,
        connection: conn,
        clientHost,
        principal: conn.principal,
        buffers: lent,
      });
      if (authz && result !== null && verdict?.kind !== "refuse") {
        const served = verdict?.kind === "split" ? verdict.body : body;
        result = filterAnswer(authz, served, result);
        if (verdict?.kind === "split") result = verdict.merge(result);
      }
      this.#count(header.apiKey, false);
      this.#observe(header.apiKey, t0);
      if (result === null) {
        lent.releaseAll();
        return null;
      }
      countResponseErrors(this.ctx.metrics.kafkaErrors, apiName(header.apiKey), result);
      const chunks = encodeResponseFrame(
        header.apiKey,
        header.apiVersion,
        header.correlationId,
        result,
      );
      return lent.empty ? chunks : { chunks, release: () => lent.releaseAll() };
    } catch (e) {
      lent.releaseAll();
      this.#count(header.apiKey, true);
      this.#failed(header.apiKey);
      this.#observe(header.apiKey, t0);
      if (e instanceof CloseConnection) return "close";
      this.#warnings.warn("kafka_request_failed", "Kafka request failed; closing the connection", {
        api: apiName(header.apiKey),
        version: header.apiVersion,
        client_id: header.clientId,
        remote: conn.remoteHost,
        error: e,
      });
      return "close";
    }
  }

  closed(conn: KafkaConnection): void {
    // A connection may close before the coordinator runs (it then holds nothing of it).
    void this.ctx.groupsStarted.then(() => this.ctx.groups.disconnected(conn));
  }
}

/** Buffers lent to one request's handler, all returned to the pool once its response is out. */
class Lent implements LentBuffers {
  /** Created on the first loan: most requests never take a buffer. */
  #held: Set<Uint8Array> | null = null;

  constructor(readonly pool: FramePool) {}

  get empty(): boolean {
    return !this.#held?.size;
  }

  take(size: number): Uint8Array | null {
    if (!FramePool.pooled(size)) return new Uint8Array(size);
    const buf = this.pool.tryTake(size);
    if (buf) (this.#held ??= new Set()).add(buf);
    return buf;
  }

  giveBack(buf: Uint8Array): void {
    if (this.#held?.delete(buf)) this.pool.give(buf);
  }

  releaseAll(): void {
    if (!this.#held) return;
    for (const b of this.#held) this.pool.give(b);
    this.#held.clear();
  }
}
